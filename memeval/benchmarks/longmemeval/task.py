"""`memeval longmemeval run` as a function: every question of a LongMemEval file answered by each memory system
over that question's own haystack, with the benchmark's retrieval numbers (recall_any@k, recall_all@k, ndcg_any@k
at session and turn level) and memeval's evidence_recall@k, and judged by LongMemEval's protocol when an LLM is
configured (accuracy is a judge's verdict; offline it is "not measured", never guessed).

Outputs in the run directory: answers.jsonl and judgments.jsonl (one row per question and system, resumable),
report.md and manifest.json. A haystack becomes a conversation the built-in and plug-in systems can ingest:
sessions in order with their dates, turns with ids `<session id>:<turn index>` (kept in a map, never parsed).
The LLM reader sees its memories sorted by chat date, as the benchmark's reader does.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import asdict

from memeval.benchmarks.longmemeval.config import READERS, LongMemEvalConfig  # noqa: F401  (importable here)
from memeval.benchmarks.longmemeval.data import LMEInstance, LMESession, load_longmemeval
from memeval.benchmarks.longmemeval.judge import empty_replies
from memeval.benchmarks.longmemeval.metrics import (
    RetrievalScores,
    haystack_of,
    retrieval_scored,
    turn_corpus_ids,
    turn_ranking_scores,
)
from memeval.benchmarks.longmemeval.report import RECALL_KS, longmemeval_report  # noqa: F401  (kept importable here)
from memeval.conversations import Conversation, Session, Turn
from memeval.engine.roles import ModelSettings
from memeval.engine.task import Task, Unit
from memeval.errors import InputError
from memeval.llm.types import RunEstimate
from memeval.memory.base import SystemConfig
from memeval.qa.evidence import recall_curve
from memeval.qa.reader_cap import FLAG as CAP_FLAG
from memeval.qa.reader_cap import capped, check_cap, cut_advice
from memeval.records import LMEAnswerRow, LMEJudgmentRow, read_records
from memeval.rundir import RunDir
from memeval.scoring.judges import JUDGES
from memeval.settings import check_settings

READER_MAX_TOKENS = 200
READER_TEMPERATURE = 0.0
DEPTH = 50  # evidence_recall@1..DEPTH is stored per question
OFFLINE_SYSTEMS = ("full_context", "no_memory", "rag_turns")  # observations and summaries are LoCoMo annotations
# Built-in systems a LongMemEval run refuses, and why (plug-in systems are run as they are).
UNSUPPORTED_SYSTEMS = {
    "observations": "observations are LoCoMo annotations, which a LongMemEval haystack does not have (recall "
                    "would read 0.00 as if measured)",
    "summaries": "summaries are LoCoMo annotations, which a LongMemEval haystack does not have (recall would read "
                 "0.00 as if measured)",
    "memory_graph": "memory_graph extracts its graph with an LLM, which a LongMemEval run does not give it",
    "rag_dense": "rag_dense embeds through a run's embed role, which a LongMemEval run does not give it yet",
    "mem0": "mem0 calls an LLM and an embedder through a run's roles, which a LongMemEval run does not give it yet",
}


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


def ranked_user_turns(ranked: Sequence[Sequence[str]], corpus_id_of: dict[str, str]) -> list[str]:
    """The benchmark's turn ranking that a system's ranked memories induce: the user turns they cite, in rank
    order, each once. The benchmark's corpus holds user turns only, so assistant turns (and ids outside the
    haystack) take no rank; turns the system never returned are not retrieved at any depth."""
    out: list[str] = []
    seen: set[str] = set()
    for source_ids in ranked:
        for dia_id in source_ids:
            corpus_id = corpus_id_of.get(dia_id)
            if corpus_id is not None and corpus_id not in seen:
                seen.add(corpus_id)
                out.append(corpus_id)
    return out


def benchmark_retrieval(instance: LMEInstance, ranked: Sequence[Sequence[str]]) -> RetrievalScores | None:
    """recall_any@k, recall_all@k and ndcg_any@k at turn and session level for one ranked system, or None for a
    question the benchmark leaves out of its retrieval means (abstention, or no user `has_answer` turn)."""
    haystack = haystack_of(instance)
    if not retrieval_scored(instance.question_id, haystack):
        return None
    corpus = turn_corpus_ids(haystack)
    corpus_id_of = {f"{session_id}:{index}": corpus_id for session_id, index, corpus_id in corpus}
    return turn_ranking_scores(ranked_user_turns(ranked, corpus_id_of), [c for _, _, c in corpus])


def by_session_date(memories: Sequence) -> list:
    """The memories in chat-date order, as the benchmark's reader orders its history: a stable sort on the date
    string as written (equal dates keep the order they came in, so a session's turns stay together)."""
    return sorted(memories, key=lambda m: m.time)


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
    # a ranked system ranks the whole haystack, as the benchmark's retrievers do, so that recall@50 and the
    # session level's widened k are measured; the reader still gets the first k
    found = call_system(config, "search", instance.question_id, system.search, instance.question,
                        max(k, DEPTH, len(conversation.turns)) if ranked else k)
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
        session_recall=recall_curve(evidence_sessions, session_sets, DEPTH) if ranked else None,
        turn_recall=recall_curve(evidence_turns, turn_sets, DEPTH) if ranked else None,
        sessions_given=(len(given & evidence_sessions) / len(evidence_sessions)) if evidence_sessions else None,
        context_tokens=approx_tokens(render_memories(memories)) if memories else 0,
        latency_search_s=search_s, error=None,
        retrieval=benchmark_retrieval(instance, [i.source_ids for i in items]) if ranked else None), memories


PUBLISHED_READER_MAX_TOKENS = 500  # run_generation.py: gen_length when none is given and no chain of thought


def published_history(instance: LMEInstance, memories: list, session_block: str) -> str:
    """The benchmark's history in its JSON layout: the memories' turns grouped into chunks — consecutive memories
    from one session make one chunk (full context: each session whole, as the benchmark's session-level reader
    reads it) — dated by their session, stable-sorted by the date string, each written with the benchmark's session
    block around `"\n" + json.dumps(turns)` (turns as {"role", "content"}, `has_answer` dropped, as its reader
    drops it)."""
    import json

    sessions = {s.session_id: s for s in instance.sessions}
    groups: list[tuple[LMESession, list[int]]] = []
    for memory in memories:
        for source in memory.source_ids:
            session_id, _, index = str(source).rpartition(":")
            session = sessions.get(session_id)
            if session is None or not index.isdigit() or int(index) >= len(session.turns):
                continue
            if groups and groups[-1][0] is session:
                if int(index) not in groups[-1][1]:
                    groups[-1][1].append(int(index))
            else:
                groups.append((session, [int(index)]))
    chunks = [(session.date, [{"role": session.turns[i].role, "content": session.turns[i].content}
                              for i in sorted(indexes)]) for session, indexes in groups]
    chunks.sort(key=lambda chunk: chunk[0])
    return "".join(session_block.format(number, date, "\n" + json.dumps(chunk))
                   for number, (date, chunk) in enumerate(chunks, start=1))


def reader_request(instance: LMEInstance, memories: list, published=None):
    """The LLM reader's call: the memories with their chat dates in date order (the benchmark sorts its reader's
    history by date), the question's own date, the question. `published`: the benchmark's own reader prompt
    (data/protocols/longmemeval_reader.json), sent byte for byte in its JSON history layout, 500 output tokens."""
    from memeval.llm.client import LLMRequest
    from memeval.prompts import load_prompt, prompt_hash
    from memeval.qa.answer import render_memories

    if published is not None:
        t = published.templates
        text = t["answer"].format(published_history(instance, memories, t["session"]), instance.question_date,
                                  instance.question)
        return LLMRequest(messages=(("user", text),),
                          max_tokens=PUBLISHED_READER_MAX_TOKENS, temperature=0.0,
                          template_version=published.version, role="answer")

    text = load_prompt("answer_longmemeval").format(memories=render_memories(by_session_date(memories)),
                                                    question_date=instance.question_date or "unknown",
                                                    question=instance.question)
    return LLMRequest(messages=(("user", text),), max_tokens=READER_MAX_TOKENS,
                      temperature=READER_TEMPERATURE, template_version=prompt_hash("answer_longmemeval"),
                      role="answer")


def role_temperatures(config: LongMemEvalConfig) -> dict:
    from memeval.benchmarks.longmemeval.judge import TEMPERATURE

    roles = {}
    if config.reader == "llm":
        roles["answer"] = READER_TEMPERATURE
    if config.judge == "longmemeval":
        roles["judge"] = TEMPERATURE
    return roles



class LongMemEvalTask(Task):
    """LongMemEval: each question is answered by each system over that question's own haystack."""

    kind = "longmemeval run"
    answer_record = LMEAnswerRow
    judgment_record = LMEJudgmentRow
    progress_label = "longmemeval"

    def __init__(self, config: LongMemEvalConfig):
        self.config = config

    def validate(self) -> None:
        validate(self.config)

    def prepare(self) -> None:
        self.instances, self.data_report = load_longmemeval(self.config.data)
        if self.config.questions is not None:
            self.instances = self.instances[: self.config.questions]
        self.labels = {SystemConfig.parse(s).label: s for s in self.config.systems}

    def role_temperatures(self) -> dict:
        return role_temperatures(self.config)

    def judges(self) -> list:
        return [JUDGES["longmemeval"]()] if self.config.judge == "longmemeval" else []

    def identity(self, client):
        return longmemeval_identity(self.config, self.instances, client)

    def command_line(self) -> list[str]:
        return self.config.command_line()

    def public_config(self) -> dict:
        return asdict(self.config)

    def units(self) -> list:
        return [Unit(tuple((label, i.question_id) for label in self.labels), i) for i in self.instances]

    def answer(self, unit, todo, client) -> list[LMEAnswerRow]:
        config, instance = self.config, unit.payload
        wanted = set(todo)
        fresh = [answer_guarded(instance, spec, config.k, config.reader == "extractive", config.fail_fast)
                 for label, spec in self.labels.items() if (label, instance.question_id) in wanted]
        if config.reader == "llm":
            return read_with_llm(instance, fresh, client, config.answer_max_tokens)
        return [row for row, _ in fresh]

    def notes(self, client) -> list[str]:
        from memeval.benchmarks.longmemeval.sample import NOTE, is_synthetic

        notes = self.reader_notes()
        return [f"Data: {NOTE}", *notes] if is_synthetic(self.instances) else notes

    def reader_notes(self) -> list[str]:
        notes = []
        uncredited = next((n for q, n in self.data_report.quirks.items() if "no retrieval credit" in q), 0)
        if uncredited:
            notes.append(f"Data: {uncredited} `has_answer` user turns sit in sessions whose id lacks \"answer\"; the "
                         "benchmark credits retrieval by that id convention (its ids read `answer_...`), so they earn "
                         "no recall_any/recall_all/ndcg credit here either — rename such sessions to score them.")
        if self.config.reader == "extractive":
            return ["Reader: the extractive no-LLM baseline (best-overlapping sentence), not a model's answers.",
                    *notes]
        from memeval.protocols.store import load

        if self.config.answer_max_tokens is not None:
            own = reader_cap(dataclasses.replace(self.config, answer_max_tokens=None))
            notes.insert(0, f"Reader output cap: {self.config.answer_max_tokens} tokens (`{CAP_FLAG}`) in place of "
                            f"the reader protocol's {own}; a reply still running at the cap is no answer.")
        published = load("longmemeval_reader")
        if published:
            return [f"Reader: LongMemEval's reader prompt byte for byte ({published.origin}), history as JSON "
                    "sessions in date order, 500 output tokens, temperature 0; which memories it reads is this "
                    "system's, so only with the benchmark's own retrieval and model is it the benchmark's setting.",
                    *notes]
        return ["Reader: this project's prompt, memories in chat-date order — paraphrased prompts, not the "
                "benchmark's reader protocol.", *notes]

    def failure_advice(self, answers: list) -> str | None:
        return cut_advice([a.error for a in answers], reader_cap(self.config)) if self.config.reader == "llm" else None

    def failure_note(self, errors: int, client) -> str:
        return (f"{errors} answers failed this run (see the `error` field): a reader call failed or could not be "
                "made (no key and no cache), or a plug-in raised; a rerun retries them")

    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        from memeval.protocols.status import setting_problem

        problem = setting_problem(client) if self.config.judge == "longmemeval" else None
        empty = empty_replies(judgments)
        if empty:
            judged = sum(1 for j in judgments if j.protocol == "longmemeval")
            notes = [*notes, f"Judge: {empty} of {judged} longmemeval judge replies were empty and are labelled no, "
                     "by the benchmark's rule (the label is whether \"yes\" is in the stripped reply)."]
        return longmemeval_report(answers, {j.key: j for j in judgments}, notes, problem)

    def manifest_fields(self, answers: list, judgments: list, claimed, client) -> dict:
        return {"data": {"path": self.config.data, "sha256": claimed.identity.fixed["data_sha256"]},
                "quirks": dict(self.data_report.quirks), "prompts": prompt_versions(self.config),
                "judge_empty_replies_labelled_no": empty_replies(judgments)}


def run_longmemeval(config: LongMemEvalConfig, client=None):
    """Answer, judge, report through the one engine (a RunOutcome); a dry run prices the reader's calls and writes
    nothing (a RunEstimate, its `note` the text to print)."""
    from memeval.engine.run import RunSettings, run_task
    from memeval.llm.client import checked_client

    task = LongMemEvalTask(config)
    if config.dry_run:
        task.validate()
        task.prepare()
        client = checked_client(ModelSettings.of(config), task.role_temperatures(), client)
        done = {r.key for r in read_records(RunDir(config.out).answers, LMEAnswerRow)}
        return dry_run(config, task.instances, task.labels, done, client)
    return run_task(task, RunSettings(config.out, config.progress, config.restart, config.fail_fast),
                    ModelSettings.of(config), client)


def longmemeval_identity(config: LongMemEvalConfig, instances, client):
    """Every setting that changes a stored LongMemEval row; systems and judges may be added by a rerun."""
    from memeval.benchmarks.longmemeval.judge import TEMPERATURE, longmemeval_version
    from memeval.data.fetch import data_hashes
    from memeval.llm.manifest import role_identity
    from memeval.memory.base import SystemConfig
    from memeval.rundir import Identity, identity_hash

    fixed = {"data_sha256": data_hashes(config.data), "questions": config.questions,
             "question_set": f"{len(instances)} questions, sha256 "
                             f"{identity_hash([i.question_id for i in instances])}",
             "k": config.k, "reader": config.reader}
    if config.reader == "llm":
        from memeval.prompts import prompt_hash
        from memeval.protocols.store import load

        published = load("longmemeval_reader")
        fixed.update(answer=role_identity(client, "answer", READER_TEMPERATURE),
                     answer_prompt=published.version if published else prompt_hash("answer_longmemeval"),
                     context_order="session date",  # rows read in file order (before) are another run
                     answer_max_tokens=reader_cap(config))
        if published:
            fixed.update(prompt_source=published.origin)
    systems = {c.label: {"name": c.name, "params": dict(c.params)} for c in map(SystemConfig.parse, config.systems)}
    judges = {}
    if config.judge == "longmemeval":
        judges["longmemeval"] = {**role_identity(client, "judge", TEMPERATURE),
                                 "prompt_version": longmemeval_version()}
    return Identity("longmemeval run", fixed=fixed, additive={"systems": systems, "judges": judges})


def prompt_versions(config: LongMemEvalConfig) -> dict:
    from memeval.benchmarks.longmemeval.judge import longmemeval_version
    from memeval.prompts import prompt_hash

    versions = {}
    if config.reader == "llm":
        versions["answer_longmemeval"] = prompt_hash("answer_longmemeval")
    if config.judge == "longmemeval":
        versions["judge_longmemeval"] = longmemeval_version()
    return versions


def reader_cap(config: LongMemEvalConfig) -> int:
    """The output cap of the reader's requests: `--answer-max-tokens`, else the benchmark's 500 with its fetched
    prompt, else this project's 200."""
    if config.answer_max_tokens is not None:
        return config.answer_max_tokens
    from memeval.protocols.store import load

    return PUBLISHED_READER_MAX_TOKENS if load("longmemeval_reader") else READER_MAX_TOKENS


def read_with_llm(instance: LMEInstance, fresh: list, client, cap: int | None = None) -> list[LMEAnswerRow]:
    """The reader's answers for one question's systems (`cap`: `--answer-max-tokens`); a failed call is an error
    row, retried by a rerun."""
    from memeval.llm.client import LLMError

    rows = [row for row, _ in fresh if row.error]  # a plug-in failed: nothing to read
    fresh = [(row, memories) for row, memories in fresh if not row.error]
    from memeval.protocols.store import load

    published = load("longmemeval_reader")
    replies = client.complete_many(capped([reader_request(instance, memories, published)
                                           for _, memories in fresh], cap)) if fresh else []
    for (row, _), reply in zip(fresh, replies, strict=True):
        if isinstance(reply, LLMError):
            rows.append(row.model_copy(update={"prediction": "", "error": f"{type(reply).__name__}: {reply}"}))
        else:
            rows.append(row.model_copy(update={"prediction": reply.text.strip(), "answerer": reply.model}))
    return rows


def answer_guarded(instance, spec: str, k: int, extractive: bool = True, fail_fast: bool = False):
    """`answer_instance`, with a plug-in's failure recorded as the question's error row (and no memories) rather
    than ending the run; with `fail_fast`, PluginFailed propagates."""
    from memeval.errors import PluginFailed
    from memeval.memory.base import SystemConfig
    from memeval.qa.answer import EXTRACTIVE_LABEL

    try:
        return answer_instance(instance, spec, k, extractive)
    except PluginFailed as exc:
        if fail_fast:
            raise
        return LMEAnswerRow(
            question_id=instance.question_id, question_type=instance.question_type, abstention=instance.abstention,
            question=instance.question, answer=instance.answer, prediction="", system=SystemConfig.parse(spec).label,
            answerer=EXTRACTIVE_LABEL if extractive else "llm", session_recall=None, turn_recall=None,
            sessions_given=None, context_tokens=0, latency_search_s=0.0, error=exc.row_error), []


def dry_run(config: LongMemEvalConfig, instances, labels: dict, done: set, client) -> RunEstimate:
    """What the reader would send (judge calls are one short prompt per answer on top), priced before spending.
    Each question has its own haystack, so no prompt prefix repeats across questions: prompt caching saves
    nothing here, and the estimate counts none."""
    from memeval.llm.routes import merged, route_lines, routes_of

    todo = [(i, spec) for i in instances for label, spec in labels.items() if (label, i.question_id) not in done]
    stages = {}
    lines = [f"# LongMemEval dry run: {len(todo)} (system, question) pairs still to answer"]
    if config.reader == "llm" and client is not None:
        requests = capped([reader_request(i, answer_instance(i, spec, config.k, extractive=False)[1])
                           for i, spec in todo], config.answer_max_tokens)
        est = stages["answers"] = client.estimate(requests)
        lines.append(f"reader {client.model_for('answer')}: {est.to_send} calls to send ({est.cached} cached), "
                     f"~{est.input_tokens_est:,} input tokens ({est.token_count}), ≤{est.output_tokens_max:,} "
                     f"output tokens, ≈${est.usd_est:.{2 if est.usd_est >= 0.01 or not est.usd_est else 4}f}")
        lines.append("Prompt caching does not help across questions here: each question reads its own haystack "
                     "(≈115k tokens per question for full_context on S), so the estimate prices every prompt in full.")
    else:
        lines.append("reader: extractive (no LLM calls)")
    routes = [r for e in stages.values() for r in e.routes]
    if config.judge == "longmemeval":
        judge = client.model_for('judge')
        lines.append(f"judge {judge}: at most {len(todo)} short calls (10 output tokens each)")
        if todo:
            routes += routes_of(client, [(client.profile(judge).provider, judge, "judge")])
    if client is not None:
        lines += route_lines(merged(routes))
    return RunEstimate(stages, sum(e.usd_est for e in stages.values()), "\n".join(lines))


def validate(config: LongMemEvalConfig) -> None:
    from memeval.memory.base import SystemConfig
    from memeval.memory.registry import build_system

    check_settings(config)
    check_cap(config.answer_max_tokens, config.reader == "llm")
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
