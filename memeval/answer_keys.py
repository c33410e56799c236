"""A benchmark's answer keys as the shared reports see them: which gold each question is scored against (the
original one, or a key a benchmark's own audit corrects), the notes a table prints about it, and the published
files whose judgments a run imported. A benchmark offering more than its original key names an `AnswerKeys` in its
declaration (`Benchmark.answer_keys`); the results tables, the viewer and the --key flags ask the registry for it
by a run's kind and never import a benchmark. A run whose benchmark declares none is scored on its original key
(`ORIGINAL`), and any other --key is refused in one line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from memeval.errors import InputError

ORIGINAL_MODE = "original"


class Keyed(Protocol):
    """One key, resolved on one run's data: what the tables and the viewer ask of it."""

    mode: str

    def affected(self, sample_id: str) -> object | None:
        """The key's entry for a question it may change, or None (a question the key leaves as published)."""

    def notes(self) -> list[str]:
        """What a table says of its key (which key, how far the published gold can be trusted)."""

    def answers(self, rows: Iterable) -> list:
        """Answer rows under the key: gold, F1 and evidence recall rescored; a question left out is dropped."""

    def judgments(self, rows: Iterable, golds: dict | None = None) -> list:
        """The judgments that count under the key, one per (system, question, protocol)."""

    def unjudged(self, rows: Iterable, golds: dict | None = None) -> dict[tuple[str, str], int]:
        """(system, protocol) → questions the key changes that this judge graded on the original gold only."""

    def unjudged_notes(self, missing: dict[tuple[str, str], int]) -> list[str]:
        """Why such a judge's J under the key is "–", one line per protocol."""

    def recorded(self, judgments: Path, overall: str, unjudged: dict) -> tuple[dict, list[str]]:
        """An imported file's recorded judgments under the key: (the majority-vote cells, their notes)."""

    def flags(self, reasoning: bool) -> Callable[[str], list | None]:
        """sample id → what the viewer flags of a question the key's source names (None: nothing)."""


class AnswerKeys(Protocol):
    """What a benchmark with answer keys offers the shared commands (`Benchmark.answer_keys`)."""

    modes: tuple[str, ...]  # --key choices, ORIGINAL_MODE first
    ambiguous_modes: tuple[str, ...]  # --ambiguous choices, the default first
    key_help: str
    ambiguous_help: str
    recorded_label: str  # how a table names judgments an imported file recorded (no request sent)

    def for_run(self, manifest: dict, mode: str, ambiguous: str, cache: dict) -> Keyed:
        """The key on the data a run read (its manifest's path, else the data memeval finds), once per path."""

    def for_data(self, data: Path | None, mode: str, ambiguous: str, cache: dict) -> Keyed:
        """The key on the data at `data` (None: not found), once per path."""

    def is_recorded(self, protocol: str | None) -> bool:
        """Whether a judge protocol is a published file's own labels rather than a judge memeval ran."""

    def reference_systems(self, manifest: dict | None) -> set[str]:
        """The systems of a run that are reference answer sets (scored, never paired)."""

    def reference_note(self, names: Sequence[str]) -> str:
        """The note naming a run's reference answer sets."""

    def recorded_table(self, judgments, protocol: str, leniency: str | None = None) -> str:
        """The report's table of judgments an imported file recorded (system → rows of one recorded protocol)."""

    def recorded_leniency(self, directory: str | Path | None = None) -> list:
        """Judge leniency the key's source recorded itself (memeval.scoring.leniency.Leniency; none when the
        source is not fetched)."""


class Original:
    """The published key of a benchmark without answer keys: every row as recorded, nothing to say of it."""

    mode = ORIGINAL_MODE

    def affected(self, sample_id: str) -> None:
        return None

    def notes(self) -> list[str]:
        return []

    def answers(self, rows: Iterable) -> list:
        return list(rows)

    def judgments(self, rows: Iterable, golds: dict | None = None) -> list:
        return [j for j in rows if getattr(j, "answer_key", ORIGINAL_MODE) == ORIGINAL_MODE]

    def unjudged(self, rows: Iterable, golds: dict | None = None) -> dict[tuple[str, str], int]:
        return {}

    def unjudged_notes(self, missing: dict[tuple[str, str], int]) -> list[str]:
        return []

    def recorded(self, judgments: Path, overall: str, unjudged: dict) -> tuple[dict, list[str]]:
        return {}, []

    def flags(self, reasoning: bool) -> Callable[[str], list | None]:
        return lambda sample_id: None


ORIGINAL = Original()


def answer_keys(kind: str | None) -> AnswerKeys | None:
    """The AnswerKeys of the benchmark that records run `kind` (None: it declares none)."""
    from memeval.benchmarks import load
    from memeval.engine.registry import benchmark_of

    benchmark = benchmark_of(kind) if kind else None
    return load(benchmark.answer_keys) if benchmark is not None and benchmark.answer_keys else None


def offered() -> list[AnswerKeys]:
    """Every declared benchmark's AnswerKeys, in registration order (what the --key flags offer)."""
    from memeval.benchmarks import declarations, load

    return [load(b.answer_keys) for b in declarations() if b.answer_keys]


def without_keys(where: str | Path, mode: str) -> Original:
    """The original key of a run whose benchmark declares no answer keys; any other --key is refused."""
    if mode != ORIGINAL_MODE:
        raise InputError(where, "--key", f"{mode!r}: this run's benchmark has no answer key but the original one")
    return ORIGINAL
