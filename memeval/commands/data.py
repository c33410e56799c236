"""`memeval data fetch|stats`."""

from __future__ import annotations

import argparse
import json

from memeval.categories import CATEGORY_NAMES
from memeval.commands.arguments import command


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="fetch and inspect the LoCoMo data")
    sub = data.add_subparsers(dest="data_command", required=True)

    fetch = command(sub, "fetch", "download a data set and verify its SHA-256", "memeval data fetch locomo")
    fetch.add_argument("dataset", choices=["locomo"])
    fetch.add_argument("--dest", default="data/locomo", help="directory to write into (default data/locomo)")
    fetch.add_argument("--source", default=None, help="URL or local file (default: the public locomo10.json)")
    fetch.add_argument("--sha256", default=None, help="expected SHA-256 (default: the known hash of the file)")
    fetch.set_defaults(handler=_fetch)

    st = command(sub, "stats", "counts of conversations, questions, categories, turns, sessions",
                 "memeval data stats --json")
    st.add_argument("path", nargs="?", default=None, help="file, directory or zip (default: discovered)")
    st.add_argument("--json", action="store_true", help="print one JSON object")
    st.set_defaults(handler=_stats)


def _fetch(args: argparse.Namespace) -> int:
    from memeval.data.fetch import fetch_locomo

    target = fetch_locomo(args.dest, source=args.source, sha256=args.sha256)
    print(f"wrote {target} (SHA-256 verified)")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from memeval.data.locomo import load_locomo_with_report, stats
    from memeval.data.paths import find_locomo

    path = find_locomo(args.path)
    conversations, report = load_locomo_with_report(path)
    result = stats(conversations)
    if args.json:
        print(json.dumps({**result, "quirks": dict(sorted(report.quirks.items()))}, sort_keys=False))
        return 0
    print(f"source: {path} ({report.layout})")
    for key in ("conversations", "questions", "turns", "sessions"):
        print(f"{key}: {result[key]}")
    print("by_category:")
    for cat, count in result["by_category"].items():
        print(f"  {cat} {CATEGORY_NAMES[int(cat)]}: {count}")
    if report.quirks:
        print("quirks (repaired or reported, not fatal):")
        for quirk, count in sorted(report.quirks.items()):
            print(f"  {quirk}: {count}")
    return 0
