"""`memeval view RUN_DIR [RUN_DIR...]`: the per-question viewer of the runs holding the shared answer rows (LoCoMo,
LoCoMo-Plus), one static HTML page."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from memeval.commands.arguments import add_answer_key, add_output_file, command
from memeval.output_paths import notices
from memeval.settings import add_config_arguments, flag


def _viewed() -> str:
    """The directories the page reads, as the registrations name them (the help stays true when one is added)."""
    from memeval.viewer import viewed_kinds

    names = [f"`{kind}`" for kind in viewed_kinds()]
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]


@dataclass
class ViewConfig:
    """`memeval view`'s own settings (`--output`, `--key` and `--ambiguous` are the shared ones)."""

    runs: list[str] = flag("runs", nargs="+", metavar="RUN_DIR",
                           help=f"one or more {_viewed()} directories (the kinds holding answer rows); any other "
                                "(another benchmark's run, a sweep, a build) is refused: read its report.md")
    audit_reasoning: bool = flag("--audit-reasoning", False, switch=True,
                                 help="put the LoCoMo audit's reasoning (its prose, CC BY-NC 4.0, read from your "
                                      "fetched copy) in each flagged question; such a page is refused where this "
                                      "repository would commit it")


def register(subparsers: argparse._SubParsersAction) -> None:
    view = command(subparsers, "view", "write a static HTML page to browse runs question by question: a header per "
                   "run with its scores, every system's answer side by side, filters by system, category, text and "
                   "F1 (no server needed)", "memeval view reports/artifacts/02_full_run/*/run\n"
                   "  memeval view runs/claude runs/gpt --output compare.html")
    add_config_arguments(view, ViewConfig, "runs")
    add_output_file(view, "the page to write (default RUN_DIR/view.html for one run; required for several)",
                    required=False)
    add_answer_key(view)
    add_config_arguments(view, ViewConfig, "audit_reasoning")
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from memeval.safe_text import shown
    from memeval.viewer import write_viewer

    path = write_viewer(args.runs, args.output, key=args.key, ambiguous=args.ambiguous,
                        reasoning=args.audit_reasoning)
    print(f"viewer: {shown(path)} (open it in a browser)", file=notices(args.output))
    return 0
