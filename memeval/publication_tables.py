"""Publication tables, built only from stored results under reports/artifacts (never a solver or an API).

Each builder returns a PublishedTable: markdown for the report and the README, a frame for CSV, and a caption
saying what was measured and what it does not show. Inputs missing raise MissingResults naming the notebook
that writes them; a measurement that needs an LLM nobody ran raises NotMeasured, so nothing is invented.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memeval.categories import QA_CATEGORIES
from memeval.publication import (
    MissingResults,
    locomo_answers,
    locomo_judgments,
    locomo_run_dir,
    natural_raw_rows,
    natural_summary,
    need_input,
    read_input_json,
)
from memeval.reports.tables import markdown_table


class NotMeasured(MissingResults):
    """The stored results exist, but the quantity needs something that did not run (an LLM judge)."""


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


def memaudit_base_table(root: Path) -> PublishedTable:
    from memeval.memaudit.report import published_comparison

    summary = read_input_json(root / "03_memaudit_small" / "sweep" / "summary.json", "03_memaudit_small")
    frame = published_comparison(summary)
    caption = (f"MEMAUDIT-Small `base`, {summary['packages']} seeded packages: ours beside the MEMAUDIT paper's "
               f"published ratios to OPT ({summary['opt_certified']}/{summary['opt_rows']} OPT rows certified; "
               "bootstrap 95% CI over packages). It does not show natural text: synthetic packages only.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def memaudit_stress_table(root: Path) -> PublishedTable:
    from memeval.memaudit.report import frontier_gap

    base = root / "04_memaudit_validity"
    dirs = sorted(need_input(base, "04_memaudit_validity").glob("sweep_*"))
    if not dirs:
        raise MissingResults(f"no sweep_* under {base}: execute notebook 04_memaudit_validity first")
    summaries = {d.name.removeprefix("sweep_"): json.loads((d / "summary.json").read_text()) for d in dirs}
    budget = max(float(r["budget"]) for s in summaries.values() for r in s["rows"])
    frame = frontier_gap(summaries, budget).round(3)
    packages = sorted({s["packages"] for s in summaries.values()})
    caption = (f"Stress suite at B = {budget:g} ({'/'.join(map(str, packages))} packages per distribution): the "
               "best store without tombstones or compound updates as a ratio to OPT, the frontier gap, and the "
               "paper's value where it publishes one. It does not show real systems: synthetic distributions.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def natural_writers_table(root: Path) -> PublishedTable:
    from memeval.natural.report import PAPER_SOURCE, paper_comparison, writer_table

    summary = natural_summary(root)
    methods = sorted({r["method"] for r in summary["rows"]
                      if not str(r["method"]).startswith("union:") and r["method"] != "opt"})
    writers = writer_table(summary, methods)
    paper = paper_comparison(summary)
    markdown = frame_markdown(writers) + "\n\n" + frame_markdown(paper)
    caption = ("LoCoMo-Natural-87 (rule-adjudicated): each writer's mean ratio to the certified OPT "
               "[bootstrap 95% CI] by budget, then Estimated-GVT beside the paper's number "
               f"({PAPER_SOURCE}). It does not show a reproduction of the paper: another source and label process.")
    return PublishedTable(markdown, writers, caption)


def natural_stores_table(root: Path) -> PublishedTable:
    from memeval.natural.report import store_table

    frame = store_table(natural_raw_rows(root))
    if frame.empty:
        raise MissingResults("no certified union rows in the natural sweep: execute notebook 05_memaudit_natural87")
    caption = ("Exported stores as union packages (rule labels): mean raw F, package ratio (may exceed 1: the "
               "store can hold what the package's candidates cannot) and union ratio F / OPT(package ∪ export) per "
               "pruning and budget. It does not show retrieval or answer quality.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def _reader(by_system: Mapping[str, list[dict]]) -> str:
    return next((r.get("answerer", "") for rows in by_system.values() for r in rows), "")


def _llm_note(run: Path) -> str:
    """The models behind a run and the sampling actually sent, from its manifest; loud under model-default."""
    try:
        llm = json.loads((run / "manifest.json").read_text(encoding="utf-8")).get("llm") or {}
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


def locomo_f1_table(root: Path) -> PublishedTable:
    from memeval.reports.tables import f1_table
    from memeval.scoring.f1 import score_f1

    by_system = locomo_answers(locomo_run_dir(root))
    mem0_scored = {name: [{**r, "f1_mem0": score_f1(r["prediction"], r["gold"], r["category"], "mem0")}
                          for r in rows] for name, rows in by_system.items()}
    markdown = (f1_table(by_system, "locomo") + "\n\n" + f1_table(mem0_scored, "mem0", value_key="f1_mem0"))
    n = len(next(iter(by_system.values()), []))
    caption = (f"LoCoMo F1 ×100 with the {_reader(by_system)} reader ({n} questions per system): first in the "
               "official scorer's mode beside the LoCoMo paper's overall rows, then in the Mem0 paper's F1 mode "
               "beside its per-category rows (stored by category id). It does not show LLM answer quality when the "
               "reader is extractive, so the published rows (LLM readers) are context, not a match."
               + _llm_note(locomo_run_dir(root)))
    return PublishedTable(markdown, None, caption)


def locomo_j_table(root: Path) -> PublishedTable:
    from memeval.reports.tables import j_table

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    by_protocol = locomo_judgments(run)
    if not by_protocol:
        raise NotMeasured(f"no judgments in {run}: J needs an LLM judge (make reproduce with ANTHROPIC_API_KEY, "
                          "or memeval locomo run --judge graded); nothing is shown in its place")
    markdown = "\n\n".join(f"**{protocol} judge**\n\n{j_table(judgments)}"
                            for protocol, judgments in sorted(by_protocol.items()))
    caption = (f"LoCoMo J (0–100) per category, mean ± pooled std, {_reader(by_system)} reader, one table per "
               "judge protocol, beside the Mem0 paper's J. It does not show a like-for-like comparison: the "
               "published J used a gpt-4o-mini binary judge and other readers." + _llm_note(run))
    return PublishedTable(markdown, None, caption)


def evidence_recall_table(root: Path) -> PublishedTable:
    from memeval.reports.run_report import evidence_recall_table as recall_in_context
    from memeval.reports.run_report import recall_at_k_table

    by_system = locomo_answers(locomo_run_dir(root))
    markdown = recall_in_context(by_system) + "\n\n" + recall_at_k_table(by_system)
    caption = ("LoCoMo evidence recall ×100: the share of a question's evidence turns present in what the reader "
               "was given, by category, then recall@k of the ranked systems. Nobody publishes this; it does not "
               "show whether the reader used the evidence.")
    return PublishedTable(markdown, None, caption)


def graph_study_table(root: Path) -> PublishedTable:
    from memeval.graph80.report import comparison_table, diagnostics_table, published_reference

    summary = read_input_json(root / "06_memory_graph_study" / "run" / "summary.json", "06_memory_graph_study")
    scores = comparison_table(summary)
    markdown = "\n\n".join(frame_markdown(f) for f in (scores, diagnostics_table(summary), published_reference()))
    caption = (f"graph80 memory-graph study, score = {summary['score_kind']}: mean ± std over repeats by question "
               "type, retrieval diagnostics, and the published study's numbers (its own data and judge). It does "
               "not show judged quality offline, and per-type differences rest on 20 questions.")
    return PublishedTable(markdown, scores, caption)


def _commit(directory: Path) -> str:
    """The git commit recorded in a stored run's manifest (`-dirty` when the tree had uncommitted changes)."""
    path = directory / "manifest.json"
    sha = json.loads(path.read_text()).get("git_sha") if path.exists() else None
    if not sha:
        return "–"
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "")


def _ratio(summary: dict, method: str, budget: float) -> str:
    row = next((r for r in summary["rows"] if r["method"] == method and float(r["budget"]) == float(budget)), None)
    return "–" if row is None or row["mean_ratio"] is None else f"{row['mean_ratio']:.3f}"


def _recorded(directory: Path, notebook: str) -> str:
    """The command lines recorded in the directory's manifest when the results were made (never rebuilt)."""
    from memeval.invocation import recorded_commands

    lines = recorded_commands(directory)
    if not lines:
        return f"– (no command recorded: rerun notebook {notebook})"
    return "; ".join(f"`{line}`" for line in lines) + f" (notebook {notebook})"


def _section(root: Path, build: Callable[[Path], list[list[str]]]) -> list[list[str]]:
    try:
        return build(root)
    except MissingResults as exc:
        return [[f"({exc})", "", "", "", ""]]


def _memaudit_rows(root: Path) -> list[list[str]]:
    from memeval.memaudit.report import (
        PUBLISHED_BASE,
        PUBLISHED_BASE_RANGES,
        PUBLISHED_STRESS_NO_TOMBSTONE_B6,
    )
    from memeval.publication import base_sweep_summary, stress_summaries

    base = base_sweep_summary(root)
    commit = _commit(root / "03_memaudit_small" / "sweep")
    command = _recorded(root / "03_memaudit_small" / "sweep", "03")
    rows = []
    for method, published in PUBLISHED_BASE.items():
        budgets = list(published)
        rows.append([f"MEMAUDIT-Small `base`, {method} / OPT at B = {', '.join(map(str, budgets))} "
                     f"({base['packages']} packages, {base['opt_certified']}/{base['opt_rows']} OPT certified)",
                     ", ".join(_ratio(base, method, b) for b in budgets),
                     ", ".join(f"{v:.3f}" for v in published.values()), command, commit])
    for method, (budgets, low, high) in PUBLISHED_BASE_RANGES.items():
        rows.append([f"MEMAUDIT-Small `base`, {method} / OPT at B = {', '.join(map(str, budgets))}",
                     ", ".join(_ratio(base, method, b) for b in budgets), f"{low:.3f}–{high:.3f}", command, commit])
    stress = stress_summaries(root)
    names = [d for d in PUBLISHED_STRESS_NO_TOMBSTONE_B6 if d in stress]
    if names:
        packages = stress[names[0]]["packages"]
        rows.append([f"MEMAUDIT stress, no_tombstone_opt / OPT at B = 6 ({', '.join(names)}; {packages} packages)",
                     ", ".join(_ratio(stress[d], "no_tombstone_opt", 6) for d in names),
                     ", ".join(f"{PUBLISHED_STRESS_NO_TOMBSTONE_B6[d]:.3f}" for d in names),
                     _recorded(stress[names[0]]["directory"], "04"), _commit(stress[names[0]]["directory"])])
    return rows


def _natural_rows(root: Path) -> list[list[str]]:
    from memeval.natural.report import PAPER_NATURAL_ESTIMATED_GVT
    from memeval.publication import natural_summary

    summary = natural_summary(root)
    commit = _commit(root / "05_memaudit_natural87" / "sweep")
    budgets = sorted({float(r["budget"]) for r in summary["rows"]})
    shown = ", ".join(f"{b:g}" for b in budgets)
    packages = max((r["n"] for r in summary["rows"] if r["method"] == "estimated_gvt"), default=0)
    rows = [[f"LoCoMo-Natural-87 (rule labels, {packages} packages), estimated_gvt / OPT at B = {shown}",
             ", ".join(_ratio(summary, "estimated_gvt", b) for b in budgets),
             ", ".join(f"{PAPER_NATURAL_ESTIMATED_GVT[int(b)]:.2f}" if int(b) in PAPER_NATURAL_ESTIMATED_GVT
                       else "–" for b in budgets) + " (LongMemEval, model labels: not the same quantity)",
             _recorded(root / "05_memaudit_natural87" / "packages", "05").removesuffix(" (notebook 05)") + "; "
             + _recorded(root / "05_memaudit_natural87" / "sweep", "05"), commit]]
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
    from memeval.baselines import J_BASELINES, PROTOTYPE_BASELINE_F1, f1_baselines
    from memeval.reports.run_report import recall_curve_means
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
    failed = sum(1 for rows in by_system.values() for r in rows if r.get("error"))
    answered = f"; {failed} answers failed and are left out" if failed else ""
    rows = [[f"LoCoMo F1 ×100 (official scorer, categories 1–4, {questions} questions, {_reader(by_system)} "
             f"reader{answered}): {' / '.join(names)}",
             " / ".join(f"{100 * overall_mean([r for r in by_system[n] if r['category'] in QA_CATEGORIES]):.2f}"
                        for n in names), f"{published} (LLM readers)", command, commit]]
    ranked = [n for n in names if recall_curve_means(by_system[n])]
    if ranked:
        rows.append([f"LoCoMo evidence recall@10 ×100: {' / '.join(ranked)}",
                     " / ".join(f"{100 * recall_curve_means(by_system[n])[9]:.1f}" for n in ranked),
                     "— (not published)", "same", commit])
    mem0_j = next(b.overall for b in J_BASELINES if b.system == "Mem0")
    if by_protocol:
        ours = "; ".join(
            " / ".join(f"{n} {pool_judgments([j for j in rows if j['category'] in QA_CATEGORIES]).mean:.2f}"
                       for n, rows in judgments.items()) + f" ({protocol} judge)"
            for protocol, judgments in sorted(by_protocol.items()))
    else:
        ours = "not measured: no judge ran (no endpoint here)"
        command = "`memeval locomo run --answerer claude --judge graded` (not run)"
    rows.append(["LoCoMo J (categories 1–4)", ours, f"Mem0 {mem0_j:.2f} (gpt-4o-mini binary judge)",
                 command, commit if by_protocol else "–"])
    proto = root / "01_prototype_scoring" / "run"
    if (proto / "answers.jsonl").exists():
        rag = locomo_answers(proto).get("rag_turns")
        if rag:
            rows.append([f"LoCoMo prototype (20 questions of conv-26), rag_turns mean F1, {_reader({'r': rag})} "
                         "reader", f"{overall_mean(rag):.3f}", f"claude-mem ≈ {PROTOTYPE_BASELINE_F1:.2f}",
                         _recorded(proto, "01"), _commit(proto)])
    return rows


def _graph_rows(root: Path) -> list[list[str]]:
    from memeval.graph80.study import PUBLISHED
    from memeval.publication import graph_study_summary

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
             "own data and judge)", _recorded(root / "06_memory_graph_study" / "run", "06"),
             _commit(root / "06_memory_graph_study" / "run")]]


def headline_table(root: Path) -> PublishedTable:
    """The README's Results table: ours beside the published number, with the command and the commit."""
    body = [row for build in (_memaudit_rows, _natural_rows, _locomo_rows, _graph_rows)
            for row in _section(root, build)]
    markdown = markdown_table(["what", "ours", "published", "command", "commit"], body)
    caption = ("Headline results as stored under reports/artifacts by `make reproduce`, each beside the published "
               "number, the command that produced it and the commit recorded in that run's manifest. It does not "
               "show J or LLM-reader answers unless a key or a shared cache was configured.")
    return PublishedTable(markdown, None, caption)


TABLES: dict[str, Callable[[Path], PublishedTable]] = {
    "tab_headline": headline_table,
    "tab_memaudit_base": memaudit_base_table,
    "tab_memaudit_stress": memaudit_stress_table,
    "tab_natural_writers": natural_writers_table,
    "tab_natural_stores": natural_stores_table,
    "tab_locomo_f1": locomo_f1_table,
    "tab_locomo_j": locomo_j_table,
    "tab_evidence_recall": evidence_recall_table,
    "tab_graph_study": graph_study_table,
}


def save_table(table: PublishedTable, name: str, directory: str | Path) -> list[Path]:
    """`name`.md (caption, then the table) and, where the table is one frame, `name`.csv."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.md"]
    paths[0].write_text(f"{table.caption}\n\n{table.markdown}\n", encoding="utf-8")
    if table.frame is not None:
        paths.append(directory / f"{name}.csv")
        table.frame.to_csv(paths[1])
    return paths
