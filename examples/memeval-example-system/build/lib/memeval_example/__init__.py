"""An example memory system for memeval, written against the protocol only (it imports nothing from memeval).

The protocol: `ingest(conversation)` once per conversation, then `search(question, k)` returning up to k items
best first, each with `text` (str), `score` (number), `source_ids` (the turn ids it came from, e.g. "D1:3"),
and optionally `time` and `kind` (str); `export()` returns the whole store (for MEMAUDIT union packages).
Items may be dicts or objects with those attributes. `ranked = False` would mean "the whole store in a fixed
order" (k does not apply).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on at for and or is was were did do does what when where who why how "
                  "with by from as it its be been has have had that this".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


class KeywordMemory:
    """Every turn is a memory; search ranks turns by how many content words they share with the question."""

    name = "keyword_memory"
    ranked = True

    def __init__(self, min_overlap: int = 1):
        self.min_overlap = min_overlap
        self.memories: list[dict] = []

    def ingest(self, conversation) -> None:
        self.memories = []
        for session in conversation.sessions:
            for turn in session.turns:
                text = f"{turn.speaker}: {turn.text}"
                self.memories.append({"text": text, "source_ids": [turn.dia_id], "time": session.date_time,
                                      "kind": "turn", "words": _words(text)})

    def search(self, question: str, k: int) -> list[dict]:
        asked = _words(question)
        scored = [(len(asked & m["words"]), i) for i, m in enumerate(self.memories)]
        best = sorted((s, i) for s, i in scored if s >= self.min_overlap)
        best.sort(key=lambda pair: (-pair[0], pair[1]))  # most shared words first, then conversation order
        return [{"text": self.memories[i]["text"], "score": float(s), "source_ids": self.memories[i]["source_ids"],
                 "time": self.memories[i]["time"], "kind": "turn"} for s, i in best[:k]]

    def export(self) -> list[dict]:
        return [{k: v for k, v in m.items() if k != "words"} for m in self.memories]
