"""`memory_graph` on LoCoMo: LLM-extracted triples per chunk of turns, TF-IDF recall of the top-k triples,
`hops` expansion, and the source turns of every recalled triple handed to the reader beside it.
`extract_max_tokens` replaces the extraction's 1,024-token output cap, so a model that never stops by itself (a small
local one echoes the prompt) fails in seconds, not minutes; the parameter is in the system's name, so rows at
another cap are another system's."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.conversations import Conversation
from memeval.memory.base import MemoryItem, approx_tokens, count_parameter
from memeval.memory.extraction import (
    EXTRACTION_MAX_TOKENS,
    Source,
    extract_llm,
    extraction_request,
)
from memeval.memory.graph import MemoryGraph, Triple, sentence_transformer_embedder
from memeval.memory.render import turn_text


def conversation_sources(conversation: Conversation) -> list[list[Source]]:
    """Turns as sources (ISO date for ordering), grouped per session."""
    sessions = []
    for session in conversation.sessions:
        time = session.date.isoformat() if session.date else session.date_time
        sessions.append([Source(t.dia_id, turn_text(t), time) for t in session.turns])
    return sessions


def chunk_sources(sessions: Sequence[Sequence[Source]], chunk_tokens: int) -> list[list[Source]]:
    chunks = []
    for session in sessions:
        chunk, size = [], 0
        for source in session:
            cost = approx_tokens(source.text)
            if chunk and size + cost > chunk_tokens:
                chunks.append(chunk)
                chunk, size = [], 0
            chunk.append(source)
            size += cost
        if chunk:
            chunks.append(chunk)
    return chunks


def recall_items(graph: MemoryGraph, sources: dict[str, Source], query: str, top_k: int, max_hops: int,
                 current_only: bool = False) -> list[MemoryItem]:
    """Recalled triples (seeds first), then the source text behind them, each source once."""
    triples = graph.search(query, top_k, max_hops, current_only)
    items = [_triple_item(t) for t in triples]
    seen: set[str] = set()
    for t in triples:
        for sid in t.source_ids:
            if sid not in seen and sid in sources:
                seen.add(sid)
                items.append(MemoryItem(sources[sid].text, 0.0, (sid,), sources[sid].time, "source"))
    return items


def _triple_item(t: Triple) -> MemoryItem:
    text = t.text + (" (later superseded)" if t.superseded else "")
    return MemoryItem(text, 0.0, t.source_ids, t.time, "superseded" if t.superseded else "triple")


class MemoryGraphSystem:
    name = "memory_graph"
    ranked = False
    needs_llm = True

    def __init__(self, top_k: int = 5, hops: int = 1, chunk_tokens: int = 512, model: str = "",
                 current_only: bool = False, aliases: dict | None = None, vectors: str = "tfidf",
                 extract_max_tokens: int = EXTRACTION_MAX_TOKENS):
        if hops not in (0, 1, 2):
            raise ValueError(f"hops must be 0, 1 or 2, not {hops}")
        self.top_k = self.fixed_k = count_parameter("top_k", top_k)
        self.hops = hops
        self.chunk_tokens = count_parameter("chunk_tokens", chunk_tokens)
        self.model = model
        self.extract_max_tokens = count_parameter("extract_max_tokens", extract_max_tokens)
        self.current_only = current_only
        self.aliases = aliases
        if vectors not in ("tfidf", "sentence-transformers"):
            raise ValueError(f"vectors must be tfidf or sentence-transformers, not {vectors!r}")
        self.vectors = vectors
        self.client = None
        self.graph = MemoryGraph(aliases)
        self.sources: dict[str, Source] = {}
        self.extraction_stats: dict = {}

    def planned_requests(self, conversation: Conversation) -> list:
        """The extraction calls ingesting `conversation` makes (for dry-run estimates)."""
        return [extraction_request(chunk, self.model, self.extract_max_tokens)
                for chunk in chunk_sources(conversation_sources(conversation), self.chunk_tokens)]

    def planned_memories(self, conversation: Conversation) -> list[MemoryItem]:
        """Stand-ins for what a question recalls, for the dry run's reader prompts (the triples exist only once the
        LLM has extracted them, and ingesting here would send its extraction calls): `top_k` triples, each a
        message's speaker, "said" and its first six words, from the conversation's first `top_k` messages, then those
        messages as their sources (as `recall_items` orders them). The triples `hops` would add are not known."""
        sources = [s for session in conversation_sources(conversation) for s in session][: self.top_k]
        triples = [MemoryItem(f"{s.text.partition(': ')[0]} said {' '.join(s.text.partition(': ')[2].split()[:6])}",
                              0.0, (s.id,), s.time, "triple") for s in sources]
        return triples + [MemoryItem(s.text, 0.0, (s.id,), s.time, "source") for s in sources]

    def ingest(self, conversation: Conversation) -> None:
        if self.client is None:
            from memeval.llm.client import make_client

            self.client = make_client("auto")
        sessions = conversation_sources(conversation)
        embedder = sentence_transformer_embedder() if self.vectors == "sentence-transformers" else None
        self.graph = MemoryGraph(self.aliases, embedder)
        self.sources = {s.id: s for session in sessions for s in session}
        facts, self.extraction_stats = extract_llm(self.client, chunk_sources(sessions, self.chunk_tokens),
                                                   self.model, self.extract_max_tokens)
        for fact in facts:
            self.graph.add(fact.subject, fact.relation, fact.object, fact.source_id,
                           self.sources[fact.source_id].time)

    def search(self, question: str, k: int) -> list[MemoryItem]:
        return recall_items(self.graph, self.sources, question, self.top_k, self.hops, self.current_only)

    def export(self) -> list[MemoryItem]:
        return [_triple_item(t) for t in self.graph.triples()]
