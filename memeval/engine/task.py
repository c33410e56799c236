"""A benchmark as the engine sees it: what to validate, which roles it calls, its identity, its units of work and
how one is answered, its judges, its report. Everything else (resume, claim, lock, counts, manifest) is the
engine's, so a task holds no file names and no loop over the stage files."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memeval.engine.judge import Judge
from memeval.rundir import Identity


@dataclass(frozen=True)
class Unit:
    """Samples answered together (one system over one conversation, one question over its haystack): the keys of
    the answer rows it yields, in order, and whatever the task needs to answer them."""

    keys: tuple[tuple, ...]
    payload: Any = None
    answerable: bool = True  # False: rows another harness made (imported), read but never answered here


class Task(ABC):
    kind: ClassVar[str]  # "locomo run": names the run in its identity, manifest and `memeval ls`
    answer_record: ClassVar[type]  # the record of answers.jsonl
    judgment_record: ClassVar[type | None] = None  # the record of judgments.jsonl (None: the task has no judges)
    progress_label: ClassVar[str] = "answers"
    no_judge_note: ClassVar[str | None] = None  # what the report says when no judge was asked for

    def validate(self) -> None:
        """Refuse bad settings in one line (InputError) before anything is read or written."""
        return None

    def prepare(self) -> None:
        """Load the data and select the samples (after `validate`, before the client is made)."""
        return None

    def role_temperatures(self) -> dict[str, float | None]:
        """The roles this run calls and each protocol's temperature (empty: no model is called)."""
        return {}

    def judges(self) -> list[Judge]:
        return []

    @abstractmethod
    def identity(self, client) -> Identity:
        """Every setting that changes a stored row."""

    def legacy_identity(self, manifest: dict | None) -> Identity | None:
        """What a manifest written before identities were recorded pins down."""
        return None

    @abstractmethod
    def command_line(self) -> list[str]:
        """This configuration as the `memeval ...` command that reruns it."""

    @abstractmethod
    def public_config(self) -> dict:
        """The configuration as recorded in the manifest."""

    @abstractmethod
    def units(self) -> Sequence[Unit]:
        """Every unit of this run, in the order rows are written."""

    @abstractmethod
    def answer(self, unit: Unit, todo: Sequence[tuple], client) -> list:
        """Answer rows for the keys `todo` of `unit` (those not yet final); a row with an `error` is retried by a
        rerun. A key left without a row is retried too."""

    def refusals(self, units: Sequence[Unit], final: set, client) -> list[str]:
        """Before any row is answered: one line per part of the run refused up front because its prompts cannot
        fit the server's context window (memeval/llm/fit.py); its rows then record the refusal and the other parts
        run. `final`: the keys already answered."""
        return []

    def answered_notes(self, client) -> list[str]:
        """Notes that need the answer stage done (what a library system wrote while answering)."""
        return []

    def judge_rows(self, answers: list) -> list:
        """The rows the judges grade, from this run's answers (a LoCoMo run under a corrected answer key gives
        the affected questions their corrected gold, judged as rows of their own)."""
        return answers

    def judged_answer(self, judgment) -> tuple:
        """The key of the answer row a judgment row grades."""
        return judgment.key[:2]

    def owed(self, key: tuple) -> bool:
        """Whether a rerun can still produce this answer (imported answers cannot)."""
        return True

    def notes(self, client) -> list[str]:
        """What the report says before any row is made (the reader used, a prototype selection, ...)."""
        return []

    def failure_note(self, errors: int, client) -> str:
        return f"{errors} answers failed this run (see the `error` field); rerun to retry them"

    def failure_advice(self, answers: list) -> str | None:
        """What to do about failed answers among `answers` (this run's latest rows) when a plain rerun would not
        help, e.g. replies cut at the reader's output cap; it replaces "rerun to retry them" in the report and the
        closing line. None: a rerun is the remedy."""
        return None

    @abstractmethod
    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        """The run's report.md."""

    def manifest_fields(self, answers: list, judgments: list, claimed, client) -> dict:
        """What this task adds to the manifest (data, systems, prompts, ...)."""
        return {}

    def finish(self, outcome, client) -> None:
        """Anything derived from the finished rows (a summary file); written after the report."""
        return None
