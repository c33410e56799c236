"""The small table a notebook ends with: what it measured and where it wrote, read off its metrics.json (never a
raw dict or a truncated JSON dump)."""

from __future__ import annotations

from collections.abc import Mapping

from memeval.reports.tables import markdown_table

MAX_ITEMS = 12  # a list or mapping longer than this is summarised by its length


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "–" if value != value else f"{value:g}" if value.is_integer() else f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return f"{len(value)} items" if len(value) > MAX_ITEMS else ", ".join(_cell(v) for v in value) or "none"
    return str(value)


def metrics_summary(metrics: Mapping, title: str = "What this notebook measured (its metrics.json)") -> str:
    """One row per scalar, one per entry of a short nested mapping (`key · entry`); long ones by their size."""
    rows = []
    for key, value in metrics.items():
        if isinstance(value, Mapping):
            if len(value) > MAX_ITEMS or any(isinstance(v, (Mapping, list)) for v in value.values()):
                rows.append([key, f"{len(value)} entries (see metrics.json)"])
            else:
                rows += [[f"{key} · {k}", _cell(v)] for k, v in value.items()]
        else:
            rows.append([key, _cell(value)])
    return f"**{title}**\n\n" + markdown_table(["what", "value"], rows)
