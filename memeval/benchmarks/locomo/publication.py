"""LoCoMo's part of the publication: its tables (tab_locomo_f1, tab_locomo_j, tab_evidence_recall), its figures
from the stored run (fig_locomo, fig_locomo_heatmap, fig_locomo_pareto, fig_recall_bands, drawn by the shared
publication/figures.py with LoCoMo's categories) and its rows of the README's headline. `Benchmark.publication`
names `PUBLICATION`; `memeval publish`, notebook 07 and the headline read it through the registry."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from memeval.artifacts import ARTIFACTS, stored
from memeval.benchmarks.locomo import report
from memeval.benchmarks.locomo.categories import ADVERSARIAL, LOCOMO_CATEGORIES, QA_CATEGORIES
from memeval.publication import figures
from memeval.publication.contribution import Contribution
from memeval.publication.headline import commit_of, recorded
from memeval.publication.readers import answer_model, need_input
from memeval.publication.tables import PublishedTable, llm_note, reader_of
from memeval.records import AnswerRow, JudgmentRow
from memeval.reports.markdown import Markdown
from memeval.rundir import RunDir


def _final_answers(path: Path) -> list[AnswerRow]:
    """answers.jsonl read once per version of the file (a full run's is tens of MB and every LoCoMo figure and
    table reads it)."""
    stat = path.stat()
    return _final_answers_cached(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _final_answers_cached(path: str, mtime_ns: int, size: int) -> list[AnswerRow]:
    from memeval.records import load_answers

    return load_answers(Path(path))


def locomo_run_dir(root: Path) -> Path:
    """The judged (Claude-reader) run of notebook 02 when it holds any answer, else the offline run (a judged
    run whose every call failed — no key and no cache — is no result to publish)."""
    judged = stored("locomo_run_claude", root)
    if RunDir(judged).answers.exists() and any(r.final for r in _final_answers(RunDir(judged).answers)):
        return judged
    return stored("locomo_run", root)


def locomo_answers(run: Path) -> dict[str, list[AnswerRow]]:
    """The latest answer row per question of a stored LoCoMo run, by system."""
    by_system: dict[str, list[AnswerRow]] = {}
    for row in _final_answers(need_input(RunDir(run).answers, ARTIFACTS["locomo_run"].notebook)):
        by_system.setdefault(row.system, []).append(row)
    return by_system


def locomo_judgments(run: Path) -> dict[str, dict[str, list[JudgmentRow]]]:
    """protocol → system → one judgment per question (a run may hold graded and binary judgments side by
    side: they are never pooled)."""
    from memeval.records import load_judgments

    out: dict[str, dict[str, list[JudgmentRow]]] = {}
    for row in load_judgments(RunDir(run).judgments):
        out.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
    return out


ORIGINAL_KEY = (" On LoCoMo's original answer key (what papers compare; the LoCoMo audit finds 99 of its 1,540 "
                "non-adversarial answers wrong: `memeval results --key corrected` and `memeval locomo trust` give "
                "the other keys and the ceilings).")


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
    counts = []
    for name, rows in by_system.items():
        scored = [r for r in rows if r.category == ADVERSARIAL and r.f1 is not None]
        if scored:
            counts.append(f"{name} {sum(1 for r in scored if r.f1 == 1)} of {len(scored)}")
    if not counts:
        return ("**Adversarial (5):** no category-5 question in this run, so its column is empty (–). The "
                "official scorer gives one 1 only for an answer saying the information is not available.")
    reader = reader_of(by_system)
    return ("**Adversarial (5):** the official LoCoMo scorer gives a category-5 answer 1 only when it contains "
            "\"not mentioned\" or \"no information available\", and 0 otherwise — no token overlap is "
            "counted. Mem0's F1 mode does not score category 5 at all; the overall (1–4) columns leave it out and "
            "the overall (1–5) column counts it. "
            + ADVERSARIAL_READERS.get(reader, f"The reader here is {reader}.")
            + " Answers that abstained: " + "; ".join(counts) + ".")


def locomo_f1_table(root: Path) -> PublishedTable:
    from memeval.benchmarks.locomo.tables import f1_table
    from memeval.scoring.aggregate import precomputed
    from memeval.scoring.f1 import score_f1

    by_system = locomo_answers(locomo_run_dir(root))
    mem0 = precomputed((r for rows in by_system.values() for r in rows),
                       lambda r: score_f1(r.prediction, r.gold, r.category, "mem0"))
    markdown = "\n\n".join([f1_table(by_system, "locomo"), adversarial_note(by_system),
                             f1_table(by_system, "mem0", value=mem0),
                             "**Which differences in F1 are real** (official scorer, ×100, by category)",
                             report.power_table(by_system, lambda r: None if r.f1 is None else 100 * float(r.f1))])
    n = len(next(iter(by_system.values()), []))
    caption = (f"LoCoMo F1 ×100 with the {reader_of(by_system)} reader ({n} questions per system): first in the "
               "official scorer's mode beside the LoCoMo paper's overall rows, with a note on the adversarial "
               "column (scored by abstention, not overlap), then in the Mem0 paper's F1 mode beside its "
               "per-category rows (stored by category id), and for every pair of systems the paired difference per "
               "category with its minimum detectable difference and whether it is within noise. It does not show "
               "LLM answer quality when the reader is "
               "extractive, so the published rows (LLM readers) are context, not a match."
               + ORIGINAL_KEY + llm_note(locomo_run_dir(root)))
    return PublishedTable(markdown, None, caption)


def locomo_j_table(root: Path) -> PublishedTable:
    """Written offline too: every published row, and ours as "not measured" until a judge runs."""
    from memeval.benchmarks.locomo.tables import j_table

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    by_protocol = locomo_judgments(run)
    if by_protocol:
        from operator import attrgetter

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
                      report.j_length_table(by_system, judgments, protocol, lenient),
                      report.power_table({name: list(judgments.get(name, ())) for name in by_system}, attrgetter("mean"))]
        markdown = "\n\n".join(parts)
        measured = f"{reader_of(by_system)} reader, one table per judge protocol"
    else:
        markdown = j_table({}, None, list(by_system))
        measured = "not measured here: no LLM judge ran (no key, no cache)"
    caption = (f"LoCoMo J (0–100) per category, mean ± pooled std, {measured}, beside the Mem0 paper's J rows "
               "(its binary judge: beside `--judge binary` only) with their judge and protocol; under each judge's table its measured leniency (or "
               "\"leniency not measured\"), J by category beside the mean answer length in words (Wilson intervals "
               "for small categories) and which differences in J are real. It does not show a like-for-like "
               "comparison unless the note under the table says the published protocol (`binary` with Mem0's fetched prompt, judged by "
               "gpt-4o-mini); otherwise the protocols differ as much as the systems."
               + ORIGINAL_KEY + llm_note(run))
    return PublishedTable(markdown, None, caption)


def evidence_recall_table(root: Path) -> PublishedTable:
    by_system = locomo_answers(locomo_run_dir(root))
    markdown = report.evidence_recall_table(by_system) + "\n\n" + report.recall_at_k_table(by_system)
    caption = ("LoCoMo evidence recall ×100: the share of a question's evidence turns present in what the reader "
               "was given, by category, then recall@k of the ranked systems. Nobody publishes this; it does not "
               "show whether the reader used the evidence.")
    return PublishedTable(markdown, None, caption)


def headline_rows(root: Path) -> list[list[str]]:
    from memeval.benchmarks.locomo.baselines import J_BASELINES, PROTOTYPE_BASELINE_F1, f1_baselines
    from memeval.scoring.aggregate import overall_mean, pool_judgments

    run = locomo_run_dir(root)
    by_system = locomo_answers(run)
    commit = commit_of(run)
    names = list(by_system)
    questions = len(next(iter(by_system.values()), []))
    by_protocol = locomo_judgments(run)
    command = recorded(run, "02")
    published = ", ".join(f"{b.system} {b.overall:.1f}" for b in f1_baselines("locomo")
                          if b.overall is not None and b.system != "Human")
    failed = sum(1 for rows in by_system.values() for r in rows if r.error)
    answered = f"; {failed} answers failed and are left out" if failed else ""
    rows = [[f"LoCoMo F1 ×100 (official scorer, overall over categories 1–5 as the LoCoMo paper's, {questions} "
             f"questions, {reader_of(by_system)} reader{answered}): {' / '.join(names)}",
             " / ".join(f"{100 * overall_mean([r for r in by_system[n] if r.f1 is not None]):.2f}" for n in names),
             f"{published} (LLM readers)", command, commit]]
    ranked = [n for n in names if report.recall_curve_means(by_system[n])]
    if ranked:
        rows.append([f"LoCoMo evidence recall@10 ×100: {' / '.join(ranked)}",
                     " / ".join(f"{100 * report.recall_curve_means(by_system[n])[9]:.1f}" for n in ranked),
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
                         f"{reader_of({'r': rag})} reader", f"{100 * overall_mean(rag):.2f}",
                         f"claude-mem ≈ {100 * PROTOTYPE_BASELINE_F1:.0f}",
                         recorded(proto, "01"), commit_of(proto)])
    return rows


def locomo_figure(root: Path):
    run = locomo_run_dir(root)
    return figures.locomo(locomo_answers(run), locomo_judgments(run), LOCOMO_CATEGORIES)


def heatmap_figure(root: Path):
    return figures.locomo_heatmap(locomo_answers(locomo_run_dir(root)), LOCOMO_CATEGORIES)


def pareto_figure(root: Path):
    run = locomo_run_dir(root)
    return figures.locomo_pareto(locomo_answers(run), LOCOMO_CATEGORIES, answer_model(run))


def recall_figure(root: Path):
    return figures.recall_bands(locomo_answers(locomo_run_dir(root)))


PUBLICATION = Contribution(
    figures={"fig_locomo": locomo_figure, "fig_locomo_heatmap": heatmap_figure, "fig_locomo_pareto": pareto_figure,
             "fig_recall_bands": recall_figure},
    tables={"tab_locomo_f1": locomo_f1_table, "tab_locomo_j": locomo_j_table,
            "tab_evidence_recall": evidence_recall_table},
    headline=(headline_rows,),
)
