"""Tables for the data tour notebook: what is in LoCoMo, per category and per conversation."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from memeval.categories import CATEGORY_NAMES
from memeval.data.locomo import Conversation, LoadReport


def category_table(conversations: list[Conversation]) -> pd.DataFrame:
    counts = Counter(q.category for c in conversations for q in c.qa)
    total = sum(counts.values())
    return pd.DataFrame(
        [{"category": c, "name": CATEGORY_NAMES[c], "questions": counts[c], "share": counts[c] / total}
         for c in sorted(counts)]
    ).set_index("category")


def conversation_table(conversations: list[Conversation]) -> pd.DataFrame:
    rows = []
    for c in conversations:
        dated = [s.date for s in c.sessions if s.date]
        rows.append(
            {
                "conversation": c.sample_id,
                "speakers": f"{c.speaker_a} / {c.speaker_b}",
                "sessions": len(c.sessions),
                "turns": sum(len(s.turns) for s in c.sessions),
                "turns_per_session": sum(len(s.turns) for s in c.sessions) / max(1, len(c.sessions)),
                "images": sum(1 for s in c.sessions for t in s.turns if t.blip_caption),
                "questions": len(c.qa),
                "observations": len(c.observations),
                "first_session": min(dated).date().isoformat() if dated else None,
                "last_session": max(dated).date().isoformat() if dated else None,
                **{f"cat_{k}": sum(1 for q in c.qa if q.category == k) for k in CATEGORY_NAMES},
            }
        )
    return pd.DataFrame(rows).set_index("conversation")


def quirk_table(report: LoadReport) -> pd.DataFrame:
    return pd.DataFrame(
        [{"quirk": q, "count": n, "example": (report.examples.get(q) or [""])[0]} for q, n in sorted(report.quirks.items())]
    )
