"""The small table a notebook ends with: what it measured and where it wrote, read off its metrics.json (never a
raw dict or a truncated JSON dump)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from memeval.reports.markdown import markdown_table

MAX_ITEMS = 12  # a list or mapping longer than this is summarised by its length
X100 = "_x100"  # metrics.json keeps F1 on 0–1 under its original keys and ×100 beside them under KEY_x100


def path_bases(report_dir: str | Path | None = None) -> list[tuple[str, str]]:
    """(absolute directory, what it becomes) for every directory a report names paths under, most specific first:
    the reports directory (where the HTML is: its links resolve from there), the repository, the repository's
    parent (`../shared/data/...`, as the data search documents it) and the home directory."""
    from memeval.artifacts import artifacts_root
    from memeval.data.paths import project_root

    reports = Path(report_dir) if report_dir is not None else artifacts_root().parent
    root = project_root()
    bases = [(reports, ""), (root, ""), (root.parent, "../"), (Path.home(), "~/")]
    seen, out = set(), []
    for base, replacement in bases:
        for form in dict.fromkeys([os.path.abspath(base), os.path.realpath(base)]):
            if form != os.sep and form not in seen:
                seen.add(form)
                out.append((form, replacement))
    return sorted(out, key=lambda pair: -len(pair[0]))


def shown_path(path: str | Path, report_dir: str | Path | None = None) -> str:
    """A path as a report prints it: relative to the reports directory or the repository, never absolute (a
    rendered report is read on other machines, and a temporary directory means nothing there); a path under none
    of them is shown by its name."""
    text = str(path)
    if not os.path.isabs(text):
        return text
    for form in dict.fromkeys([os.path.abspath(text), os.path.realpath(text)]):
        for base, replacement in path_bases(report_dir):
            if form == base:
                return replacement.rstrip("/") or "."
            if form.startswith(base + os.sep):
                return replacement + form[len(base) + 1:]
    return "…/" + Path(text).name


def relative_paths(text: str, report_dir: str | Path | None = None) -> str:
    """Every occurrence of an absolute path under `path_bases` in `text` (printed paths, tracebacks, warnings)
    rewritten as `shown_path` would show it."""
    for base, replacement in path_bases(report_dir):
        pattern = re.compile(re.escape(base) + r"(/|(?![\w+-])(?!\.\w))")
        text = pattern.sub(lambda m, r=replacement: r if m.group(1) == "/" else r.rstrip("/") or ".", text)
    return text


def _cell(value: object, digits: int | None = None) -> str:
    """`digits`: fixed decimals (a ×100 score); None: integral floats as integers, others to three decimals."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:
            return "–"
        if digits is None:
            return f"{value:g}" if value.is_integer() else f"{value:.3f}"
        return f"{value:.{digits}f}"
    if isinstance(value, (list, tuple)):
        return (f"{len(value)} items" if len(value) > MAX_ITEMS
                else ", ".join(_cell(v, digits) for v in value) or "none")
    if isinstance(value, str) and os.path.isabs(value):
        return shown_path(value)
    return str(value)


def _is_prose(value: object) -> bool:
    """A list of sentences (a run's notes): read as bullets under the table, not squeezed into one cell."""
    return (isinstance(value, (list, tuple)) and bool(value) and len(value) <= MAX_ITEMS
            and all(isinstance(v, str) for v in value) and any(len(v) > 40 for v in value))


def metrics_summary(metrics: Mapping, title: str = "What this notebook measured (its metrics.json)") -> str:
    """One row per scalar, one per entry of a short nested mapping (`key · entry`); long ones by their size.
    A key whose ×100 sibling (`KEY_x100`, F1) is present is shown only through it, at one decimal; paths are
    shown relative (`shown_path`); notes are bullets under the table."""
    rows, prose = [], []
    for key, value in metrics.items():
        if f"{key}{X100}" in metrics:
            continue
        digits = 1 if key.endswith(X100) else None
        if isinstance(value, Mapping):
            if len(value) > MAX_ITEMS or any(isinstance(v, (Mapping, list)) for v in value.values()):
                rows.append([key, f"{len(value)} entries (see metrics.json)"])
            else:
                fractional = any(isinstance(v, float) and v == v and not v.is_integer() for v in value.values())
                shown = 3 if digits is None and fractional else digits  # 1.000 beside 0.513, not 1
                rows += [[f"{key} · {k}", _cell(v, shown)] for k, v in value.items()]
        elif _is_prose(value):
            rows.append([key, f"{len(value)} (below)"])
            prose += [f"- {key}: {v}" for v in value]
        else:
            rows.append([key, _cell(value, digits)])
    table = f"**{title}**\n\n" + markdown_table(["what", "value"], rows)
    return table + ("\n\n" + "\n".join(prose) if prose else "")


def with_x100(metrics: Mapping, keys: tuple[str, ...]) -> dict:
    """`metrics` with each of `keys` (an F1 on 0–1, or a mapping of them) also given ×100 under `KEY_x100`, right
    after it: the tables print F1 ×100, and metrics.json keeps its 0–1 keys for whoever already reads them."""
    def x100(value):
        if isinstance(value, Mapping):
            return {k: x100(v) for k, v in value.items()}
        return None if value is None else round(100 * float(value), 4)

    out = {}
    for key, value in metrics.items():
        out[key] = value
        if key in keys:
            out[f"{key}{X100}"] = x100(value)
    return out
