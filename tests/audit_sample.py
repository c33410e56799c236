"""A made-up LoCoMo audit in the audit's file formats (this project's own words and numbers, never the audit's), and
a tiny LoCoMo file for it to point at: conv-26 with five questions, conv-30 with four (category 5 among them, so the
audit's question index runs over it). The files are pinned in place of the real ones by their own hashes."""

import hashlib
import json
from pathlib import Path

from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES, AuditFile

QUESTIONS = {  # conversation → (question, answer, category); index = position, category 5 included
    "conv-26": [("When did Ann plant the lemon tree?", "June 2021", 2),
                ("Which towns has Ann lived in?", "Oslo, Lund", 1),
                ("What is Bo's dog called?", "Pepper", 4),
                ("What did Bo say about the moon base?", None, 5),
                ("Would Bo enjoy a cello recital?", "Likely yes", 3)],
    "conv-30": [("What colour is Cy's kayak?", "Green", 4),
                ("Who taught Cy to swim?", "Her aunt", 4),
                ("When did Cy move to the coast?", "2019", 2),
                ("Which planet did Cy visit?", None, 5)],
}


def _error(audit_id, question, gold, category, error_type, correct, cited, right, reason):
    return {"question_id": audit_id, "question": question, "golden_answer": gold, "category": category,
            "error_type": error_type, "cited_evidence": cited, "correct_evidence": right, "reasoning": reason,
            "correct_answer": correct}


ERRORS = [
    _error("locomo_0_qa0", "When did Ann plant the lemon tree?", "June 2021", 2, "TEMPORAL_ERROR", "May 2021",
           ["D1:1"], ["D1:1"], "Said a month earlier than the gold answer says."),
    _error("locomo_0_qa1", "which towns has  Ann lived in?", "Oslo, Lund", 1, "AMBIGUOUS", "Oslo, Lund and Bergen",
           ["D1:2"], ["D1:2", "D1:3"], "A third town is mentioned in passing."),
    _error("locomo_0_qa2", "What is Bo's dog called?", "Pepper", 4, "WRONG_CITATION", "Pepper",
           ["D1:1"], ["D1:3"], "The dog is named in the third turn."),
    _error("locomo_1_qa1", "Who taught Cy to swim?", "Her aunt", 4, "HALLUCINATION", "Not stated",
           ["D1:2"], [], "No turn says who taught her."),
]


def answer_key_rows():
    rows = []
    for c, items in enumerate(QUESTIONS.values()):
        for q, (question, answer, category) in enumerate(items):
            if category != 5:
                rows.append({"question_id": f"locomo_{c}_qa{q}", "category": category, "category_name": "x",
                             "question": question, "golden_answer": answer})
    return rows


def _detailed(tag: str) -> dict:
    rows = [{"question_id": r["question_id"], "question": r["question"], "golden_answer": r["golden_answer"],
             "generated_answer": f"{tag} guess", "llm_judgments": {"judgment_1": False}, "category": str(r["category"])}
            for r in answer_key_rows()]
    return {"total_questions": len(rows), "correct": 0, "accuracy": 0.0,
            "detailed_results": {"locomo_exp_user_0": rows}}


def audit_bytes() -> dict[str, bytes]:
    """Every one of the ten files, by name, in the audit's formats."""
    docs = {"errors": ERRORS, "answer_key": answer_key_rows()}
    for name in AUDIT_FILES:
        docs.setdefault(name, _detailed(name))
    return {name: json.dumps(doc, indent=2).encode() for name, doc in docs.items()}


def pin(monkeypatch, files: dict[str, bytes]) -> None:
    """These bytes pinned in place of the audit's (same names and paths, these hashes)."""
    for name, data in files.items():
        real = AUDIT_FILES[name]
        monkeypatch.setitem(AUDIT_FILES, name, AuditFile(real.name, real.path, hashlib.sha256(data).hexdigest(),
                                                         real.holds))


def write_layout(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / AUDIT_FILES[name].path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def fetched(tmp_path: Path, monkeypatch, files: dict[str, bytes] | None = None) -> Path:
    """The made-up audit (or `files`) pinned, written in repository layout under tmp_path/audit and made the
    fetched audit for this test (MEMEVAL_LOCOMO_AUDIT_DIR); returns that folder."""
    files = audit_bytes() if files is None else files
    pin(monkeypatch, files)
    root = write_layout(tmp_path / "audit", files)
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(root))
    return root


def turns(conversation: str) -> list[dict]:
    return [{"speaker": "Ann", "dia_id": f"D1:{i}", "text": f"{conversation} line {i}."} for i in (1, 2, 3)]


def write_locomo(path: Path) -> Path:
    """The questions above as a locomo10.json of two conversations."""
    samples = []
    for conversation, items in QUESTIONS.items():
        qa = [{"question": q, "category": cat, "evidence": ["D1:1"],
               **({"answer": a} if a is not None else {"adversarial_answer": "none"})} for q, a, cat in items]
        samples.append({"sample_id": conversation, "qa": qa,
                        "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
                                         "session_1_date_time": "1:00 pm on 8 May, 2023",
                                         "session_1": turns(conversation)}})
    path.write_text(json.dumps(samples))
    return path
