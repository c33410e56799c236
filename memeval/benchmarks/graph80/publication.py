"""graph80's part of the publication: the memory-graph study's table (tab_graph_study), its figure from the stored
study (fig_graph_study, drawn by the shared publication/figures_memaudit.py) and its row of the README's headline.
`Benchmark.publication` names `PUBLICATION`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memeval.artifacts import stored
from memeval.benchmarks.graph80.report import published_reference
from memeval.jsonl import read_rows
from memeval.publication.contribution import Contribution
from memeval.publication.figures_memaudit import GRAPH_TYPES, graph_intervals, graph_study
from memeval.publication.headline import commit_of, recorded
from memeval.publication.readers import artifact, read_json
from memeval.publication.tables import PublishedTable, interval_cell
from memeval.reports.markdown import markdown_table


def graph_study_summary(root: Path) -> dict:
    return read_json("graph_study", root, "summary.json")


def graph_study_table(root: Path) -> PublishedTable:
    """Scores and diagnostics with the intervals fig_graph_study draws (bootstrap over questions), every number
    through `estimate_cell`."""
    summary = graph_study_summary(root)
    questions = read_rows(artifact("graph_study", root, "rows.jsonl"))
    intervals = graph_intervals(questions)
    systems = sorted({s for s, _ in intervals})

    def cell(system: str, kind: str, key: str) -> str:
        interval = intervals.get((system, kind), {}).get(key)
        return "– (no scored answer)" if interval is None else interval_cell(interval, "question")

    scores = pd.DataFrame([{"system": s, **{t: cell(s, t, "score") for t in GRAPH_TYPES}} for s in systems]
                          ).set_index("system")
    all_rows = {r["system"]: r for r in summary["rows"] if r["type"] == "all"}
    diagnostics = markdown_table(
        ["system", "gold-path recall [95% CI]", "entity recall [95% CI]", "context tokens (mean)", "questions"],
        [[s, cell(s, "all", "path_recall"), cell(s, "all", "entity_recall"),
          "–" if all_rows.get(s, {}).get("context_tokens") is None else f"{all_rows[s]['context_tokens']:.0f}",
          all_rows.get(s, {}).get("n", "–")] for s in systems])
    published = published_reference()
    reference = markdown_table(["system", *published.columns],
                               [[name, *[f"{v:g}" for v in row]] for name, row in published.iterrows()])
    repeats = len({r.get("repeat", 0) for r in questions})
    markdown = "\n\n".join([markdown_table(["system", *GRAPH_TYPES], [[s, *scores.loc[s]] for s in systems]),
                             diagnostics, reference])
    caption = (f"graph80 memory-graph study, score = {summary['score_kind']}: mean by question type with its "
               f"bootstrap 95% interval over questions ({repeats} {'repeat' if repeats == 1 else 'repeats'} of a question "
               "resampled together; "
               "\"all equal\" where every question scored the same), retrieval diagnostics over all 80 questions, "
               "and the published study's numbers (its own data and judge). It does not show judged quality "
               "offline, and per-type differences rest on 20 questions.")
    return PublishedTable(markdown, scores, caption)


def headline_rows(root: Path) -> list[list[str]]:
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
             "own data and judge)", recorded(stored("graph_study", root), "06"),
             commit_of(stored("graph_study", root))]]


def graph_study_figure(root: Path):
    return graph_study(graph_study_summary(root), read_rows(artifact("graph_study", root, "rows.jsonl")))


PUBLICATION = Contribution(figures={"fig_graph_study": graph_study_figure},
                           tables={"tab_graph_study": graph_study_table}, headline=(headline_rows,))
