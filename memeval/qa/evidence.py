"""Evidence recall: the share of a question's evidence dia_ids present in what a system retrieved."""

from __future__ import annotations

from collections.abc import Sequence


def evidence_recall(evidence_ids: Sequence[str], retrieved: Sequence[Sequence[str]]) -> float | None:
    """None when the question has no resolvable evidence (it is then left out of recall means)."""
    wanted = set(evidence_ids)
    if not wanted:
        return None
    found = set().union(*map(set, retrieved)) if retrieved else set()
    return len(wanted & found) / len(wanted)


def recall_curve(evidence_ids: Sequence[str], ranked: Sequence[Sequence[str]], k_max: int) -> list[float] | None:
    """Recall@k for k = 1..k_max over a ranked list (past its end recall stays at its final value)."""
    wanted = set(evidence_ids)
    if not wanted:
        return None
    found: set[str] = set()
    curve = []
    for k in range(k_max):
        if k < len(ranked):
            found.update(wanted.intersection(ranked[k]))
        curve.append(len(found) / len(wanted))
    return curve
