"""The report of a LongMemEval run: accuracy as the benchmark's own summary computes it (abstention questions inside
their types, task-averaged over the six types, overall, abstention) beside the published LongMemEval_S accuracies;
the benchmark's retrieval numbers (recall_any@k, recall_all@k, ndcg_any@k, session and turn level); memeval's own
evidence_recall@k, context and latency."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.benchmarks.longmemeval.baselines import LONGMEMEVAL_BASELINES, OVERALL
from memeval.benchmarks.longmemeval.metrics import QA_TYPES, RETRIEVAL_NAMES, mean_retrieval, qa_metrics
from memeval.records import LMEAnswerRow

RECALL_KS = (1, 5, 10)  # memeval's evidence_recall@k columns
SESSION_KS = (5, 10)  # the benchmark's printed session-level cut-offs
TURN_KS = (5, 10, 50)  # and turn-level ones


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.2f}"


def _counted(v: float | None, n: int) -> str:
    return f"{_pct(v)} ({n})" if n else "–"


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def accuracy_rows(answers: Sequence[LMEAnswerRow], judgments: dict, systems: Sequence[str]) -> list[list]:
    """One row per system: per-type accuracy (judged count in brackets), task-averaged, overall, abstention."""
    body = []
    for system in systems:
        mine = [a for a in answers if a.system == system]
        judged = [(a.question_id, a.question_type, judgments[a.key].label) for a in mine if a.key in judgments]
        if not judged:
            body.append([system, *["not measured"] * (len(QA_TYPES) + 3), len(mine)])
            continue
        m = qa_metrics(judged)
        body.append([system, *[_counted(m.by_type[t], m.counts[t]) for t in QA_TYPES], _pct(m.task_averaged),
                     _pct(m.overall), _counted(m.abstention, m.abstention_count), len(mine)])
    return body


def retrieval_rows(answers: Sequence[LMEAnswerRow], systems: Sequence[str], level: str, ks: Sequence[int]
                   ) -> list[list]:
    """The benchmark's per-question retrieval numbers averaged over the questions it scores, per ranked system."""
    body = []
    for system in systems:
        means, n = mean_retrieval(a.retrieval for a in answers if a.system == system)
        if not n:
            continue
        body.append([system, *[_pct(means[level].get(f"{name}@{k}")) for k in ks for name in RETRIEVAL_NAMES], n])
    return body


def judge_line(judgments: dict, judge: str, problem: str | None = None) -> str:
    """Whether one judge model's judgments are the published protocol: the fetched prompts and the benchmark's
    judge model, not the model alone (memeval.protocols.status)."""
    from memeval.protocols.status import judge_status

    model = None if judge == "unknown" else judge
    versions = {j.prompt_version for j in judgments.values() if (j.judge_model or "unknown") == judge}
    return judge_status("longmemeval", model, versions, problem)


def longmemeval_report(answers: Sequence[LMEAnswerRow], judgments: dict, notes: Sequence[str] = (),
                       protocol_problem: str | None = None) -> str:
    """Accuracy (by type, task-averaged, overall, abstention) when judged; the benchmark's retrieval numbers;
    evidence_recall@k, context and latency."""
    from memeval.reports.markdown import markdown_table

    systems = list(dict.fromkeys(a.system for a in answers))
    parts = ["# LongMemEval report", ""] + ([*[f"> {n}" for n in notes], ""] if notes else [])
    judges = sorted({j.judge_model or "unknown" for j in judgments.values()})
    parts += ["## Accuracy ×100 (`--judge longmemeval`; its protocol status under the table)", "",
              markdown_table(["System", *QA_TYPES, "task-averaged", OVERALL, "abstention", "questions"],
                             accuracy_rows(answers, judgments, systems)),
              "", "- Accuracy is the judge's yes rate" + ("" if judgments else "; no judge ran, so it is not "
                                                               "measured") + ". As the benchmark's summary computes them: each type counts every judged question of that type, abstention "
              "questions (`_abs` in the id) included (judged count in brackets); task-averaged is the mean of the "
              "six type accuracies (– until every type has a judged question); overall is over every judged "
              "question; abstention is over the `_abs` questions alone."]
    parts += [f"- Judge {j}: {judge_line(judgments, j, protocol_problem)}." for j in judges]
    parts += ["", "## Published LongMemEval_S accuracy ×100 (not rerun here)", "", markdown_table(
        ["System", "reader", "accuracy", "compares with", "judge", "same protocol as the benchmark's", "source"],
        [[b.system, b.reader, f"{b.accuracy:.1f}", b.metric, b.judge,
          {True: "yes", False: "no", None: "not stated"}[b.same_protocol], b.source]
         for b in LONGMEMEVAL_BASELINES]),
        "", f"- The published rows are LongMemEval_S (500 questions); this run has "
        f"{len({a.question_id for a in answers})} questions.",
        "- A published row is comparable to ours only where both were judged by the same protocol and judge; "
        "its number is the column named under \"compares with\" above (overall: every question, abstention "
        "included)."]
    headers = [f"{name}@{k}" for k in SESSION_KS for name in RETRIEVAL_NAMES]
    session = retrieval_rows(answers, systems, "session", SESSION_KS)
    turn = retrieval_rows(answers, systems, "turn", TURN_KS)
    parts += ["", "## Retrieval ×100 as the benchmark computes it", ""]
    if session or turn:
        parts += ["Session level:", "", markdown_table(["System", *headers, "questions scored"], session), "",
                  "Turn level:", "", markdown_table(
                      ["System", *[f"{name}@{k}" for k in TURN_KS for name in RETRIEVAL_NAMES], "questions scored"],
                      turn), ""]
    else:
        parts += ["No ranked system, or no question the benchmark scores: nothing to show.", ""]
    parts += ["- recall_any@k: 1 when at least one evidence item is among the first k, else 0; recall_all@k: 1 when "
              "all are (a question with no creditable evidence scores recall_all 1 and recall_any 0, as in the "
              "benchmark); ndcg_any@k: the ranks of the evidence items among the first k against the best order."]
    parts += ["- Only user turns are ranked (a system's ranking with assistant turns taken out); a turn or session "
              "earns credit only through `has_answer` user turns; session level is read from the turn ranking "
              "with k widened until k distinct sessions are seen; ndcg_any discounts rank r ≥ 2 by log2(r). "
              "Abstention questions and questions without a user `has_answer` turn are not scored; unranked "
              "systems (full_context, no_memory) have no ranking."]
    recall = []
    for system in systems:
        mine = [a for a in answers if a.system == system]
        row = [system]
        for key in ("session_recall", "turn_recall"):
            curves = [getattr(a, key) for a in mine if getattr(a, key)]
            row += [_pct(_mean(c[k - 1] for c in curves)) if curves else "–" for k in RECALL_KS]
        row += [_pct(_mean(a.sessions_given for a in mine)), f"{_mean(a.context_tokens for a in mine):.0f}",
                f"{1000 * _mean(a.latency_search_s for a in mine):.2f}"]
        recall.append(row)
    parts += ["", "## memeval's evidence_recall@k ×100, context and latency", "", markdown_table(
        ["System", *[f"session evidence_recall@{k}" for k in RECALL_KS],
         *[f"turn evidence_recall@{k}" for k in RECALL_KS], "evidence sessions given", "context tokens / q",
         "search (ms)"], recall),
        "", "- evidence_recall@k is memeval's own measure, not the benchmark's recall: the share of evidence "
        "sessions (`answer_session_ids`) or `has_answer` turns (assistant turns included) among the first k "
        "memories, averaged over questions with evidence."]
    return "\n".join(parts) + "\n"


def data_summary(stats: dict) -> str:
    """memeval.benchmarks.longmemeval.data.stats as bullets a reader can scan: counts with thousands separators, the mean to
    one decimal, the question types one per line."""
    lines = []
    for key, value in stats.items():
        name = key.replace("_", " ").replace(" mean", " (mean)")
        if isinstance(value, dict):
            lines.append(f"- **{name}**: " + ", ".join(f"{k} {v:,}" for k, v in value.items()))
        elif isinstance(value, float):
            lines.append(f"- **{name}**: {value:,.1f}")
        else:
            lines.append(f"- **{name}**: {value:,}" if isinstance(value, int) else f"- **{name}**: {value}")
    return "\n".join(lines)
