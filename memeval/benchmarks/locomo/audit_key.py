"""LoCoMo's answer key as the audit corrects it: the audit's errors mapped onto memeval's sample ids (each mapped
question's text checked), the ceiling of a perfect system under the original key, and the key as a choice.

Audit ids are `locomo_<conversation>_qa<question>`, both 0-based: the conversation in the order of the released
locomo10.json, the question over all of that conversation's qa items (category 5 included), so `locomo_0_qa1` is
`conv-26:q0001`. Key modes (`answer_key`), with `ambiguous` saying whether the 13 AMBIGUOUS questions are scored:
- original: LoCoMo's gold answers, unchanged (what papers compare); `ambiguous` must be "include".
- corrected: the audit's `correct_answer` for every score-corrupting error; with ambiguous="drop" the AMBIGUOUS
  ones are left out instead of corrected.
- excluded: every score-corrupting question left out; with ambiguous="include" the AMBIGUOUS ones stay in with
  their original answer (the audit's correction of them is a judgment call), with "drop" they are left out too.
WRONG_CITATION errors never change the answer; their `correct_evidence` (like every entry's) feeds evidence recall.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_FILES, AUDIT_REPO
from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND, audit_dir, load_audit_json
from memeval.benchmarks.locomo.categories import QA_CATEGORIES
from memeval.errors import InputError

LOCOMO10_ORDER = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49",
                  "conv-50")  # the conversations of the released locomo10.json, in its order
WRONG_CITATION = "WRONG_CITATION"
AMBIGUOUS = "AMBIGUOUS"
SCORE_CORRUPTING = frozenset({"HALLUCINATION", "TEMPORAL_ERROR", "ATTRIBUTION_ERROR", AMBIGUOUS, "INCOMPLETE"})
ERROR_TYPES = SCORE_CORRUPTING | {WRONG_CITATION}
KEY_MODES = ("original", "corrected", "excluded")
AMBIGUOUS_CHOICES = ("include", "drop")
_AUDIT_ID = re.compile(r"locomo_(0|[1-9][0-9]{0,5})_qa(0|[1-9][0-9]{0,5})")
SOURCE = f"{AUDIT_REPO}@{AUDIT_COMMIT[:8]}"


class AuditEntry(BaseModel):
    """One error the audit found, on memeval's sample id. The audit's reasoning is its prose and is not held here
    (`Audit.reasoning` reads it from the fetched file when it is shown)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    audit_id: str
    sample_id: str
    conversation_id: str
    category: int
    question: str
    golden_answer: str
    correct_answer: str
    error_type: str
    cited_evidence: tuple[str, ...]
    correct_evidence: tuple[str, ...]

    @property
    def score_corrupting(self) -> bool:
        return self.error_type in SCORE_CORRUPTING


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def audit_sample_id(audit_id: str, conversations=None, where: str | Path = "locomo-audit") -> str:
    """memeval's sample id of an audit id; with `conversations` given, the question must be among them."""
    match = _AUDIT_ID.fullmatch(audit_id) if isinstance(audit_id, str) else None
    if match is None:
        raise InputError(where, "question_id", f"{str(audit_id)[:60]!r} is not locomo_<conversation>_qa<question>")
    conversation, question = int(match[1]), int(match[2])
    if conversation >= len(LOCOMO10_ORDER):
        raise InputError(where, audit_id, f"conversation {conversation} is past locomo10.json's "
                         f"{len(LOCOMO10_ORDER)}")
    conversation_id = LOCOMO10_ORDER[conversation]
    if conversations is not None:
        loaded = next((c for c in conversations if c.sample_id == conversation_id), None)
        if loaded is None or question >= len(loaded.qa):
            raise InputError(where, audit_id, f"no question {question} in {conversation_id} of the LoCoMo data")
    return f"{conversation_id}:q{question:04d}"


def _qa_by_id(conversations) -> dict[str, Any]:
    return {qa.sample_id: qa for c in conversations for qa in c.qa}


def _text(raw: dict, key: str, where: Path, audit_id: str) -> str:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(where, f"{audit_id}.{key}", f"expected a string, got {type(value).__name__}")
    return str(value)


def _evidence(raw: dict, key: str, where: Path, audit_id: str) -> tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(where, f"{audit_id}.{key}", "expected a list of dialogue ids")
    return tuple(value)


def _checked(raw: Any, where: Path, position: int, qa_by_id: dict, conversations) -> tuple[str, str, Any] | None:
    """(audit id, sample id, raw) of one item, its question checked against the data; None when its conversation
    is not among those loaded."""
    if not isinstance(raw, dict):
        raise InputError(where, f"[{position}]", f"expected an object, got {type(raw).__name__}")
    audit_id = raw.get("question_id")
    sample_id = audit_sample_id(audit_id, None, where)
    if sample_id.split(":")[0] not in {c.sample_id for c in conversations}:
        return None
    qa = qa_by_id.get(sample_id)
    if qa is None:
        raise InputError(where, audit_id, f"no question {sample_id} in the LoCoMo data")
    question = _text(raw, "question", where, audit_id)
    if not _same_text(question, qa.question):
        raise InputError(where, f"{audit_id}.question", f"does not match {sample_id}'s question in the LoCoMo data "
                         "(another release or conversation order?)")
    if raw.get("category") != qa.category:
        raise InputError(where, f"{audit_id}.category", f"{str(raw.get('category'))[:20]} where {sample_id} has "
                         f"{qa.category}")
    return audit_id, sample_id, raw


@dataclass
class Audit:
    """The audit's errors by memeval sample id (of the conversations it was loaded against)."""

    entries: dict[str, AuditEntry]
    directory: Path
    keyed: int = 0  # answer_key.json questions mapped and checked (0: that file not fetched)
    by_audit_id: dict[str, str] = field(default_factory=dict)

    def corrupting(self, ambiguous: str = "include") -> dict[str, AuditEntry]:
        """The errors that change a score (every type but WRONG_CITATION); ambiguous="drop" leaves AMBIGUOUS out."""
        _choice(ambiguous)
        return {s: e for s, e in self.entries.items()
                if e.score_corrupting and (ambiguous == "include" or e.error_type != AMBIGUOUS)}

    def counts(self) -> Counter:
        return Counter(e.error_type for e in self.entries.values())

    def reasoning(self, sample_id: str) -> str | None:
        """The audit's reason for an error, read from the fetched file each time (shown, never stored)."""
        entry = self.entries.get(sample_id)
        if entry is None:
            return None
        raw = load_audit_json("errors", self.directory) or []
        text = next((r.get("reasoning") for r in raw if isinstance(r, dict) and r.get("question_id") == entry.audit_id),
                    None)
        return text if isinstance(text, str) else None

    def corrected_evidence(self, sample_id: str) -> list[str] | None:
        entry = self.entries.get(sample_id)
        return None if entry is None else list(entry.correct_evidence)


def _conversations(conversations):
    if conversations is not None:
        return list(conversations)
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo

    return load_locomo(find_locomo())


def load_audit(conversations=None, directory: str | Path | None = None) -> Audit | None:
    """The fetched audit on `conversations` (default: the LoCoMo data memeval finds); None when errors.json was
    never fetched. Every mapped question's text and category must match the data's, in errors.json and (when
    fetched) answer_key.json; entries of conversations not loaded are left out."""
    raw_errors = load_audit_json("errors", directory)
    if raw_errors is None:
        return None
    base = audit_dir(directory)
    conversations = _conversations(conversations)
    qa_by_id = _qa_by_id(conversations)
    where = base / AUDIT_FILES["errors"].path
    if not isinstance(raw_errors, list):
        raise InputError(where, "json", f"expected a list of errors, got {type(raw_errors).__name__}")
    entries: dict[str, AuditEntry] = {}
    by_audit_id: dict[str, str] = {}
    for position, item in enumerate(raw_errors):
        checked = _checked(item, where, position, qa_by_id, conversations)
        if checked is None:
            continue
        audit_id, sample_id, raw = checked
        if sample_id in entries:
            raise InputError(where, audit_id, "listed twice")
        error_type = raw.get("error_type")
        if error_type not in ERROR_TYPES:
            raise InputError(where, f"{audit_id}.error_type", f"{str(error_type)[:40]!r} is none of "
                             + ", ".join(sorted(ERROR_TYPES)))
        entries[sample_id] = AuditEntry(
            audit_id=audit_id, sample_id=sample_id, conversation_id=sample_id.split(":")[0],
            category=raw["category"], question=qa_by_id[sample_id].question,
            golden_answer=_text(raw, "golden_answer", where, audit_id),
            correct_answer=_text(raw, "correct_answer", where, audit_id), error_type=error_type,
            cited_evidence=_evidence(raw, "cited_evidence", where, audit_id),
            correct_evidence=_evidence(raw, "correct_evidence", where, audit_id))
        by_audit_id[audit_id] = sample_id
    keyed = 0
    raw_key = load_audit_json("answer_key", directory)
    if raw_key is not None:
        key_where = base / AUDIT_FILES["answer_key"].path
        if not isinstance(raw_key, list):
            raise InputError(key_where, "json", f"expected a list of questions, got {type(raw_key).__name__}")
        keyed = sum(_checked(item, key_where, i, qa_by_id, conversations) is not None
                    for i, item in enumerate(raw_key))
    return Audit(entries=entries, directory=base, keyed=keyed, by_audit_id=by_audit_id)


def ceilings(audit: Audit, conversations) -> dict[int | str, float]:
    """Percent of the non-adversarial questions whose original key is right, per category 1–4 and "overall": what
    a perfect system scores under the original key."""
    corrupting = audit.corrupting()
    totals: Counter = Counter()
    wrong: Counter = Counter()
    for c in conversations:
        for qa in c.qa:
            if qa.category in QA_CATEGORIES:
                totals[qa.category] += 1
                wrong[qa.category] += qa.sample_id in corrupting
    result: dict[int | str, float] = {cat: 100.0 * (totals[cat] - wrong[cat]) / totals[cat]
                                      for cat in QA_CATEGORIES if totals[cat]}
    n = sum(totals.values())
    if n:
        result["overall"] = 100.0 * (n - sum(wrong.values())) / n
    return result


def _choice(ambiguous: str) -> None:
    if ambiguous not in AMBIGUOUS_CHOICES:
        raise InputError("--ambiguous", str(ambiguous)[:40], "expected include or drop")


class AnswerKey:
    """The gold answer each question is scored against, under one key mode."""

    def __init__(self, mode: str, ambiguous: str, audit: Audit | None):
        self.mode, self.ambiguous, self.audit = mode, ambiguous, audit

    @property
    def label(self) -> str:
        if self.mode == "original":
            return "original key (LoCoMo's gold answers)"
        corrupting = self.audit.corrupting() if self.audit else {}
        ambiguous = sum(e.error_type == AMBIGUOUS for e in corrupting.values())
        rest = len(corrupting) - ambiguous
        if self.mode == "corrected":
            kept = f"{ambiguous} ambiguous left out" if self.ambiguous == "drop" else f"{ambiguous} ambiguous corrected"
            return f"corrected key ({rest} wrong gold answers replaced by the audit's, {kept}; {SOURCE})"
        kept = f"{ambiguous} ambiguous left out" if self.ambiguous == "drop" else \
            f"{ambiguous} ambiguous kept with their original answer"
        return f"excluded key ({rest} questions with a wrong gold answer left out, {kept}; {SOURCE})"

    @property
    def identity(self) -> dict[str, str]:
        """What a run records of its key (a different key is a different judged result)."""
        if self.mode == "original":
            return {"key": "original"}
        return {"key": self.mode, "ambiguous": self.ambiguous, "audit": f"{AUDIT_REPO}@{AUDIT_COMMIT}"}

    def affected(self, sample_id: str) -> AuditEntry | None:
        """The audit's entry for this question (any error type, WRONG_CITATION included), or None."""
        return self.audit.entries.get(sample_id) if self.audit else None

    def gold(self, sample_id: str, original_gold: str | None) -> str | None:
        """The answer to score against; None: the question is left out under this key."""
        entry = self.affected(sample_id)
        if self.mode == "original" or entry is None or not entry.score_corrupting:
            return original_gold
        if entry.error_type == AMBIGUOUS:
            if self.ambiguous == "drop":
                return None
            return entry.correct_answer if self.mode == "corrected" else original_gold
        return entry.correct_answer if self.mode == "corrected" else None


def answer_key(mode: str = "original", ambiguous: str = "include", directory: str | Path | None = None,
               conversations=None) -> AnswerKey:
    """The key for `mode`. The original key needs no audit (it is read when fetched, to flag affected questions);
    the others refuse without it, naming the command that fetches it."""
    if mode not in KEY_MODES:
        raise InputError("--key", str(mode)[:40], "expected " + ", ".join(KEY_MODES))
    _choice(ambiguous)
    if mode == "original":
        if ambiguous != "include":
            raise InputError("--ambiguous", ambiguous, "the original key scores every question as LoCoMo has it; "
                             "drop AMBIGUOUS questions with --key corrected or --key excluded")
        return AnswerKey(mode, ambiguous, load_audit(conversations, directory) if _fetched(directory) else None)
    audit = load_audit(conversations, directory)
    if audit is None:
        raise InputError("--key", mode, f"needs the LoCoMo audit; fetch it with `{FETCH_COMMAND}` (from "
                         f"github.com/{AUDIT_REPO} at {AUDIT_COMMIT[:12]})")
    return AnswerKey(mode, ambiguous, audit)


def _fetched(directory: str | Path | None) -> bool:
    return (audit_dir(directory) / AUDIT_FILES["errors"].path).is_file()
