"""The argparse types of the flags: counts within their bounds, budgets, rates and lists, each a function from the
text a user typed to the value, refusing anything else in one line naming what is allowed. A setting declared with
one (memeval.settings) checks a value given in Python with the very function that reads its flag, so the
configurations below the command line (memeval/memaudit/config.py, memeval/natural/config.py) take them from here
rather than from memeval.commands. Imports nothing heavy: `memeval --help` builds every parser."""

from __future__ import annotations

import argparse
import math


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


def names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]
