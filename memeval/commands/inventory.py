"""`memeval ls` and `memeval cache stats|prune`: what results and cached calls are on this machine."""

from __future__ import annotations

import argparse
import json
import sys

from memeval.commands.arguments import command, non_negative_finite_float
from memeval.commands.cache import register_batches


def register(subparsers: argparse._SubParsersAction) -> None:
    ls = command(subparsers, "ls", "list the runs, sweeps and builds under a directory: status (complete, "
                 "incomplete, running, replaced), row counts, commit and command", "memeval ls reports/artifacts")
    ls.add_argument("roots", nargs="*", help="directories to search (default: the notebooks' artifacts)")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ls.set_defaults(handler=_ls)

    cache = subparsers.add_parser("cache", help="the LLM response cache: stats, pruning, saved batches")
    sub = cache.add_subparsers(dest="cache_command", required=True)
    stats = command(sub, "stats", "entries, models and size of the response cache", "memeval cache stats --json")
    stats.add_argument("--dir", default=None, help="cache directory (default: MEMEVAL_CACHE_DIR or .memeval/cache)")
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    stats.set_defaults(handler=_cache_stats)
    prune = command(sub, "prune", "delete cached responses by age and/or model",
                    "memeval cache prune --model claude-opus-4-6 --older-than 30 --dry-run")
    prune.add_argument("--dir", default=None, help="cache directory (default: MEMEVAL_CACHE_DIR or .memeval/cache)")
    prune.add_argument("--older-than", type=non_negative_finite_float, default=None, metavar="DAYS",
                       help="only responses cached more than DAYS days ago")
    prune.add_argument("--model", default=None, help="only this model's responses")
    prune.add_argument("--dry-run", action="store_true", help="count what would go; delete nothing")
    prune.set_defaults(handler=_cache_prune)
    register_batches(sub)


def _ls(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.artifacts import artifacts_root
    from memeval.errors import InputError
    from memeval.invocation import list_results
    from memeval.reports.tables import markdown_table

    for root in args.roots:  # a directory named on the command line must exist; the default one may not yet
        if not Path(root).is_dir():
            raise InputError(root, "directory", "not found" if not Path(root).exists() else "not a directory")
    roots = args.roots or [str(artifacts_root())]
    problems: list[str] = []
    found = list_results(roots, problems)
    for problem in problems:  # the rest of the tree is still listed
        print(f"memeval: note: skipped {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    if not found:
        print(f"no results (no manifest.json) under {', '.join(roots)}")
        return 0
    print(markdown_table(["directory", "what", "status", "rows", "commit", "last written (UTC)", "command"],
                         [[r["directory"], r["kind"], r["status"],
                           _rows(r["rows"], r["failed"]), r["commit"] or "–",
                           r["created_utc"] or "–", r["command_line"] or "–"] for r in found]))
    return 0


def _rows(rows: dict[str, int], failed: dict[str, int]) -> str:
    """"1,986 answers (12 failed), 1,974 judgments": the latest row per sample, so a failure a rerun fixed is gone."""
    return ", ".join(f"{n:,} {k}" + (f" ({failed[k]:,} failed)" if failed.get(k) else "")
                     for k, n in rows.items()) or "–"


def _cache_stats(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.llm.cache import ResponseCache, default_cache_dir

    directory = Path(args.dir) if args.dir else default_cache_dir()
    if not (directory / "responses.sqlite").exists():
        print(f"no cache at {directory}")
        return 0
    stats = ResponseCache(directory).stats()
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print(f"{stats['path']}: {stats['responses']} responses, {stats['token_counts']} token counts, "
              f"{stats['batches']} saved batches, {stats['bytes'] / 1e6:.1f} MB")
        for model, n in stats["by_model"].items():
            print(f"  {model}: {n}")
    return 0


def _cache_prune(args: argparse.Namespace) -> int:
    from memeval.errors import InputError
    from memeval.llm.cache import ResponseCache

    if args.older_than is None and args.model is None:
        raise InputError("cache prune", "--older-than/--model", "say what to prune (both may be given)")
    cache = ResponseCache(args.dir)
    n = cache.prune(older_than_days=args.older_than, model=args.model, dry_run=args.dry_run)
    print(f"{n} cached responses {'would be' if args.dry_run else 'were'} deleted from {cache.path}")
    return 0
