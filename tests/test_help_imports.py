"""`memeval --help` and every subcommand's `--help` build parsers only: no numerical, table, plotting or solver
package is loaded for them (issue 43: the `memaudit solve` parser once loaded numpy to list writer names). Checked
in fresh interpreters, where nothing else has loaded them first."""

import json
import subprocess
import sys

HEAVY = ("numpy", "pandas", "matplotlib", "cvxpy", "highspy", "sklearn", "scipy")

TOP = f"""
import json, runpy, sys
sys.argv = ["memeval", "--help"]
try:
    runpy.run_module("memeval", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)
"""

# Every leaf command's --help through `memeval.cli.main`, as a user types it; the first command after which a heavy
# package is loaded is named.
LEAVES = f"""
import argparse, contextlib, io, json, sys
from memeval.cli import build_parser, main

def leaves(parser, prefix=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix
        return
    for name, child in subs[0].choices.items():
        yield from leaves(child, (*prefix, name))

paths = list(leaves(build_parser()))
heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
found = {{"command": "(building the parser)", "heavy": heavy}} if heavy else {{}}
for path in [] if found else paths:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main([*path, "--help"])
        except SystemExit:
            pass
    heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
    if heavy:
        found = {{"command": " ".join(path), "heavy": heavy}}
        break
print(json.dumps({{"commands": len(paths), "found": found}}), file=sys.stderr)
"""


def _last_line(code: str) -> object:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_memeval_help_loads_no_heavy_package():
    assert _last_line(TOP) == []


def test_no_subcommand_help_loads_a_heavy_package():
    result = _last_line(LEAVES)
    assert result["commands"] > 30  # every leaf was reached, not only the first
    assert result["found"] == {}, result["found"]
