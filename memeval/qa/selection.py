"""Which conversations and questions a run covers: `all`, a list, `prototype` or the first N."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.data.locomo import QA, Conversation
from memeval.errors import InputError

PROTOTYPE_CONVERSATION = "conv-26"
PROTOTYPE_QUOTA = {2: 10, 4: 8, 1: 2}  # first 10 temporal, 8 single-hop, 2 multi-hop, in file order


def select_conversations(conversations: Sequence[Conversation], spec: str) -> list[Conversation]:
    if spec == "all":
        return list(conversations)
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    by_id = {c.sample_id: c for c in conversations}
    unknown = [w for w in wanted if w not in by_id]
    if unknown or not wanted:
        raise InputError("--conversations", spec, f"unknown conversation id(s) {', '.join(unknown) or '(none)'}; "
                         f"known: {', '.join(by_id)}")
    return [by_id[w] for w in dict.fromkeys(wanted)]


def prototype_questions(conversation: Conversation) -> list[QA]:
    taken = {c: 0 for c in PROTOTYPE_QUOTA}
    chosen = []
    for qa in conversation.qa:
        if qa.category in taken and taken[qa.category] < PROTOTYPE_QUOTA[qa.category]:
            taken[qa.category] += 1
            chosen.append(qa)
    return chosen


def select_questions(conversation: Conversation, spec: str | int) -> list[QA]:
    """`all`; `prototype` (the quota above, in file order); or N, the first N questions in file order."""
    if spec == "all":
        return list(conversation.qa)
    if spec == "prototype":
        return prototype_questions(conversation)
    try:
        n = int(spec)
    except (TypeError, ValueError):
        raise InputError("--questions", str(spec), "expected prototype, all or a positive integer") from None
    if n <= 0:
        raise InputError("--questions", str(spec), "expected a positive integer")
    return list(conversation.qa[:n])
