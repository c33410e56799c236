"""Complete result rows for tests that write run files by hand (every field the records require)."""

from __future__ import annotations

from memeval.records import AnswerRow, JudgmentRow


def answer_row(sample_id: str = "conv-1:q0000", **fields) -> dict:
    row = {"sample_id": sample_id, "conversation_id": sample_id.split(":")[0], "category": 4, "question": "q",
           "gold": "g", "prediction": "p", "system": "s", "answerer": "extractive", "k": 10, "f1": 0.0,
           "evidence_ids": [], "evidence_recall": None, "recall_curve": None, "retrieved_ids": [],
           "latency_search_s": 0.0, "latency_total_s": 0.0, "context_tokens": 1, "error": None, **fields}
    return AnswerRow.from_row(row).to_row()


def judgment_row(sample_id: str = "conv-1:q0000", **fields) -> dict:
    row = {"sample_id": sample_id, "conversation_id": sample_id.split(":")[0], "category": 4, "system": "s",
           "prompt_version": "v", "protocol": "graded", "scores": [], "mean": None, "std": None, "run_count": 0,
           "warning": None, "errors": [], **fields}
    return JudgmentRow.from_row(row).to_row()


def answer(sample_id: str = "conv-1:q0000", **fields) -> AnswerRow:
    """`answer_row` as the record the readers return."""
    return AnswerRow.from_row(answer_row(sample_id, **fields))


def judgment(sample_id: str = "conv-1:q0000", **fields) -> JudgmentRow:
    """`judgment_row` as the record the readers return."""
    return JudgmentRow.from_row(judgment_row(sample_id, **fields))
