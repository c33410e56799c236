"""LoCoMo's Markdown tables: F1 and J against the published baselines, BLEU-1, adversarial, latency and tokens,
the full report of a run.

Every table names the F1 mode that produced it and prints category names with
their ids, because the Mem0 paper's labels differ from the official ones. Systems
measured on different question sets get a note under each table naming each
system's n.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from memeval.benchmarks.locomo.baselines import (
    J_BASELINES,
    LATENCY_BASELINES,
    LETTA_FOOTNOTE,
    LOCOMO_PAPER,
    MEM0_PAPER,
    RELABELLING_FOOTNOTE,
    f1_baselines,
)
from memeval.benchmarks.locomo.categories import LOCOMO_CATEGORIES, category_label
from memeval.records import AnswerRow
from memeval.reports.markdown import markdown_table, md_text, with_notes
from memeval.reports.tables import Judgments, Rows, present_categories, question_set_note, runs_per_question
from memeval.scoring.aggregate import F1, Value, by_category, judge_by_category, overall_mean, precomputed


def _pct(value: float | None) -> str:
    return "–" if value is None or value != value else f"{100 * value:.2f}"


def f1_table(systems: Mapping[str, Rows], mode: str = "locomo", value: Value = F1, present_only: bool = False) -> str:
    """Per-category F1 ×100 for each system beside the published rows computed in the same F1 mode, each overall
    in the column of what it averages: the Mem0 paper's over categories 1–4, the LoCoMo paper's over all five
    (a micro-average with the official category-5 rule). Modes that do not score category 5 (mem0) have no
    1–5 column. `value`: a row's F1 in `mode` (its stored `f1`, the official scorer's, by default).
    `present_only`: a column only for the categories the questions hold (a note names the absent ones)."""
    declared = LOCOMO_CATEGORIES
    headline, adversarial = declared.headline, declared.apart[0]
    five = mode != "mem0"
    categories = (*headline, adversarial) if five else headline
    absent: tuple[int, ...] = ()
    if present_only:
        held = present_categories(systems)
        absent = tuple(c for c in categories if c not in held)
        categories = tuple(c for c in categories if c in held)
    held_qa = [c for c in categories if c in headline]
    overall_qa = "overall (1–4)" if len(held_qa) == len(headline) else \
        f"overall ({', '.join(map(str, held_qa))})"
    headers = ["System", *[category_label(c) for c in categories], overall_qa,
               *(["overall (1–5)"] if five else []), "n"]
    body = []
    covered = {name: [r for r in rows if r.category in categories] for name, rows in systems.items()}
    for name, rows in systems.items():
        scored = [r for r in rows if r.category in categories and value(r) is not None]
        stats = by_category(scored, value)
        qa = [r for r in scored if r.category in headline]
        has_five = adversarial in stats
        body.append([name, *[_pct(stats[c].mean) if c in stats else "–" for c in categories],
                     _pct(overall_mean(qa, value)) if qa else "–",
                     *([_pct(overall_mean(scored, value)) if has_five else "–"] if five else []),
                     len(scored)])
    for base in f1_baselines(mode):
        overall = f"{base.overall:.2f}" if base.overall is not None else "–"
        over_five = base.source == LOCOMO_PAPER  # the LoCoMo paper's overall averages all five categories
        body.append([f"{base.system} (published)",
                     *[f"{base.by_category[c]:.2f}" if c in base.by_category else "–" for c in categories],
                     "–" if over_five else overall, *([overall if over_five else "–"] if five else []), ""])
    notes = [f"F1 mode: `{mode}`; values ×100; published rows are those computed in the same mode; overall = "
             "mean over the questions of the categories named (a micro-average), never a mean of category means."]
    if mode == "mem0":
        notes.append(RELABELLING_FOOTNOTE)
        notes.append(f"Published rows: {MEM0_PAPER}, its F1 columns (categories 1–4).")
    if mode == "locomo":
        notes.append(f"Published rows: {LOCOMO_PAPER}. Their overall averages all five categories, so it sits "
                     "in the overall (1–5) column beside ours.")
    if absent:
        notes.append("No question of " + ", ".join(category_label(c) for c in absent) + " in this selection: no "
                     f"column for them, and our {overall_qa} averages only the categories present.")
    return with_notes(markdown_table(headers, body), [*notes, question_set_note(covered)])


def adversarial_table(systems: Mapping[str, Rows], value: Value = F1) -> str:
    """Category 5 on its own, beside the always-abstain answer (which scores 1 on every item)."""
    apart = LOCOMO_CATEGORIES.apart[0]
    body = []
    for name, rows in systems.items():
        values = [score for r in rows if r.category == apart and (score := value(r)) is not None]
        body.append([name, _pct(float(np.mean(values))) if values else "–", len(values)])
    if systems:
        n = max(
            len([r for r in rows if r.category == apart]) for rows in systems.values()
        )
        body.append(["always abstain ('not mentioned')", _pct(1.0) if n else "–", n])
    five = {name: [r for r in rows if r.category == apart] for name, rows in systems.items()}
    return with_notes(markdown_table(["System", category_label(apart), "n"], body), [question_set_note(five)])


def protocol_note(protocol: str | None, judge_model: str | None = None,
                  prompt_versions: set[str | None] | None = None, problem: str | None = None,
                  runs: Collection[int] = ()) -> str:
    """What a judged table's protocol is: published only with the fetched prompts and the anchor's model
    (memeval.protocols.status); paraphrased otherwise. `runs`: the runs each judged question got (its scores)."""
    from memeval.protocols.status import PUBLISHED_JUDGES, judge_status

    if protocol in PUBLISHED_JUDGES:
        return judge_status(protocol, judge_model, prompt_versions or set(), problem) + \
            ("" if judge_model else "; the judge model is not recorded")
    if protocol == "graded":
        return (f"`graded`: this project's 0–100 judge, {runs_per_question(runs)} at temperature 0.5 (not the Mem0 "
                "protocol)")
    return ("Not measured: no LLM judge ran (with Mem0's prompt fetched by `memeval data fetch protocols`, `memeval "
            "locomo run --judge binary --judge-model gpt-4o-mini --llm openai` is the published protocol).")


def bleu1_table(systems: Mapping[str, Rows]) -> str:
    """B1 ×100 per category 1–4 and overall, as Mem0 reports it (category 5 unscored)."""
    from memeval.scoring.f1 import bleu1, bleu1_mode

    headline = LOCOMO_CATEGORIES.headline
    headers = ["System", *[category_label(c) for c in headline], "overall (1–4)", "n"]
    body = []
    for name, rows in systems.items():
        scored = [r for r in rows if r.category in headline and r.prediction is not None
                  and not r.error]  # a failed answer is no prediction: never scored 0
        b1 = precomputed(scored, lambda r: bleu1(r.prediction or "", r.gold))
        stats = by_category(scored, b1)
        body.append([name, *[_pct(stats[c].mean) if c in stats else "–" for c in headline],
                     _pct(overall_mean(scored, b1)) if scored else "–", len(scored)])
    mode = bleu1_mode()
    notes = [f"B1 mode: {mode}. Mem0's harness tokenises with nltk.word_tokenize (English Punkt sentences, then "
             "the Treebank-style tokenizer), lower-cased, one reference, unigram weights, smoothing method1."
             + ("" if mode.startswith("Mem0") else " Without the English Punkt tables an untrained Punkt model "
                "splits sentences, so abbreviations can split differently: fetch the tables with `memeval data "
                "fetch nltk --source FILE --sha256 HEX` or point NLTK_DATA at them."),
             "The Mem0 paper's own B1 columns are not transcribed here (its table was not reachable when this was "
             "written); compare against the paper directly.",
             question_set_note({name: [r for r in rows if r.category in headline]
                                for name, rows in systems.items()})]
    return with_notes(markdown_table(headers, body), notes)


def j_table(judgments: Mapping[str, Judgments], protocol: str | None = None, systems: Sequence[str] = (),
            judge_model: str | None = None, problem: str | None = None, leniency: str | None = None,
            answers: Mapping[str, Rows] | None = None) -> str:
    """J (0–100) per category as mean ± pooled std for each judged system, "not measured" for each of `systems`
    without judgments (so the published rows are shown even when no judge ran), and the Mem0 paper's rows,
    each row naming its judge and protocol. `leniency`: how often this judge configuration accepts wrong answers
    (memeval.reports.judge_leniency), said under every judged table ("leniency not measured" when unknown).
    `answers` (system → rows): their F1 beside a judge that gave every question the same score
    (memeval.reports.judge_spread)."""
    headline = LOCOMO_CATEGORIES.headline
    headers = ["System", "judge / protocol", *[category_label(c) for c in headline], "overall (1–4)", "n"]
    if judge_model is None:  # the rows say which model judged them
        models = {r.judge_model for rows in judgments.values() for r in rows if r.judge_model}
        judge_model = next(iter(models)) if len(models) == 1 else None
    ours = (f"{judge_model}, {protocol} (ours)" if judge_model else f"{protocol} (ours)") if protocol else "ours"
    body = []
    for name, rows in judgments.items():
        per_cat, overall = judge_by_category([r for r in rows if r.category in headline])
        cells = []
        for c in headline:
            s = per_cat.get(c)
            cells.append(f"{s.mean:.2f} ± {s.pooled_std:.2f}" if s and s.count else "–")
        total = f"{overall.mean:.2f} ± {overall.pooled_std:.2f}" if overall.count else "–"
        body.append([name, ours, *cells, total, overall.count])
    for name in systems:
        if name not in judgments:
            body.append([name, "–", *["not measured"] * len(headline), "not measured", 0])
    same_judge = protocol in (None, "binary")  # the paper's rows beside J of its own judge only
    for base in J_BASELINES if same_judge else ():
        body.append([f"{base.system} (published)", "gpt-4o-mini, binary (Mem0 paper)",
                     *[f"{base.by_category[c]:.2f}" if c in base.by_category else "–" for c in headline],
                     f"{base.overall:.2f}" if base.overall is not None else "–", ""])
    notes = [f"J ({protocol} judge, ours) — {leniency or 'leniency not measured'}." if protocol else None,
             f"Published rows: {MEM0_PAPER}, its J columns: a gpt-4o-mini judge labels each answer CORRECT or "
             "WRONG, categories 1–4, J = share correct ×100." if same_judge else
             f"The Mem0 paper's published J rows come from its binary judge, not the {protocol} judge: they are "
             "shown beside `--judge binary` only (two judges' J are not one scale).",
             protocol_note(protocol, judge_model, {r.prompt_version for rows in judgments.values() for r in rows},
                           problem, {len(r.scores) for rows in judgments.values() for r in rows}),
             RELABELLING_FOOTNOTE, LETTA_FOOTNOTE,
             question_set_note({name: [r for r in rows if r.category in headline]
                                for name, rows in judgments.items()})]
    if protocol:
        notes.insert(1, _spread_note(judgments, protocol, judge_model, answers or {}))
    return with_notes(markdown_table(headers, body), notes)


def _spread_note(judgments: Mapping[str, Judgments], protocol: str, judge_model: str | None,
                 answers: Mapping[str, Rows]) -> str | None:
    """The note of a judge that gave every judged question (categories 1–4) the same score, with their F1."""
    from memeval.reports.judge_spread import constant_judge_note

    headline = LOCOMO_CATEGORIES.headline
    f1 = {(name, r.sample_id): None if r.f1 is None else 100 * float(r.f1)
          for name, rows in answers.items() for r in rows}
    return constant_judge_note(protocol, judge_model, [
        (float(j.mean), f1.get((name, j.sample_id))) for name, rows in judgments.items() for j in rows
        if j.category in headline and j.mean is not None])


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def latency_table(systems: Mapping[str, Rows]) -> str:
    """Latency in milliseconds (percentiles over questions) and context tokens per question; a failed answer has
    no total latency (it never got one), so it is left out of the total's percentiles."""
    headers = ["System", "search p50 (ms)", "search p95 (ms)", "total p50 (ms)", "total p95 (ms)",
               "context tokens / q"]

    def ms(v: float | None) -> str:
        if v is None:
            return "–"
        return f"{1000 * v:.3f}" if 1000 * v < 1 else f"{1000 * v:.1f}"  # sub-millisecond search stays visible

    def fmt(v: float | None, digits: int = 0) -> str:
        return "–" if v is None else f"{v:.{digits}f}"

    body = []
    for name, rows in systems.items():
        search = [r.latency_search_s for r in rows if r.latency_search_s is not None]
        total = [r.latency_total_s for r in rows if r.latency_total_s is not None and not r.error]
        tokens = [r.context_tokens for r in rows if r.context_tokens is not None]
        body.append(
            [
                name,
                ms(_percentile(search, 50)),
                ms(_percentile(search, 95)),
                ms(_percentile(total, 50)),
                ms(_percentile(total, 95)),
                fmt(float(np.mean(tokens)) if tokens else None),
            ]
        )
    for b in LATENCY_BASELINES:
        body.append(
            [f"{b.system} (published)", ms(b.search_p50_s), ms(b.search_p95_s), ms(b.total_p50_s),
             ms(b.total_p95_s), str(b.tokens_per_query)]
        )
    return with_notes(markdown_table(headers, body), [question_set_note(systems)])


def category_breakdown(systems: Mapping[str, Rows], value: Value = F1) -> str:
    headers = ["System", "category", "mean ×100", "count", "min ×100", "max ×100"]
    body = []
    for name, rows in systems.items():
        for cat, s in by_category(rows, value).items():
            body.append([name, category_label(cat), _pct(s.mean), s.count, _pct(s.min), _pct(s.max)])
    return markdown_table(headers, body)


EXTREMES_TIES = ("ties are broken by evidence recall — in the bottom 5, questions whose evidence was handed to the "
                 "reader come first (the reader missed it), in the top 5 those answered from the least context — "
                 "then by sample id")


def extremes(rows: Rows, value: Value = F1, n: int = 5) -> tuple[list[AnswerRow], list[AnswerRow]]:
    """Top and bottom n rows by score, ties broken as EXTREMES_TIES says (so the rows shown are informative and
    the report is stable)."""
    scored = [r for r in rows if value(r) is not None]

    def recall(r: AnswerRow) -> float:
        return -1.0 if r.evidence_recall is None else float(r.evidence_recall)

    def tokens(r: AnswerRow) -> float:
        return float("inf") if r.context_tokens is None else float(r.context_tokens)

    top = sorted(scored, key=lambda r: (-float(value(r)), tokens(r), str(r.sample_id)))
    bottom = sorted(scored, key=lambda r: (float(value(r)), -recall(r), str(r.sample_id)))
    return top[:n], bottom[:n]


def _question_rows(rows: Rows, value: Value = F1, label: str = "f1") -> str:
    return markdown_table(
        ["sample", "category", "question", "gold", "prediction", f"{label} ×100", "evidence recall"],
        [
            [
                r.sample_id,
                category_label(int(r.category)),
                r.question,
                r.gold,
                r.prediction,
                _pct(float(value(r))),
                "–" if r.evidence_recall is None else f"{float(r.evidence_recall):.2f}",
            ]
            for r in rows
        ],
    )


def full_report(
    systems: Mapping[str, Rows],
    judgments: Mapping[str, Mapping[str, Judgments]] | None = None,
    mode: str = "locomo",
    title: str = "LoCoMo evaluation report",
    judge_model: str | None = None,
    protocol_problem: str | None = None,
    leniency: Mapping[str, str] | None = None,
) -> str:
    """`judgments`: protocol → system → rows; each protocol gets its own J table (never pooled);
    `protocol_problem`: a run setting that departs from the anchors' calls (memeval.protocols.status);
    `leniency`: protocol → its judge configuration's measured leniency sentence."""
    from memeval.benchmarks.locomo.answer_keys import ANSWER_KEYS

    parts = [f"# {title}", "", "## F1 against published baselines", "", f1_table(systems, mode)]
    parts += ["", "## BLEU-1 (Mem0's B1)", "", bleu1_table(systems)]
    parts += ["", "## Adversarial (category 5)", "", adversarial_table(systems)]
    if judgments:
        for protocol, by_system in judgments.items():
            if ANSWER_KEYS.is_recorded(protocol):  # a published file's own labels, never ours
                heading = f"## J recorded in the imported files ({protocol} judge, {ANSWER_KEYS.recorded_label})"
                parts += ["", heading, "",
                          ANSWER_KEYS.recorded_table(by_system, protocol, (leniency or {}).get(protocol))]
                continue
            parts += ["", f"## J against published baselines ({protocol} judge)", "",
                      j_table(by_system, protocol, list(systems), judge_model, protocol_problem,
                              (leniency or {}).get(protocol), systems)]
    else:
        parts += ["", "## J against published baselines", "", j_table({}, None, list(systems))]
    parts += ["", "## Latency and context tokens", "", latency_table(systems)]
    parts += ["", "## Per-category breakdown", "", category_breakdown(systems)]
    for name, rows in systems.items():
        top, bottom = extremes(rows)
        parts += ["", f"## {md_text(name)}: top 5 questions", "", _question_rows(top)]
        parts += ["", f"## {md_text(name)}: bottom 5 questions", "", _question_rows(bottom), "",
                  f"- Top and bottom by F1; {EXTREMES_TIES}."]
    return "\n".join(parts) + "\n"
