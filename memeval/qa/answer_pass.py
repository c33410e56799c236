"""How a LoCoMo conversation is answered: one system ingests it, searches each question, the reader answers; one
AnswerRow per question. A row is final when it has no error; rows with an error (an LLM call that gave up, a
cache miss with no backend, or a plug-in system whose own `ingest` or `search` raised) are retried by a rerun and
the later row wins. The engine (memeval/engine/run.py) appends and resumes the rows a conversation at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memeval.conversations import QA, Conversation
from memeval.errors import PluginFailed
from memeval.llm.client import LLMClient, LLMError
from memeval.memory.base import MemoryItem, MemorySystem, SystemConfig, approx_tokens, as_memory_items
from memeval.memory.registry import build_system, is_plugin
from memeval.qa.answer import EXTRACTIVE_LABEL
from memeval.qa.evidence import evidence_recall, recall_curve
from memeval.qa.reader_cap import capped
from memeval.qa.readers import Reader, reader
from memeval.records import AnswerRow, load_answers, write_records  # noqa: F401  (load_answers: kept here)
from memeval.scoring.f1 import score_f1

RECALL_K_MAX = 50
PLUGIN_ERROR = "plugin: "  # how a row's error starts when a plug-in's own ingest or search raised


@dataclass(frozen=True)
class AnswerSettings:
    answerer: str = "extractive"
    k: int = 10
    recall_k_max: int = RECALL_K_MAX
    max_tokens: int | None = None  # the reader's output cap (None: each protocol's own; see qa/reader_cap.py)


def is_ranked(system) -> bool:
    """Ranked unless the system says otherwise (`ranked = False`: the whole store in a fixed order)."""
    return bool(getattr(system, "ranked", True))


def call_system(config: SystemConfig, stage: str, where: str, method: Callable, *args):
    """`method(*args)`: the system's own `ingest` or `search`. A plug-in's exception becomes PluginFailed naming
    the system, `where` (the question) and the exception; SystemExit too, so a plug-in calling sys.exit cannot end
    a run as if it had finished. KeyboardInterrupt propagates, and so does LLMError (an API failure, recorded as
    one). A built-in system's exceptions are programming errors and propagate unchanged."""
    if not is_plugin(config.name):
        return method(*args)
    try:
        return method(*args)
    except LLMError:
        raise
    except (Exception, SystemExit) as exc:
        raise PluginFailed(config.label, stage, where, exc) from exc


def retrieve(system_config: SystemConfig, conversation: Conversation, questions: Sequence[QA],
             settings: AnswerSettings, client: LLMClient | None = None, failed: dict[str, str] | None = None,
             on_ingested: Callable[[MemorySystem, Conversation], None] | None = None
             ) -> tuple[MemorySystem, list[tuple[QA, list[MemoryItem], list[MemoryItem], float]]]:
    """Ingest once, then search each question: (system, [(question, ranked items, items used, search s)]).
    A plug-in's failure raises PluginFailed; given `failed`, it is recorded there instead (sample id → the row's
    error) and the question left out: every question when ingest failed, else the one whose search did."""
    system = build_system(system_config, client=client)
    try:
        call_system(system_config, "ingest", f"{conversation.sample_id} (its first question "
                    f"{questions[0].sample_id if questions else '-'})", system.ingest, conversation)
    except PluginFailed as exc:
        if failed is None:
            raise
        failed.update((qa.sample_id, exc.row_error) for qa in questions)
        return system, []
    if on_ingested is not None:
        on_ingested(system, conversation)
    ranked = is_ranked(system)
    depth = max(settings.k, settings.recall_k_max) if ranked else settings.k
    searched = []
    for qa in questions:
        start = time.perf_counter()
        try:
            found = call_system(system_config, "search", qa.sample_id, system.search, qa.question, depth)
        except PluginFailed as exc:
            if failed is None:
                raise
            failed[qa.sample_id] = exc.row_error
            continue
        search_s = time.perf_counter() - start
        items = as_memory_items(found, f"{system_config.label} search for {qa.sample_id}")
        used = items[: settings.k] if ranked else items
        searched.append((qa, items, used, search_s))
    return system, searched


def answer_requests(searched, conversation: Conversation, answerer: str = "claude", max_tokens: int | None = None
                    ) -> list:
    """One reader request per question, capped at `max_tokens` when given. When every question of the
    conversation is given the same memories (full context), the shared prompt prefix is marked for prompt
    caching."""
    return capped(_reader_requests(searched, conversation, reader(answerer)), max_tokens)


def reader_cap(settings: AnswerSettings) -> int:
    """The output cap the reader's requests carry: `--answer-max-tokens`, else the protocol's."""
    return settings.max_tokens if settings.max_tokens is not None else protocol_cap(settings.answerer)


def protocol_cap(answerer: str) -> int:
    """A reader's own output cap (qa/readers.py and the readers the benchmarks declare)."""
    return reader(answerer).cap()


def _reader_requests(searched, conversation: Conversation, chosen: Reader) -> list:
    shared = len(searched) > 1 and all(used == searched[0][2] for _, _, used, _ in searched)
    return chosen.requests(searched, conversation, shared)


def _context_tokens(conversation: Conversation, used: Sequence[MemoryItem], chosen: Reader) -> int:
    return approx_tokens(chosen.context(conversation, used)) if used else 0


def answer_conversation(system_config: SystemConfig, conversation: Conversation, questions: Sequence[QA],
                        settings: AnswerSettings, client: LLMClient | None = None, fail_fast: bool = False,
                        on_ingested: Callable[[MemorySystem, Conversation], None] | None = None
                        ) -> list[AnswerRow]:
    """Retrieve, then answer each question; returns rows in question order. A system that cannot ingest
    (an extractor with no LLM configured) yields error rows for every question, retried on the next run; so
    does a plug-in whose ingest raised, and one whose search raised yields an error row for that question
    (`fail_fast`: PluginFailed is raised instead). `on_ingested(system, conversation)` runs once the system has
    ingested (a run keeps a library system's own store with it)."""
    failed: dict[str, str] | None = None if fail_fast else {}
    try:
        system, searched = retrieve(system_config, conversation, questions, settings, client, failed, on_ingested)
    except LLMError as exc:
        return [_error_row(system_config, qa, settings, f"ingest failed: {type(exc).__name__}: {exc}")
                for qa in questions]
    ranked = is_ranked(system)

    chosen = reader(settings.answerer)
    predictions: list[tuple[str, float, str | None]] = []
    keys: list[list[str] | None] = [None] * len(searched)  # each question's reader request, by its cache key
    if not chosen.llm:
        for qa, _, used, _ in searched:
            start = time.perf_counter()
            predictions.append((chosen.answer(qa, used), time.perf_counter() - start, None))
    else:
        if client is None:
            raise ValueError(f"the {settings.answerer} answerer needs an LLM client")
        requests = capped(_reader_requests(searched, conversation, chosen), settings.max_tokens)
        keys = [[client.resolve(r).key] for r in requests]
        replies = client.complete_many(requests) if searched else []
        for (qa, *_), out in zip(searched, replies, strict=True):
            if isinstance(out, LLMError):
                predictions.append(("", 0.0, f"{type(out).__name__}: {out}"))
            else:
                predictions.append((chosen.prediction(qa, out.text), out.latency_s, None))

    rows = []
    for (qa, items, used, search_s), (prediction, answer_s, error), request_keys in zip(searched, predictions, keys,
                                                                                          strict=True):
        retrieved_ids = [list(item.source_ids) for item in used]
        rows.append(AnswerRow(
            sample_id=qa.sample_id,
            conversation_id=qa.conversation_id,
            category=qa.category,
            question=qa.question,
            gold=qa.answer,
            prediction=prediction,
            system=system_config.label,
            answerer=EXTRACTIVE_LABEL if settings.answerer == "extractive" else settings.answerer,
            k=settings.k if ranked else getattr(system, "fixed_k", None),
            f1=None if error else score_f1(prediction, qa.answer, qa.category, "locomo"),
            evidence_ids=list(qa.evidence_ids),
            evidence_recall=evidence_recall(qa.evidence_ids, retrieved_ids),
            recall_curve=(recall_curve(qa.evidence_ids, [i.source_ids for i in items], settings.recall_k_max)
                          if ranked else None),
            retrieved_ids=retrieved_ids,
            latency_search_s=search_s,
            latency_total_s=search_s + answer_s,
            context_tokens=_context_tokens(conversation, used, chosen),
            error=error,
            retrieval_scores=[round(float(item.score), 4) for item in used] if ranked else None,
            request_keys=request_keys,
        ))
    if failed:  # the plug-in's failures, each in its question's place
        by_id = {row.sample_id: row for row in rows}
        rows = [by_id.get(qa.sample_id) or _error_row(system_config, qa, settings, failed[qa.sample_id])
                for qa in questions]
    return rows


def error_row(system_config: SystemConfig, qa: QA, settings: AnswerSettings, error: str | None) -> AnswerRow:
    """The row of a question that got no answer, with why."""
    return _error_row(system_config, qa, settings, error)


def _error_row(system_config: SystemConfig, qa: QA, settings: AnswerSettings, error: str | None) -> AnswerRow:
    return AnswerRow(
        sample_id=qa.sample_id, conversation_id=qa.conversation_id, category=qa.category, question=qa.question,
        gold=qa.answer, prediction="", system=system_config.label,
        answerer=EXTRACTIVE_LABEL if settings.answerer == "extractive" else settings.answerer, k=None, f1=None,
        evidence_ids=list(qa.evidence_ids), evidence_recall=None, recall_curve=None, retrieved_ids=[],
        latency_search_s=None, latency_total_s=None, context_tokens=None, error=error)


def planned_answer(system_config: SystemConfig, qa: QA, prediction: str) -> AnswerRow:
    """A row standing in for an answer not yet made (dry runs price the judge calls it will need)."""
    return _error_row(system_config, qa, AnswerSettings(), None).replace(prediction=prediction)
