"""Figures of a LoCoMo run: F1 by category per system, evidence recall@k curves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from memeval.categories import category_label
from memeval.reports.run_report import recall_curve_means
from memeval.scoring.aggregate import by_category

CATEGORIES = (1, 2, 3, 4, 5)


def f1_by_category_figure(systems: Mapping[str, Sequence[Mapping]], title: str = "F1 by category (locomo mode)"):
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / max(1, len(systems))
    for i, (name, rows) in enumerate(systems.items()):
        stats = by_category(rows)
        values = [100 * stats[c].mean if c in stats else np.nan for c in CATEGORIES]
        ax.bar(np.arange(len(CATEGORIES)) + i * width, values, width, label=name)
    ax.set_xticks(np.arange(len(CATEGORIES)) + width * (len(systems) - 1) / 2,
                  [category_label(c) for c in CATEGORIES], fontsize=8)
    ax.set_ylabel("F1 ×100")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def recall_curve_figure(systems: Mapping[str, Sequence[Mapping]]):
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for name, rows in systems.items():
        curve = recall_curve_means(rows)
        if curve is not None:
            ax.plot(range(1, len(curve) + 1), [100 * v for v in curve], label=name)
    ax.set_xlabel("k (items retrieved)")
    ax.set_ylabel("evidence recall@k ×100")
    ax.set_title("Evidence recall@k (questions with resolvable evidence)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def save(fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    return path
