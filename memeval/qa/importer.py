"""Answers made by another harness, as this project's answers.jsonl: each row matched to a LoCoMo sample id, then
scored, judged and tabled like a native run (`memeval locomo import`).

Formats: `memeval` (another run's answers.jsonl), `mem0` (the results file of Mem0's evaluation harness: a JSON
object keyed by conversation index — the position in locomo10.json — each a list of items with `question`,
`answer`, `response`, `category` and optional `speaker_1_memory_time`, `speaker_2_memory_time`,
`response_time`), `jsonl` (one object a line: `question`, `prediction`, optional `sample_id`,
`conversation_id`, `latency_s`, `retrieved_ids`).

Matching is by sample id when a row has one, else by question text within the row's conversation (or across all
conversations when it names none), whitespace- and case-insensitive. A row that matches nothing, or more than
one question, is reported and left out; two rows for one question are both left out and reported: nothing is
guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from memeval.data.locomo import QA, Conversation
from memeval.errors import InputError
from memeval.records import AnswerRow

FORMATS = ("memeval", "mem0", "jsonl")


@dataclass(frozen=True)
class Imported:
    """One row of the source file, before matching."""

    line: str  # where in the file (for reports)
    question: str
    prediction: str
    sample_id: str | None = None
    conversation_id: str | None = None
    latency_search_s: float | None = None
    latency_total_s: float | None = None
    retrieved_ids: list[list[str]] | None = None


@dataclass
class ImportReport:
    rows: int = 0
    matched: int = 0
    unmatched: list[str] = field(default_factory=list)  # "where: why"
    ambiguous: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"rows": self.rows, "matched": self.matched, "unmatched": len(self.unmatched),
                "ambiguous": len(self.ambiguous), "duplicates": len(self.duplicates),
                "examples": (self.unmatched + self.ambiguous + self.duplicates)[:10]}


def normalise(question: str) -> str:
    return re.sub(r"\s+", " ", question).strip().lower()


def _number(value, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(where, name, f"expected seconds as a number, got {type(value).__name__}")
    return float(value)


def _text(row: dict, name: str, where: str) -> str:
    if name not in row:
        raise InputError(where, name, "missing")
    value = row[name]
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise InputError(where, name, f"expected text, got {type(value).__name__}")
    return str(value)


def read_source(path: Path, fmt: str, conversations: list[Conversation]) -> list[Imported]:
    if fmt not in FORMATS:
        raise InputError("--format", fmt, f"expected one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise InputError(path, "answers", "no such file")
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise InputError(path, "answers", "empty file")
    if fmt == "mem0":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, "json", f"not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if not isinstance(doc, dict):
            raise InputError(path, "top level", "expected an object keyed by conversation index")
        out = []
        for key, items in doc.items():
            if not str(key).isdigit() or int(key) >= len(conversations):
                raise InputError(path, f"[{key!r}]", f"expected a conversation index 0–{len(conversations) - 1}")
            if not isinstance(items, list):
                raise InputError(path, f"[{key!r}]", "expected a list of items")
            conversation = conversations[int(key)].sample_id
            for i, item in enumerate(items):
                where = f"{path}[{key!r}][{i}]"
                if not isinstance(item, dict):
                    raise InputError(where, "item", "expected an object")
                searched = [_number(item.get(k), where, k) for k in ("speaker_1_memory_time",
                                                                      "speaker_2_memory_time")]
                search = sum(s for s in searched if s is not None) if any(s is not None for s in searched) else None
                answer_s = _number(item.get("response_time"), where, "response_time")
                total = None if search is None and answer_s is None else (search or 0.0) + (answer_s or 0.0)
                out.append(Imported(where, _text(item, "question", where), _text(item, "response", where),
                                    conversation_id=conversation, latency_search_s=search, latency_total_s=total))
        return out
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(where, "json", f"not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(where, "row", "expected an object")
        if fmt == "memeval":
            answer = AnswerRow.from_row(row, where)
            out.append(Imported(where, answer.question, answer.prediction, answer.sample_id, answer.conversation_id,
                                answer.latency_search_s, answer.latency_total_s, answer.retrieved_ids or None))
            continue
        retrieved = row.get("retrieved_ids")
        if retrieved is not None and not (isinstance(retrieved, list) and all(
                isinstance(i, list) and all(isinstance(x, str) for x in i) for i in retrieved)):
            raise InputError(where, "retrieved_ids", "expected a list of lists of turn ids (one list per memory)")
        latency = _number(row.get("latency_s"), where, "latency_s")
        out.append(Imported(where, _text(row, "question", where), _text(row, "prediction", where),
                            row.get("sample_id"), row.get("conversation_id"), None, latency, retrieved))
    return out


def match(rows: list[Imported], conversations: list[Conversation]) -> tuple[list[tuple[Imported, QA]],
                                                                              ImportReport]:
    by_id = {qa.sample_id: qa for c in conversations for qa in c.qa}
    by_text: dict[tuple[str | None, str], list[QA]] = defaultdict(list)
    for c in conversations:
        for qa in c.qa:
            by_text[(c.sample_id, normalise(qa.question))].append(qa)
            by_text[(None, normalise(qa.question))].append(qa)
    report = ImportReport(rows=len(rows))
    found: list[tuple[Imported, QA]] = []
    for row in rows:
        if row.sample_id is not None:
            qa = by_id.get(row.sample_id)
            if qa is None:
                report.unmatched.append(f"{row.line}: no question has sample id {row.sample_id!r}")
            elif normalise(qa.question) != normalise(row.question):
                report.unmatched.append(f"{row.line}: {row.sample_id} asks {qa.question!r}, not {row.question!r}")
            else:
                found.append((row, qa))
            continue
        candidates = by_text.get((row.conversation_id, normalise(row.question)), [])
        if not candidates:
            where = f"in {row.conversation_id}" if row.conversation_id else "in any conversation"
            report.unmatched.append(f"{row.line}: no question {where} reads {row.question!r}")
        elif len(candidates) > 1:
            report.ambiguous.append(f"{row.line}: {len(candidates)} questions read {row.question!r} "
                                    f"({', '.join(q.sample_id for q in candidates)})")
        else:
            found.append((row, candidates[0]))
    counts = Counter(qa.sample_id for _, qa in found)
    twice = {s for s, n in counts.items() if n > 1}
    for row, qa in found:
        if qa.sample_id in twice:
            report.duplicates.append(f"{row.line}: another row also answers {qa.sample_id}")
    found = [(row, qa) for row, qa in found if qa.sample_id not in twice]
    report.matched = len(found)
    return found, report


def answer_rows(found: list[tuple[Imported, QA]], system: str, fmt: str) -> list[AnswerRow]:
    from memeval.qa.evidence import evidence_recall
    from memeval.scoring.f1 import score_f1

    rows = []
    for row, qa in found:
        rows.append(AnswerRow(
            sample_id=qa.sample_id, conversation_id=qa.conversation_id, category=qa.category, question=qa.question,
            gold=qa.answer, prediction=row.prediction, system=system, answerer=f"imported ({fmt})", k=None,
            f1=score_f1(row.prediction, qa.answer, qa.category, "locomo"), evidence_ids=list(qa.evidence_ids),
            evidence_recall=(evidence_recall(qa.evidence_ids, row.retrieved_ids) if row.retrieved_ids is not None
                             else None),
            recall_curve=None, retrieved_ids=row.retrieved_ids or [], latency_search_s=row.latency_search_s,
            latency_total_s=row.latency_total_s, context_tokens=None, error=None))
    return sorted(rows, key=lambda r: r.sample_id)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def import_answers(source: str | Path, fmt: str, system: str, out: str | Path, data: str | None = None) -> dict:
    """Match, score and append another harness's answers to the run directory `out` as `system`; the manifest
    records the source file's SHA-256 and format. Returns the matching report."""
    from memeval.atomic import write_json_atomic
    from memeval.data.fetch import data_hashes
    from memeval.data.locomo import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.jsonl import JsonlWriter
    from memeval.manifest import base_manifest
    from memeval.memory.registry import BUILTIN
    from memeval.qa.answer_pass import load_answers
    from memeval.records import write_records

    source, out = Path(source), Path(out)
    if system in BUILTIN:
        raise InputError("--system", system, "is a built-in system's name; name the imported system differently")
    if any(r.system == system for r in load_answers(out / "answers.jsonl")):
        raise InputError(out / "answers.jsonl", "system", f"already holds answers of {system!r}; use another "
                         "--system or --out")
    data_path = find_locomo(data)
    conversations = load_locomo(data_path)
    found, report = match(read_source(source, fmt, conversations), conversations)
    if not found:
        raise InputError(source, "questions", f"no row matched a LoCoMo question ({len(report.unmatched)} "
                         f"unmatched, {len(report.ambiguous)} ambiguous, {len(report.duplicates)} duplicated)")
    rows = answer_rows(found, system, fmt)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else base_manifest(
        command="locomo import", data={"path": str(data_path), "sha256": data_hashes(data_path)})
    with JsonlWriter(out / "answers.jsonl") as writer:
        write_records(writer, rows)
    from memeval.invocation import invocation, path_text

    line = ["memeval", "locomo", "import", path_text(source), "--format", fmt, "--system", system,
            *(["--data", path_text(data)] if data else []), "--out", path_text(out)]
    entry = {"source": str(source), "format": fmt, "sha256": sha256_file(source), "report": report.as_dict(),
             **invocation(line)}
    manifest.setdefault("imported", {})[system] = entry
    manifest.setdefault("invocations", []).append({"command_line": entry["command_line"]})
    write_json_atomic(manifest_path, manifest)
    return report.as_dict()
