"""The report of a LongMemEval run: accuracy by question type when judged (abstention apart), beside the published
LongMemEval_S accuracies; evidence recall at session and turn level; context and latency."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.baselines_longmemeval import LONGMEMEVAL_BASELINES, protocol_label
from memeval.data.longmemeval import QUESTION_TYPES
from memeval.records import LMEAnswerRow

RECALL_KS = (1, 5, 10)


def longmemeval_report(answers: Sequence[LMEAnswerRow], judgments: dict, notes: Sequence[str] = ()) -> str:
    """Accuracy (overall, by type, task-averaged, abstention) when judged; evidence recall; context and latency."""
    from memeval.reports.tables import markdown_table

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.2f}"

    def mean(values) -> float | None:
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    systems = list(dict.fromkeys(a.system for a in answers))
    parts = ["# LongMemEval report", ""] + [f"> {n}" for n in notes]
    body = []
    for system in systems:
        mine = [a for a in answers if a.system == system]
        labels = [judgments[a.key].label for a in mine if a.key in judgments]
        if not labels:
            body.append([system, *["not measured"] * (len(QUESTION_TYPES) + 3), len(mine)])
            continue
        by_type = [mean(float(judgments[a.key].label) for a in mine if a.key in judgments
                        and a.question_type == t and not a.abstention) for t in QUESTION_TYPES]
        abstention = mean(float(judgments[a.key].label) for a in mine if a.key in judgments and a.abstention)
        body.append([system, *[pct(v) for v in by_type], pct(mean(map(float, labels))),
                     pct(mean(by_type)), pct(abstention), len(mine)])
    judges = sorted({j.judge_model or "unknown" for j in judgments.values()})
    parts += ["## Accuracy ×100 (LongMemEval's judge protocol)", "",
              markdown_table(["System", *QUESTION_TYPES, "overall", "task-averaged", "abstention", "questions"], body),
              "", "- Accuracy is the judge's yes rate; offline no judge ran, so it is not measured. Abstention "
              "questions (`_abs`) are counted apart from their types."]
    parts += [f"- Judge {j}: {protocol_label(None if j == 'unknown' else j)}." for j in judges]
    parts += ["", "## Published LongMemEval_S accuracy ×100 (not rerun here)", "", markdown_table(
        ["System", "reader", "accuracy", "judge", "same protocol as the benchmark's", "source"],
        [[b.system, b.reader, f"{b.accuracy:.1f}", b.judge,
          {True: "yes", False: "no", None: "not stated"}[b.same_protocol], b.source]
         for b in LONGMEMEVAL_BASELINES]),
        "", "- A published row is comparable to ours only where both were judged by the same protocol and judge."]
    recall = []
    for system in systems:
        mine = [a for a in answers if a.system == system]
        row = [system]
        for key in ("session_recall", "turn_recall"):
            curves = [getattr(a, key) for a in mine if getattr(a, key)]
            row += [pct(mean(c[k - 1] for c in curves)) if curves else "–" for k in RECALL_KS]
        row += [pct(mean(a.sessions_given for a in mine)), f"{mean(a.context_tokens for a in mine):.0f}",
                f"{1000 * mean(a.latency_search_s for a in mine):.2f}"]
        recall.append(row)
    parts += ["", "## Evidence recall ×100, context and latency", "", markdown_table(
        ["System", *[f"session recall@{k}" for k in RECALL_KS], *[f"turn recall@{k}" for k in RECALL_KS],
         "evidence sessions given", "context tokens / q", "search (ms)"], recall)]
    return "\n".join(parts) + "\n"
