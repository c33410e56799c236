"""The rules every published figure keeps, checked on the record `save_figure` writes beside it (`name.json`):
what a reviewer would otherwise send back. `problems` returns one line per broken rule; an empty list passes."""

from __future__ import annotations

from pathlib import Path

from memeval.publication.looks import SAFE_COLOURS
from memeval.publication.marks import FigureData, PanelData

OVERALL_CATEGORIES = "categories 1–4"  # every overall LoCoMo score: single-, multi-hop, temporal, open domain
PER_CATEGORY = "per category"
CATEGORY_CONVENTIONS = (OVERALL_CATEGORIES, PER_CATEGORY)
_TOLERANCE = 1e-9


def _panel_problems(where: str, panel: PanelData) -> list[str]:
    out = []
    for series in panel.series:
        at = f"{where}: {series.label!r}"
        if series.protocol != panel.protocol:
            out.append(f"{at} was measured by {series.protocol!r}, not the panel's {panel.protocol!r}: "
                       "another protocol's number goes to its own panel or table")
        if series.colour.upper() not in {c.upper() for c in SAFE_COLOURS}:
            out.append(f"{at} has colour {series.colour} outside the shared colour-blind-safe palette")
        if series.uncertainty == "interval":
            if series.low is None or series.high is None:
                out.append(f"{at} is an estimate drawn without an interval")
            else:
                for x, y, low, high in zip(series.x, series.y, series.low, series.high, strict=True):
                    if y is not None and (low is None or high is None
                                          or not low - _TOLERANCE <= y <= high + _TOLERANCE):
                        out.append(f"{at} at {x}: value {y} outside its interval [{low}, {high}]")
            if not series.interval:
                out.append(f"{at} does not say what its interval is")
        if series.uncertainty == "published" and series.protocol == panel.protocol and "paper" not in series.label \
                and "published" not in series.label:
            out.append(f"{at} is a published number whose label does not say so")
        for x, y, mark in zip(series.x, series.y, series.marks, strict=True):
            expected = "not_run" if y is None else "zero" if y == 0 else "value"
            if mark != expected:
                out.append(f"{at} at {x}: drawn as {mark}, but the value is {y}")
    kinds: dict[str, list] = {}
    for series in panel.series:
        if series.kind in ("line", "step", "point", "bar"):
            look = (series.marker, series.linestyle, series.hatch)
            kinds.setdefault(series.kind, []).append((look, series.label))
    for kind, looks in kinds.items():
        seen: dict = {}
        for look, label in looks:
            if look in seen:
                out.append(f"{where}: {label!r} and {seen[look]!r} differ by colour alone ({kind})")
            seen.setdefault(look, label)
    if panel.categories is not None:
        if panel.categories not in CATEGORY_CONVENTIONS:
            out.append(f"{where}: category convention {panel.categories!r} is not one of {CATEGORY_CONVENTIONS}")
        text = " ".join([panel.title, panel.xlabel, panel.ylabel])
        if panel.categories == OVERALL_CATEGORIES and OVERALL_CATEGORIES not in text:
            out.append(f"{where}: an overall score whose labels do not say {OVERALL_CATEGORIES!r}")
    for label in panel.unrecorded:
        out.append(f"{where}: {label!r} was drawn around the marks layer, so nothing checks it")
    return out


def problems(data: FigureData) -> list[str]:
    out = []
    if "does not show" not in data.caption:
        out.append(f"{data.name}: the caption does not say what the figure does not show")
    if not data.panels or not any(p.series for p in data.panels):
        out.append(f"{data.name}: no data series recorded")
    for i, panel in enumerate(data.panels):
        out += _panel_problems(f"{data.name} panel {i + 1} ({panel.title or panel.ylabel})", panel)
    return out


def problems_in(directory: str | Path) -> dict[str, list[str]]:
    """Every saved figure record under `directory`, by file name, with its problems."""
    from memeval.safe_json import load_json_file

    found = {}
    for path in sorted(Path(directory).glob("*.json")):
        raw = load_json_file(path)
        if isinstance(raw, dict) and "panels" in raw and "caption" in raw:
            found[path.name] = problems(FigureData.model_validate(raw))
    return found
