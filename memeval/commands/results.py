"""`memeval results DIR...`: runs and sweeps in columns, one row per system and metric, paired differences between
runs that share questions (Markdown, CSV, Parquet, HTML or JSON)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from memeval.commands.arguments import add_answer_key, add_out_dir, add_progress, command
from memeval.output_paths import notices
from memeval.settings import add_config_arguments, flag

FORMATS = ("md", "csv", "parquet", "html", "json")


def _tabled_kinds() -> str:
    """The run kinds `results` reads, as the registrations declare them (those holding the shared answer rows), so
    the help stays true when a benchmark is added."""
    from memeval.engine.registry import answer_kinds

    names = [f"`{kind}`" for kind in dict.fromkeys(answer_kinds().values())]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


@dataclass
class ResultsConfig:
    """`memeval results`' own settings (`--key`, `--ambiguous`, `--out` and the progress bars are the shared ones)."""

    directories: list[str] = flag("directories", nargs="+",
                                  help=f"directories of {_tabled_kinds()} (every run kind a benchmark "
                                       "declares as holding answer rows, and the imports writing the same rows) "
                                       "and of `memaudit sweep`")
    format: str = flag("--format", "md", choices=FORMATS,
                       help="md (default), csv (one line per cell), parquet (needs --output), html or json (typed "
                            "rows: the runs, one object per system × metric with value, interval, n and run, and "
                            "the paired differences)")
    output: str | None = flag("--output", None, metavar="FILE",
                              help="write the --format output here instead of printing it")
    by_category: bool = flag("--by-category", False, switch=True, help="also F1, J and answer length per question category, under "
                                          "each run's own benchmark's categories")


def register(subparsers: argparse._SubParsersAction) -> None:
    results = command(subparsers, "results", "put runs and sweeps side by side: one column per directory, one row "
                      "per system and metric (estimate and 95% CI), and between runs that share questions the "
                      "paired difference with its interval",
                      "memeval results reports/artifacts/02_full_run/*/run runs/claude --format html --output cmp.html")
    add_config_arguments(results, ResultsConfig)
    add_answer_key(results)
    add_out_dir(results, "also write results.md, results.csv and results.parquet here", required=False)
    add_progress(results)
    results.set_defaults(handler=_results)


def _results(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from memeval.errors import InputError
    from memeval.reports import results as report
    from memeval.safe_text import shown

    if args.out and Path(args.out).suffix.lower() in (".md", ".csv", ".parquet", ".html", ".htm") \
            and not Path(args.out).is_dir():
        raise InputError("results", "--out", f"{args.out} names a file, but --out is the directory that receives "
                         "results.md, .csv and .parquet: for one file use --format FORMAT --output FILE")
    if args.format == "parquet" and not args.output:
        raise InputError("results", "--format", "parquet is binary and is not printed: add --output FILE.parquet")
    comparison = report.compare(args.directories, by_category=args.by_category, progress=not args.no_progress,
                                key=args.key, ambiguous=args.ambiguous)
    written: list[Path] = []
    if args.format == "parquet":
        written.append(report.write_parquet(comparison.rows, Path(args.output)))
    else:
        writers = {"md": report.markdown, "html": report.html, "json": report.json_text}
        text = writers.get(args.format, lambda c: report.csv_text(c.rows))(comparison)
        if args.output:
            from memeval.atomic import write_text_atomic

            written.append(write_text_atomic(args.output, text))
        else:
            sys.stdout.write(shown(text, lines=True))  # a CSV cell's ESC never reaches the terminal
    if args.out:
        written += report.write(comparison, Path(args.out))
    if written:
        print(shown("written: " + ", ".join(str(p) for p in written)), file=notices(args.output))
    return 0
