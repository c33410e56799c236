"""Publication tables, built only from stored results under reports/artifacts (never a solver or an API).

Each builder returns a PublishedTable: markdown for the report and the README, a frame for CSV, and a caption
saying what was measured and what it does not show. Inputs missing raise MissingResults naming the notebook
that writes them. A quantity that needs an LLM nobody ran (J offline) is a table of the published rows with ours
marked "not measured", so nothing is invented and nothing published is hidden. A bootstrap interval over one
package (one conversation) is printed "n/a (1 package)", and the caption says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memeval.atomic import write_text_atomic
from memeval.publication.readers import (
    MissingResults,
    base_sweep_summary,
    natural_raw_rows,
    natural_summary,
    stress_summaries,
)
from memeval.records import AnswerRow
from memeval.reports.markdown import markdown_table
from memeval.reports.tables import ci_cell
from memeval.rundir import RunDir
from memeval.scoring.aggregate import Interval


@dataclass(frozen=True)
class PublishedTable:
    markdown: str
    frame: pd.DataFrame | None
    caption: str



def frame_markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    """Values to `digits` decimals; index levels and column labels (budgets, ids) as written (30, not 30.000)."""
    keys = [n for n in frame.index.names if n is not None]
    flat = frame.reset_index() if keys else frame

    def label(part: object) -> str:
        return f"{part:g}" if isinstance(part, float) else str(part)

    headers = [" · ".join(label(p) for p in c if str(p)) if isinstance(c, tuple) else label(c) for c in flat.columns]

    def cell(value: object, is_key: bool) -> object:
        if isinstance(value, float):
            if value != value:
                return "–"
            return f"{value:g}" if is_key else f"{value:.{digits}f}"
        return "–" if value is None else value

    key_columns = [str(c) in keys for c in flat.columns]
    return markdown_table(headers, [[cell(v, k) for v, k in zip(row, key_columns, strict=True)]
                                    for row in flat.itertuples(index=False)])


def estimate_cell(estimate: float | None, low: float | None, high: float | None, units: int | None = None,
                  unit: str = "package") -> str:
    """An estimate and its 95% interval at the precision the interval justifies: decimals down to the width's
    first significant digit, three at most (0.30 [0.10, 0.50], 0.655 [0.645, 0.665]). Every number of a table
    goes through here, so one value never prints as 0.487 in one column and 0.488 in another (Python's correctly
    rounded format against pandas' scaled rounding of the same float). An interval of width 0 means every unit
    scored the same; fewer than two units give no interval at all."""
    if estimate is None or estimate != estimate:
        return "–"
    if units is not None and units < 2:
        return f"{estimate:.3f} {ci_cell(None, None, str, units, unit)}"
    if low is None or high is None or low != low or high != high:
        return f"{estimate:.3f} (no interval)"
    width = high - low
    if width <= 0:
        return f"{estimate:.3f} (all {units} {unit}s equal)" if units else f"{estimate:.3f} (no spread)"
    digits = min(3, max(1, 1 - math.floor(math.log10(width))))
    return f"{estimate:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def interval_cell(interval: Interval, unit: str = "package") -> str:
    return estimate_cell(interval.estimate, interval.low, interval.high, interval.clusters, unit)


def _row_cell(row: dict | None) -> str:
    """A sweep summary row's mean ratio with its bootstrap interval over packages."""
    if row is None:
        return "–"
    return estimate_cell(row.get("mean_ratio"), row.get("ci_low"), row.get("ci_high"), int(row.get("n") or 0))


def _single_packages(summary: dict) -> dict[tuple[str, float], dict]:
    """Summary rows (by method and budget) whose mean rests on fewer than two packages: their bootstrap interval
    only repeats the mean, so tables print "n/a (1 package)" instead."""
    return {(r["method"], float(r["budget"])): r for r in summary["rows"]
            if r.get("mean_ratio") is not None and r.get("n", 0) < 2 and "pruning" not in r}


def _interval_method(summary: dict) -> str:
    single = _single_packages(summary)
    return "bootstrap 95% CI over packages, printed to the precision its width allows" + (
        f"; n/a where a mean rests on one package ({len(single)} rows), which has no interval" if single else "")


def _budget(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _by_method_budget(summary: dict) -> dict[tuple[str, float], dict]:
    return {(r["method"], float(r["budget"])): r for r in summary["rows"] if "pruning" not in r}


def memaudit_base_table(root: Path) -> PublishedTable:
    """Markdown for a reader (each of ours with its interval); the CSV keeps the numbers unrounded."""
    from memeval.reports.memaudit import published_comparison

    summary = base_sweep_summary(root)
    frame = published_comparison(summary)
    rows = _by_method_budget(summary)
    body = []
    for method, budget, paper, ours in zip(frame["method"], frame["budget"], frame["paper"], frame["ours"],
                                           strict=True):
        b = _budget(budget)
        cell = _row_cell(rows.get((method, b))) if b is not None else (
            f"{ours} (range of the means over B)" if ours else "–")
        body.append([method, budget, paper, cell])
    caption = (f"MEMAUDIT-Small `base`, {summary['packages']} seeded packages: ours beside the MEMAUDIT paper's "
               f"published ratios to OPT (its 500 seeds of the same generator; {summary['opt_certified']}/"
               f"{summary['opt_rows']} of our OPT rows certified; {_interval_method(summary)}). It does not show "
               "natural text: synthetic packages only.")
    return PublishedTable(markdown_table(["method", "B", "paper (published)", "ours [95% CI]"], body), frame,
                          caption)


def memaudit_stress_table(root: Path) -> PublishedTable:
    from memeval.reports.memaudit import frontier_gap

    summaries = stress_summaries(root)
    budget = max(float(r["budget"]) for s in summaries.values() for r in s["rows"])
    frame = frontier_gap(summaries, budget).round(3)
    body = []
    for dist in frame.index:
        row = _by_method_budget(summaries[dist]).get(("no_tombstone_opt", budget))
        gap = None if row is None else {**row, "mean_ratio": 1 - row["mean_ratio"], "ci_low": 1 - row["ci_high"],
                                        "ci_high": 1 - row["ci_low"]}
        paper = frame.at[dist, "paper_no_tombstone_opt"]
        body.append([dist, _row_cell(row), _row_cell(gap), "–" if paper != paper or paper is None else f"{paper:.3f}"])
    packages = sorted({s["packages"] for s in summaries.values()})
    caption = (f"Stress suite at B = {budget:g} ({'/'.join(map(str, packages))} packages per distribution): the "
               "best store without tombstones or compound updates as a ratio to OPT, the frontier gap (1 minus that "
               "ratio: the share of OPT that needs tombstones or compound updates), each with its bootstrap 95% "
               "interval over packages, and the paper's value where it publishes one (same generators and budget). "
               "It does not show real systems: synthetic distributions.")
    headers = ["distribution", "no-tombstone OPT / OPT [95% CI]", "frontier gap [95% CI]",
               "paper's no-tombstone OPT / OPT"]
    return PublishedTable(markdown_table(headers, body), frame, caption)


def natural_writers_table(root: Path) -> PublishedTable:
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT, PAPER_SOURCE, writer_table

    summary = natural_summary(root)
    methods = sorted({r["method"] for r in summary["rows"] if "pruning" not in r and r["method"] != "opt"})
    budgets = sorted({float(r["budget"]) for r in summary["rows"] if "pruning" not in r})
    rows = _by_method_budget(summary)
    writers = markdown_table(["writer", *[f"B = {b:g} words" for b in budgets]],
                             [[m, *[_row_cell(rows.get((m, b))) for b in budgets]] for m in methods])
    paper = markdown_table(["B (words)", "paper: LongMemEval, model labels (published)",
                            "ours: LoCoMo, rule labels [95% CI]"],
                           [[f"{b:g}", f"{value:.2f}", _row_cell(rows.get(("estimated_gvt", float(b))))]
                            for b, value in PAPER_NATURAL_ESTIMATED_GVT.items()])
    caption = ("LoCoMo-Natural-87 (rule-adjudicated): each writer's mean ratio to the certified OPT "
               f"[{_interval_method(summary)}] by budget, then Estimated-GVT beside the paper's number "
               f"({PAPER_SOURCE}). It does not show a reproduction of the paper: another source and label process.")
    return PublishedTable(writers + "\n\n" + paper, writer_table(summary, methods), caption)


def natural_stores_table(root: Path) -> PublishedTable:
    from memeval.publication.figures_memaudit import PRUNING_LABELS, store_intervals
    from memeval.scoring.aggregate import bootstrap_mean

    rows = [r for r in natural_raw_rows(root) if r.is_union and r.certified]
    if not rows:
        raise MissingResults("no certified union rows in the natural sweep: execute notebook 05_memaudit_natural87")
    union = store_intervals(rows)
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r.system, r.pruning, float(r.budget)), []).append(r)
    body, records = [], []
    for key in sorted(groups):
        members = groups[key]
        raw = bootstrap_mean([r.value for r in members])
        package = bootstrap_mean([r.package_ratio for r in members if r.package_ratio is not None])
        exported = sum(r.exported or 0 for r in members) / len(members)
        fitting = sum(r.exported_fitting or 0 for r in members) / len(members)
        ratio = union.get(key)
        system, pruning, budget = key
        body.append([system, pruning, f"{budget:g}", len(members), interval_cell(raw), interval_cell(package),
                     "–" if ratio is None else interval_cell(ratio), f"{exported:.1f}", f"{fitting:.1f}"])
        records.append({"store": system, "pruning": pruning, "B (words)": budget, "packages": len(members),
                        "F": raw.estimate, "F / OPT(package)": package.estimate,
                        "F / OPT(package ∪ store)": None if ratio is None else ratio.estimate,
                        "F / OPT(package ∪ store) low": None if ratio is None else ratio.low,
                        "F / OPT(package ∪ store) high": None if ratio is None else ratio.high,
                        "memories exported": exported, "memories ≤ B": fitting})
    headers = ["store", "pruning", "B (words)", "packages", "F of the pruned store [95% CI]",
               "F / OPT(package) [95% CI]", "F / OPT(package ∪ store) [95% CI]", "memories exported (mean)",
               "memories ≤ B (mean)"]
    caption = ("Exported stores as union packages (rule labels), per store, pruning and budget in words: the "
               "covered weight F of the store pruned to the budget; F / OPT(package), which may exceed 1 (the store "
               "can hold what the package's own candidates cannot); and the union ratio F / OPT(package ∪ store), "
               "over the package's candidates and the store's memories together; each a mean over packages with "
               "its bootstrap 95% interval. Pruning: " + "; ".join(PRUNING_LABELS.values()) + ". The last two "
               "columns count the store's memories over the package's slice and those no longer than the budget "
               "on their own. It does not show retrieval or answer quality.")
    frame = pd.DataFrame(records).set_index(["store", "pruning", "B (words)"])
    return PublishedTable(markdown_table(headers, body), frame, caption)


def reader_of(by_system: Mapping[str, list[AnswerRow]]) -> str:
    return next((r.answerer for rows in by_system.values() for r in rows), "")


def llm_note(run: Path) -> str:
    """The models behind a run and the sampling actually sent, from its manifest; loud under model-default."""
    try:
        llm = json.loads(RunDir(run).manifest.read_text(encoding="utf-8")).get("llm") or {}
    except (OSError, ValueError):
        return ""
    roles = llm.get("roles") or {}
    if not roles:
        return ""
    parts = [f"{role} {r['model']} (anthropic-version {r['api_version']}, "
             + ("no temperature sent" if r.get("temperature_sent") is None else f"temperature {r['temperature_sent']}")
             + ")" for role, r in sorted(roles.items())]
    note = " Models: " + "; ".join(parts) + "."
    if llm.get("sampling") == "model-default":
        note += (" Sampling: model defaults (--sampling model-default), not the protocols' temperatures, so these "
                 "numbers are not the protocol's.")
    return note


TABLES: dict[str, Callable[[Path], PublishedTable]] = {
    "tab_memaudit_base": memaudit_base_table,
    "tab_memaudit_stress": memaudit_stress_table,
    "tab_natural_writers": natural_writers_table,
    "tab_natural_stores": natural_stores_table,
}


def save_table(table: PublishedTable, name: str, directory: str | Path) -> list[Path]:
    """`name`.md (caption, then the table) and, where the table is one frame, `name`.csv."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.md"]
    write_text_atomic(paths[0], f"{table.caption}\n\n{table.markdown}\n")
    if table.frame is not None:
        paths.append(directory / f"{name}.csv")
        write_text_atomic(paths[1], table.frame.to_csv())
    return paths
