"""`rag_dense`: dense retrieval over the conversation in chunks — Mem0's RAG baselines (chunks of 128…8,192 tokens,
top-k 1 or 2, OpenAI embeddings, cosine) within this project's accounting.

Chunks: whole turns packed in conversation order up to `chunk_tokens`, across session boundaries (so that large
chunks hold several sessions, as in Mem0's grid), a turn never cut (one longer than the limit stays whole, alone).
Each turn is rendered as in `rag_turns` ("Speaker: text [shared …]"); a chunk's time is the date of its first
session, and where a later session begins inside it a "[date]" line precedes that session's turns. The embedded
text is the chunk as the reader sees it: "[date] " then the chunk. A chunk's source turns are the turns it holds,
so evidence recall is counted exactly as for `rag_turns`.

Tokens are counted as everywhere else in memeval (memeval/memory/base.py `approx_tokens`: four characters a token,
the unit of `rag_turns:chunk_tokens` and the memory graph's chunks). Mem0's harness cut the flattened text every
`chunk_size` tokens of tiktoken's encoding for the embedding model (cl100k_base for text-embedding-3-small),
mid-turn, each line "timestamp | speaker: text" (mem0 evaluation/src/rag.py). So a chunk here is a whole number of
turns with dates only where sessions start, and its size is within the 4-character estimate of the limit, not an
exact cl100k count: a chunk_tokens=8192 chunk may come out somewhat above or below 8,192 cl100k tokens (the API
refuses an input past 8,192, in one line).

Retrieval: the question is embedded, every chunk scored by cosine similarity, ties to the earlier chunk. With `k`
set, the top k chunks are the memory (the row's k); without it the run's `--k` applies and recall curves are
kept, as for other ranked systems. Embeddings come from the run's client (its `embed` role: `--embed-model`),
chunks once per conversation and the question per search, all cached.
"""

from __future__ import annotations

import numpy as np

from memeval.conversations import Conversation, Turn
from memeval.memory.base import MemoryItem, approx_tokens, count_parameter
from memeval.memory.render import turn_text


def dense_chunks(conversation: Conversation, chunk_tokens: int) -> list[MemoryItem]:
    """The conversation as chunks of whole turns, at most `chunk_tokens` each (4 characters a token) unless one
    turn alone is longer."""
    items: list[MemoryItem] = []
    lines: list[str] = []
    turns: list[Turn] = []
    size = 0
    first_date = ""
    for session in conversation.sessions:
        started = True  # this session's first turn: a date line when it does not open the chunk
        for turn in session.turns:
            line = turn_text(turn)
            header = f"[{session.date_time}]" if started and turns else ""
            cost = approx_tokens(line) + (approx_tokens(header) if header else 0)
            if turns and size + cost > chunk_tokens:
                items.append(_chunk(lines, turns, first_date))
                lines, turns, size = [], [], 0
                header, cost = "", approx_tokens(line)
            if not turns:
                first_date = session.date_time
            if header:
                lines.append(header)
            lines.append(line)
            turns.append(turn)
            size += cost
            started = False
    if turns:
        items.append(_chunk(lines, turns, first_date))
    return items


def _chunk(lines: list[str], turns: list[Turn], date_time: str) -> MemoryItem:
    return MemoryItem(text="\n".join(lines), score=0.0, source_ids=tuple(t.dia_id for t in turns), time=date_time,
                      kind="turn" if len(turns) == 1 else "chunk")


def embedded_text(item: MemoryItem) -> str:
    """What is embedded for a chunk: the chunk as the reader is shown it."""
    return f"[{item.time}] {item.text}" if item.time else item.text


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero: it scores 0 against everything)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class DenseRAG:
    """See the module docstring. `dimensions`: sent to models that take it (text-embedding-3-*), part of every
    embedding's cache key and of the system's name."""

    name = "rag_dense"
    needs_embeddings = True  # build_system hands it the run's client

    def __init__(self, chunk_tokens: int = 512, k: int | None = None, dimensions: int | None = None):
        self.chunk_tokens = count_parameter("chunk_tokens", chunk_tokens)
        self.fixed_k = count_parameter("k", k, allow_none=True)
        self.ranked = self.fixed_k is None  # with its own k the top k are the memory, whatever the run's --k
        self.dimensions = count_parameter("dimensions", dimensions, allow_none=True)
        self.client = None
        self.items: list[MemoryItem] = []
        self.vectors = np.zeros((0, 0), dtype=np.float32)

    def _client(self):
        if self.client is None:
            from memeval.llm.client import make_client

            self.client = make_client("auto")
        return self.client

    def planned_embeddings(self, conversation: Conversation, questions) -> list[list[str]]:
        """The `embed` calls ingesting `conversation` and searching `questions` make, each its texts (for dry-run
        estimates): the chunks at once, then each question."""
        return [[embedded_text(item) for item in dense_chunks(conversation, self.chunk_tokens)]] + \
            [[qa.question] for qa in questions]

    def ingest(self, conversation: Conversation) -> None:
        self.items = dense_chunks(conversation, self.chunk_tokens)
        texts = [embedded_text(item) for item in self.items]
        self.vectors = _unit_rows(self._client().embed(texts, self.dimensions)) if texts else \
            np.zeros((0, 0), dtype=np.float32)

    def search(self, question: str, k: int) -> list[MemoryItem]:
        if not self.items:
            return []
        query = _unit_rows(self._client().embed([question], self.dimensions))[0]
        if query.shape[0] == self.vectors.shape[1]:
            scores = self.vectors @ query
        elif not query.any() or not self.vectors.any():  # a dry run's stand-in (zero) vectors: no ranking
            scores = np.zeros(len(self.items), dtype=np.float32)
        else:
            raise ValueError(f"rag_dense: the question's vector has {query.shape[0]} dimensions and the chunks' "
                             f"{self.vectors.shape[1]}: the embeddings model changed between calls")
        order = np.argsort(-scores, kind="stable")[: self.fixed_k or k]
        return [MemoryItem(self.items[i].text, float(scores[i]), self.items[i].source_ids, self.items[i].time,
                           self.items[i].kind) for i in order]

    def export(self) -> list[MemoryItem]:
        return list(self.items)
