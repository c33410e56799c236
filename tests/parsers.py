"""The argparse parser of one `memeval` subcommand, for tests that read its actions (flags, defaults, choices)."""

import argparse

from memeval.cli import build_parser


def subcommand_parser(words) -> argparse.ArgumentParser:
    """`words` ("locomo", "run") walked down memeval's subparsers."""
    parser = build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser
