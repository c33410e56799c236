"""`memeval view RUN_DIR`: the per-sample viewer of a LoCoMo run, one static HTML page."""

from __future__ import annotations

import argparse

from memeval.commands.arguments import add_output_file, command


def register(subparsers: argparse._SubParsersAction) -> None:
    view = command(subparsers, "view", "write a static HTML page to browse a run's questions by system, category "
                   "and score (no server needed)", "memeval view reports/artifacts/02_full_run/run")
    view.add_argument("run", help="a `locomo run` directory (other tasks: their report.md)")
    add_output_file(view, "the page to write (default RUN/view.html)", required=False)
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from memeval.viewer import write_viewer

    path = write_viewer(args.run, args.output)
    print(f"viewer: {path} (open it in a browser)")
    return 0
