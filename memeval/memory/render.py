"""Conversation → memory items: turns (optionally chunked), observations, session summaries."""

from __future__ import annotations

from memeval.conversations import Conversation, Turn
from memeval.memory.base import MemoryItem, approx_tokens


def turn_text(turn: Turn) -> str:
    text = f"{turn.speaker}: {turn.text}"
    if turn.blip_caption:
        text += f" [shared {turn.blip_caption}]"
    return text


def turn_items(conversation: Conversation, chunk_tokens: int | None = None) -> list[MemoryItem]:
    """One item per turn, or consecutive turns of one session packed up to `chunk_tokens` (a turn longer than
    the limit stays whole)."""
    items: list[MemoryItem] = []
    for session in conversation.sessions:
        chunk: list[Turn] = []
        size = 0
        for turn in session.turns:
            cost = approx_tokens(turn_text(turn))
            if chunk and (chunk_tokens is None or size + cost > chunk_tokens):
                items.append(_chunk_item(chunk, session.date_time))
                chunk, size = [], 0
            chunk.append(turn)
            size += cost
        if chunk:
            items.append(_chunk_item(chunk, session.date_time))
    return items


def _chunk_item(turns: list[Turn], date_time: str) -> MemoryItem:
    return MemoryItem(text="\n".join(turn_text(t) for t in turns), score=0.0,
                      source_ids=tuple(t.dia_id for t in turns), time=date_time,
                      kind="turn" if len(turns) == 1 else "chunk")


def observation_items(conversation: Conversation) -> list[MemoryItem]:
    dates = {s.index: s.date_time for s in conversation.sessions} | conversation.session_dates
    return [MemoryItem(text=o.text, score=0.0, source_ids=o.source_ids, time=dates.get(o.session, ""),
                       kind="observation") for o in conversation.observations]


def summary_items(conversation: Conversation) -> list[MemoryItem]:
    sessions = {s.index: s for s in conversation.sessions}
    items = []
    for index, text in conversation.session_summaries.items():
        session = sessions.get(index)
        ids = tuple(t.dia_id for t in session.turns) if session else ()
        date = session.date_time if session else conversation.session_dates.get(index, "")
        items.append(MemoryItem(text=text, score=0.0, source_ids=ids, time=date, kind="summary"))
    return items
