"""The records every QA benchmark's loader produces — a conversation of dated sessions of turns, with its questions —
so memory systems, readers, the viewer and the natural packages read any benchmark without importing one. A
benchmark's loader (memeval/benchmarks/<name>/data.py) maps its own files onto them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    position: int
    img_url: tuple[str, ...] = ()
    blip_caption: str | None = None
    query: str | None = None


@dataclass(frozen=True)
class Session:
    index: int
    date_time: str
    date: datetime | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Observation:
    session: int
    speaker: str
    text: str
    source_ids: tuple[str, ...]


@dataclass(frozen=True)
class QA:
    sample_id: str
    conversation_id: str
    index: int
    question: str
    answer: str | None
    category: int
    evidence: tuple[str, ...]
    evidence_ids: tuple[str, ...]
    unresolved_evidence: tuple[str, ...]
    adversarial_answer: str | None = None


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    qa: tuple[QA, ...]
    observations: tuple[Observation, ...]
    session_summaries: dict[int, str]
    event_summaries: dict[int, dict]
    session_dates: dict[int, str]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    def turn_by_id(self) -> dict[str, Turn]:
        return {t.dia_id: t for s in self.sessions for t in s.turns}

    def session(self, index: int) -> Session:
        for s in self.sessions:
            if s.index == index:
                return s
        raise KeyError(index)


@dataclass
class LoadReport:
    source: str
    layout: str
    quirks: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def note(self, quirk: str, example: str) -> None:
        self.quirks[quirk] += 1
        self.examples.setdefault(quirk, [])
        if len(self.examples[quirk]) < 5:
            self.examples[quirk].append(example)
