"""`memeval longmemeval run` as a function: every question of a LongMemEval file answered by each memory system
over that question's own haystack, with session- and turn-level evidence recall, and judged by LongMemEval's
protocol when an LLM is configured (accuracy is a judge's verdict; offline it is "not measured", never guessed).

Outputs in the run directory: answers.jsonl and judgments.jsonl (one row per question and system, resumable),
report.md and manifest.json. A haystack becomes a conversation the built-in and plug-in systems can ingest:
sessions in order with their dates, turns with ids `<session id>:<turn index>` (kept in a map, never parsed).
"""

from __future__ import annotations

import numbers
import shlex
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memeval.baselines_longmemeval import LONGMEMEVAL_BASELINES, protocol_label
from memeval.data.locomo import Conversation, Session, Turn
from memeval.data.longmemeval import QUESTION_TYPES, LMEInstance, load_longmemeval
from memeval.errors import InputError
from memeval.records import Record

RECALL_KS = (1, 5, 10)
READER_MAX_TOKENS = 200
READER_TEMPERATURE = 0.0
READERS = ("extractive", "llm")
DEPTH = 50
OFFLINE_SYSTEMS = ("full_context", "no_memory", "rag_turns")  # observations and summaries are LoCoMo annotations
# Built-in systems a LongMemEval run refuses, and why (plug-in systems are run as they are).
UNSUPPORTED_SYSTEMS = {
    "observations": "observations are LoCoMo annotations, which a LongMemEval haystack does not have (recall "
                    "would read 0.00 as if measured)",
    "summaries": "summaries are LoCoMo annotations, which a LongMemEval haystack does not have (recall would read "
                 "0.00 as if measured)",
    "memory_graph": "memory_graph extracts its graph with an LLM, which a LongMemEval run does not give it",
}


class LMEAnswerRow(Record):
    """One (system, question) of a LongMemEval run."""

    question_id: str
    question_type: str
    abstention: bool
    question: str
    answer: str
    prediction: str
    system: str
    answerer: str
    session_recall: list[float] | None  # recall@1..DEPTH of the evidence sessions (ranked systems)
    turn_recall: list[float] | None  # the same for the has_answer turns
    sessions_given: float | None  # share of evidence sessions among what the reader was given
    context_tokens: int
    latency_search_s: float
    error: str | None

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.question_id)


class LMEJudgmentRow(Record):
    question_id: str
    question_type: str
    abstention: bool
    system: str
    protocol: str
    prompt_version: str
    label: bool
    reply: str
    judge_model: str | None = None  # rows written before the judge was recorded have none

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.question_id)


def haystack_conversation(instance: LMEInstance) -> tuple[Conversation, dict[str, str]]:
    """The question's haystack as a conversation, and turn id → session id."""
    sessions, session_of = [], {}
    for n, s in enumerate(instance.sessions, start=1):
        turns = []
        for j, t in enumerate(s.turns):
            dia_id = f"{s.session_id}:{j}"
            session_of[dia_id] = s.session_id
            turns.append(Turn(dia_id, t.role, t.content, n, j))
        sessions.append(Session(n, s.date, None, tuple(turns)))
    return Conversation(instance.question_id, "user", "assistant", tuple(sessions), (), (), {}, {}, {}), session_of


def _curve(relevant: set[str], ranked: Sequence[set[str]], depth: int) -> list[float] | None:
    """recall@1..depth: the share of `relevant` found among the first k items (each item a set of ids)."""
    if not relevant:
        return None
    found, out = set(), []
    for k in range(depth):
        if k < len(ranked):
            found |= ranked[k] & relevant
        out.append(len(found) / len(relevant))
    return out


def answer_instance(instance: LMEInstance, system_spec: str, k: int, extractive: bool = True
                    ) -> tuple[LMEAnswerRow, list]:
    """The system's row and the memories it gave; the extractive reader's answer only when that reader is used
    (an LLM reader's answer replaces the empty prediction)."""
    from memeval.memory.base import SystemConfig, approx_tokens, as_memory_items
    from memeval.memory.registry import build_system
    from memeval.qa.answer import EXTRACTIVE_LABEL, Memory, extractive_answer, render_memories
    from memeval.qa.answer_pass import call_system, is_ranked

    conversation, session_of = haystack_conversation(instance)
    config = SystemConfig.parse(system_spec)
    system = build_system(config)
    call_system(config, "ingest", instance.question_id, system.ingest, conversation)
    ranked = is_ranked(system)
    start = time.perf_counter()
    found = call_system(config, "search", instance.question_id, system.search, instance.question,
                        max(k, DEPTH) if ranked else k)
    search_s = time.perf_counter() - start
    items = as_memory_items(found, f"{config.label} search for {instance.question_id}")
    used = items[:k] if ranked else items
    evidence_turns = {f"{sid}:{j}" for sid, j in instance.evidence_turns}
    evidence_sessions = set(instance.answer_session_ids)
    turn_sets = [set(i.source_ids) for i in items]
    session_sets = [{session_of[t] for t in ids if t in session_of} for ids in turn_sets]
    given = {session_of[t] for i in used for t in i.source_ids if t in session_of}
    memories = [Memory(i.text, i.time, i.source_ids) for i in used]
    return LMEAnswerRow(
        question_id=instance.question_id, question_type=instance.question_type, abstention=instance.abstention,
        question=instance.question, answer=instance.answer,
        prediction=extractive_answer(instance.question, memories) if extractive else "",
        system=SystemConfig.parse(system_spec).label,
        answerer=EXTRACTIVE_LABEL,
        session_recall=_curve(evidence_sessions, session_sets, DEPTH) if ranked else None,
        turn_recall=_curve(evidence_turns, turn_sets, DEPTH) if ranked else None,
        sessions_given=(len(given & evidence_sessions) / len(evidence_sessions)) if evidence_sessions else None,
        context_tokens=approx_tokens(render_memories(memories)) if memories else 0,
        latency_search_s=search_s, error=None), memories


def reader_request(instance: LMEInstance, memories: list):
    """The LLM reader's call: the memories with their chat dates, the question's own date, the question."""
    from memeval.llm.client import LLMRequest
    from memeval.llm.profiles import ROLE_DEFAULTS
    from memeval.prompts import load_prompt, prompt_hash
    from memeval.qa.answer import render_memories

    text = load_prompt("answer_longmemeval").format(memories=render_memories(memories),
                                                    question_date=instance.question_date or "unknown",
                                                    question=instance.question)
    return LLMRequest(model=ROLE_DEFAULTS["answer"], messages=(("user", text),), max_tokens=READER_MAX_TOKENS,
                      temperature=READER_TEMPERATURE, template_version=prompt_hash("answer_longmemeval"),
                      role="answer")


@dataclass
class LongMemEvalConfig:
    data: str
    out: str
    systems: list[str] = field(default_factory=lambda: ["rag_turns"])
    questions: int | None = None  # the first N instances; None: all
    k: int = 10
    judge: str = "none"  # or "longmemeval"
    llm_backend: str = "auto"
    progress: bool = True
    reader: str = "extractive"  # or "llm": the answer role's model reads the memories
    models: dict = field(default_factory=dict)  # role → model id the user named
    sampling: str = "protocol"
    budget_usd: float | None = None
    dry_run: bool = False
    restart: bool = False  # move what `out` holds aside to OUT.replaced-<UTC> first
    fail_fast: bool = False  # the first plug-in failure stops the run (else it is recorded in the row's `error`)

    def command_line(self) -> list[str]:
        """This configuration as a `memeval longmemeval run` command (recorded in the manifest, shown by `ls`)."""
        from memeval.invocation import flag_args, path_text

        values = {**asdict(self), "systems": (";" if any("," in s for s in self.systems) else ",").join(self.systems)}
        defaults = {**asdict(LongMemEvalConfig(data="", out="")), "systems": "rag_turns"}
        flags = {"systems": "--systems", "questions": "--questions", "k": "--k", "reader": "--reader",
                 "judge": "--judge", "llm_backend": "--llm", "budget_usd": "--budget-usd", "sampling": "--sampling",
                 "fail_fast": "--fail-fast"}
        models = [arg for role, model in sorted(self.models.items()) for arg in (f"--{role}-model", model)]
        return ["memeval", "longmemeval", "run", "--data", path_text(self.data),
                *flag_args(values, defaults, flags), *models, "--out", path_text(self.out)]


def role_temperatures(config: LongMemEvalConfig) -> dict:
    from memeval.scoring.longmemeval_judge import TEMPERATURE

    roles = {}
    if config.reader == "llm":
        roles["answer"] = READER_TEMPERATURE
    if config.judge == "longmemeval":
        roles["judge"] = TEMPERATURE
    return roles


def run_longmemeval(config: LongMemEvalConfig, client=None) -> dict:
    from memeval.llm.client import checked_client
    from memeval.manifest import base_manifest
    from memeval.memory.base import SystemConfig
    from memeval.memory.registry import build_system
    from memeval.records import read_records

    if config.judge not in ("none", "longmemeval"):
        raise InputError("--judge", config.judge, "expected none or longmemeval")
    if config.reader not in READERS:
        raise InputError("--reader", config.reader, f"expected one of {', '.join(READERS)}")
    n = config.questions  # -1 would run all but the last question
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
        raise InputError("--questions", str(config.questions), "expected a positive integer (the first N questions)")
    if isinstance(config.k, bool) or not isinstance(config.k, numbers.Integral) or config.k < 1:
        raise InputError("--k", str(config.k), "expected a positive integer")
    if not config.systems:
        raise InputError("--systems", "(none)", "name at least one memory system")
    for spec in config.systems:
        try:
            system = SystemConfig.parse(spec)
        except ValueError as exc:
            raise InputError("--systems", spec, str(exc)) from None
        if system.name in UNSUPPORTED_SYSTEMS:
            raise InputError("--systems", spec, f"{UNSUPPORTED_SYSTEMS[system.name]}; LongMemEval runs "
                             f"{', '.join(OFFLINE_SYSTEMS)} and plug-in systems")
        build_system(system)  # parameters checked before anything is written
    roles = role_temperatures(config)
    client = checked_client(config.llm_backend, roles, client, budget_usd=config.budget_usd,
                            sampling=config.sampling, models=config.models)
    instances, report = load_longmemeval(config.data)
    if config.questions is not None:
        instances = instances[: config.questions]
    out = Path(config.out)
    done = {r.key for r in read_records(out / "answers.jsonl", LMEAnswerRow)}
    labels = {SystemConfig.parse(s).label: s for s in config.systems}
    if config.dry_run:
        return dry_run(config, instances, labels, done, client)
    from memeval.rundir import DirectoryLock, claim

    read_records(out / "judgments.jsonl", LMEJudgmentRow)  # a corrupt file is refused before the directory is claimed
    lock = DirectoryLock(out, "longmemeval run")
    claimed = claim(out, longmemeval_identity(config, instances, client),
                    base_manifest(command="longmemeval run", command_line=config.command_line(),
                                  config=asdict(config)), restart=config.restart,
                    lock=lock)
    try:
        return _run_claimed(config, client, instances, report, labels, claimed)
    finally:
        lock.release()


def longmemeval_identity(config: LongMemEvalConfig, instances, client):
    """Every setting that changes a stored LongMemEval row; systems and judges may be added by a rerun."""
    from memeval.data.fetch import data_hashes
    from memeval.llm.manifest import role_identity
    from memeval.memory.base import SystemConfig
    from memeval.rundir import Identity, identity_hash
    from memeval.scoring.longmemeval_judge import TEMPERATURE, longmemeval_version

    fixed = {"data_sha256": data_hashes(config.data), "questions": config.questions,
             "question_set": f"{len(instances)} questions, sha256 "
                             f"{identity_hash([i.question_id for i in instances])}",
             "k": config.k, "reader": config.reader}
    if config.reader == "llm":
        from memeval.prompts import prompt_hash

        fixed.update(answer=role_identity(client, "answer", READER_TEMPERATURE),
                     answer_prompt=prompt_hash("answer_longmemeval"))
    systems = {c.label: {"name": c.name, "params": dict(c.params)} for c in map(SystemConfig.parse, config.systems)}
    judges = {}
    if config.judge == "longmemeval":
        judges["longmemeval"] = {**role_identity(client, "judge", TEMPERATURE),
                                 "prompt_version": longmemeval_version()}
    return Identity("longmemeval run", fixed=fixed, additive={"systems": systems, "judges": judges})


def _run_claimed(config: LongMemEvalConfig, client, instances, report, labels: dict, claimed) -> dict:
    from memeval.atomic import write_json_atomic, write_text_atomic
    from memeval.jsonl import JsonlWriter
    from memeval.llm.manifest import llm_manifest
    from memeval.manifest import base_manifest
    from memeval.progress import progress_bar
    from memeval.records import latest, read_records, write_records

    roles = role_temperatures(config)
    out = Path(config.out)
    answers_path, judgments_path = out / "answers.jsonl", out / "judgments.jsonl"
    done = {r.key for r in read_records(answers_path, LMEAnswerRow) if r.error is None}
    from memeval.qa.answer_pass import answer_longmemeval_instance

    failed_answers = 0
    with JsonlWriter(answers_path) as writer, \
            progress_bar(len(instances) * len(labels), "longmemeval", "q", config.progress) as bar:
        for instance in instances:
            fresh = [answer_longmemeval_instance(instance, spec, config.k, config.reader == "extractive",
                                                 config.fail_fast)
                     for label, spec in labels.items()
                     if (label, instance.question_id) not in done]
            if config.reader == "llm" and fresh:
                rows, failed = read_with_llm(instance, fresh, client)
                failed_answers += failed
            else:
                rows = [row for row, _ in fresh]
            write_records(writer, rows)
            bar.update(len(labels))
    wanted = {(label, i.question_id) for label in labels for i in instances}
    answers = [r for r in latest(read_records(answers_path, LMEAnswerRow), lambda r: r.key).values()
               if r.key in wanted]
    notes = list(claimed.notes())
    if config.reader == "extractive":
        notes.append("Reader: the extractive no-LLM baseline (best-overlapping sentence), not a model's answers.")
    if failed_answers:
        notes.append(f"{failed_answers} reader calls failed or could not be made (no key and no cache): no row was "
                     "written for them; a rerun fills them")
    if config.judge == "longmemeval":
        notes += judge_pass(answers, judgments_path, client)
    judgments = {r.key: r for r in read_records(judgments_path, LMEJudgmentRow) if r.key in wanted}
    text = longmemeval_report(answers, judgments, notes)
    write_text_atomic(out / "report.md", text)
    missing = {}
    final = [a for a in answers if a.error is None]
    if len(final) < len(wanted):
        failed = Counter((a.error or "").split(":", 1)[0] or "error" for a in answers if a.error is not None)
        failed["no row (call failed or no LLM configured)"] = len(wanted) - len(answers)
        failed = +failed
        missing["answers"] = {"requested": len(wanted), "failed": len(wanted) - len(final), "absent": 0,
                              "reasons": dict(failed.most_common())}
    if config.judge == "longmemeval":
        owed = sum(1 for a in final if a.key not in judgments)
        if owed:
            missing["judgments"] = {"protocol": "longmemeval", "requested": len(final), "missing": owed}
    write_json_atomic(out / "manifest.json", base_manifest(
        command="longmemeval run", command_line=config.command_line(), config=asdict(config), data={"path": config.data,
                                                                 "sha256": claimed.identity.fixed["data_sha256"]},
        quirks=dict(report.quirks), rows={"answers": len(answers), "judgments": len(judgments)},
        llm=llm_manifest(client, roles), prompts=prompt_versions(config),
        invocations=[*(claimed.previous or {}).get("invocations", []),
                     {"config": asdict(config), "command_line": shlex.join(config.command_line())}],
        identity=claimed.identity.as_dict(), complete=not missing, missing=missing))
    return {"out": str(out), "report": text, "answers": len(answers), "judgments": len(judgments), "notes": notes,
            "missing": missing, "complete": not missing}


def prompt_versions(config: LongMemEvalConfig) -> dict:
    from memeval.prompts import prompt_hash
    from memeval.scoring.longmemeval_judge import longmemeval_version

    versions = {}
    if config.reader == "llm":
        versions["answer_longmemeval"] = prompt_hash("answer_longmemeval")
    if config.judge == "longmemeval":
        versions["judge_longmemeval"] = longmemeval_version()
    return versions


def read_with_llm(instance: LMEInstance, fresh: list, client) -> tuple[list[LMEAnswerRow], int]:
    """The reader's answers for one question's systems; a failed call leaves its row unwritten (resumable)."""
    from memeval.llm.client import LLMError

    rows = [row for row, _ in fresh if row.error]  # a plug-in failed: nothing to read
    fresh = [(row, memories) for row, memories in fresh if not row.error]
    replies = client.complete_many([reader_request(instance, memories) for _, memories in fresh]) if fresh else []
    failed = 0
    for (row, _), reply in zip(fresh, replies, strict=True):
        if isinstance(reply, LLMError):
            failed += 1
            continue
        rows.append(row.model_copy(update={"prediction": reply.text.strip(), "answerer": reply.model}))
    return rows, failed


def dry_run(config: LongMemEvalConfig, instances, labels: dict, done: set, client) -> dict:
    """What the reader would send (judge calls are one short prompt per answer on top), priced before spending.
    Each question has its own haystack, so no prompt prefix repeats across questions: prompt caching saves
    nothing here, and the estimate counts none."""
    todo = [(i, spec) for i in instances for label, spec in labels.items() if (label, i.question_id) not in done]
    lines = [f"# LongMemEval dry run: {len(todo)} (system, question) pairs still to answer"]
    if config.reader == "llm" and client is not None:
        requests = [reader_request(i, answer_instance(i, spec, config.k, extractive=False)[1]) for i, spec in todo]
        est = client.estimate(requests)
        lines.append(f"reader {client.model_for('answer')}: {est['to_send']} calls to send ({est['cached']} cached), "
                     f"~{est['input_tokens_est']:,} input tokens ({est['token_count']}), ≤{est['output_tokens_max']:,} "
                     f"output tokens, ≈${est['usd_est']:.2f}")
        lines.append("Prompt caching does not help across questions here: each question reads its own haystack "
                     "(≈115k tokens per question for full_context on S), so the estimate prices every prompt in full.")
    else:
        lines.append("reader: extractive (no LLM calls)")
    if config.judge == "longmemeval":
        lines.append(f"judge {client.model_for('judge')}: at most {len(todo)} short calls (10 output tokens each)")
    text = "\n".join(lines)
    return {"out": config.out, "report": text, "answers": 0, "judgments": 0, "notes": [], "dry_run": True}


def judge_pass(answers: Sequence[LMEAnswerRow], path: Path, client) -> list[str]:
    """One yes/no call per unjudged answer (cache first) through the run's checked client; a failed call writes
    nothing, so a rerun fills it."""
    from memeval.jsonl import JsonlWriter
    from memeval.llm.client import LLMError
    from memeval.records import read_records, write_records
    from memeval.scoring.longmemeval_judge import longmemeval_request, longmemeval_version, parse_longmemeval

    done = {r.key for r in read_records(path, LMEJudgmentRow)}
    todo = [a for a in answers if a.key not in done and a.error is None]
    judge_model = client.model_for("judge")
    requests = [longmemeval_request(a.question_id, a.question_type, a.question, a.answer, a.prediction)
                for a in todo]
    replies = client.complete_many(requests)
    failed = 0
    with JsonlWriter(path) as writer:
        for answer, reply in zip(todo, replies, strict=True):
            if isinstance(reply, LLMError):
                failed += 1
                continue
            write_records(writer, [LMEJudgmentRow(
                question_id=answer.question_id, question_type=answer.question_type, abstention=answer.abstention,
                system=answer.system, protocol="longmemeval", prompt_version=longmemeval_version(),
                label=parse_longmemeval(reply.text), reply=reply.text.strip()[:200], judge_model=judge_model)])
    return [f"{failed} judge calls failed or could not be made (no key and no cache); a rerun fills them"] \
        if failed else []


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
