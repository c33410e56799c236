"""BM25 (bm25s) retrieval over memory items: turns (`rag_turns`), LoCoMo observations (`observations`, the
LoCoMo paper's RAG-observations baseline) and session summaries (`summaries`).

Items are indexed with their session date, so "when" questions can match on dates. Ranking ties go to the
earlier item, and items sharing no term with the question are not returned, so results are deterministic.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
from tqdm import TqdmWarning

with warnings.catch_warnings():
    # bm25s imports tqdm.auto, which in a kernel without ipywidgets warns about widget bars; this project runs
    # bm25s without its progress bars, so the warning would only clutter notebooks and reports.
    warnings.simplefilter("ignore", TqdmWarning)
    import bm25s
    from bm25s.stopwords import STOPWORDS_EN

from memeval.conversations import Conversation
from memeval.memory.base import MemoryItem, count_parameter
from memeval.memory.render import observation_items, summary_items, turn_items
from memeval.scoring.f1 import stem

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


class BM25Index:
    def __init__(self, items: list[MemoryItem], k1: float = 1.5, b: float = 0.75):
        self.items = items
        self.model = bm25s.BM25(k1=k1, b=b)
        corpus = [tokenize(f"{item.time} {item.text}") or ["<empty>"] for item in items]
        if items:
            self.model.index(corpus, show_progress=False)

    def search(self, question: str, k: int) -> list[MemoryItem]:
        if not self.items or k <= 0:
            return []
        query = [t for t in tokenize(question) if t in self.model.vocab_dict]
        if not query:
            return []
        scores = self.model.get_scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [_with_score(self.items[i], float(scores[i])) for i in order if scores[i] > 0]


def _with_score(item: MemoryItem, score: float) -> MemoryItem:
    return MemoryItem(item.text, score, item.source_ids, item.time, item.kind)


class _LexicalSystem:
    ranked = True
    name = ""

    def __init__(self):
        self.index = BM25Index([])

    def build_items(self, conversation: Conversation) -> list[MemoryItem]:
        raise NotImplementedError

    def ingest(self, conversation: Conversation) -> None:
        self.index = BM25Index(self.build_items(conversation))

    def search(self, question: str, k: int) -> list[MemoryItem]:
        return self.index.search(question, k)

    def export(self) -> list[MemoryItem]:
        return list(self.index.items)


class RagTurns(_LexicalSystem):
    """BM25 over turns rendered with speaker and session date; `chunk_tokens` packs consecutive turns."""

    name = "rag_turns"

    def __init__(self, chunk_tokens: int | None = None):
        super().__init__()
        self.chunk_tokens = count_parameter("chunk_tokens", chunk_tokens, allow_none=True)

    def build_items(self, conversation: Conversation) -> list[MemoryItem]:
        return turn_items(conversation, self.chunk_tokens)


class Observations(_LexicalSystem):
    name = "observations"

    def build_items(self, conversation: Conversation) -> list[MemoryItem]:
        return observation_items(conversation)


class Summaries(_LexicalSystem):
    name = "summaries"

    def build_items(self, conversation: Conversation) -> list[MemoryItem]:
        return summary_items(conversation)
