"""Publication tables, built only from stored results under reports/artifacts (never a solver or an API).

Each builder returns a PublishedTable: markdown for the report and the README, a frame for CSV, and a caption
saying what was measured and what it does not show. Inputs missing raise MissingResults naming the notebook
that writes them. A quantity that needs an LLM nobody ran (J offline) is a table of the published rows with ours
marked "not measured", so nothing is invented and nothing published is hidden. A bootstrap interval over one
package (one conversation) is printed "n/a (1 package)", and the caption says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memeval.atomic import write_text_atomic
from memeval.publication.readers import (
    MissingResults,
    base_sweep_summary,
    graph_study_summary,
    locomo_answers,
    locomo_judgments,
    locomo_run_dir,
    natural_raw_rows,
    natural_summary,
    stress_summaries,
)
from memeval.records import AnswerRow
from memeval.reports.tables import ci_cell, markdown_table
from memeval.rundir import RunDir


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


def _single_packages(summary: dict) -> dict[tuple[str, float], dict]:
    """Summary rows (by method and budget) whose mean rests on fewer than two packages: their bootstrap interval
    only repeats the mean, so tables print "n/a (1 package)" instead."""
    return {(r["method"], float(r["budget"])): r for r in summary["rows"]
            if r.get("mean_ratio") is not None and r.get("n", 0) < 2 and "pruning" not in r}


def _no_interval(row: dict) -> str:
    return ci_cell(None, None, str, int(row.get("n", 0)), "package")


def _interval_method(summary: dict) -> str:
    single = _single_packages(summary)
    return "bootstrap 95% CI over packages" + (
        f"; n/a where a mean rests on one package ({len(single)} rows), which has no interval" if single else "")


def _budget(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def memaudit_base_table(root: Path) -> PublishedTable:
    from memeval.reports.memaudit import published_comparison

    summary = base_sweep_summary(root)
    frame = published_comparison(summary)
    single = _single_packages(summary)
    for i, (method, budget) in enumerate(zip(frame["method"], frame["budget"], strict=True)):
        row = single.get((method, _budget(budget)))
        if row is not None:
            frame.loc[frame.index[i], "ours_ci"] = _no_interval(row)
    caption = (f"MEMAUDIT-Small `base`, {summary['packages']} seeded packages: ours beside the MEMAUDIT paper's "
               f"published ratios to OPT ({summary['opt_certified']}/{summary['opt_rows']} OPT rows certified; "
               f"{_interval_method(summary)}). It does not show natural text: synthetic packages only.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def memaudit_stress_table(root: Path) -> PublishedTable:
    from memeval.reports.memaudit import frontier_gap

    summaries = stress_summaries(root)
    budget = max(float(r["budget"]) for s in summaries.values() for r in s["rows"])
    frame = frontier_gap(summaries, budget).round(3)
    packages = sorted({s["packages"] for s in summaries.values()})
    caption = (f"Stress suite at B = {budget:g} ({'/'.join(map(str, packages))} packages per distribution): the "
               "best store without tombstones or compound updates as a ratio to OPT, the frontier gap, and the "
               "paper's value where it publishes one. It does not show real systems: synthetic distributions.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def natural_writers_table(root: Path) -> PublishedTable:
    from memeval.reports.natural import PAPER_SOURCE, paper_comparison, writer_table

    summary = natural_summary(root)
    methods = sorted({r["method"] for r in summary["rows"] if "pruning" not in r and r["method"] != "opt"})
    writers = writer_table(summary, methods)
    paper = paper_comparison(summary)
    for (method, budget), row in _single_packages(summary).items():
        if method in writers.index and budget in writers.columns:
            writers.loc[method, budget] = f"{row['mean_ratio']:.3f} {_no_interval(row)}"
        if method == "estimated_gvt":
            for key in paper.index:
                if _budget(key) == budget:
                    paper.loc[key, "ours 95% CI"] = _no_interval(row)
    markdown = frame_markdown(writers) + "\n\n" + frame_markdown(paper)
    caption = ("LoCoMo-Natural-87 (rule-adjudicated): each writer's mean ratio to the certified OPT "
               f"[{_interval_method(summary)}] by budget, then Estimated-GVT beside the paper's number "
               f"({PAPER_SOURCE}). It does not show a reproduction of the paper: another source and label process.")
    return PublishedTable(markdown, writers, caption)


def natural_stores_table(root: Path) -> PublishedTable:
    from memeval.reports.natural import store_table

    frame = store_table(natural_raw_rows(root))
    if frame.empty:
        raise MissingResults("no certified union rows in the natural sweep: execute notebook 05_memaudit_natural87")
    caption = ("Exported stores as union packages (rule labels): mean raw F, package ratio (may exceed 1: the "
               "store can hold what the package's candidates cannot) and union ratio F / OPT(package ∪ export) per "
               "pruning and budget. It does not show retrieval or answer quality.")
    return PublishedTable(frame_markdown(frame), frame, caption)


def _reader(by_system: Mapping[str, list[AnswerRow]]) -> str:
    return next((r.answerer for rows in by_system.values() for r in rows), "")


def _llm_note(run: Path) -> str:
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


def locomo_f1_table(root: Path) -> PublishedTable:
    from memeval.reports.tables import f1_table
    from memeval.scoring.aggregate import precomputed
    from memeval.scoring.f1 import score_f1

    by_system = locomo_answers(locomo_run_dir(root))
    mem0 = precomputed((r for rows in by_system.values() for r in rows),
                       lambda r: score_f1(r.prediction, r.gold, r.category, "mem0"))
    markdown = (f1_table(by_system, "locomo") + "\n\n" + f1_table(by_system, "mem0", value=mem0))
    n = len(next(iter(by_system.values()), []))
    caption = (f"LoCoMo F1 ×100 with the {_reader(by_system)} reader ({n} questions per system): first in the "
               "official scorer's mode beside the LoCoMo paper's overall rows, then in the Mem0 paper's F1 mode "
               "beside its per-category rows (stored by category id). It does not show LLM answer quality when the "
               "reader is extractive, so the published rows (LLM readers) are context, not a match."
               + _llm_note(locomo_run_dir(root)))
    return PublishedTable(markdown, None, caption)


def locomo_j_table(root: Path) -> PublishedTable:
    """Written offline too: every published row, and ours as "not measured" until a judge runs."""
    from memeval.reports.tables import j_table

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    by_protocol = locomo_judgments(run)
    if by_protocol:
        from memeval.protocols.status import manifest_problem

        problem = manifest_problem(RunDir(run).manifest)
        markdown = "\n\n".join(f"**{protocol} judge**\n\n"
                                f"{j_table(judgments, protocol, list(by_system), problem=problem)}"
                                for protocol, judgments in sorted(by_protocol.items()))
        measured = f"{_reader(by_system)} reader, one table per judge protocol"
    else:
        markdown = j_table({}, None, list(by_system))
        measured = "not measured here: no LLM judge ran (no key, no cache)"
    caption = (f"LoCoMo J (0–100) per category, mean ± pooled std, {measured}, beside every row of the Mem0 "
               "paper's J table with its judge and protocol. It does not show a like-for-like comparison unless the "
               "note under the table says the published protocol (`binary` with Mem0's fetched prompt, judged by "
               "gpt-4o-mini); otherwise the protocols differ as much as the systems."
               + _llm_note(run))
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
    from memeval.reports.graph80 import comparison_table, diagnostics_table, published_reference

    summary = graph_study_summary(root)
    scores = comparison_table(summary)
    markdown = "\n\n".join(frame_markdown(f) for f in (scores, diagnostics_table(summary), published_reference()))
    caption = (f"graph80 memory-graph study, score = {summary['score_kind']}: mean ± std over repeats by question "
               "type (a score identical in every repeat is shown once), retrieval diagnostics, and the published study's numbers (its own data and judge). It does "
               "not show judged quality offline, and per-type differences rest on 20 questions.")
    return PublishedTable(markdown, scores, caption)


def longmemeval_table(root: Path) -> PublishedTable:
    """Only when notebook 08 (or `memeval longmemeval run` into its directory) ran on fetched data."""
    from memeval.artifacts import stored
    from memeval.records import LMEAnswerRow, LMEJudgmentRow, latest, read_records
    from memeval.reports.longmemeval import longmemeval_report

    run = stored("longmemeval_run", root)
    if not RunDir(run).answers.is_file():
        raise MissingResults("no LongMemEval run: fetch the data (memeval data fetch longmemeval --variant s) and "
                             "execute notebook 08_longmemeval")
    answers = list(latest(read_records(RunDir(run).answers, LMEAnswerRow), lambda r: r.key).values())
    judgments = {r.key: r for r in read_records(RunDir(run).judgments, LMEJudgmentRow)}
    from memeval.protocols.status import manifest_problem

    markdown = longmemeval_report(answers, judgments,
                                  protocol_problem=manifest_problem(RunDir(run).manifest)).split("\n", 2)[2]
    caption = (f"LongMemEval: {len({a.question_id for a in answers})} questions per system, accuracy by the judge "
               "named under the table (\"not measured\" without one), evidence recall at session and turn level, "
               "and published rows with their judges. It does not show a reader's quality when the reader is "
               "extractive.")
    return PublishedTable(markdown, None, caption)


TABLES: dict[str, Callable[[Path], PublishedTable]] = {
    "tab_memaudit_base": memaudit_base_table,
    "tab_memaudit_stress": memaudit_stress_table,
    "tab_natural_writers": natural_writers_table,
    "tab_natural_stores": natural_stores_table,
    "tab_locomo_f1": locomo_f1_table,
    "tab_locomo_j": locomo_j_table,
    "tab_evidence_recall": evidence_recall_table,
    "tab_graph_study": graph_study_table,
    "tab_longmemeval": longmemeval_table,
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
