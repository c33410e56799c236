"""Tables and figures for notebook 06 (the memory-graph study)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pandas as pd

from memeval.benchmarks.graph80.task import PUBLISHED
from memeval.memory.entities import base_form

TYPES = ["fact", "preference", "relation", "multi-hop", "all"]


def _score(mean: float | None, std: float | None) -> str:
    """mean ± std over repeats; a score the same in every repeat (a deterministic reader and score, or a spread
    below the third decimal) once, never "± 0.000"."""
    if mean is None or mean != mean:
        return "– (no scored answer)"
    return f"{mean:.3f}" if not std or round(std, 3) == 0 else f"{mean:.3f} ± {std:.3f}"


def comparison_table(summary: dict) -> pd.DataFrame:
    df = pd.DataFrame(summary["rows"])
    df["score"] = [_score(m, s) for m, s in zip(df["score_mean"], df["score_std"], strict=True)]
    table = df.pivot_table(index="system", columns="type", values="score", aggfunc="first")[TYPES]
    table.columns.name = None
    return table


def published_reference() -> pd.DataFrame:
    return pd.DataFrame([{"system": "memory graph (published study)", **PUBLISHED["graph"]},
                         {"system": "summary-style memory (published study)", **PUBLISHED["summary"]}]
                        ).set_index("system")


DIAGNOSTIC_LABELS = {"path_recall": "gold-path recall", "entity_recall": "entity recall",
                     "context_tokens": "context tokens (mean)", "n": "questions"}


def diagnostics_table(summary: dict, systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Retrieval diagnostics over all questions (the score itself is the comparison table's `all` column, printed
    once so the two tables cannot disagree in the last digit)."""
    df = pd.DataFrame(summary["rows"])
    df = df[df["type"] == "all"]
    if systems:
        df = df[df["system"].isin(systems)]
    table = df.set_index("system")[["path_recall", "entity_recall", "context_tokens", "n"]].round(3)
    table["context_tokens"] = table["context_tokens"].round(0).astype("Int64")
    return table.rename(columns=DIAGNOSTIC_LABELS)


STABILITY_LABELS = {"a": "system A", "b": "system B", "type": "question type",
                    "mean_difference": "mean score difference (A − B)", "sign_holds": "same sign in every repeat",
                    "n": "questions", "meaningful": "meaningful (30 questions or more)"}


def stability_table(summary: dict, types: Sequence[str] | None = None) -> pd.DataFrame:
    """Each pair's mean score difference per question type (`types`: only these), whether its sign holds in
    every repeat, and whether enough questions stand behind it."""
    columns = ["a", "b", "type", "mean_difference", "sign_holds", "n", "meaningful"]
    df = pd.DataFrame(summary["stability"], columns=columns)  # empty when no two systems have scores
    if types is not None:
        df = df[df["type"].isin(list(types))]
    for flag in ("sign_holds", "meaningful"):
        df[flag] = df[flag].map({True: "yes", False: "no"})
    df["mean_difference"] = df["mean_difference"].round(3)
    return df.set_index(["a", "b", "type"])[["mean_difference", "sign_holds", "n", "meaningful"]].rename(
        columns=STABILITY_LABELS).rename_axis([STABILITY_LABELS[k] for k in ("a", "b", "type")])


LOWEST_LABELS = {"question_id": "question id", "type": "type", "path_recall": "gold-path recall",
                 "entity_recall": "entity recall"}


def lowest(rows: Sequence[dict], system: str, key: str, n: int = 5) -> pd.DataFrame:
    """The system's `n` questions lowest on `key` (first repeat), recalls and score to two decimals."""
    mine = [r for r in rows if r["system"] == system and r["repeat"] == 0 and r[key] is not None]
    mine.sort(key=lambda r: (r[key], r["question_id"]))
    columns = ["question_id", "type", "question", "gold", "prediction", "path_recall", "entity_recall", "score"]
    frame = pd.DataFrame(mine[:n], columns=columns)  # empty when nothing was scored
    for column in ("path_recall", "entity_recall", "score"):
        frame[column] = frame[column].map(lambda v: "–" if v is None or v != v else f"{float(v):.2f}")
    return frame.rename(columns=LOWEST_LABELS)


def extraction_table(extraction: dict) -> pd.DataFrame:
    """An LLM extractor's counts and its precision and recall against the gold triples, one row per memory-graph
    system (or the error that stopped it)."""
    frame = pd.DataFrame.from_dict(extraction, orient="index").rename_axis("system")
    return frame.rename(columns=lambda c: str(c).replace("_", " "))


def profile_figure(graph, person: str):
    """The edges touching the person in the memory graph, labelled with their relation."""
    node = base_form(person)
    incident = [(s, o, k) for s, o, k in graph.graph.edges(keys=True) if node in (s, o)]
    view = graph.graph.edge_subgraph(incident)
    fig, ax = plt.subplots(figsize=(8, 6))
    # the person at the centre, every neighbour on one circle in name order: no two labels can overlap
    others = sorted(n for n in view.nodes if n != node)
    pos = nx.shell_layout(view, nlist=[[node], others]) if others else {node: (0.0, 0.0)}
    nx.draw_networkx_nodes(view, pos, ax=ax, node_size=260,
                           node_color=["#D55E00" if n == node else "#56B4E9" for n in view.nodes])
    nx.draw_networkx_edges(view, pos, ax=ax, arrows=True, alpha=0.5, node_size=260)
    radius = max((float(np.hypot(x, y)) for x, y in pos.values()), default=1.0) or 1.0
    for n, (x, y) in pos.items():  # names outside the circle, aligned away from the centre; the person's below
        if n == node:
            ax.text(x, y - 0.12 * radius, n, fontsize=8, fontweight="bold", ha="center", va="top")
            continue
        ax.text(x * 1.1, y * 1.1, n, fontsize=8, va="center",
                ha="left" if x > 0.05 * radius else "right" if x < -0.05 * radius else "center")
    labels = {(s, o): d["relation"] for s, o, d in view.edges(data=True)}
    nx.draw_networkx_edge_labels(view, pos, edge_labels=labels, ax=ax, font_size=6, label_pos=0.6,
                                 bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    ax.set_xlim(-1.9 * radius, 1.9 * radius)
    ax.set_ylim(-1.25 * radius, 1.25 * radius)
    ax.set_title(f"Memory graph around {person}")
    ax.axis("off")
    fig.tight_layout()
    return fig
