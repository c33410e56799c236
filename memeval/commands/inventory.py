"""`memeval ls` and `memeval cache stats|prune`: what results and cached calls are on this machine."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from memeval.commands.arguments import DIR, JSON, command, non_negative_finite_float
from memeval.commands.cache import register_batches
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, flag

RUNS = "runs"  # where the README's and the docs' examples put their runs (`--out runs/...`)


@dataclass
class ListConfig:
    roots: list[str] = flag("roots", nargs="*", help=f"directories to search (default: the notebooks' artifacts, "
                                                     f"and ./{RUNS} when it exists, where the README's runs go)")
    json: bool = flag(JSON, False, help="print the list as JSON (full paths, every recorded command)")
    long: bool = flag("-l", False, aliases=("--long",), dest="long", switch=True,
                      help="also print each directory's last recorded command (and its whole path when the line "
                           "shortens it)")


@dataclass
class CacheStatsConfig:
    dir: str | None = flag(DIR, None)
    json: bool = flag(JSON, False, help="print the statistics as JSON")


@dataclass
class CachePruneConfig:
    dir: str | None = flag(DIR, None)
    older_than: float | None = flag("--older-than", None, type=non_negative_finite_float, metavar="DAYS",
                                    help="only responses cached more than DAYS days ago")
    model: str | None = flag("--model", None, help="only this model's responses and embeddings")
    dry_run: bool = flag("--dry-run", False, switch=True, help="count what would go; delete nothing")


def register(subparsers: argparse._SubParsersAction) -> None:
    ls = command(subparsers, "ls", "list the runs, sweeps and builds under a directory, one line each: kind, status "
                 "(complete, incomplete, running, replaced), rows, commit, age and path", "memeval ls reports/artifacts")
    add_config_arguments(ls, ListConfig)
    ls.set_defaults(handler=_ls)

    cache = command(subparsers, "cache", "the LLM response cache: stats, pruning, saved batches",
                    "memeval cache stats\n  memeval cache prune --older-than 30 --dry-run")
    sub = cache.add_subparsers(dest="cache_command", required=True)
    stats = command(sub, "stats", "entries, models and size of the response cache", "memeval cache stats --json")
    add_config_arguments(stats, CacheStatsConfig)
    stats.set_defaults(handler=_cache_stats)
    prune = command(sub, "prune", "delete cached responses and embeddings by age and/or model",
                    "memeval cache prune --model claude-opus-4-6 --older-than 30 --dry-run")
    add_config_arguments(prune, CachePruneConfig)
    prune.set_defaults(handler=_cache_prune)
    register_batches(sub)


def _ls(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.artifacts import artifacts_root
    from memeval.engine.listing import list_results
    from memeval.errors import InputError

    for root in args.roots:  # a directory named on the command line must exist; the default one may not yet
        if not Path(root).is_dir():
            raise InputError(root, "directory", "not found" if not Path(root).exists() else "not a directory")
    roots = args.roots or [str(artifacts_root()), *([RUNS] if Path(RUNS).is_dir() else [])]
    problems: list[str] = []
    found = list_results(roots, problems)
    for problem in problems:  # the rest of the tree is still listed
        print(f"memeval: note: skipped {shown(problem)}", file=sys.stderr)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    if not found:
        hint = "" if args.roots or RUNS in roots else f"; name the folder your runs are in: memeval ls {RUNS}/"
        print(f"no results (no manifest.json) under {', '.join(roots)}{hint}")
        return 0
    print("\n".join(listing(found, long=args.long, width=_terminal_width())))
    return 0


WIDTH = 100
HEADERS = ("KIND", "STATUS", "ROWS", "COMMIT", "AGE", "PATH")
ROW_NAMES = {"raw_results": "rows", "rows": "rows"}


def _terminal_width() -> int | None:
    """The width `ls` fits its lines to on a terminal (COLUMNS, else the terminal's; at least WIDTH); None when
    stdout is a pipe or a file, whose reader (grep, a script, a log) needs every path whole."""
    import shutil

    if not sys.stdout.isatty():
        return None
    return max(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns)


def listing(found: list[dict], long: bool = False, now: float | None = None, width: int | None = None) -> list[str]:
    """One line per directory, columns as wide as their longest cell and the path last; given a `width` (a
    terminal's), a path's leading directories are left out ("…/02_full_run/run") when the line would pass it;
    `long` adds the recorded command (and the whole path, when shortened) under each line."""
    import time

    from memeval.reports.results import short_commit

    now = time.time() if now is None else now
    cells = [[shown(cell) for cell in (r["kind"], r["status"], _rows(r["rows"], r["failed"]),
                                       short_commit(r["commit"]) if r["commit"] else "–",
                                       _age(now - _last_written(r["directory"])), _shown_path(r["directory"]))]
             for r in found]
    widths = [max(len(row[i]) for row in [HEADERS, *cells]) for i in range(len(HEADERS) - 1)]
    room = max(width - sum(widths) - 2 * len(widths), 12) if width else None
    lines = []
    for n, row in enumerate([HEADERS, *cells]):
        path = _fit(row[-1], room) if room else row[-1]
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + path)
        if long and n:
            if path != row[-1]:
                lines.append(f"    path: {row[-1]}")
            lines.append(f"    command: {shown(found[n - 1]['command_line'] or '(none recorded)')}")
    if any(r["commit"] and r["commit"].endswith("-dirty") for r in found):
        lines.append("+: the commit had uncommitted changes when the directory was written")
    return lines


def _fit(path: str, room: int) -> str:
    """`path` in `room` characters: whole, else its last parts after "…/", else its tail after "…"."""
    if len(path) <= room:
        return path
    parts = path.split("/")
    for n in range(1, len(parts)):
        tail = "…/" + "/".join(parts[n:])
        if len(tail) <= room:
            return tail
    return "…" + path[-(room - 1):]


def _rows(rows: dict[str, int], failed: dict[str, int]) -> str:
    """"1,986 answers (12 failed), 1,974 judgments": the latest row per sample, so a failure a rerun fixed is gone."""
    return ", ".join(f"{n:,} {ROW_NAMES.get(k, k)}" + (f" ({failed[k]:,} failed)" if failed.get(k) else "")
                     for k, n in rows.items()) or "–"


def _last_written(directory: str) -> float:
    """The newest modification time of the manifest and the row files: when the directory last changed."""
    import os

    from memeval.engine.listing import ROW_FILES
    from memeval.rundir import MANIFEST

    times = []
    for name in (MANIFEST, *ROW_FILES):
        try:
            times.append(os.stat(os.path.join(directory, name)).st_mtime)
        except OSError:
            pass
    return max(times, default=0.0)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{max(int(seconds), 0)} s"


def _shown_path(directory: str) -> str:
    """Relative to the working directory when inside it, else as found."""
    import os

    path = os.path.relpath(directory)
    return directory if path.startswith("..") else path


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
        print(f"{shown(stats['path'])}: {stats['responses']} responses, {stats['token_counts']} token counts, "
              f"{stats['embeddings']} embeddings, {stats['batches']} saved batches, {stats['bytes'] / 1e6:.1f} MB")
        for model, n in stats["by_model"].items():
            print(f"  {shown(model)}: {n}")
    return 0


def _cache_prune(args: argparse.Namespace) -> int:
    from memeval.errors import InputError
    from memeval.llm.cache import ResponseCache

    if args.older_than is None and args.model is None:
        raise InputError("cache prune", "--older-than/--model", "say what to prune (both may be given)")
    cache = ResponseCache(args.dir)
    counts = cache.prune_counts(older_than_days=args.older_than, model=args.model, dry_run=args.dry_run)
    print(f"{counts['responses']} cached responses and {counts['embeddings']} embeddings "
          f"{'would be' if args.dry_run else 'were'} deleted from {cache.path}")
    return 0
