"""The README's Results table: each headline number beside the published one, the command recorded when it
was made, and the commit in that run's manifest (built from stored results only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memeval.artifacts import stored
from memeval.benchmarks.locomo.categories import QA_CATEGORIES
from memeval.publication.readers import (
    MissingResults,
    base_sweep_summary,
    graph_study_summary,
    locomo_answers,
    locomo_judgments,
    locomo_run_dir,
    natural_summary,
    stress_summaries,
)
from memeval.publication.tables import PublishedTable, _reader
from memeval.reports.markdown import Markdown, code_span, markdown_table, md_text
from memeval.rundir import RunDir


def _commit(directory: Path) -> str:
    """The git commit recorded in a stored run's manifest (`-dirty` when the tree had uncommitted changes)."""
    path = RunDir(directory).manifest
    sha = json.loads(path.read_text()).get("git_sha") if path.exists() else None
    if not sha:
        return "–"
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "")


def _ratio(summary: dict, method: str, budget: float) -> str:
    row = next((r for r in summary["rows"] if r["method"] == method and float(r["budget"]) == float(budget)), None)
    return "–" if row is None or row["mean_ratio"] is None else f"{row['mean_ratio']:.3f}"


def _recorded_lines(directory: Path) -> str:
    """The command lines recorded in the directory's manifest when the results were made (never rebuilt)."""
    from memeval.invocation import recorded_commands

    return Markdown("; ".join(code_span(line) for line in recorded_commands(directory)))


def _recorded(directory: Path, notebook: str, note: str = "") -> str:
    lines = _recorded_lines(directory)
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
    commit = _commit(stored("base_sweep", root))
    command = _recorded(stored("base_sweep", root), "03")
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
                     _recorded(stress[names[0]]["directory"], "04", "and the same for each distribution; "),
                     _commit(stress[names[0]]["directory"])])
    return rows


def _natural_rows(root: Path) -> list[list[str]]:
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    summary = natural_summary(root)
    commit = _commit(stored("natural_sweep", root))
    budgets = sorted({float(r["budget"]) for r in summary["rows"]})
    shown = ", ".join(f"{b:g}" for b in budgets)
    packages = max((r["n"] for r in summary["rows"] if r["method"] == "estimated_gvt"), default=0)
    rows = [[f"LoCoMo-Natural-87 (rule labels, {packages} packages), estimated_gvt / OPT at B = {shown}",
             ", ".join(_ratio(summary, "estimated_gvt", b) for b in budgets),
             ", ".join(f"{PAPER_NATURAL_ESTIMATED_GVT[int(b)]:.2f}" if int(b) in PAPER_NATURAL_ESTIMATED_GVT
                       else "–" for b in budgets) + " (LongMemEval, model labels: not the same quantity)",
             Markdown(_recorded_lines(stored("natural_packages", root)) + "; "
                      + _recorded(stored("natural_sweep", root), "05")),
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


def _locomo_rows(root: Path) -> list[list[str]]:
    from memeval.benchmarks.locomo.baselines import J_BASELINES, PROTOTYPE_BASELINE_F1, f1_baselines
    from memeval.benchmarks.locomo.report import recall_curve_means
    from memeval.scoring.aggregate import overall_mean, pool_judgments

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    commit = _commit(run)
    names = list(by_system)
    questions = len(next(iter(by_system.values()), []))
    by_protocol = locomo_judgments(run)
    command = _recorded(run, "02")
    published = ", ".join(f"{b.system} {b.overall:.1f}" for b in f1_baselines("locomo")
                          if b.overall is not None and b.system != "Human")
    failed = sum(1 for rows in by_system.values() for r in rows if r.error)
    answered = f"; {failed} answers failed and are left out" if failed else ""
    rows = [[f"LoCoMo F1 ×100 (official scorer, overall over categories 1–5 as the LoCoMo paper's, {questions} "
             f"questions, {_reader(by_system)} reader{answered}): {' / '.join(names)}",
             " / ".join(f"{100 * overall_mean([r for r in by_system[n] if r.f1 is not None]):.2f}" for n in names),
             f"{published} (LLM readers)", command, commit]]
    ranked = [n for n in names if recall_curve_means(by_system[n])]
    if ranked:
        rows.append([f"LoCoMo evidence recall@10 ×100: {' / '.join(ranked)}",
                     " / ".join(f"{100 * recall_curve_means(by_system[n])[9]:.1f}" for n in ranked),
                     "— (not published)", "same", commit])
    mem0_j = next(b.overall for b in J_BASELINES if b.system == "Mem0")
    if by_protocol:
        ours = "; ".join(
            " / ".join(f"{n} {pool_judgments([j for j in rows if j.category in QA_CATEGORIES]).mean:.2f}"
                       for n, rows in judgments.items()) + f" ({protocol} judge)"
            for protocol, judgments in sorted(by_protocol.items()))
    else:
        ours = "not measured: no judge ran (no endpoint here)"
        command = Markdown("`memeval data fetch protocols`, then `memeval locomo run --reader claude --judge binary "
                   "--judge-model gpt-4o-mini --llm openai` (Mem0's judge protocol; not run)")
    rows.append(["LoCoMo J (categories 1–4)", ours, f"Mem0 {mem0_j:.2f} (gpt-4o-mini binary judge)",
                 command, commit if by_protocol else "–"])
    proto = stored("prototype_run", root)
    if RunDir(proto).answers.exists():
        rag = locomo_answers(proto).get("rag_turns")
        if rag:
            rows.append([f"LoCoMo prototype (20 questions of conv-26), rag_turns mean F1 ×100, "
                         f"{_reader({'r': rag})} reader", f"{100 * overall_mean(rag):.2f}",
                         f"claude-mem ≈ {100 * PROTOTYPE_BASELINE_F1:.0f}",
                         _recorded(proto, "01"), _commit(proto)])
    return rows


def _graph_rows(root: Path) -> list[list[str]]:
    from memeval.benchmarks.graph80.task import PUBLISHED

    summary = graph_study_summary(root)
    overall = {r["system"]: r["score_mean"] for r in summary["rows"] if r["type"] == "all"}
    graph = next((s for s in ("memory_graph:hops=1", "memory_graph") if s in overall), None)
    if graph is None or "chunks" not in overall:
        return []
    def shown(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    return [[f"graph80: {graph} vs chunks, {summary['score_kind']}", f"{shown(overall[graph])} vs "
             f"{shown(overall['chunks'])}",
             f"{PUBLISHED['graph']['overall']:.3f} vs {PUBLISHED['summary']['overall']:.3f} (the published study's "
             "own data and judge)", _recorded(stored("graph_study", root), "06"),
             _commit(stored("graph_study", root))]]


def headline_table(root: Path) -> PublishedTable:
    """The README's Results table: ours beside the published number, with the command and the commit."""
    body = [row for build in (_memaudit_rows, _natural_rows, _locomo_rows, _graph_rows)
            for row in _section(root, build)]
    markdown = markdown_table(["what", "ours", "published", "command", "commit"], body)
    caption = ("Headline results as stored under reports/artifacts by `make reproduce`, each beside the published "
               "number, the command that produced it and the commit recorded in that run's manifest. It does not "
               "show J or LLM-reader answers unless a key or a shared cache was configured. LoCoMo rows are on LoCoMo's "
               "original answer key, as the published numbers are (`memeval locomo trust` gives the corrected key "
               "and the ceilings).")
    return PublishedTable(markdown, None, caption)


