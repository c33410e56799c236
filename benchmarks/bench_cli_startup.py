"""CLI start-up benchmark (run on demand: `.venv/bin/python benchmarks/bench_cli_startup.py`).

Times `memeval --help` and `memeval locomo run --help` as fresh processes (median of 7 after one warm-up, so
the OS file cache is warm as it is for a user's second call), and lists which heavy modules the parser pulls
in. The target is under 1 s. Writes benchmarks/results/cli_startup.json.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.manifest import base_manifest  # noqa: E402

COMMANDS = (["--help"], ["locomo", "run", "--help"], ["memaudit", "sweep", "--help"])
HEAVY = ("nltk", "anthropic", "scipy", "cvxpy", "pandas", "sklearn", "matplotlib", "numpy")


def seconds(argv: list[str], repeats: int = 7) -> float:
    command = [sys.executable, "-m", "memeval", *argv]
    subprocess.run(command, capture_output=True, check=True)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    probe = ("import sys, memeval.cli; memeval.cli.build_parser(); "
             f"print([m for m in {HEAVY!r} if m in sys.modules])")
    imported = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                         check=True).stdout.replace("'", '"'))
    result = {"median_s": {" ".join(argv): round(seconds(argv), 3) for argv in COMMANDS},
              "heavy_modules_imported_by_the_parser": imported, "target_s": 1.0,
              "manifest": base_manifest(command="benchmarks/bench_cli_startup.py")}
    out = ROOT / "benchmarks" / "results" / "cli_startup.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "manifest"}, indent=2))


if __name__ == "__main__":
    main()
