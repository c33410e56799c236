"""The two reader settings that bracket memory: everything (`full_context`) and nothing (`no_memory`)."""

from __future__ import annotations

from memeval.conversations import Conversation
from memeval.memory.base import MemoryItem
from memeval.memory.render import turn_items


class FullContext:
    """Every turn in conversation order; the upper-bound reader setting (k does not apply)."""

    name = "full_context"
    ranked = False

    def __init__(self):
        self.items: list[MemoryItem] = []

    def ingest(self, conversation: Conversation) -> None:
        self.items = turn_items(conversation)

    def search(self, question: str, k: int) -> list[MemoryItem]:
        return list(self.items)

    def export(self) -> list[MemoryItem]:
        return list(self.items)


class NoMemory:
    """Nothing: the zero-shot floor (how much is answerable from general knowledge alone)."""

    name = "no_memory"
    ranked = False

    def ingest(self, conversation: Conversation) -> None:
        pass

    def search(self, question: str, k: int) -> list[MemoryItem]:
        return []

    def export(self) -> list[MemoryItem]:
        return []
