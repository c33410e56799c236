"""Every reader by the name `--reader` gives it: the shared ones here (`extractive`, no LLM; `claude`, this project's
memory prompt), then those each registered benchmark declares (`Benchmark.readers`, name -> "module:Class", loaded
when named). A reader turns the memories a system retrieved for a conversation's questions into answers: an LLM
reader by one request per question and the reading of its reply, under its own output cap."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.benchmarks import declarations, load
from memeval.conversations import QA, Conversation
from memeval.llm.client import LLMRequest
from memeval.memory.base import MemoryItem
from memeval.qa.answer import ANSWER_MAX_TOKENS, Memory, answer_request, extractive_answer, render_memories


def memories(items: Sequence[MemoryItem]) -> list[Memory]:
    return [Memory(item.text, item.time, item.source_ids) for item in items]


class Reader:
    """An LLM reader. `searched`: a conversation's (question, ranked items, items used, search s); `shared`: every
    question got the same memories (full context), so the prompt before the question may be marked for caching."""

    llm = True

    def __init__(self, name: str):
        self.name = name

    def cap(self) -> int:
        """Its own output cap (`--answer-max-tokens` overrides it)."""
        return ANSWER_MAX_TOKENS

    def requests(self, searched: Sequence, conversation: Conversation, shared: bool) -> list[LLMRequest]:
        raise NotImplementedError

    def prediction(self, qa: QA, reply: str) -> str:
        """The answer a reply gives."""
        return reply.strip()

    def context(self, conversation: Conversation, used: Sequence[MemoryItem]) -> str:
        """The memories as the reader lays them out (a row's context tokens count this)."""
        return render_memories(memories(used))


class ExtractiveReader(Reader):
    """No LLM: the retrieved sentence that best overlaps the question (memeval/qa/answer.py)."""

    llm = False

    def answer(self, qa: QA, used: Sequence[MemoryItem]) -> str:
        return extractive_answer(qa.question, memories(used))


class MemoryReader(Reader):
    """This project's reader prompt (`answer_memory`) over the memories, one a line with their dates."""

    def requests(self, searched: Sequence, conversation: Conversation, shared: bool) -> list[LLMRequest]:
        return [answer_request(qa.question, memories(used), cache_context=shared) for qa, _, used, _ in searched]


SHARED: dict[str, type[Reader]] = {"extractive": ExtractiveReader, "claude": MemoryReader}


def declared() -> dict[str, str]:
    """The readers the registered benchmarks bring, in registration order."""
    return {name: target for benchmark in declarations() for name, target in benchmark.readers.items()}


def names() -> tuple[str, ...]:
    return (*SHARED, *declared())


def reader(name: str) -> Reader:
    if name in SHARED:
        return SHARED[name](name)
    target = declared().get(name)
    if target is None:
        raise ValueError(f"unknown answerer {name!r}; expected one of {names()}")
    return load(target)(name)
