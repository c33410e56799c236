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
from memeval.scoring.aggregate import Interval


@dataclass(frozen=True)
class PublishedTable:
    markdown: str
    frame: pd.DataFrame | None
    caption: str



ORIGINAL_KEY = (" On LoCoMo's original answer key (what papers compare; the LoCoMo audit finds 99 of its 1,540 "
                "non-adversarial answers wrong: `memeval results --key corrected` and `memeval locomo trust` give "
                "the other keys and the ceilings).")

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


ADVERSARIAL_READERS = {
    "extractive (no LLM)": (
        "The extractive reader answers \"not mentioned\" only when no retrieved sentence shares a content word "
        "with the question. An adversarial question asks about something the conversation does discuss, "
        "attributed to the other speaker (\"What did Caroline realize after her charity race?\" when Melanie "
        "ran it), so an overlapping sentence is nearly always there: the reader answers with it and scores 0."),
    "claude": (
        "The Claude reader is told to reply exactly \"not mentioned\" when its memories do not hold the answer; "
        "it never sees the category, so it scores 1 only where it abstains."),
    "claude_official": (
        "The LoCoMo paper's reader setting turns an adversarial question into a choice between the distractor "
        "and \"Not mentioned in the conversation\"; choosing the second scores 1."),
}


def adversarial_note(by_system: Mapping[str, list[AnswerRow]]) -> str:
    """Why the adversarial column reads as it does: the scorer's rule, what this run's reader does, and how
    often each system abstained."""
    from memeval.benchmarks.locomo.categories import ADVERSARIAL

    counts = []
    for name, rows in by_system.items():
        scored = [r for r in rows if r.category == ADVERSARIAL and r.f1 is not None]
        if scored:
            counts.append(f"{name} {sum(1 for r in scored if r.f1 == 1)} of {len(scored)}")
    if not counts:
        return ("**Adversarial (5):** no category-5 question in this run, so its column is empty (–). The "
                "official scorer gives one 1 only for an answer saying the information is not available.")
    reader = _reader(by_system)
    return ("**Adversarial (5):** the official LoCoMo scorer gives a category-5 answer 1 only when it contains "
            "\"not mentioned\" or \"no information available\", and 0 otherwise — no token overlap is "
            "counted. Mem0's F1 mode does not score category 5 at all; the overall (1–4) columns leave it out and "
            "the overall (1–5) column counts it. "
            + ADVERSARIAL_READERS.get(reader, f"The reader here is {reader}.")
            + " Answers that abstained: " + "; ".join(counts) + ".")


def locomo_f1_table(root: Path) -> PublishedTable:
    from memeval.reports.tables import f1_table
    from memeval.scoring.aggregate import precomputed
    from memeval.scoring.f1 import score_f1

    by_system = locomo_answers(locomo_run_dir(root))
    mem0 = precomputed((r for rows in by_system.values() for r in rows),
                       lambda r: score_f1(r.prediction, r.gold, r.category, "mem0"))
    from memeval.benchmarks.locomo.report import power_table

    markdown = "\n\n".join([f1_table(by_system, "locomo"), adversarial_note(by_system),
                             f1_table(by_system, "mem0", value=mem0),
                             "**Which differences in F1 are real** (official scorer, ×100, by category)",
                             power_table(by_system, lambda r: None if r.f1 is None else 100 * float(r.f1))])
    n = len(next(iter(by_system.values()), []))
    caption = (f"LoCoMo F1 ×100 with the {_reader(by_system)} reader ({n} questions per system): first in the "
               "official scorer's mode beside the LoCoMo paper's overall rows, with a note on the adversarial "
               "column (scored by abstention, not overlap), then in the Mem0 paper's F1 mode beside its "
               "per-category rows (stored by category id), and for every pair of systems the paired difference per "
               "category with its minimum detectable difference and whether it is within noise. It does not show "
               "LLM answer quality when the reader is "
               "extractive, so the published rows (LLM readers) are context, not a match."
               + ORIGINAL_KEY + _llm_note(locomo_run_dir(root)))
    return PublishedTable(markdown, None, caption)


def locomo_j_table(root: Path) -> PublishedTable:
    """Written offline too: every published row, and ours as "not measured" until a judge runs."""
    from memeval.reports.tables import j_table

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    by_protocol = locomo_judgments(run)
    if by_protocol:
        from operator import attrgetter

        from memeval.benchmarks.locomo.report import j_length_table, power_table
        from memeval.invocation import load_manifest
        from memeval.protocols.status import manifest_problem
        from memeval.reports.judge_leniency import leniency_by_protocol

        problem = manifest_problem(RunDir(run).manifest)
        leniency = leniency_by_protocol(load_manifest(RunDir(run).manifest), by_protocol)
        parts = []
        for protocol, judgments in sorted(by_protocol.items()):
            lenient = leniency[protocol]
            parts += [f"**{protocol} judge**", j_table(judgments, protocol, list(by_system), problem=problem,
                                                         leniency=lenient, answers=by_system),
                      j_length_table(by_system, judgments, protocol, lenient),
                      power_table({name: list(judgments.get(name, ())) for name in by_system}, attrgetter("mean"))]
        markdown = "\n\n".join(parts)
        measured = f"{_reader(by_system)} reader, one table per judge protocol"
    else:
        markdown = j_table({}, None, list(by_system))
        measured = "not measured here: no LLM judge ran (no key, no cache)"
    caption = (f"LoCoMo J (0–100) per category, mean ± pooled std, {measured}, beside the Mem0 paper's J rows "
               "(its binary judge: beside `--judge binary` only) with their judge and protocol; under each judge's table its measured leniency (or "
               "\"leniency not measured\"), J by category beside the mean answer length in words (Wilson intervals "
               "for small categories) and which differences in J are real. It does not show a like-for-like "
               "comparison unless the note under the table says the published protocol (`binary` with Mem0's fetched prompt, judged by "
               "gpt-4o-mini); otherwise the protocols differ as much as the systems."
               + ORIGINAL_KEY + _llm_note(run))
    return PublishedTable(markdown, None, caption)


def evidence_recall_table(root: Path) -> PublishedTable:
    from memeval.benchmarks.locomo.report import evidence_recall_table as recall_in_context
    from memeval.benchmarks.locomo.report import recall_at_k_table

    by_system = locomo_answers(locomo_run_dir(root))
    markdown = recall_in_context(by_system) + "\n\n" + recall_at_k_table(by_system)
    caption = ("LoCoMo evidence recall ×100: the share of a question's evidence turns present in what the reader "
               "was given, by category, then recall@k of the ranked systems. Nobody publishes this; it does not "
               "show whether the reader used the evidence.")
    return PublishedTable(markdown, None, caption)


def graph_study_table(root: Path) -> PublishedTable:
    """Scores and diagnostics with the intervals fig_graph_study draws (bootstrap over questions), every number
    through `estimate_cell`."""
    from memeval.benchmarks.graph80.report import published_reference
    from memeval.jsonl import read_rows
    from memeval.publication.figures_memaudit import GRAPH_TYPES, graph_intervals
    from memeval.publication.readers import artifact

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


def longmemeval_table(root: Path) -> PublishedTable:
    """Only when notebook 08 (or `memeval longmemeval run` into its directory) ran on fetched data."""
    from memeval.artifacts import stored
    from memeval.benchmarks.longmemeval.report import longmemeval_report
    from memeval.records import LMEAnswerRow, LMEJudgmentRow, latest, read_records

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
