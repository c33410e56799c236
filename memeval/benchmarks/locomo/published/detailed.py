"""The EverMemOS evaluation framework's `detailed_results` files and the framework's own statistics over them.

EverMemOS (github.com/EverMind-AI/EverMemOS, `evaluation/`) writes every run it evaluates as one JSON object whose
`detailed_results` maps a conversation group ("locomo_exp_user_0") to a list of items: `question_id`
("locomo_<conversation index>_qa<question index>"), `question`, `golden_answer`, `generated_answer`, `category` (a
string) and `llm_judgments` ({"judgment_1": true, ...}: one boolean per judge run; {} when no judge ran). An
optional `metadata` object says what produced it (answer_model, judge_model, num_runs, answer_prompt, ...). The
published runs of full context, Mem0, Zep, MemOS, MemU and EverCore, and the locomo-audit's baselines, are in it.

The statistics are the framework's, so a number here is the number it printed (`evaluate` in
evaluation/src/evaluators/llm_judge.py at commit 1f2f083d): run i's accuracy is accepted over judged among the
items holding judgment_i; a category's run i is accepted over all of that category's items; the primary figure is
the mean of the run accuracies, beside their population standard deviation (np.std, ddof 0). The majority vote
(the locomo-audit's fc_eval.py `majority_vote_accuracy`) accepts an item when more than half of its runs did,
over the items judged at least once.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from memeval.errors import InputError

RECORDED_PROTOCOL = "evermemos_recorded"  # the judge whose labels a file brought: never one memeval re-ran
RECORDED = "recorded, not re-run"
NOT_STATED = "not stated by the file"
_JUDGMENT_KEY = re.compile(r"judgment_([1-9][0-9]{0,5})")
_CATEGORY = re.compile(r"[0-9]{1,3}")


class DetailedRow(BaseModel):
    """One item of `detailed_results`; `judgments` in judgment_1..N order ([] when not judged)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    question_id: str
    question: str
    golden_answer: str
    generated_answer: str
    category: int
    judgments: list[bool]
    conversation: str  # the group key the item was listed under


@dataclass(frozen=True)
class DetailedFile:
    path: Path
    rows: list[DetailedRow]
    metadata: dict  # the file's `metadata` object ({} when it has none)
    sha256: str

    @property
    def runs(self) -> int:
        return max((len(r.judgments) for r in self.rows), default=0)


@dataclass(frozen=True)
class PublishedStats:
    """Percentages (0–100); None where nothing was judged."""

    mean: float | None  # the mean of the run accuracies: the framework's primary figure
    run_scores: list[float]
    std: float | None  # population standard deviation of the run accuracies
    majority: float | None
    n: int  # items
    judged: int  # items with at least one judgment
    by_category: dict[int, PublishedStats] = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return len(self.run_scores)


def _text(item: dict, name: str, where: str, *, null: str | None = None) -> str:
    if name not in item:
        raise InputError(where, name, "missing")
    value = item[name]
    if value is None and null is not None:
        return null
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(where, name, f"expected text, got {'null' if value is None else type(value).__name__}")
    return str(value)


def _category(item: dict, where: str) -> int:
    value = item.get("category")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1000:
        return value
    if isinstance(value, str) and _CATEGORY.fullmatch(value.strip()):  # fullmatch: "²".isdigit() is True
        return int(value.strip())
    shown = "missing" if "category" not in item else f"{value!r}"[:40]
    raise InputError(where, "category", f"expected a category number such as \"2\", got {shown}")


def _judgments(item: dict, where: str) -> list[bool]:
    """judgment_1..judgment_N as a list; {} (or no field: the framework reads it with `.get(..., {})`) is []."""
    value = item.get("llm_judgments")
    if value is None:
        return []
    if not isinstance(value, dict):
        raise InputError(where, "llm_judgments", f"expected an object of judgment_1, judgment_2, ..., got "
                         f"{type(value).__name__}")
    runs: dict[int, bool] = {}
    for key, label in value.items():
        match = _JUDGMENT_KEY.fullmatch(key)
        if match is None:
            raise InputError(where, f"llm_judgments.{key[:40]}", "expected keys judgment_1, judgment_2, ...")
        if not isinstance(label, bool):
            raise InputError(where, f"llm_judgments.{key}", f"expected true or false, got {label!r}"[:120])
        runs[int(match[1])] = label
    if runs and sorted(runs) != list(range(1, len(runs) + 1)):
        gap = min(set(range(1, max(runs) + 1)) - set(runs))
        raise InputError(where, f"llm_judgments.judgment_{gap}", f"missing while judgment_{max(runs)} is there "
                         "(runs are numbered from 1 without gaps)")
    return [runs[i] for i in sorted(runs)]


def _row(item: object, where: str, group: str) -> DetailedRow:
    if not isinstance(item, dict):
        raise InputError(where, "item", f"expected an object, got {type(item).__name__}")
    question_id = item.get("question_id")
    if not isinstance(question_id, str) or not question_id:
        raise InputError(where, "question_id", "missing" if "question_id" not in item else
                         f"expected a text id such as \"locomo_0_qa1\", got {question_id!r}"[:120])
    return DetailedRow(question_id=question_id, question=_text(item, "question", where),
                       golden_answer=_text(item, "golden_answer", where, null=""),
                       generated_answer=_text(item, "generated_answer", where), category=_category(item, where),
                       judgments=_judgments(item, where), conversation=group)


def read_detailed(path: str | Path, invalid: Callable[[InputError], None] | None = None) -> DetailedFile:
    """The items of a `detailed_results` file in file order. A malformed item raises InputError naming the file,
    the item and the field, or, given `invalid`, is handed to it and left out (it may raise). A malformed file
    (not JSON, no `detailed_results`, a group that is not a list) always raises."""
    from memeval.safe_json import load_json_bytes, read_bytes

    path = Path(path)
    if not path.exists():
        raise InputError(path, "answers", "no such file")
    data = read_bytes(path, "answers", kind="answers")
    doc = load_json_bytes(data, path, "json")
    if not isinstance(doc, dict):
        raise InputError(path, "top level", f"expected an object with `detailed_results`, got {type(doc).__name__}")
    groups = doc.get("detailed_results")
    if not isinstance(groups, dict):
        raise InputError(path, "detailed_results", "missing" if "detailed_results" not in doc else
                         f"expected an object of conversation group → list of items, got {type(groups).__name__}")
    metadata = doc.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InputError(path, "metadata", f"expected an object, got {type(metadata).__name__}")
    rows = []
    for group, items in groups.items():
        if not isinstance(items, list):
            raise InputError(path, f"detailed_results[{group!r}]"[:120], "expected a list of items")
        for i, item in enumerate(items):
            try:
                rows.append(_row(item, f"{path} detailed_results[{group!r}][{i}]", group))
            except InputError as exc:
                if invalid is None:
                    raise
                invalid(exc)
    return DetailedFile(path, rows, dict(metadata or {}), hashlib.sha256(data).hexdigest())


def _stats(rows: Sequence, runs: int, denominator_all: bool) -> PublishedStats:
    """`denominator_all`: run i over all `rows` (the framework's per-category rule), else over those holding it."""
    scores = []
    for i in range(runs):
        held = [r.judgments[i] for r in rows if len(r.judgments) > i]
        total = len(rows) if denominator_all else len(held)
        if total:
            scores.append(100.0 * sum(held) / total)
    judged = [r.judgments for r in rows if r.judgments]
    majority = 100.0 * sum(2 * sum(j) > len(j) for j in judged) / len(judged) if judged else None
    return PublishedStats(mean=float(np.mean(scores)) if scores else None, run_scores=scores,
                          std=float(np.std(scores)) if scores else None, majority=majority, n=len(rows),
                          judged=len(judged))


def published_stats(rows: Iterable) -> PublishedStats:
    """The framework's statistics of `rows` (anything with `category` and `judgments`, a list of booleans in run
    order), overall and per category (see the module docstring)."""
    rows = list(rows)
    runs = max((len(r.judgments) for r in rows), default=0)
    groups: dict[int, list] = defaultdict(list)
    for row in rows:
        groups[int(row.category)].append(row)
    overall = _stats(rows, runs, denominator_all=False)
    return PublishedStats(**{**overall.__dict__, "by_category": {
        c: _stats(g, runs, denominator_all=True) for c, g in sorted(groups.items())}})


@dataclass(frozen=True)
class _Judged:
    category: int
    judgments: list[bool]


def recorded_stats(judgments: Iterable) -> PublishedStats:
    """`published_stats` of stored judgment rows of a recorded protocol (scores 100 accepted, 0 not, in run order)."""
    return published_stats(_Judged(int(j.category), [s >= 50 for s in j.scores if s >= 0]) for j in judgments)


def is_recorded(protocol: str | None) -> bool:
    return bool(protocol) and protocol.endswith("_recorded")
