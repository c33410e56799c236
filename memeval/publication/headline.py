"""The README's Results table: each headline number beside the published one, the command recorded when it
was made, and the commit in that run's manifest (built from stored results only). The MEMAUDIT and natural rows
are built here; each benchmark adds its rows through its publication contribution (publication/contribution.py),
with `commit_of` and `recorded` from here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memeval.artifacts import stored
from memeval.publication.readers import (
    MissingResults,
    base_sweep_summary,
    natural_summary,
    stress_summaries,
)
from memeval.publication.tables import PublishedTable
from memeval.reports.markdown import Markdown, code_span, markdown_table, md_text
from memeval.rundir import RunDir


def commit_of(directory: Path) -> str:
    """The git commit recorded in a stored run's manifest (`-dirty` when the tree had uncommitted changes)."""
    path = RunDir(directory).manifest
    sha = json.loads(path.read_text()).get("git_sha") if path.exists() else None
    if not sha:
        return "–"
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "")


def _ratio(summary: dict, method: str, budget: float) -> str:
    row = next((r for r in summary["rows"] if r["method"] == method and float(r["budget"]) == float(budget)), None)
    return "–" if row is None or row["mean_ratio"] is None else f"{row['mean_ratio']:.3f}"


def recorded_lines(directory: Path) -> str:
    """The command lines recorded in the directory's manifest when the results were made (never rebuilt)."""
    from memeval.invocation import recorded_commands

    return Markdown("; ".join(code_span(line) for line in recorded_commands(directory)))


def recorded(directory: Path, notebook: str, note: str = "") -> str:
    lines = recorded_lines(directory)
    if not lines:
        return f"– (no command recorded: rerun notebook {notebook})"
    return Markdown(f"{lines} ({md_text(note)}notebook {notebook})")


def _section(root: Path, build: Callable[[Path], list[list[str]]]) -> list[list[str]]:
    try:
        return build(root)
    except MissingResults as exc:
        return [[f"({exc})", "", "", "", ""]]


def _memaudit_rows(root: Path) -> list[list[str]]:
    from memeval.reports.memaudit import (
        PUBLISHED_BASE,
        PUBLISHED_BASE_RANGES,
        PUBLISHED_STRESS_NO_TOMBSTONE_B6,
    )

    base = base_sweep_summary(root)
    commit = commit_of(stored("base_sweep", root))
    command = recorded(stored("base_sweep", root), "03")
    rows = []
    for method, published in PUBLISHED_BASE.items():
        budgets = list(published)
        rows.append([Markdown(f"MEMAUDIT-Small `base`, {method} / OPT at B = {', '.join(map(str, budgets))} "
                              f"({base['packages']} packages, {base['opt_certified']}/{base['opt_rows']} OPT certified)"),
                     ", ".join(_ratio(base, method, b) for b in budgets),
                     ", ".join(f"{v:.3f}" for v in published.values()), command, commit])
    for method, (budgets, low, high) in PUBLISHED_BASE_RANGES.items():
        rows.append([Markdown(f"MEMAUDIT-Small `base`, {method} / OPT at B = {', '.join(map(str, budgets))}"),
                     ", ".join(_ratio(base, method, b) for b in budgets), f"{low:.3f}–{high:.3f}", command, commit])
    stress = stress_summaries(root)
    names = [d for d in PUBLISHED_STRESS_NO_TOMBSTONE_B6 if d in stress]
    if names:
        packages = stress[names[0]]["packages"]
        rows.append([f"MEMAUDIT stress, no_tombstone_opt / OPT at B = 6 ({', '.join(names)}; {packages} packages)",
                     ", ".join(_ratio(stress[d], "no_tombstone_opt", 6) for d in names),
                     ", ".join(f"{PUBLISHED_STRESS_NO_TOMBSTONE_B6[d]:.3f}" for d in names),
                     recorded(stress[names[0]]["directory"], "04", "and the same for each distribution; "),
                     commit_of(stress[names[0]]["directory"])])
    return rows


def _natural_rows(root: Path) -> list[list[str]]:
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    summary = natural_summary(root)
    commit = commit_of(stored("natural_sweep", root))
    budgets = sorted({float(r["budget"]) for r in summary["rows"]})
    shown = ", ".join(f"{b:g}" for b in budgets)
    packages = max((r["n"] for r in summary["rows"] if r["method"] == "estimated_gvt"), default=0)
    rows = [[f"LoCoMo-Natural-87 (rule labels, {packages} packages), estimated_gvt / OPT at B = {shown}",
             ", ".join(_ratio(summary, "estimated_gvt", b) for b in budgets),
             ", ".join(f"{PAPER_NATURAL_ESTIMATED_GVT[int(b)]:.2f}" if int(b) in PAPER_NATURAL_ESTIMATED_GVT
                       else "–" for b in budgets) + " (LongMemEval, model labels: not the same quantity)",
             Markdown(recorded_lines(stored("natural_packages", root)) + "; "
                      + recorded(stored("natural_sweep", root), "05")),
             commit]]
    stores = sorted((r["system"], r["method"]) for r in summary["rows"]
                    if r.get("pruning") == "salience" and float(r["budget"]) == budgets[-1])
    if stores:
        top = budgets[-1]
        rows.append([f"Exported stores, union ratio, salience-pruned at B = {top:g}: "
                     + " / ".join(system for system, _ in stores),
                     " / ".join(_ratio(summary, method, top) for _, method in stores), "— (not published)",
                     "same (union packages)", commit])
    return rows


def headline_table(root: Path) -> PublishedTable:
    """The README's Results table: ours beside the published number, with the command and the commit."""
    from memeval.publication.contribution import contributions

    sections = (_memaudit_rows, _natural_rows, *(s for c in contributions() for s in c.headline))
    body = [row for build in sections for row in _section(root, build)]
    markdown = markdown_table(["what", "ours", "published", "command", "commit"], body)
    caption = ("Headline results as stored under reports/artifacts by `make reproduce`, each beside the published "
               "number, the command that produced it and the commit recorded in that run's manifest. It does not "
               "show J or LLM-reader answers unless a key or a shared cache was configured. LoCoMo rows are on LoCoMo's "
               "original answer key, as the published numbers are (`memeval locomo trust` gives the corrected key "
               "and the ceilings).")
    return PublishedTable(markdown, None, caption)


