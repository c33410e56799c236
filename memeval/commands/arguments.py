"""The arguments several commands share, defined once so a flag means the same thing everywhere:
`--out DIR` is always a directory a command writes into, `--output FILE` always one file, `--data` always an
input, `--no-progress` turns off the bars of every long command, `--seed N` is one seed and `--n-seeds N` a
count. Older spellings (`--out FILE`, `--seeds N`, `--quiet`) stay accepted.

Nothing heavy is imported here: `memeval --help` builds every parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import MISSING, replace

from memeval.flag_types import (  # noqa: F401  (the argparse types' first home: commands import them from here)
    BOUNDS,
    _shown,
    bounded,
    floats,
    names,
    non_negative_finite_float,
    non_negative_int,
    positive_finite_float,
    positive_finite_floats,
    positive_int,
    share,
)
from memeval.settings import Setting, add_setting, split_systems  # noqa: F401  (split_systems: its old home)


def command(subparsers: argparse._SubParsersAction, name: str, help_text: str, example: str,
            **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with a worked example. The one-line help goes through argparse's
    %-formatting (a literal "95%" would crash `memeval --help`); the description and epilog do not."""
    return subparsers.add_parser(name, help=help_text.replace("%", "%%"), description=help_text,
                                 epilog=f"example:\n  {example}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


SYSTEM_NAME_FORBIDDEN = ",;:"  # what `--systems` splits on (a,b / a;b) or reads as parameters (name:key=value)


def system_name(text: str) -> str:
    """A name an imported system carries, one `--systems` can address again: not empty, no space at its ends, none
    of `,`, `;`, `:` and no control character."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a system name, got an empty one")
    if text != text.strip():
        raise argparse.ArgumentTypeError(f"{_shown(text)} starts or ends with a space, which --systems drops")
    bad = sorted({c for c in text if c in SYSTEM_NAME_FORBIDDEN or not c.isprintable()})
    if bad:
        raise argparse.ArgumentTypeError(f"{_shown(text)} holds {', '.join(map(repr, bad))}, which --systems "
                                         "cannot address (it separates systems and their parameters)")
    return text



# The settings several commands share, declared once: a configuration field takes one with `flag(OUT, ...)`
# (memeval.settings), a command without a configuration with the `add_*` helpers below.
OUT = Setting("--out", metavar="DIR")
DATA = Setting("--data")
SYSTEMS = Setting("--systems")
RESTART = Setting("--restart", switch=True, rerun=False,
                  help="move what --out holds aside to DIR.replaced-<UTC time> (never deleted) and start afresh; "
                       "without it a directory holding another configuration is refused")
PROGRESS = Setting("--no-progress", negated=True, rerun=False, help="no progress bars")
K = Setting("--k", 10, type=bounded("--k"), help="memories given to the reader by ranked systems")
JSON = Setting("--json", switch=True)  # print JSON instead of the table or list (each command says what)
DIR = Setting("--dir", help="cache directory (default: MEMEVAL_CACHE_DIR or .memeval/cache)")  # the response cache
OUTPUT = Setting("--output", aliases=("--out",), dest="output", metavar="FILE")
FAIL_FAST = Setting("--fail-fast", switch=True,
                    help="stop at the first plug-in failure (its own ingest or search raising) with one line naming "
                         "the system, the question and the exception; without it the failure is recorded in that "
                         "question's answer row (retried on a rerun) and the run goes on")


def systems_help(example: str, builtin: Iterable[str] = ()):
    """`--systems`' help, given the default as typed; `builtin` lists the names a user can type (the help cannot
    import the systems themselves)."""
    listed = f"; built in: {', '.join(builtin)}; a plug-in as module.path:Factory" if builtin else ""

    def text(default: str) -> str:
        return (f"comma-separated memory systems (default {default}){listed}; parameters as name:key=value (e.g. "
                f"{example}); separate systems with ';' when a parameter list has commas")

    return text


def add_out_dir(parser: argparse.ArgumentParser, help_text: str, required: bool = True, **kwargs) -> None:
    add_setting(parser, replace(OUT, help=help_text), MISSING if required else kwargs.pop("default", None))


def add_output_file(parser: argparse.ArgumentParser, help_text: str, required: bool = True) -> None:
    add_setting(parser, replace(OUTPUT, help=help_text + " (--out: older spelling)"), MISSING if required else None)


def add_data(parser: argparse.ArgumentParser, help_text: str, required: bool = False) -> None:
    add_setting(parser, replace(DATA, help=help_text), MISSING if required else None)


def add_progress(parser: argparse.ArgumentParser, old_quiet: bool = False) -> None:
    add_setting(parser, replace(PROGRESS, aliases=("--quiet",), help="no progress bars (--quiet: older spelling)")
                if old_quiet else PROGRESS)


def add_systems(parser: argparse.ArgumentParser, default: str, example: str, builtin: Iterable[str] = ()) -> None:
    add_setting(parser, replace(SYSTEMS, help=systems_help(example, builtin)), default)


def add_restart(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, RESTART)


def finish(closing_line: str | None) -> int:
    """The exit code of a run: 0 when complete; otherwise the closing line, last on the terminal, and 4."""
    import sys

    from memeval.errors import EXIT_INCOMPLETE, EXIT_OK
    from memeval.safe_text import shown

    if not closing_line:
        return EXIT_OK
    print(f"memeval: {shown(closing_line)}", file=sys.stderr)  # it may quote an API's or a plug-in's message
    return EXIT_INCOMPLETE


def add_fail_fast(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, FAIL_FAST)


def add_answer_key(parser: argparse.ArgumentParser) -> None:
    """--key and --ambiguous: the answer key a command scores and tables against, as the benchmarks that offer
    answer keys declare them (memeval.answer_keys); a run of a benchmark without them takes `original` only."""
    from memeval.answer_keys import ORIGINAL_MODE, offered

    keys = offered()
    modes = tuple(dict.fromkeys([ORIGINAL_MODE, *(m for k in keys for m in k.modes)]))
    ambiguous = tuple(dict.fromkeys(m for k in keys for m in k.ambiguous_modes)) or ("include",)
    add_setting(parser, Setting("--key", choices=modes, help="; ".join(k.key_help for k in keys)
                                or "the answer key scored against: original"), ORIGINAL_MODE)
    add_setting(parser, Setting("--ambiguous", choices=ambiguous, help="; ".join(k.ambiguous_help for k in keys)
                                or "no benchmark has ambiguous questions"), ambiguous[0])
