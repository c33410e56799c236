"""A LoCoMo run's stored rows under a chosen answer key (memeval/benchmarks/locomo/audit_key.py): the original key (what papers
compare), the LoCoMo audit's corrected key, or the audited questions excluded.

Why here and pure: the answers a system gave do not depend on the key, so no answer is ever rewritten or re-asked.
F1 is recomputed against the key's gold (BLEU-1 by `memeval results` from the same gold), a question the key
leaves out leaves every denominator, evidence recall is recomputed on the audit's corrected citations, and a judge
grades an affected question again only under a gold that differs, as a judgment row of its own
(`JudgmentRow.answer_key`); every other question keeps its original-key judgment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence

from memeval.qa.evidence import evidence_recall, recall_curve
from memeval.records import AnswerRow, JudgmentRow
from memeval.scoring.f1 import score_f1

NOT_CHECKED = ("Answer key: not checked against the LoCoMo audit, so no table here says how far its gold answers "
               "can be trusted; `memeval data fetch locomo-audit` fetches it (then every LoCoMo table shows the "
               "ceiling of a perfect system and `--key corrected|excluded` is available).")


class KeyedAnswer(AnswerRow):
    """An answer row scored under a key other than the original one: its gold (and F1, evidence recall) are the
    key's. Never written to answers.jsonl; under a corrected gold the judge stage grades it as a row of its own."""

    answer_key: str = "original"


def changed_gold(key, sample_id: str, gold) -> tuple[bool, object]:
    """(kept, gold) of one question under `key`: kept is False when the key leaves it out."""
    if key is None or key.mode == "original" or key.affected(sample_id) is None:
        return True, gold
    new = key.gold(sample_id, gold)
    return (False, gold) if new is None else (True, new)


def _kept(rows: Iterable[AnswerRow], key) -> Iterator[tuple[AnswerRow, object]]:
    """Each row `key` keeps, with its gold under the key: the one walk answers and judged rows share."""
    for row in rows:
        kept, gold = changed_gold(key, row.sample_id, row.gold)
        if kept:
            yield row, gold


def keyed_answers(rows: Iterable[AnswerRow], key, evidence: Callable[[str], Sequence[str] | None] | None = None
                  ) -> list[AnswerRow]:
    """`rows` under `key` (None or mode original: unchanged). `evidence`: the corrected citations of a question
    (`Audit.corrected_evidence`; None where the audit leaves them as they are)."""
    if key is None or key.mode == "original":
        return list(rows)
    out: list[AnswerRow] = []
    for row, gold in _kept(rows, key):
        changes: dict = {}
        if str(gold) != str(row.gold):
            changes.update(gold=gold, answer_key=key.mode,
                           f1=None if row.f1 is None else score_f1(row.prediction, gold, row.category, "locomo"))
        cited = evidence(row.sample_id) if evidence is not None else None
        if cited is not None and sorted(cited) != sorted(row.evidence_ids):
            changes.update(evidence_ids=list(cited), **_recall(row, cited))
        out.append(KeyedAnswer.model_validate({**row.to_row(), **changes}) if changes else row)
    return out


def _recall(row: AnswerRow, cited: Sequence[str]) -> dict:
    """Evidence recall on corrected citations. At the run's k it is exact (the memories given are stored); a
    ranked curve is recomputed as far as the stored memories reach, and NaN past them (the ranking below k is
    not stored), so recall@k means past the run's k leave such a question out. A row whose recall was never
    measured (an imported answer without its retrieved memories) stays unmeasured: no retrieval is not recall 0."""
    if row.error is not None or (row.evidence_recall is None and not row.retrieved_ids):
        return {}
    curve = None
    if row.recall_curve:
        exact = recall_curve(cited, row.retrieved_ids, len(row.recall_curve)) or []
        curve = [v if i < len(row.retrieved_ids) else math.nan for i, v in enumerate(exact)] or None
    return {"evidence_recall": evidence_recall(cited, row.retrieved_ids), "recall_curve": curve}


def judge_rows(answers: Iterable[AnswerRow], key) -> list[AnswerRow]:
    """The rows a judge grades under `key`: a question whose gold the key changes carries the new gold (a
    judgment of its own); a question it leaves out is not judged; every other row is the original one, whose
    original-key judgment is reused."""
    if key is None or key.mode == "original":
        return list(answers)
    return [KeyedAnswer.model_validate({**row.to_row(), "gold": gold, "answer_key": key.mode})
            if str(gold) != str(row.gold) else row for row, gold in _kept(answers, key)]


def keyed_judgments(judgments: Iterable[JudgmentRow], key, golds: dict[str, object] | None = None
                    ) -> list[JudgmentRow]:
    """The judgments that count under `key`, one per (system, question, protocol): the corrected-key row of a
    question whose gold the key changes, the original row of every other question, none of a question the key
    leaves out. `golds`: each question's original gold (sample id → gold) where the run's may differ from the
    audit's copy of it (default: the audit's `golden_answer`)."""
    rows = list(judgments)
    if key is None or key.mode == "original":
        return [j for j in rows if j.answer_key == "original"]
    out = []
    for j in rows:
        entry = key.affected(j.sample_id)
        if entry is None:
            if j.answer_key == "original":
                out.append(j)
            continue
        original = (golds or {}).get(j.sample_id, entry.golden_answer)
        kept, gold = changed_gold(key, j.sample_id, original)
        if kept and j.answer_key == (key.mode if str(gold) != str(original) else "original"):
            out.append(j)
    return out


def unjudged_changes(judgments: Iterable, key, golds: dict[str, object] | None = None) -> dict[tuple[str, str], int]:
    """(system, protocol) → the questions of categories 1–4 whose gold the corrected `key` changes that it judged
    on the original gold only. Such a judge has no J under that key: the questions it kept are the excluded key's
    set, and a number over them would pass a partial set off as the corrected J."""
    from memeval.benchmarks.locomo.categories import QA_CATEGORIES

    if key is None or key.mode != "corrected":
        return {}
    rows = list(judgments)
    keyed = {(j.system, j.protocol, j.sample_id) for j in rows if j.answer_key == key.mode}
    out: dict[tuple[str, str], int] = {}
    for j in rows:
        entry = key.affected(j.sample_id) if j.answer_key == "original" and j.category in QA_CATEGORIES else None
        if entry is None:
            continue
        original = (golds or {}).get(j.sample_id, entry.golden_answer)
        kept, gold = changed_gold(key, j.sample_id, original)
        if kept and str(gold) != str(original) and (j.system, j.protocol, j.sample_id) not in keyed:
            out[(j.system, j.protocol)] = out.get((j.system, j.protocol), 0) + 1
    return out


def unjudged_notes(missing: dict[tuple[str, str], int]) -> list[str]:
    """Why a J under the corrected key is "–": one line per judge protocol (`unjudged_changes`)."""
    from memeval.benchmarks.locomo.published.detailed import is_recorded

    out = []
    for protocol in dict.fromkeys(p for _, p in missing):
        systems = [s for s, p in missing if p == protocol]
        counts = ", ".join(f"{s} {missing[(s, protocol)]}" for s in systems)
        out.append(f"J ({protocol} judge) under the corrected key: – for {', '.join(systems)} " + (
            f"(not judged on this key): recorded judgments graded the original gold and cannot be re-run on the "
            f"questions the key corrects ({counts}); `--key excluded` leaves those questions out."
            if is_recorded(protocol) else
            f"(not re-judged on this key: {counts} corrected questions judged on the original gold only): "
            "`memeval locomo run … --key corrected` re-judges them (cached answers, new judge requests only)."))
    return out


def key_notes(key, audit, conversations) -> list[str]:
    """What a LoCoMo table says of its key: the key used (`AnswerKey.label`), and the ceiling of a perfect system
    under the original key per category and overall when the audit is fetched; when it is not, one line saying
    the key has not been checked and how to fetch the audit."""
    from memeval.benchmarks.locomo.categories import QA_CATEGORIES, category_label

    lines = [f"Answer key: {key.label}."] if key is not None else []
    if audit is None:
        return lines + [NOT_CHECKED]
    from memeval.benchmarks.locomo.audit_key import ceilings

    found = ceilings(audit, conversations)
    parts = [f"{category_label(c)} {found[c]:.2f}" for c in QA_CATEGORIES if found.get(c) is not None]
    lines.append("Ceiling of a perfect system under the original key (the share of questions whose published gold "
                 "the LoCoMo audit finds right, ×100): " + ", ".join(parts)
                 + (f"; overall (1–4) {found['overall']:.2f}." if found.get("overall") is not None else "."))
    if (key is None or key.mode == "original") and any(v < 100 for v in found.values() if v is not None):
        lines[-1] += f" {ABOVE_CEILING}"
    return lines


ABOVE_CEILING = ("A J above its ceiling is credit on questions whose gold the audit finds wrong: a lenient judge "
                 "accepting an answer that disagrees with that gold, or an answer matching the wrong gold.")


def resolve_key(mode: str = "original", ambiguous: str = "include", conversations=None, directory=None):
    """(AnswerKey, Audit or None): the key asked for, and the fetched audit (None when it is not fetched; the
    original key needs none, corrected and excluded refuse in one line naming the fetch command)."""
    from memeval.benchmarks.locomo.audit_key import answer_key

    key = answer_key(mode, ambiguous, directory=directory, conversations=conversations)
    return key, key.audit


def key_evidence(key, audit) -> Callable[[str], Sequence[str] | None] | None:
    """The corrected citations to score evidence recall on: the audit's under the corrected key, else none."""
    if key is None or audit is None or key.mode != "corrected":
        return None
    return audit.corrected_evidence
