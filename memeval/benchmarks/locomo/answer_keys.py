"""LoCoMo's answer keys as the shared reports ask for them (memeval.answer_keys.AnswerKeys): the original key, the
LoCoMo audit's corrected key, or the audited questions excluded (memeval/benchmarks/locomo/keyed.py, audit/), and
the judgments published files recorded (published/). Light to import: `memeval --help` reads the flags' help here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

KEY_FLAG_HELP = ("the answer key scored against: original (default: the published gold, what papers compare), "
                 "corrected (the LoCoMo audit's correct answers and citations) or excluded (the audited questions "
                 "left out); corrected and excluded need `memeval data fetch locomo-audit`")
AMBIGUOUS_FLAG_HELP = ("under --key corrected or excluded, the audit's AMBIGUOUS questions: include (default) or "
                       "drop them from every table")


@dataclass(frozen=True)
class LocomoKeyed:
    """One key (audit_key.AnswerKey) on one copy of the LoCoMo data, with the fetched audit (None: not fetched)."""

    key: object
    audit: object | None
    conversations: list | None

    @property
    def mode(self) -> str:
        return self.key.mode

    def affected(self, sample_id: str):
        return self.key.affected(sample_id)

    def notes(self) -> list[str]:
        from memeval.benchmarks.locomo.keyed import key_notes

        return key_notes(self.key, self.audit, self.conversations)

    def answers(self, rows: Iterable) -> list:
        from memeval.benchmarks.locomo.keyed import key_evidence, keyed_answers

        return keyed_answers(rows, self.key, key_evidence(self.key, self.audit))

    def judgments(self, rows: Iterable, golds: dict | None = None) -> list:
        from memeval.benchmarks.locomo.keyed import keyed_judgments

        return keyed_judgments(rows, self.key, golds)

    def unjudged(self, rows: Iterable, golds: dict | None = None) -> dict[tuple[str, str], int]:
        from memeval.benchmarks.locomo.keyed import unjudged_changes

        return unjudged_changes(rows, self.key, golds)

    def unjudged_notes(self, missing: dict[tuple[str, str], int]) -> list[str]:
        from memeval.benchmarks.locomo.keyed import unjudged_notes

        return unjudged_notes(missing)

    def recorded(self, judgments: Path, overall: str, unjudged: dict) -> tuple[dict, list[str]]:
        """An imported file's recorded judgments: the majority vote as cells beside their J, and a note with the
        population std over runs (recorded.py); a judge with no J under the corrected key (`unjudged`)
        gets one note saying why, and neither figure."""
        from memeval.benchmarks.locomo.keyed import unjudged_notes
        from memeval.benchmarks.locomo.recorded import (
            load_recorded,
            majority_cells,
            recorded_notes,
            under_key,
        )

        rows = [r for r in under_key(load_recorded(judgments), self.key) if (r.system, r.protocol) not in unjudged]
        return majority_cells(rows, overall), recorded_notes(rows, self.key) + unjudged_notes(unjudged)

    def flags(self, reasoning: bool):
        """sample id → the page's flag of a question the audit names: [error type, the audit's answer, the
        published gold, its reasoning or None]. The reasoning is the audit's prose (CC BY-NC 4.0): read from the
        user's fetched copy when the page is written, and put in the page only when asked for (`memeval view
        --audit-reasoning`), since a page may be shared or kept where a repository is committed (docs/layout.md)."""
        audit = self.audit

        def flag(sample_id: str) -> list | None:
            entry = audit.entries.get(sample_id) if audit is not None else None
            if entry is None:
                return None
            return [entry.error_type, entry.correct_answer, entry.golden_answer,
                    audit.reasoning(sample_id) if reasoning else None]

        return flag


class LocomoAnswerKeys:
    """The LoCoMo answer keys (memeval.answer_keys.AnswerKeys)."""

    modes = ("original", "corrected", "excluded")
    ambiguous_modes = ("include", "drop")
    key_help = KEY_FLAG_HELP
    ambiguous_help = AMBIGUOUS_FLAG_HELP

    @property
    def recorded_label(self) -> str:
        from memeval.benchmarks.locomo.published.detailed import RECORDED

        return RECORDED

    @staticmethod
    def _unchecked() -> LocomoKeyed:
        from memeval.benchmarks.locomo.audit_key import AnswerKey

        return LocomoKeyed(AnswerKey("original", "include", None), None, None)

    def for_run(self, manifest: dict, mode: str, ambiguous: str, cache: dict) -> LocomoKeyed:
        """The key on the data a run read (its manifest's path, else the data memeval finds), made once per data
        path; unchecked (no audit) when nothing asks for more than the original key and the audit or the data is
        missing."""
        from memeval.benchmarks.locomo.audit.store import audit_path
        from memeval.data.paths import find_locomo
        from memeval.errors import InputError

        if mode == "original" and ambiguous == "include" and audit_path("errors") is None:
            return self._unchecked()  # nothing to check the key against
        data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
        recorded = data.get("path") if isinstance(data.get("path"), str) else None
        try:
            path = Path(recorded) if recorded and Path(recorded).exists() else find_locomo(None)
        except InputError:
            if mode == "original" and ambiguous == "include":  # no data to check the key on: say it is unchecked
                return self._unchecked()
            raise
        return self._on(path, mode, ambiguous, cache, path.resolve())

    def for_data(self, data: Path | None, mode: str, ambiguous: str, cache: dict) -> LocomoKeyed:
        """The key on the run's data (`data`: None when it was not found), made once per data path."""
        from memeval.benchmarks.locomo.audit.store import audit_path
        from memeval.errors import InputError

        if mode == "original" and ambiguous == "include" and (audit_path("errors") is None or data is None):
            return self._unchecked()
        if data is None:
            raise InputError("--key", mode, "the run's LoCoMo data was not found, so its questions cannot be matched "
                             "to the audit's (give the data where the run's manifest says it was)")
        return self._on(data, mode, ambiguous, cache, ("key", data.resolve()))

    @staticmethod
    def _on(path: Path, mode: str, ambiguous: str, cache: dict, slot) -> LocomoKeyed:
        from memeval.benchmarks.locomo.data import load_locomo
        from memeval.benchmarks.locomo.keyed import resolve_key

        if slot not in cache:
            conversations = load_locomo(path)
            cache[slot] = LocomoKeyed(*resolve_key(mode, ambiguous, conversations), conversations)
        return cache[slot]

    def is_recorded(self, protocol: str | None) -> bool:
        from memeval.benchmarks.locomo.published.detailed import is_recorded

        return is_recorded(protocol)

    def reference_systems(self, manifest: dict | None) -> set[str]:
        from memeval.benchmarks.locomo.published.reference import reference_systems

        return reference_systems(manifest)

    def reference_note(self, names: Sequence[str]) -> str:
        from memeval.benchmarks.locomo.published.reference import reference_note

        return reference_note(names)

    def recorded_table(self, judgments, protocol: str, leniency: str | None = None) -> str:
        from memeval.benchmarks.locomo.recorded import recorded_table

        return recorded_table(judgments, protocol, leniency)

    def recorded_leniency(self, directory: str | Path | None = None) -> list:
        from memeval.benchmarks.locomo.audit_leniency import recorded_leniency

        return recorded_leniency(directory)


ANSWER_KEYS = LocomoAnswerKeys()
