"""A benchmark's natural packages, as `memeval natural build|union` and the natural sweeps ask for them: by name,
through the benchmark's declaration (`Benchmark.natural_source` names its `NaturalSource`), never by importing it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memeval.conversations import Conversation


@dataclass(frozen=True)
class NaturalSource:
    """`build`: `memeval natural build --source NAME` (its flags parsed; returns the exit code). `conversations`:
    the conversations an exported store is attributed against by `memeval natural union` (from --data; None: this
    source's packages take no union). `package_prefixes`: the file-name prefixes only its builds write, by which a
    directory's packages are found (and a build's files told from anything else beside them)."""

    name: str
    package_prefixes: tuple[str, ...]
    build: Callable[[argparse.Namespace], int]
    conversations: Callable[[str | None], Sequence[Conversation]] | None = None


def source_names() -> list[str]:
    """The sources `natural build --source` offers, in registration order (declarations only: nothing is loaded)."""
    from memeval.benchmarks import declarations

    return [b.name for b in declarations() if b.natural_source]


def natural_sources() -> list[NaturalSource]:
    from memeval.benchmarks import declarations, load

    return [load(b.natural_source) for b in declarations() if b.natural_source]


def natural_source(name: str) -> NaturalSource:
    from memeval.errors import InputError

    found = [s for s in natural_sources() if s.name == name]
    if not found:
        raise InputError("natural build", "--source", f"{name!r} offers no natural packages; sources: "
                         f"{', '.join(source_names())}")
    return found[0]


def package_prefixes() -> tuple[str, ...]:
    return tuple(p for s in natural_sources() for p in s.package_prefixes)


def sources_in(directory: Path) -> list[NaturalSource]:
    """The sources whose package files `directory` holds (not its union/ folder)."""
    return [s for s in natural_sources() if any(any(directory.glob(f"{p}*.json")) for p in s.package_prefixes)]
