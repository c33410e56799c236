"""`memeval reproduce`: every notebook on offline defaults into reports/, rendered to HTML."""

from __future__ import annotations

import argparse

from memeval.notebook_runner import reproduce


def register(subparsers: argparse._SubParsersAction) -> None:
    rep = subparsers.add_parser("reproduce", help="execute the notebooks with papermill and render HTML")
    rep.add_argument("--notebooks", default="notebooks")
    rep.add_argument("--out", default="reports")
    rep.add_argument("--figures", default="figures", help="where notebooks write figures (they read MEMEVAL_FIGURES)")
    rep.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 00 03")
    rep.add_argument("--judged", action="store_true",
                     help="Claude reader and LLM judges (needs ANTHROPIC_API_KEY or a cache holding the calls)")
    rep.set_defaults(handler=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    import os

    os.environ["MEMEVAL_FIGURES"] = os.path.abspath(args.figures)
    if args.judged:
        print("judged configuration: Claude reader and judges (key or shared cache); offline steps are unchanged")
    results = reproduce(args.notebooks, args.out, args.only, judged=args.judged)
    total = sum(r["seconds"] for r in results)
    print(f"{len(results)} notebook(s) executed in {total:.1f} s; reports in {args.out}/")
    return 0
