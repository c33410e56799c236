"""`memeval locomo-plus run` as a Task: LoCoMo's questions (categories 1-5) over their conversations, and each
Cognitive item over its own stitched conversation (the cue a session of it, the trigger the question), answered by
every memory system and judged by LoCoMo-Plus's per-category judge. The engine resumes, claims and locks.

Outputs in the run directory: answers.jsonl (AnswerRow; Cognitive rows carry category 6, no gold, and the cue's
turns as evidence), judgments.jsonl (JudgmentRow, protocol locomo_plus, 100 / 50 / 0), report.md, manifest.json.
"""

from __future__ import annotations

import time
from dataclasses import asdict

from memeval.benchmarks import load
from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo_plus import data as plus
from memeval.benchmarks.locomo_plus import datasets
from memeval.benchmarks.locomo_plus.config import LocomoPlusConfig
from memeval.benchmarks.locomo_plus.judge import TEMPERATURE as JUDGE_TEMPERATURE
from memeval.benchmarks.locomo_plus.prompts import (
    COGNITIVE_READER,
    COGNITIVE_READER_VERSION,
    PARAPHRASED,
    JudgePrompts,
    judge_prompts,
)
from memeval.conversations import Conversation
from memeval.data.fetch import sha256_file
from memeval.engine.roles import ModelSettings
from memeval.engine.task import Task, Unit
from memeval.errors import InputError
from memeval.memory.base import SystemConfig
from memeval.records import AnswerRow, JudgmentRow
from memeval.rundir import Identity

COGNITIVE_MAX_TOKENS = 200  # a reply of a few sentences; --answer-max-tokens overrides it
STITCHING = "locomo-plus build_conv 059f4e3: trigger 7 days after the last session, cue time_gap before it"


def item_count(spec: str) -> int | None:
    """--items: None for all, 0 for none, else N (the first N items)."""
    text = str(spec).strip()
    if text == "all":
        return None
    if text == "none":
        return 0
    if not text.isdigit() or int(text) < 1:
        raise InputError("--items", text, "expected all, none or a positive N (the first N items)")
    return int(text)


def validate(config: LocomoPlusConfig) -> None:
    from memeval.memory.registry import check_system
    from memeval.qa.reader_cap import check_cap
    from memeval.qa.selection import question_spec
    from memeval.settings import check_settings

    check_settings(config)
    if str(config.questions).strip() != "none":
        question_spec(config.questions)
    item_count(config.items)
    check_cap(config.answer_max_tokens, config.reader != "extractive")
    if not config.systems:
        raise InputError("--systems", "(none)", "name at least one memory system")
    for spec in config.systems:
        check_system(spec)


def role_temperatures(config: LocomoPlusConfig) -> dict:
    from memeval.memory.extraction import EXTRACTION_TEMPERATURE
    from memeval.memory.registry import needs_embeddings, needs_llm, parse_system
    from memeval.qa.answer import ANSWER_TEMPERATURE

    roles: dict = {}
    if config.reader != "extractive":
        roles["answer"] = ANSWER_TEMPERATURE
    if config.judge != "none":
        roles["judge"] = JUDGE_TEMPERATURE
    systems = [parse_system(s) for s in config.systems]
    if any(needs_llm(s) for s in systems):
        roles["extract"] = EXTRACTION_TEMPERATURE
    if any(needs_embeddings(s) for s in systems):
        roles["embed"] = None
    return roles



def cognitive_request(stitched: plus.Stitched, memories, cap: int):
    """The reader's call for a trigger: the memories with their dates, the trigger said on its date."""
    from memeval.llm.types import LLMRequest
    from memeval.qa.answer import ANSWER_TEMPERATURE, render_memories

    speaker = stitched.trigger[0][0]
    base = stitched.base
    listener = base.speaker_b if speaker == base.speaker_a else base.speaker_a
    text = COGNITIVE_READER.format(listener=listener, speaker=speaker, memories=render_memories(memories),
                                   date=plus.locomo_date(stitched.query_time),
                                   trigger="\n".join(f"{who}: {words}" for who, words in stitched.trigger))
    return LLMRequest(messages=(("user", text),), max_tokens=cap, temperature=ANSWER_TEMPERATURE,
                      template_version=COGNITIVE_READER_VERSION, role="answer")


class LocomoPlusTask(Task):
    """LoCoMo-Plus: LoCoMo's questions and the Cognitive items, each over the conversation it is asked about."""

    kind = "locomo-plus run"
    answer_record = AnswerRow
    judgment_record = JudgmentRow
    no_judge_note = ("J not measured: no judge was requested (`--judge locomo_plus` with a key, a local server, or a "
                     "cache holding the calls). Evidence recall is measured offline.")

    def __init__(self, config: LocomoPlusConfig):
        self.config = config

    def validate(self) -> None:
        validate(self.config)

    def prepare(self) -> None:
        from memeval.data.paths import find_locomo
        from memeval.qa.selection import select_conversations, select_questions

        config = self.config
        self.data_dir = datasets.data_dir(config.data)
        items_path = self.data_dir / datasets.ITEMS_FILE
        if not items_path.is_file():
            raise InputError(items_path, "data", "no LoCoMo-Plus items here; `memeval data fetch locomo-plus` downloads "
                             "them (or pass --data DIR)")
        self.items_sha256 = sha256_file(items_path)
        self.items = plus.load_items(items_path)
        self.prompts: JudgePrompts = judge_prompts(self.data_dir)
        self.locomo_path = find_locomo(config.locomo)
        self.locomo = load_locomo(self.locomo_path)
        chosen = select_conversations(self.locomo, config.conversations)
        self.chosen = chosen
        wanted = {c.sample_id for c in chosen}
        if str(config.questions).strip() == "none":
            self.selection: list[tuple[Conversation, list]] = []
        else:
            self.selection = [(c, select_questions(c, config.questions, config.question_seed)) for c in chosen]
        n = item_count(config.items)
        items = self.items if n is None else self.items[:n]
        self.stitched = plus.placed(items, self.locomo, config.choice, config.seed, wanted)
        if not self.stitched and not any(qs for _, qs in self.selection):
            raise InputError("--items", config.items, "nothing selected: no LoCoMo question and no Cognitive item")
        from memeval.memory.registry import parse_system

        self.systems = [parse_system(s) for s in config.systems]
        evidence = {qa.sample_id: plus.evidence_text(c, qa.evidence) for c, qs in self.selection for qa in qs}
        evidence.update({s.qa.sample_id: plus.cue_evidence(s) for s in self.stitched})
        self.evidence = evidence

    def role_temperatures(self) -> dict:
        return role_temperatures(self.config)

    def judges(self) -> list:
        """The judge named by --judge, as this run kind declares it (memeval.benchmarks.locomo_plus: RunKind.judges)."""
        from memeval.engine.registry import judges

        return [] if self.config.judge == "none" else [load(judges(self.kind)[self.config.judge])(self.prompts,
                                                                                                   self.evidence)]

    def identity(self, client) -> Identity:
        from memeval.data.fetch import data_hashes
        from memeval.llm.manifest import role_identity
        from memeval.prompts import prompt_hash
        from memeval.qa.answer import ANSWER_TEMPERATURE
        from memeval.qa.selection import questions_identity
        from memeval.rundir import identity_hash

        config = self.config
        ids = [qa.sample_id for _, qs in self.selection for qa in qs] + [s.qa.sample_id for s in self.stitched]
        questions = ({"questions": "none"} if str(config.questions).strip() == "none"
                     else questions_identity(config.questions, config.question_seed))
        reader = {"reader": config.reader, "k": config.k}
        if config.reader != "extractive":
            reader.update(answer=role_identity(client, "answer", ANSWER_TEMPERATURE),
                          answer_prompt=prompt_hash("answer_memory"), cognitive_prompt=COGNITIVE_READER_VERSION,
                          answer_max_tokens=config.answer_max_tokens,
                          cognitive_max_tokens=config.answer_max_tokens or COGNITIVE_MAX_TOKENS)
        return Identity(self.kind, fixed={
            "data_sha256": {datasets.ITEMS_FILE: self.items_sha256, **data_hashes(self.locomo_path)},
            "conversations": [c.sample_id for c in self.chosen],
            **questions, "items": str(config.items),
            "choice": {"rule": config.choice, "seed": config.seed if config.choice == "random" else None},
            "stitching": STITCHING,
            "question_set": f"{len(ids)} questions, sha256 {identity_hash(ids)}", **reader},
            additive={"systems": {s.label: system_entry(s, client) for s in self.systems},
                      "judges": {j.name: j.identity(client) for j in self.judges()}})

    def command_line(self) -> list[str]:
        return self.config.command_line()

    def public_config(self) -> dict:
        return {k: v for k, v in asdict(self.config).items() if k != "progress"}

    def units(self) -> list[Unit]:
        units = []
        for s in self.systems:
            units += [Unit(tuple((s.label, qa.sample_id) for qa in qs), ("locomo", s, c, qs))
                      for c, qs in self.selection if qs]
            units += [Unit(((s.label, st.qa.sample_id),), ("cognitive", s, st)) for st in self.stitched]
        return units

    def settings(self):
        from memeval.qa.answer_pass import AnswerSettings

        return AnswerSettings(self.config.reader, self.config.k, max_tokens=self.config.answer_max_tokens)

    def answer(self, unit: Unit, todo, client) -> list[AnswerRow]:
        from memeval.qa.answer_pass import answer_conversation

        kind, system, *rest = unit.payload
        if kind == "locomo":
            conversation, questions = rest
            wanted = set(todo)
            return answer_conversation(system, conversation, [qa for qa in questions
                                                              if (system.label, qa.sample_id) in wanted],
                                       self.settings(), client, self.config.fail_fast)
        return [self.answer_cognitive(system, rest[0], client)]

    def answer_cognitive(self, system: SystemConfig, stitched: plus.Stitched, client) -> AnswerRow:
        """One system over one stitched conversation: ingest, search with the trigger, the reader replies."""
        from memeval.llm.client import LLMError
        from memeval.memory.base import approx_tokens
        from memeval.qa.answer import EXTRACTIVE_LABEL, Memory, extractive_answer, render_memories
        from memeval.qa.answer_pass import AnswerSettings, is_ranked, retrieve
        from memeval.qa.evidence import evidence_recall, recall_curve

        settings, qa = self.settings(), stitched.qa
        answerer = EXTRACTIVE_LABEL if settings.answerer == "extractive" else settings.answerer
        failed: dict[str, str] | None = None if self.config.fail_fast else {}

        def row(error: str | None, **fields) -> AnswerRow:
            base = dict(sample_id=qa.sample_id, conversation_id=qa.conversation_id, category=qa.category,
                        question=qa.question, gold=None, prediction="", system=system.label, answerer=answerer,
                        k=None, f1=None, evidence_ids=list(qa.evidence_ids), evidence_recall=None,
                        recall_curve=None, retrieved_ids=[], latency_search_s=None, latency_total_s=None,
                        context_tokens=None, error=error)
            return AnswerRow(**{**base, **fields})

        try:
            built, searched = retrieve(system, stitched.conversation, [qa], settings, client, failed)
        except LLMError as exc:
            return row(f"ingest failed: {type(exc).__name__}: {exc}")
        if not searched:
            return row((failed or {}).get(qa.sample_id, "no search result"))
        _, items, used, search_s = searched[0]
        memories = [Memory(i.text, i.time, i.source_ids) for i in used]
        start, keys = time.perf_counter(), None
        if settings.answerer == "extractive":
            prediction = extractive_answer(qa.question, memories)
        else:
            request = cognitive_request(stitched, memories, self.config.answer_max_tokens or COGNITIVE_MAX_TOKENS)
            keys = [client.resolve(request).key]
            reply = client.complete_many([request])[0]
            if isinstance(reply, LLMError):
                return row(f"{type(reply).__name__}: {reply}", request_keys=keys)
            prediction = reply.text.strip()
        ranked = is_ranked(built)
        retrieved = [list(i.source_ids) for i in used]
        return row(None, prediction=prediction, k=settings.k if ranked else getattr(built, "fixed_k", None),
                   evidence_recall=evidence_recall(qa.evidence_ids, retrieved),
                   recall_curve=(recall_curve(qa.evidence_ids, [i.source_ids for i in items],
                                              AnswerSettings().recall_k_max) if ranked else None),
                   retrieved_ids=retrieved, latency_search_s=search_s,
                   latency_total_s=search_s + time.perf_counter() - start,
                   context_tokens=approx_tokens(render_memories(memories)) if memories else 0,
                   retrieval_scores=[round(float(i.score), 4) for i in used] if ranked else None,
                   request_keys=keys)

    def notes(self, client) -> list[str]:
        from memeval.benchmarks.locomo_plus.report import setting_notes

        return setting_notes(self)

    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        from memeval.benchmarks.locomo_plus.report import plus_report

        judge_model = client.model_for("judge") if client is not None and self.config.judge != "none" else None
        return plus_report(answers, judgments, notes, [s.label for s in self.systems], judge_model)

    def manifest_fields(self, answers: list, judgments: list, claimed, client) -> dict:
        from memeval.benchmarks.locomo_plus.report import stitching_summary

        return {"systems": [s.as_dict() for s in self.systems],
                "data": {"items": str(self.data_dir / datasets.ITEMS_FILE), "locomo": str(self.locomo_path),
                         "path": str(self.locomo_path),  # the conversations the viewer reads turns from
                         "sha256": claimed.identity.fixed["data_sha256"],
                         "pinned": self.items_sha256 == datasets.pinned(datasets.ITEMS_FILE).sha256,
                         "source": f"{datasets.REPO}@{datasets.COMMIT}", "licence": datasets.LICENCE},
                "judge_prompts": self.prompts.source if self.config.judge != "none" else None,
                "stitching": stitching_summary(self.stitched)}


def system_entry(system: SystemConfig, client) -> dict:
    """What of a system changes its rows (as LoCoMo records it): its parameters, and the extract and embed roles of
    the systems that call them."""
    from memeval.llm.manifest import role_identity
    from memeval.memory.extraction import EXTRACTION_TEMPERATURE
    from memeval.memory.registry import factory, needs_embeddings, needs_llm
    from memeval.prompts import prompt_hash

    entry: dict = {"name": system.name, "params": dict(system.params)}
    if needs_llm(system):
        library = getattr(factory(system.name), "library_identity", None)
        entry.update(extract=role_identity(client, "extract", getattr(factory(system.name), "extract_temperature",
                                                                      EXTRACTION_TEMPERATURE),
                                           library is None),
                     extract_prompt=prompt_hash("extract_triples") if library is None else library())
    if needs_embeddings(system):
        entry.update(embed={k: v for k, v in role_identity(client, "embed", None).items()
                            if k in ("model", "provider", "endpoint")})
    return entry


def run_locomo_plus(config: LocomoPlusConfig, client=None):
    """Answer, judge, report through the one engine (a RunOutcome)."""
    from memeval.engine.run import RunSettings, run_task

    return run_task(LocomoPlusTask(config), RunSettings(config.out, config.progress, config.restart,
                                                        config.fail_fast), ModelSettings.of(config), client)


__all__ = ["LocomoPlusConfig", "LocomoPlusTask", "PARAPHRASED", "run_locomo_plus"]
