"""Answers made by another harness, as this project's answers.jsonl: each row matched to a LoCoMo sample id, then
scored, judged and tabled like a native run (`memeval locomo import`).

Formats: `memeval` (another run's answers.jsonl), `mem0` (the results file of Mem0's evaluation harness: a JSON
object keyed by conversation index — the position in locomo10.json — each a list of items with `question`,
`answer`, `response`, `category` and optional `speaker_1_memory_time`, `speaker_2_memory_time`,
`response_time`), `jsonl` (one object a line: `question`, `prediction`, optional `sample_id`,
`conversation_id`, `latency_s`, `retrieved_ids`), `evermemos` (the EverMemOS evaluation framework's
`detailed_results` files, memeval/benchmarks/locomo/published/detailed.py: each item's `question_id` gives its sample id, its
`golden_answer` is checked against the question's gold, and its `llm_judgments` become judgment rows of the judge
`evermemos_recorded`: the labels the file's producer recorded, never re-run here).

A `memeval` file is read as the run that wrote it reads it: the latest row per question (a retry supersedes the
failed row before it), a question whose latest row is a failed call (`error` set) left out and reported, never
imported as an answer; a file holding several systems is imported one system at a time (`from_system`).

Matching is by sample id when a row has one, else by question text within the row's conversation (or across all
conversations when it names none), whitespace- and case-insensitive. A row that matches nothing, or more than
one question, is reported and left out; two rows for one question are both left out and reported: nothing is
guessed.

Some questions repeat their text inside one conversation (LoCoMo has 12 such pairs). A row without a sample id
that names its conversation (every mem0 row, and jsonl rows with `conversation_id`) is then placed by position:
the k-th row reading that text in the conversation (in file order; for mem0, in the conversation's list, which
Mem0's harness writes in dataset order) answers the k-th question with that text in the dataset's order. When
the row carries the gold answer (mem0's `answer`) and it differs from the chosen question's, the row is reported
as a gold mismatch and left out; when a conversation has more rows reading the text than questions, which row
is extra cannot be told, so all of them are left out as duplicates.

A malformed row (not an object, `question` or the prediction missing or not text, a latency not a number, bad
JSON on a jsonl line) refuses the whole import with one line naming the file, row and field, and nothing is
written; with `skip_invalid` (`--skip-invalid`) such rows are left out instead and each is reported (where and
why) in the printed report and the manifest's import report. A malformed file (not JSON, a mem0 key that is no
conversation index, a conversation that is not a list) is always refused.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memeval.conversations import QA, Conversation
from memeval.errors import InputError
from memeval.records import AnswerRow
from memeval.rundir import RunDir

if TYPE_CHECKING:
    from memeval.engine.directory import Directory

FORMATS = ("memeval", "mem0", "jsonl", "evermemos")


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
    gold: str | None = None  # the gold answer the row carries (mem0's `answer`; "" for none), None when it has none
    system: str | None = None  # memeval rows: the system that answered
    error: str | None = None  # memeval rows: the call failed and the row holds no answer (a rerun retries it)
    judgments: tuple[bool, ...] = ()  # evermemos rows: the recorded judge runs, in run order
    category: int | None = None  # evermemos rows: the category the file gives


@dataclass
class ImportReport:
    rows: int = 0  # rows read, skipped ones included
    matched: int = 0
    unmatched: list[str] = field(default_factory=list)  # "where: why"
    ambiguous: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)  # placed by position, but the row's gold differs
    skipped: list[str] = field(default_factory=list)  # malformed rows left out under --skip-invalid
    by_position: int = 0  # matched rows whose text repeats in their conversation, placed by position
    errored: list[str] = field(default_factory=list)  # memeval: questions whose latest row is a failed call
    superseded: int = 0  # memeval: earlier rows of a question a later row (a retry) replaces
    other_systems: int = 0  # memeval: rows of systems other than --from-system

    def as_dict(self) -> dict:
        return {"rows": self.rows, "matched": self.matched, "unmatched": len(self.unmatched),
                "ambiguous": len(self.ambiguous), "duplicates": len(self.duplicates),
                "mismatched": len(self.mismatched), "skipped": len(self.skipped), "by_position": self.by_position,
                "errored": len(self.errored), "superseded": self.superseded, "other_systems": self.other_systems,
                "examples": (self.unmatched + self.ambiguous + self.duplicates + self.mismatched + self.errored)[:10],
                "skipped_rows": list(self.skipped)}


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


def _gold(item: dict) -> str | None:
    """The gold answer a mem0 item carries, as text ("" for null or empty); None when it carries none usable."""
    if "answer" not in item or isinstance(item["answer"], bool):
        return None
    value = item["answer"]
    if value is None:
        return ""
    return str(value) if isinstance(value, (str, int, float)) else None


SKIP_HINT = " (--skip-invalid imports the valid rows and reports this one)"


def read_source(path: Path, fmt: str, conversations: list[Conversation],
                skipped: list[str] | None = None) -> list[Imported]:
    """The rows of `path`; a malformed row raises InputError, or, when `skipped` is a list, is appended to it as
    "where: field: why" and left out."""

    def refuse(exc: InputError) -> None:
        if skipped is None:
            raise InputError(exc.source, exc.field, exc.problem + SKIP_HINT) from None
        skipped.append(str(exc))

    if fmt not in FORMATS:
        raise InputError("--format", fmt, f"expected one of {', '.join(FORMATS)}")
    from memeval.safe_json import parse_json, read_text

    if not path.exists():
        raise InputError(path, "answers", "no such file")
    text = read_text(path, "answers", kind="answers")  # UTF-8, a BOM skipped, as every loader reads
    if not text.strip():
        raise InputError(path, "answers", "empty file")
    if fmt == "mem0":
        doc = parse_json(text, path, "json")
        if not isinstance(doc, dict):
            raise InputError(path, "top level", "expected an object keyed by conversation index")
        out = []
        for key, items in doc.items():
            if not re.fullmatch(r"[0-9]{1,6}", key) or int(key) >= len(conversations):  # "²".isdigit() too
                raise InputError(path, f"[{key!r}]", f"expected a conversation index 0–{len(conversations) - 1}")
            if not isinstance(items, list):
                raise InputError(path, f"[{key!r}]", "expected a list of items")
            conversation = conversations[int(key)].sample_id
            for i, item in enumerate(items):
                try:
                    out.append(_mem0_row(item, f"{path}[{key!r}][{i}]", conversation))
                except InputError as exc:
                    refuse(exc)
        return out
    out = []
    for n, line in enumerate(text.split("\n"), start=1):  # not splitlines(): U+2028 inside a JSON string is no break
        if not line.strip():
            continue
        try:
            out.append(_line_row(line, f"{path}:{n}", fmt))
        except InputError as exc:
            refuse(exc)
    return out


def evermemos_rows(path: Path, skipped: list[str] | None = None):
    """The items of an EverMemOS `detailed_results` file as rows to match, and the file (its metadata and hash).
    The audit id `locomo_<conversation index>_qa<question index>` names the sample id (memeval/benchmarks/locomo/audit_key.py); an
    id of another form is kept as it is, so matching reports it as naming no question."""
    from memeval.benchmarks.locomo.audit_key import audit_sample_id
    from memeval.benchmarks.locomo.published.detailed import read_detailed

    def refuse(exc: InputError) -> None:
        if skipped is None:
            raise InputError(exc.source, exc.field, exc.problem + SKIP_HINT) from None
        skipped.append(str(exc))

    detailed = read_detailed(path, refuse)
    rows = []
    for row in detailed.rows:
        try:
            sample_id = audit_sample_id(row.question_id)
        except InputError:
            sample_id = row.question_id
        rows.append(Imported(f"{path} [{row.conversation!r}] {row.question_id}", row.question,
                             row.generated_answer, sample_id=sample_id, gold=row.golden_answer,
                             judgments=tuple(row.judgments), category=row.category))
    return rows, detailed


def _mem0_row(item: object, where: str, conversation: str) -> Imported:
    if not isinstance(item, dict):
        raise InputError(where, "item", "expected an object")
    searched = [_number(item.get(k), where, k) for k in ("speaker_1_memory_time", "speaker_2_memory_time")]
    search = sum(s for s in searched if s is not None) if any(s is not None for s in searched) else None
    answer_s = _number(item.get("response_time"), where, "response_time")
    total = None if search is None and answer_s is None else (search or 0.0) + (answer_s or 0.0)
    return Imported(where, _text(item, "question", where), _text(item, "response", where),
                    conversation_id=conversation, latency_search_s=search, latency_total_s=total, gold=_gold(item))


def _line_row(line: str, where: str, fmt: str) -> Imported:
    from memeval.safe_json import parse_json

    row = parse_json(line, where, "json")
    if not isinstance(row, dict):
        raise InputError(where, "row", "expected an object")
    if fmt == "memeval":
        answer = AnswerRow.from_row(row, where)
        return Imported(where, answer.question, answer.prediction, answer.sample_id, answer.conversation_id,
                        answer.latency_search_s, answer.latency_total_s, answer.retrieved_ids or None,
                        system=answer.system, error=answer.error)
    retrieved = row.get("retrieved_ids")
    if retrieved is not None and not (isinstance(retrieved, list) and all(
            isinstance(i, list) and all(isinstance(x, str) for x in i) for i in retrieved)):
        raise InputError(where, "retrieved_ids", "expected a list of lists of turn ids (one list per memory)")
    latency = _number(row.get("latency_s"), where, "latency_s")
    for name in ("sample_id", "conversation_id"):  # looked up as keys when matching
        if row.get(name) is not None and not isinstance(row[name], str):
            raise InputError(where, name, f"expected a string id, got {type(row[name]).__name__}")
    return Imported(where, _text(row, "question", where), _text(row, "prediction", where),
                    row.get("sample_id"), row.get("conversation_id"), None, latency, retrieved)


def memeval_rows(rows: list[Imported], source: Path, from_system: str | None, report: ImportReport
                 ) -> list[Imported]:
    """Another run's answers.jsonl as that run reads it (`load_answers`): one system's rows (the only one, or
    `from_system`; a file of several is refused naming them), the latest row per question (a retry supersedes
    the failed row before it), and a question whose latest row is a failed call left out and reported (it has no
    answer; importing it would score an empty prediction as a final answer)."""
    systems = sorted({r.system for r in rows if r.system is not None})
    if from_system is not None:
        if from_system not in systems:
            raise InputError(source, "system", f"holds no answers of {from_system!r} (--from-system); it holds "
                             f"{', '.join(systems) or 'no system'}")
        report.other_systems = sum(1 for r in rows if r.system != from_system)
        rows = [r for r in rows if r.system == from_system]
    elif len(systems) > 1:
        raise InputError(source, "system", f"holds answers of {len(systems)} systems ({', '.join(systems)}); name "
                         "the one to import with --from-system")
    last: dict[tuple, Imported] = {}
    for row in rows:
        last[(row.system, row.sample_id)] = row
    report.superseded = len(rows) - len(last)
    out = []
    for row in last.values():
        if row.error is not None:
            report.errored.append(f"{row.line}: {row.sample_id} ended in an error, not an answer "
                                  f"({' '.join(row.error.split())[:80]}); rerun that run to retry it")
        else:
            out.append(row)
    return out


def _same_gold(given: str, qa: QA) -> bool:
    """Whether the gold answer a row carries is `qa`'s; a question without one (category 5) matches an empty or
    null answer only, never its adversarial answer (conv-30:q0095's is the gold of q0061, the same text)."""
    return normalise(given) == normalise(qa.answer or "")


def match(rows: list[Imported], conversations: list[Conversation]) -> tuple[list[tuple[Imported, QA]],
                                                                              ImportReport]:
    """Each row's question (see the module docstring for the rules), and what could not be placed."""
    by_id = {qa.sample_id: qa for c in conversations for qa in c.qa}
    by_text: dict[tuple[str | None, str], list[QA]] = defaultdict(list)
    for c in conversations:
        for qa in c.qa:
            by_text[(c.sample_id, normalise(qa.question))].append(qa)
            by_text[(None, normalise(qa.question))].append(qa)
    report = ImportReport(rows=len(rows))
    found: list[tuple[Imported, QA]] = []
    # rows placed by position: how many rows read each text in each conversation, and which occurrence this is
    placed = [(row.conversation_id, normalise(row.question)) for row in rows
              if row.sample_id is None and row.conversation_id is not None]
    readers, seen, by_position = Counter(placed), Counter(), set()
    for row in rows:
        if row.sample_id is not None:
            qa = by_id.get(row.sample_id)
            if qa is None:
                report.unmatched.append(f"{row.line}: no question has sample id {row.sample_id!r}")
            elif normalise(qa.question) != normalise(row.question):
                report.unmatched.append(f"{row.line}: {row.sample_id} asks {qa.question!r}, not {row.question!r}")
            elif row.gold is not None and not _same_gold(row.gold, qa):
                report.mismatched.append(f"{row.line}: {row.sample_id}'s gold is {qa.answer!r}, but the row's "
                                         f"reads {row.gold!r}")
            elif row.category is not None and row.category != qa.category:
                report.mismatched.append(f"{row.line}: {row.sample_id} is category {qa.category}, but the row "
                                         f"says {row.category}")
            else:
                found.append((row, qa))
            continue
        key = (row.conversation_id, normalise(row.question))
        candidates = by_text.get(key, [])
        ids = ", ".join(q.sample_id for q in candidates)
        if not candidates:
            where = f"in {row.conversation_id}" if row.conversation_id else "in any conversation"
            report.unmatched.append(f"{row.line}: no question {where} reads {row.question!r}")
        elif len(candidates) > 1 and row.conversation_id is None:
            report.ambiguous.append(f"{row.line}: {len(candidates)} questions read {row.question!r} ({ids}); "
                                    "name the conversation or the sample id")
        elif len(candidates) > 1:
            k = seen[key]
            seen[key] += 1
            qa = candidates[k] if readers[key] <= len(candidates) else None
            if qa is None:
                report.duplicates.append(f"{row.line}: {readers[key]} rows in {row.conversation_id} read "
                                         f"{row.question!r} but only {len(candidates)} questions do ({ids}); "
                                         "which row is extra cannot be told")
            elif row.gold is not None and not _same_gold(row.gold, qa):
                report.mismatched.append(f"{row.line}: occurrence {k + 1} of {row.question!r} in "
                                         f"{row.conversation_id} is {qa.sample_id}, whose gold is {qa.answer!r}, "
                                         f"but the row's answer reads {row.gold!r}")
            else:
                found.append((row, qa))
                by_position.add(id(row))
        else:
            found.append((row, candidates[0]))
    counts = Counter(qa.sample_id for _, qa in found)
    twice = {s for s, n in counts.items() if n > 1}
    for row, qa in found:
        if qa.sample_id in twice:
            report.duplicates.append(f"{row.line}: another row also answers {qa.sample_id}")
    found = [(row, qa) for row, qa in found if qa.sample_id not in twice]
    report.matched = len(found)
    report.by_position = sum(1 for row, _ in found if id(row) in by_position)
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
    from memeval.input_files import read_input

    return hashlib.sha256(read_input(path, "answers")).hexdigest()


TRUST_REPORT = ("trust.md", "trust.json")  # what `memeval locomo trust` writes into its --out


def import_answers(source: str | Path, fmt: str, system: str, out: str | Path, data: str | None = None,
                   skip_invalid: bool = False, from_system: str | None = None, judge_model: str | None = None,
                   judge_prompt: str | None = None) -> dict:
    """Match, score and append another harness's answers to the run directory `out` as `system`; the manifest
    records the source file's SHA-256 and format. Returns the matching report. `skip_invalid`: leave malformed rows
    out (each reported) instead of refusing the file. `from_system`: with format memeval, the system of the file
    to import (required when the file holds several). `judge_model`: with format evermemos, the model that made
    the recorded judgments when the file does not state it. `judge_prompt`: with format evermemos, the judge prompt
    the file's producer states its judgments were made with (`evermemos`: the EverMemOS framework's pinned
    prompts.yaml); only then can a measured leniency be matched to the recorded judge."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.memory.registry import BUILTIN
    from memeval.records import load_answers

    source, out = Path(source), Path(out)
    report = next((out / name for name in TRUST_REPORT if (out / name).exists()), None)
    if report is not None:
        raise InputError(out, "--out", f"holds a trust report ({report.name}), not a run: a `locomo trust` folder is "
                         "no run directory; import into a run directory or a new one")
    if system in BUILTIN:
        raise InputError("--system", system, "is a built-in system's name; name the imported system differently")
    if any(r.system == system for r in load_answers(RunDir(out).answers)):
        raise InputError(RunDir(out).answers, "system", f"already holds answers of {system!r}; use another "
                         "--system or --out")
    data_path = find_locomo(data)
    conversations = load_locomo(data_path)
    if from_system is not None and fmt != "memeval":
        raise InputError("--from-system", from_system, "names a system of a memeval answers file (--format memeval)")
    if judge_model is not None and fmt != "evermemos":
        raise InputError("--judge-model", judge_model, "names the judge of an EverMemOS file's recorded judgments "
                         "(--format evermemos)")
    if judge_prompt is not None and (fmt != "evermemos" or judge_prompt not in STATED_PROMPTS):
        raise InputError("--judge-prompt", judge_prompt, "names the prompt of an EverMemOS file's recorded judgments "
                         f"(--format evermemos): one of {', '.join(STATED_PROMPTS)}")
    skipped: list[str] | None = [] if skip_invalid else None
    detailed = None
    if fmt == "evermemos":
        read, detailed = evermemos_rows(source, skipped)
        judge = recorded_judge(detailed, judge_model, judge_prompt)
    else:
        read = read_source(source, fmt, conversations, skipped)
    chosen = ImportReport()
    if fmt == "memeval":
        read_all, read = read, memeval_rows(read, source, from_system, chosen)
    found, report = match(read, conversations)
    if fmt == "memeval":
        report.errored, report.superseded, report.other_systems = chosen.errored, chosen.superseded, \
            chosen.other_systems
        report.rows = len(read_all)
    report.skipped = skipped or []
    report.rows += len(report.skipped)
    if not found:
        raise InputError(source, "questions", f"no row matched a LoCoMo question ({len(report.unmatched)} "
                         f"unmatched, {len(report.ambiguous)} ambiguous, {len(report.duplicates)} duplicated, "
                         f"{len(report.mismatched)} gold mismatches, {len(report.skipped)} invalid, "
                         f"{len(report.errored)} ended in errors)")
    rows = answer_rows(found, system, fmt)
    recorded, extra = [], {}
    if detailed is not None:
        from memeval.benchmarks.locomo.published.detailed import published_stats

        recorded = recorded_judgments(found, system, judge)
        stats = published_stats(detailed.rows)
        extra = {"sha256": detailed.sha256, "metadata": detailed.metadata, "judge": judge, "published": {
            "mean": stats.mean, "std": stats.std, "majority": stats.majority, "run_scores": stats.run_scores,
            "questions": stats.n, "judged": stats.judged}}
    from memeval.engine.directory import run_directory

    with run_directory(out, f"memeval locomo import --system {system}") as held:
        _write_import(held, rows, source, fmt, system, data, data_path, skip_invalid, report, from_system,
                      recorded, extra, judge_model, judge_prompt)
    return {**report.as_dict(), **({"recorded": {**extra["judge"], "rows": len(recorded), "published": {
        k: extra["published"][k] for k in ("mean", "std", "majority")}}} if extra else {})}


STATED_PROMPTS = ("evermemos",)  # a producer may state its judge prompt as one of these (--judge-prompt)


def recorded_judge(detailed, judge_model: str | None, judge_prompt: str | None = None) -> dict:
    """Who made an EverMemOS file's recorded judgments, as its producer states it: `metadata.judge_model` (the
    locomo-audit's files), else `metadata.model` (the framework's own llm_judge writes the judge's model there),
    else `--judge-model`, else "not stated by the file"; `--judge-model` against a stated model is refused."""
    from memeval.benchmarks.locomo.published.detailed import NOT_STATED, RECORDED, RECORDED_PROTOCOL

    stated = None
    for name in ("judge_model", "model"):
        value = detailed.metadata.get(name)
        if isinstance(value, str) and value.strip():
            stated = (value.strip(), f"metadata.{name}")
            break
    if stated and judge_model is not None and judge_model != stated[0]:
        raise InputError("--judge-model", judge_model, f"{detailed.path} states the judge model {stated[0]!r} "
                         f"({stated[1]}); leave --judge-model out, or import another file")
    model, said_by = stated or ((judge_model, "--judge-model") if judge_model else (NOT_STATED, None))
    judge = {"protocol": RECORDED_PROTOCOL, "model": model, "model_source": said_by, "prompt": NOT_STATED,
             "runs": detailed.runs, "status": RECORDED}
    if judge_prompt == "evermemos":
        from memeval.benchmarks.locomo.audit_leniency import recorded_identity

        identity = recorded_identity()  # the framework's judge call: its prompts, temperature 0
        judge["prompt"] = f"EverMemOS prompts.yaml ({identity['prompt_source']}), as stated with --judge-prompt"
        if said_by is not None:  # a measured rate belongs to a model too: never matched to an unstated one
            judge["identity"] = {**identity, "model": model, "runs": detailed.runs}
    return judge


def recorded_judgments(found: list[tuple[Imported, QA]], system: str, judge: dict) -> list:
    """The recorded labels of the matched rows as judgment rows (100 accepted, 0 not, in run order); rows the
    file left unjudged (`llm_judgments` {}) get none."""
    from memeval.benchmarks.locomo.published.detailed import RECORDED
    from memeval.records import JudgmentRow
    from memeval.scoring.aggregate import run_statistics

    out = []
    for row, qa in found:
        if not row.judgments:
            continue
        stats = run_statistics([100.0 if j else 0.0 for j in row.judgments], min_successes=1)
        out.append(JudgmentRow(protocol=judge["protocol"], scores=stats["scores"], mean=stats["mean"],
                               std=stats["std"], run_count=stats["run_count"], warning=None, errors=[],
                               sample_id=qa.sample_id, conversation_id=qa.conversation_id, category=qa.category,
                               system=system, prompt_version=f"{RECORDED} (prompt {judge['prompt']})",
                               judge_model=judge["model"]))
    return sorted(out, key=lambda r: r.sample_id)


def _write_import(held: Directory, rows: list[AnswerRow], source: Path, fmt: str, system: str, data: str | None,
                  data_path: Path, skip_invalid: bool, report: ImportReport, from_system: str | None = None,
                  recorded: list | None = None, extra: dict | None = None, judge_model: str | None = None,
                  judge_prompt: str | None = None) -> None:
    """Append the matched rows (and an EverMemOS file's recorded judgments) and record the import in the manifest
    (`held`: the run directory, `engine.directory.run_directory`, whose lock is held)."""
    from memeval.data.fetch import data_hashes
    from memeval.jsonl import JsonlWriter
    from memeval.records import write_records

    out = held.path
    manifest_path = RunDir(out).manifest
    manifest = held.previous_manifest() or held.new_manifest(
        command="locomo import", data={"path": str(data_path), "sha256": data_hashes(data_path)})
    for name, kind, shape in (("imported", dict, "an object"), ("invocations", list, "a list")):
        if manifest.get(name) is not None and not isinstance(manifest[name], kind):  # before any row is appended
            raise InputError(manifest_path, name, f"expected {shape}, got {type(manifest[name]).__name__}; the "
                             "manifest was not written by memeval: move the directory aside")
    with JsonlWriter(RunDir(out).answers) as writer:
        write_records(writer, rows)
    if recorded:
        with JsonlWriter(RunDir(out).judgments) as writer:
            write_records(writer, recorded)
    from memeval.benchmarks.locomo.command_config import ImportConfig
    from memeval.invocation import invocation

    line = ImportConfig(source=source, format=fmt, system=system, data=data or None, out=out,
                        skip_invalid=bool(skip_invalid), from_system=from_system or None,
                        judge_model=judge_model or None, judge_prompt=judge_prompt or None).command_line()
    entry = {"source": str(source), "format": fmt, "sha256": sha256_file(source), "report": report.as_dict(),
             **({"from_system": from_system} if from_system else {}), **(extra or {}),
             **invocation(line)}
    manifest["imported"] = {**(manifest.get("imported") or {}), system: entry}
    if manifest.get("command") == "locomo import":  # a directory of imports alone: every row it holds is there
        from memeval.records import JudgmentRow, latest, load_answers, read_records

        manifest["rows"] = {"answers": len(load_answers(RunDir(out).answers)),
                            "judgments": len(latest(read_records(RunDir(out).judgments, JudgmentRow),
                                                    lambda r: r.key))}
    manifest["invocations"] = [*(manifest.get("invocations") or []), {"command_line": entry["command_line"]}]
    held.write_manifest(manifest)
