"""`memeval results DIR...`: several runs and sweeps in one table (Markdown; with --out also CSV and Parquet)."""

from __future__ import annotations

import argparse

from memeval.commands.arguments import add_out_dir, command


def register(subparsers: argparse._SubParsersAction) -> None:
    results = command(subparsers, "results", "put runs and sweeps side by side: metric ± 95% CI per system and "
                      "group, with each directory's commit and command",
                      "memeval results reports/artifacts/02_full_run/run runs/claude --out comparison")
    results.add_argument("directories", nargs="+", help="`locomo run` and `memaudit sweep` output directories")
    add_out_dir(results, "also write results.md, results.csv and results.parquet here", required=False)
    results.set_defaults(handler=_results)


def _results(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.reports.results import collect, markdown, write

    rows = collect(args.directories)
    print(markdown(rows))
    if args.out:
        paths = write(rows, Path(args.out))
        print("written: " + ", ".join(str(p) for p in paths))
    return 0
