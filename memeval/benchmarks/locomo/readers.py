"""LoCoMo's readers, as its declaration names them: `claude_official` (the LoCoMo paper's, paper_reader.py) and the
EverMemOS framework's `evermemos_mem0`, `evermemos_memos`, `evermemos_cot` (evermemos_reader.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.benchmarks.locomo import evermemos_reader
from memeval.benchmarks.locomo.paper_reader import (
    PAPER_MAX_TOKENS,
    official_prediction,
    official_request,
    paper_prediction,
    paper_protocol,
    paper_request,
    render_official_context,
    render_paper_context,
)
from memeval.conversations import QA, Conversation
from memeval.llm.client import LLMRequest
from memeval.memory.base import MemoryItem
from memeval.qa.answer import ANSWER_MAX_TOKENS, render_memories
from memeval.qa.readers import Reader, memories


class PaperReader(Reader):
    """The paper's prompts and 50-token budget once fetched (read when the reader is made), else this project's
    paraphrase of them under the 64-token cap."""

    def __init__(self, name: str):
        super().__init__(name)
        self.published = paper_protocol()

    def cap(self) -> int:
        return PAPER_MAX_TOKENS if self.published is not None else ANSWER_MAX_TOKENS

    def requests(self, searched: Sequence, conversation: Conversation, shared: bool) -> list[LLMRequest]:
        if self.published is not None:
            return [paper_request(conversation, qa, used, self.published, cache_context=shared)
                    for qa, _, used, _ in searched]
        return [official_request(conversation, qa, used, cache_context=shared)
                for qa, _, used, _ in searched]

    def prediction(self, qa: QA, reply: str) -> str:
        if self.published is not None:
            return paper_prediction(qa, reply, self.published)
        return official_prediction(qa, reply)

    def context(self, conversation: Conversation, used: Sequence[MemoryItem]) -> str:
        if self.published is not None:
            return render_paper_context(conversation, used)
        return render_official_context(conversation, used)


class EverMemOSReader(Reader):
    """The framework's answer prompt named by the reader, over memeval's memories one a line with their dates."""

    def cap(self) -> int:
        return evermemos_reader.MAX_TOKENS

    def requests(self, searched: Sequence, conversation: Conversation, shared: bool) -> list[LLMRequest]:
        return evermemos_reader.reader_requests(self.name, searched,
                                                lambda used: render_memories(memories(used)), shared)

    def prediction(self, qa: QA, reply: str) -> str:
        return evermemos_reader.prediction(reply)
