"""The arguments several commands share, defined once so a flag means the same thing everywhere:
`--out DIR` is always a directory a command writes into, `--output FILE` always one file, `--data` always an
input, `--no-progress` turns off the bars of every long command, `--seed N` is one seed and `--n-seeds N` a
count. Older spellings (`--out FILE`, `--seeds N`, `--quiet`) stay accepted.

Nothing heavy is imported here: `memeval --help` builds every parser.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from dataclasses import MISSING, replace

from memeval.settings import Setting, add_setting, split_systems  # noqa: F401  (split_systems: its old home)


def command(subparsers: argparse._SubParsersAction, name: str, help_text: str, example: str,
            **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with a worked example. The one-line help goes through argparse's
    %-formatting (a literal "95%" would crash `memeval --help`); the description and epilog do not."""
    return subparsers.add_parser(name, help=help_text.replace("%", "%%"), description=help_text,
                                 epilog=f"example:\n  {example}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


# Numeric flags are checked where they are parsed (argparse `type=`), so garbage is one usage error naming the
# flag, exit 2, before anything is read or written: `usage: ...` then `memeval ...: error: argument --k: ...`.
# A value argparse cannot show in one line is cut (a pasted file as a flag stays one line).
def _shown(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit] + "...'"


def _integer(text: str, low: int) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = None
    if value is None or value < low:
        raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {_shown(text)}")
    return value


# The most each count flag allows, in one place (docs/layout.md lists them): far above any earnest use, low enough
# that a typo (`--jobs 10000`, `--n-seeds 1000000000000`) is one line naming what is allowed instead of work that
# never ends or a machine out of memory. flag: (least, most, why the most).
BOUNDS: dict[str, tuple[int, int, str]] = {
    "--jobs": (1, 256, "worker processes"),
    "--max-concurrency": (1, 256, "requests in flight"),
    "--threads": (1, 256, "CPU threads"),
    "--n-seeds": (1, 100_000, "seeds: each is one package solved at every budget"),
    "--seed": (0, 2**32 - 1, "seeds are 32-bit"),
    "--seed-start": (0, 2**32 - 1, "seeds are 32-bit"),
    "--question-seed": (0, 2**32 - 1, "seeds are 32-bit"),
    "--facts": (0, 10_000, "facts per generated package; the paper's have 3"),
    "--updates": (0, 10_000, "updates per generated package; the paper's have 2"),
    "--count": (1, 10_000, "items per stress package; the paper's have at most 5"),
    "--k": (1, 1_000, "memories given to the reader"),
    "--judge-runs": (1, 100, "judge runs per answer"),
    "--answer-max-tokens": (1, 128_000, "the largest output any supported model allows"),
    "--questions": (1, 100_000, "questions"),
    "--repeats": (1, 100, "runs of every question per system"),
    "--target": (1, 100_000, "packages accepted"),
    "--noise-seeds": (1, 1_000, "label-noise seeds"),
    "--port": (1, 65_535, "TCP ports"),
    "--n-ctx": (1, 131_072, "tokens of context"),
    "--context-tokens": (1, 10_000_000, "tokens of the server's context window"),
}


def bounded(flag: str):
    """The argparse type of a count flag: an integer within its `BOUNDS`, refused in one line saying what is
    allowed (`argument --jobs: expected an integer from 1 to 256 (worker processes), got '10000'`)."""
    low, high, what = BOUNDS[flag]

    def parse(text: str) -> int:
        try:
            value = int(text)
        except (TypeError, ValueError):
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high:,} ({what}), "
                                             f"got {_shown(text)}")
        return value

    parse.__name__ = f"count {flag}"
    return parse


def positive_int(text: str) -> int:
    """A count of things to do (--k, --jobs, --n-seeds, --repeats ...): an integer >= 1."""
    return _integer(text, 1)


def non_negative_int(text: str) -> int:
    """A seed or a count that may be zero (--seed, --facts, --updates): an integer >= 0."""
    return _integer(text, 0)


def _finite(text: str, what: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {_shown(text)}")
    return value


def positive_finite_float(text: str) -> float:
    """A budget: a finite number > 0 (not nan, not inf)."""
    value = _finite(text, "a finite number > 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {_shown(text)}")
    return value


def non_negative_finite_float(text: str) -> float:
    """A spending cap or an age (--budget-usd, --older-than): a finite number >= 0 (a nan cap would never stop)."""
    value = _finite(text, "a finite number >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {_shown(text)}")
    return value


def share(text: str) -> float:
    """A rate (--noise-rate, --zero-rate): a finite number in [0, 1]."""
    value = _finite(text, "a number in [0, 1]")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {_shown(text)}")
    return value


def positive_finite_floats(text: str) -> list[float]:
    """Budgets: comma-separated finite numbers > 0, none repeated."""
    parts = [x.strip() for x in text.split(",")]
    if not any(parts):
        raise argparse.ArgumentTypeError("no budgets given")
    if not all(parts):
        raise argparse.ArgumentTypeError(f"an empty budget in {_shown(text)}")
    values = []
    for part in parts:
        try:
            values.append(positive_finite_float(part))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (budget {len(values) + 1} of {_shown(text)})") from None
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"budget {repeated[0]:g} given twice in {_shown(text)}")
    return values


floats = positive_finite_floats  # the first name of the budgets parser


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


def names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


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
    parser.add_argument("--output", "--out", dest="output", required=required, metavar="FILE",
                        help=help_text + " (--out: older spelling)")


def add_data(parser: argparse.ArgumentParser, help_text: str, required: bool = False) -> None:
    add_setting(parser, replace(DATA, help=help_text), MISSING if required else None)


def add_progress(parser: argparse.ArgumentParser, old_quiet: bool = False) -> None:
    add_setting(parser, replace(PROGRESS, aliases=("--quiet",), help="no progress bars (--quiet: older spelling)")
                if old_quiet else PROGRESS)


def add_budgets(parser: argparse.ArgumentParser, required: bool = True, default: str | None = None) -> None:
    parser.add_argument("--budgets", type=positive_finite_floats, required=required,
                        default=positive_finite_floats(default) if default else None,
                        help="comma-separated budgets in the packages' cost unit" +
                             (f" (default {default})" if default else ""))


def add_systems(parser: argparse.ArgumentParser, default: str, example: str, builtin: Iterable[str] = ()) -> None:
    add_setting(parser, replace(SYSTEMS, help=systems_help(example, builtin)), default)


def add_n_seeds(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--n-seeds", "--seeds", dest="n_seeds", type=bounded("--n-seeds"), default=default,
                        help=f"how many seeds (default {default}; --seeds: older spelling)")
    parser.add_argument("--seed-start", type=bounded("--seed-start"), default=0, help="the first seed (default 0)")


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
    parser.add_argument("--key", choices=modes, default=ORIGINAL_MODE,
                        help="; ".join(k.key_help for k in keys) or "the answer key scored against: original")
    parser.add_argument("--ambiguous", choices=ambiguous, default=ambiguous[0],
                        help="; ".join(k.ambiguous_help for k in keys) or "no benchmark has ambiguous questions")
