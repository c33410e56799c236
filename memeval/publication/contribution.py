"""What a benchmark contributes to the publication, declared in its own folder (`benchmarks/<name>/publication.py`)
and named by `Benchmark.publication`: its figures and tables built from stored results and its rows of the README's
headline. The publication asks the registry for these, so it imports no benchmark."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Rows = list[list[Any]]


@dataclass(frozen=True)
class Contribution:
    figures: dict[str, Callable[[Path], tuple]] = field(default_factory=dict)  # fig_* -> (figure, caption)
    tables: dict[str, Callable[[Path], Any]] = field(default_factory=dict)  # tab_* -> PublishedTable
    headline: tuple[Callable[[Path], Rows], ...] = ()  # sections of the headline table, in order


def contributions() -> list[Contribution]:
    """Every registered benchmark's contribution, in registration order."""
    from memeval.benchmarks import declarations, load

    return [load(b.publication) for b in declarations() if b.publication]
