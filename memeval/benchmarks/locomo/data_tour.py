"""LoCoMo's data tour (notebook 00): what is in LoCoMo, per category and per conversation, in tables and one figure."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from memeval.benchmarks.locomo.categories import CATEGORY_NAMES, category_label
from memeval.conversations import Conversation, LoadReport

TURNS_PER_SESSION = "turns / session"
CATEGORY_COLUMNS = [category_label(k) for k in CATEGORY_NAMES]


def category_table(conversations: list[Conversation]) -> pd.DataFrame:
    """Questions per category, with the share in percent (one decimal: 1,986 questions)."""
    counts = Counter(q.category for c in conversations for q in c.qa)
    total = sum(counts.values())
    return pd.DataFrame(
        [{"category": category_label(c), "questions": counts[c], "share (%)": f"{100 * counts[c] / total:.1f}"}
         for c in sorted(counts)]
    ).set_index("category")


def conversation_table(conversations: list[Conversation]) -> pd.DataFrame:
    """One row per conversation (its id the index); the category columns are named as every table names them
    (`CATEGORY_COLUMNS`)."""
    rows = []
    for c in conversations:
        dated = [s.date for s in c.sessions if s.date]
        turns = sum(len(s.turns) for s in c.sessions)
        rows.append(
            {
                "conversation": c.sample_id,
                "speakers": f"{c.speaker_a} / {c.speaker_b}",
                "sessions": len(c.sessions),
                "turns": turns,
                TURNS_PER_SESSION: round(turns / max(1, len(c.sessions)), 1),
                "images": sum(1 for s in c.sessions for t in s.turns if t.blip_caption),
                "questions": len(c.qa),
                "observations": len(c.observations),
                "first session": min(dated).date().isoformat() if dated else "–",
                "last session": max(dated).date().isoformat() if dated else "–",
                **{category_label(k): sum(1 for q in c.qa if q.category == k) for k in CATEGORY_NAMES},
            }
        )
    return pd.DataFrame(rows).set_index("conversation")


def quirk_table(report: LoadReport) -> pd.DataFrame:
    """Each repair or report of the loader, how often, and its first example."""
    return pd.DataFrame(
        [{"quirk": q.replace("_", " "), "count": n, "first example": (report.examples.get(q) or ["–"])[0]}
         for q, n in sorted(report.quirks.items())]
    ).set_index("quirk")


def data_tour_figure(per_conversation: pd.DataFrame):
    """Questions per conversation stacked by category, sessions, and mean turns per session: one panel per
    quantity (never two scales on one axis), in the publication style, the legend below the panels."""
    import matplotlib.pyplot as plt

    from memeval.publication.style import WIDTH_DOUBLE, legend_below, style

    # colour-blind-safe hues (Okabe & Ito), each category also hatched, so no two are told apart by hue alone
    looks = {1: ("#E69F00", ""), 2: ("#56B4E9", "///"), 3: ("#009E73", "..."), 4: ("#0072B2", "\\\\\\"),
             5: ("#CC79A7", "xx")}
    with style():
        fig, axes = plt.subplots(1, 3, figsize=(WIDTH_DOUBLE, 2.6), gridspec_kw={"width_ratios": [2, 1, 1]})
        x = np.arange(len(per_conversation))
        ticks = [str(name).removeprefix("conv-") for name in per_conversation.index]
        bottom = np.zeros(len(per_conversation))
        for k, (colour, hatch) in looks.items():
            counts = per_conversation[category_label(k)].to_numpy(dtype=float)
            axes[0].bar(x, counts, 0.8, bottom=bottom, color=colour, hatch=hatch, edgecolor="#333333",
                        linewidth=0.3, label=category_label(k))
            bottom += counts
        axes[0].set_ylabel("questions")
        axes[1].bar(x, per_conversation["sessions"], 0.7, color="#666666")
        axes[1].set_ylabel("sessions")
        axes[2].bar(x, per_conversation[TURNS_PER_SESSION], 0.7, color="#666666")
        axes[2].set_ylabel("turns per session (mean)")
        titles = ["(a) questions by category", "(b) sessions", "(c) turns per session"]
        for i, (ax, title) in enumerate(zip(axes, titles, strict=True)):
            ax.set_title(title, loc="left")
            ax.set_xticks(x, ticks, rotation=0 if i == 0 else 90)  # the narrow panels: ids upright would collide
            ax.set_xlabel("conversation (conv-N)")
            ax.grid(axis="x", visible=False)
        fig.tight_layout()
        legend_below(fig, axes[:1], ncol=5)
    return fig
