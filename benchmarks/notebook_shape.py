"""How thin each notebook is (issue 43: notebooks are reports over `memeval.api`): code cells, code lines (blank
and comment-only lines not counted), the memeval modules it imports other than `memeval.api`, and the lines that
save a figure themselves.

    .venv/bin/python benchmarks/notebook_shape.py [--root TREE] [--json]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

IMPORT = re.compile(r"^\s*(?:from\s+(memeval[\w.]*)\s+import|import\s+(memeval[\w.]*))")


def shape(notebook: Path) -> dict:
    cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    lines = [line for c in cells for line in "".join(c["source"]).splitlines()
             if line.strip() and not line.strip().startswith("#")]
    matches = [IMPORT.match(line) for line in lines]
    modules = {m for match in matches if match for m in match.groups() if m}
    return {"code_cells": len(cells), "code_lines": len(lines),
            "internal_modules": sorted(m for m in modules if m not in ("memeval", "memeval.api")),
            "figure_saving_lines": sum(("savefig" in line or "save_figure" in line) for line in lines)}


def main(root: Path) -> dict:
    return {nb.name: shape(nb) for nb in sorted((root / "notebooks").glob("*.ipynb"))}


if __name__ == "__main__":
    args = sys.argv[1:]
    root = Path(args[args.index("--root") + 1]) if "--root" in args else Path(__file__).resolve().parent.parent
    result = main(root)
    if "--json" in args:
        print(json.dumps(result, indent=2))
    else:
        for name, s in result.items():
            print(f"{name:32} cells {s['code_cells']:3}  lines {s['code_lines']:4}  internal modules "
                  f"{len(s['internal_modules']):3}  figure-saving lines {s['figure_saving_lines']}")
        total = sum(s["code_lines"] for s in result.values())
        print(f"{'total':32} lines {total}")
