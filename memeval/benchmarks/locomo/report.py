"""The report of one `memeval locomo run`: the three comparison tables plus evidence recall, clustered
confidence intervals, paired system differences and judge accounting (failures, answer length).

Paired differences are over the questions both systems scored (the intersection of their sample ids, whose size
each row states); systems measured on different question sets are named with their n under each table; an
interval from fewer than two conversations prints "n/a (1 conversation)", and each note names the method used."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from itertools import combinations
from operator import attrgetter

import numpy as np

from memeval.benchmarks.locomo.baselines import CLAUDE_MEM, PROTOTYPE_BASELINE_F1
from memeval.benchmarks.locomo.categories import CATEGORY_NAMES, QA_CATEGORIES, category_label
from memeval.benchmarks.locomo.tables import extremes, full_report
from memeval.records import AnswerRow
from memeval.reports.markdown import markdown_table, md_markup
from memeval.reports.tables import Judgments, Rows, ci_cell, present_categories, question_set_note
from memeval.scoring.aggregate import F1, Value, bootstrap_mean, cluster_bootstrap, paired_difference
from memeval.scoring.f1 import score_f1

RECALL_KS = (1, 5, 10, 20, 50)


def _f1_x100(row) -> float | None:
    return None if row.f1 is None else 100 * float(row.f1)


def _mean(values) -> float | None:
    values = [float(v) for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _fmt(value: float | None, scale: float = 100.0, digits: int = 2) -> str:
    return "–" if value is None or value != value else f"{scale * value:.{digits}f}"


def category_counts(systems: Mapping[str, Rows]) -> str:
    """Which categories the systems' questions hold, counted from the rows (each question once), and which of the
    five they do not: a selection's text is derived from its data, never assumed."""
    category_of = {r.sample_id: int(r.category) for rows in systems.values() for r in rows
                   if r.category is not None}
    counts = Counter(category_of.values())
    held = ", ".join(f"{counts[c]} {category_label(c)}" for c in sorted(counts))
    missing = [category_label(c) for c in CATEGORY_NAMES if c not in counts]
    line = f"These {len(category_of)} questions are {held or 'of no category'}"
    if not missing:
        return line + "."
    named = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " or " + missing[-1]
    return line + f"; none is {named}, so no table below has a column for {'it' if len(missing) == 1 else 'them'}."


def evidence_recall_table(systems: Mapping[str, Rows], present_only: bool = False) -> str:
    """Recall of evidence dia_ids in what the reader was given (k of the run), ×100, per category (`present_only`:
    only the categories the questions hold)."""
    categories = (*QA_CATEGORIES, 5)
    if present_only:
        categories = tuple(c for c in categories if c in present_categories(systems))
    headers = ["System", "k", *[category_label(c) for c in categories], "all", "n with evidence"]
    body = []
    for name, rows in systems.items():
        with_evidence = [r for r in rows if r.evidence_recall is not None]
        ks = {r.k for r in rows}
        body.append([name, "all" if ks == {None} else ",".join(str(k) for k in sorted(ks - {None})),
                     *[_fmt(_mean(r.evidence_recall for r in with_evidence if r.category == c))
                       for c in categories],
                     _fmt(_mean(r.evidence_recall for r in with_evidence)), len(with_evidence)])
    note = question_set_note(systems)
    return markdown_table(headers, body) + (f"\n\n- {note}" if note else "")


def recall_curve_means(rows: Rows) -> list[float] | None:
    curves = [r.recall_curve for r in rows if r.recall_curve]
    if not curves:
        return None
    stacked = np.asarray(curves, dtype=float)  # NaN: past the memories a corrected citation can be scored on
    known = np.sum(~np.isnan(stacked), axis=0)
    sums = np.nansum(stacked, axis=0)
    return [float(s / n) if n else float("nan") for s, n in zip(sums, known, strict=True)]


def recall_at_k_table(systems: Mapping[str, Rows]) -> str:
    """Per ranked system: all questions with evidence, then each category."""
    headers = ["System", "questions", *[f"recall@{k}" for k in RECALL_KS]]
    body = []
    for name, rows in systems.items():
        groups = [("all", rows)] + [(category_label(c), [r for r in rows if r.category == c])
                                    for c in (*QA_CATEGORIES, 5)]
        for label, group in groups:
            curve = recall_curve_means(group)
            if curve is None:
                continue
            n = sum(1 for r in group if r.recall_curve)
            body.append([name if label == "all" else f"{name} · {label}", n,
                         *[_fmt(curve[k - 1]) if k <= len(curve) else "–" for k in RECALL_KS]])
    if not body:
        return "No ranked system in this run (full_context and no_memory have no ranking)."
    return markdown_table(headers, body)


def f1_interval_table(systems: Mapping[str, Rows], n_boot: int = 2000, seed: int = 0) -> str:
    headers = ["System", "F1 (1–4)", "95% CI", "questions", "conversations (clusters)"]
    body, used = [], set()
    for name, rows in systems.items():
        scored = [r for r in rows if r.category in QA_CATEGORIES and r.f1 is not None]
        conversations = [r.conversation_id for r in scored]
        if len(set(conversations)) >= 2:
            interval = cluster_bootstrap([r.f1 for r in scored], conversations, n_boot=n_boot, seed=seed)
            ci, clusters = ci_cell(interval.low, interval.high, _fmt), str(interval.clusters)
            used.add("conversations")
        else:  # one conversation: a clustered interval is undefined, so say which interval this is
            interval = bootstrap_mean([r.f1 for r in scored], n_boot=n_boot, seed=seed)
            ci = ci_cell(interval.low, interval.high, _fmt, interval.clusters, "question")
            clusters = f"{len(set(conversations))} (item-level bootstrap)"
            used.add("questions")
        body.append([name, _fmt(interval.estimate), ci, interval.n, clusters])
    notes = []
    if "conversations" in used:
        notes.append(f"Percentile bootstrap ({n_boot:,} resamples) resampling whole conversations; LoCoMo has only "
                     "10, so these intervals rest on at most 10 clusters and are rough.")
    if "questions" in used:
        notes.append(f"Rows marked item-level cover one conversation, where a clustered interval is undefined: "
                     f"percentile bootstrap ({n_boot:,} resamples) over their questions, which treats questions of "
                     "one conversation as independent, so it is usually narrower than a clustered interval would "
                     "be; n/a with one question.")
    notes.append(question_set_note({name: [r for r in rows if r.category in QA_CATEGORIES]
                                    for name, rows in systems.items()}))
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {md_markup(n)}" for n in notes if n)


def paired_table(systems: Mapping[str, Rows | Judgments], value: Value = F1, n_boot: int = 2000,
                 unscored: str = "no question scored by both systems", scale: float = 100.0,
                 references: Collection[str] = ()) -> str:
    """Every pair of systems over the questions both scored; `unscored` says why there is no pair when two or
    more systems share no scored question (a judge that labelled nothing: "no judged questions"). `scale`: 100
    for F1 (0–1), 1 for J, whose scores are on 0–100 already. `references`: the audit's answer sets written to be
    wrong, never paired (memeval/benchmarks/locomo/published/reference.py)."""
    systems, left_out = _without(systems, references)
    fmt = partial(_fmt, scale=scale)
    headers = ["A − B", "mean difference ×100" if scale == 100 else "mean difference", "95% CI (clustered)",
               "n (in common)", "A better", "B better", "ties"]
    body = []
    for a, b in combinations(systems, 2):
        rows_a = [r for r in systems[a] if r.category in QA_CATEGORIES]
        rows_b = [r for r in systems[b] if r.category in QA_CATEGORIES]
        d = paired_difference(rows_a, rows_b, value, a, b, n_boot=n_boot)
        if d.n == 0:
            continue
        body.append([f"{a} − {b}", fmt(d.mean_difference), ci_cell(d.low, d.high, fmt, d.clusters), d.n,
                     d.a_better, d.b_better, d.ties])
    if not body:
        return ("Only one system: no paired comparison." if len(systems) < 2 else
                f"No paired comparison: {unscored}.") + (f"\n\n- {md_markup(left_out)}" if left_out else "")
    notes = [f"Each difference is over the questions both systems scored (the intersection of their sample ids; "
             f"its size is n), with a percentile bootstrap ({n_boot:,} resamples) resampling whole conversations; "
             "n/a when the questions in common come from one conversation.",
             question_set_note({name: [r for r in rows if r.category in QA_CATEGORIES]
                                for name, rows in systems.items()}), left_out]
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {md_markup(n)}" for n in notes if n)


def _groups(systems: Mapping[str, Rows | Judgments]) -> list[tuple[str, tuple[int, ...]]]:
    """(label, categories): categories 1–4 together as the published tables average them, then each category
    the rows hold."""
    held = sorted({int(r.category) for rows in systems.values() for r in rows if r.category is not None})
    return [("1–4", QA_CATEGORIES), *[(category_label(c), (c,)) for c in held]]


def power_table(systems: Mapping[str, Rows | Judgments], value: Value, places: int = 1, n_boot: int = 2000,
                references: Collection[str] = ()) -> str:
    """Which differences are real: every pair of systems per category group, the paired difference (`value`, on
    the table's scale) with its clustered bootstrap interval, n, the minimum detectable difference at 80% power
    and two-sided α = 0.05, and whether the difference is within noise (memeval.scoring.power). One system:
    the MDE of its own mean per group. `references` are never paired."""
    from memeval.scoring.power import item_level, mean_power, paired_rows

    systems, left_out = _without(systems, references)

    def fmt(v: float | None) -> str:
        if v is None or v != v:
            return "–"
        v = round(v, places) + 0.0  # -0.0 prints as 0
        return f"{v:+.{places}f}" if v else f"{v:.{places}f}"

    headers = ["A − B", "categories", "difference", "95% CI (clustered)", "n (in common)", "MDE (80% power)",
               "verdict"]
    body = []
    for label, categories in _groups(systems):
        rows = {name: [r for r in group if r.category in categories] for name, group in systems.items()}
        if len(systems) == 1:
            (name, own), = rows.items()
            scored = [(value(r), r.conversation_id) for r in own if value(r) is not None]
            if scored:
                values = [v for v, _ in scored]
                p = item_level(mean_power(values, [c for _, c in scored]), values)
                body.append([f"{name} (alone)", label, f"{p.estimate:.{places}f}", "–", p.n,
                             "–" if p.mde != p.mde else f"{p.mde:.{places}f}", "MDE of its mean (no pair)"])
            continue
        for a, b in combinations(systems, 2):
            d = paired_difference(rows[a], rows[b], value, a, b, n_boot=n_boot)
            if d.n == 0:
                continue
            p = paired_rows(rows[a], rows[b], value, fallback=True)
            body.append([f"{a} − {b}", label, fmt(d.mean_difference), ci_cell(d.low, d.high, fmt, d.clusters), d.n,
                         "–" if p.mde != p.mde else f"{p.mde:.{places}f}", p.verdict])
    if not body:
        return "No scored questions: nothing to compare." + (f"\n\n- {md_markup(left_out)}" if left_out else "")
    notes = ["MDE: the smallest true difference these questions detect 80% of the time at two-sided α = 0.05, "
             "(z₀.₉₇₅ + z₀.₈) · SE = 2.80 · SE, SE the cluster-robust standard error of the mean per-question "
             "difference with conversations as clusters (small-sample factor G/(G − 1)); docs/data-and-scoring.md.",
             "Verdict: \"within noise\" when |difference| is under 1.96 · SE, else \"real at α = 0.05\"; \"(item "
             "level)\" when the questions come from one conversation (its questions taken as independent: it holds "
             "for that conversation only). A difference under the MDE that reads \"within noise\" may still be "
             "real: these questions cannot tell. Each row is one test; among many, some \"real\" verdicts are "
             "chance.",
             question_set_note(systems), left_out]
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {md_markup(n)}" for n in notes if n)


def j_length_table(answers: Mapping[str, Rows], judgments: Mapping[str, Judgments], protocol: str,
                   leniency: str, n_boot: int = 2000) -> str:
    """J per category beside the mean answer length in words (a generous judge rewards longer answers), with a
    Wilson interval where a category is small, under the line saying how lenient this judge is."""
    from memeval.scoring.power import mean_words, small_category, wilson

    headers = ["System", "categories", "J", "95% CI", "interval", "n judged", "answer words (mean)"]
    body = []
    for name, rows in answers.items():
        judged = [j for j in judgments.get(name, ()) if j.mean is not None]
        for label, categories in _groups({name: rows}):
            means = [j for j in judged if j.category in categories]
            words = mean_words(r.prediction for r in rows if r.category in categories and r.prediction is not None)
            if not means:
                body.append([name, label, "not measured", "–", "–", 0, _fmt(words, 1.0, 1)])
                continue
            values = [float(j.mean) for j in means]
            j = float(np.mean(values))
            if small_category(len(values), j / 100):
                low, high = wilson(sum(values) / 100, len(values))
                ci, how = ci_cell(100 * low, 100 * high, lambda v: f"{v:.1f}"), "Wilson"
            else:
                interval = cluster_bootstrap(values, [m.conversation_id for m in means], n_boot=n_boot)
                ci = ci_cell(interval.low, interval.high, lambda v: f"{v:.1f}", interval.clusters)
                how = "bootstrap by conversation"
            body.append([name, label, f"{j:.1f}", ci, how, len(values), _fmt(words, 1.0, 1)])
    notes = [f"Leniency of this judge configuration (`{protocol}`): {leniency}.",
             "Wilson: the score interval of J/100 over the category's n questions, where it has fewer than 100 (or "
             "fewer than 5 on either side of its rate); item level, so it ignores clustering. Answer words: "
             "whitespace tokens per answer."]
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {md_markup(n)}" for n in notes)


def judge_accounting_table(answers: Mapping[str, Rows], judgments: Mapping[str, Judgments], protocol: str) -> str:
    """Judged vs all questions (strict accuracy counts an unjudged question as 0), and answer length, which
    generous grading rewards. A system whose rows are an empty list has no J on the run's key (its changed
    questions were never judged on it: memeval.benchmarks.locomo.keyed.unjudged_changes), so no strict J either."""
    headers = ["System", "questions", "judged", "runs failed", "J over judged", "J strict (all)",
               "answer words (mean)"]
    body, unmeasured = [], []
    for name, rows in answers.items():
        eligible = [r for r in rows if r.category in QA_CATEGORIES]
        judged = [j for j in judgments.get(name, ()) if j.category in QA_CATEGORIES]
        means = [j.mean for j in judged if j.mean is not None]
        failed_runs = sum(sum(1 for s in j.scores if s < 0) for j in judged)
        over_judged = float(np.mean(means)) if means else None
        off_key = name in judgments and not judgments[name]
        # nothing judged is no measurement: "–", never a strict 0 that reads as a measured zero
        strict = float(np.sum(means)) / len(eligible) if eligible and means and not off_key else None
        words = _mean(len(str(r.prediction).split()) for r in eligible)
        body.append([name, len(eligible), len(means), failed_runs, _fmt(over_judged, 1.0),
                     _fmt(strict, 1.0), _fmt(words, 1.0, 1)])
        if eligible and not means and not off_key:
            unmeasured.append(f"{name}: none of its {len(eligible)} questions" + (
                f" ({failed_runs} judge replies unparseable in the rows kept)" if failed_runs else ""))
    table = f"Protocol `{protocol}`, categories 1–4.\n\n" + markdown_table(headers, body)
    notes = [counted_wrong_note(judgments, protocol)]
    if unmeasured:
        notes.append("No J (\"–\", not 0) where no question has a parseable judgment: " + "; ".join(unmeasured)
                     + ". Questions whose replies could not be read are counted in the run's notes.")
    return table + "".join(f"\n\n- {md_markup(n)}" for n in notes if n)


def counted_wrong_note(judgments: Mapping[str, Judgments], protocol: str) -> str | None:
    """The EverMemOS framework counts a judge run without a label as WRONG; here it is left out of J. Where that
    happened, what J would be under the framework's count (over the judged questions' runs)."""
    if protocol != "evermemos":
        return None
    parts = []
    for name, rows in judgments.items():
        runs = [s for j in rows if j.category in QA_CATEGORIES for s in j.scores]
        unusable = sum(1 for s in runs if s < 0)
        if unusable:
            counted = 100.0 * sum(1 for s in runs if s > 0) / len(runs)
            parts.append(f"{name}: {unusable} of {len(runs)} runs, J {counted:.1f} as the framework counts")
    if not parts:
        return None
    return ("Runs with no JSON label are left out of J here; EverMemOS's judge counts each as WRONG ("
            + "; ".join(parts) + ").")


def prototype_table(systems: Mapping[str, Rows]) -> str:
    """Our prototype numbers beside the claude-mem prototype's ≈0.04 mean F1 (same 20 questions, its own token
    F1, no judge); shown in both this project's `seed` F1 and the official `locomo` F1."""
    headers = ["System", "mean F1 ×100 (seed)", "mean F1 ×100 (locomo)", "questions"]
    body = []
    for name, rows in systems.items():
        scored = [r for r in rows if r.f1 is not None]
        seed = _mean(score_f1(r.prediction, r.gold, r.category, "seed") for r in scored)
        body.append([name, _fmt(seed), _fmt(_mean(r.f1 for r in scored)), len(scored)])
    body.append([f"{CLAUDE_MEM} (published)", f"≈{100 * PROTOTYPE_BASELINE_F1:.0f}", "–", 20])
    return markdown_table(headers, body)


def per_question_table(systems: Mapping[str, Rows]) -> str:
    """One row per question (its id, category, question and gold) and each system's F1 ×100 on it, one decimal
    (a single question's F1 has no interval to justify more)."""
    names = list(systems)
    questions: dict[str, AnswerRow] = {}
    scores: dict[tuple[str, str], float | None] = {}
    for name, rows in systems.items():
        for r in rows:
            questions.setdefault(r.sample_id, r)
            scores[(r.sample_id, name)] = r.f1
    body = [[sample, category_label(int(r.category)), r.question, r.gold,
             *[_fmt(scores.get((sample, name)), digits=1) for name in names]]
            for sample, r in sorted(questions.items())]
    return (markdown_table(["question id", "category", "question", "gold", *names], body)
            + "\n\n- F1 ×100 (official LoCoMo token F1) of each system's answer; – where it has no scored answer.")


def extremes_table(rows: Rows) -> str:
    """A system's top and bottom five questions by F1 (`extremes`), F1 ×100 to one decimal."""
    top, bottom = extremes(rows)
    body = [[where, r.sample_id, category_label(int(r.category)), r.question, r.gold, r.prediction,
             _fmt(r.f1, digits=1)]
            for where, group in (("top", top), ("bottom", bottom)) for r in group]
    return markdown_table(["", "question id", "category", "question", "gold", "prediction", "F1 ×100"], body)


def _without(systems: Mapping, references: Collection[str]) -> tuple[dict, str | None]:
    """The systems to pair (the reference answer sets taken out) and the note naming those taken out."""
    from memeval.benchmarks.locomo.published.reference import reference_note

    out = [name for name in systems if name in references]
    return {k: v for k, v in systems.items() if k not in references}, (reference_note(out) if out else None)


def run_report(answers: Mapping[str, Rows], judgments: Mapping[str, Mapping[str, Judgments]] | None = None,
               title: str = "LoCoMo evaluation report", notes: Sequence[str] = (),
               judge_model: str | None = None, protocol_problem: str | None = None,
               leniency: Mapping[str, str] | None = None, references: Collection[str] = ()) -> str:
    """`answers`: system → rows; `judgments`: protocol → system → rows (empty when no judge ran); `leniency`:
    protocol → the sentence saying how lenient that judge configuration was measured to be
    (memeval.reports.judge_leniency; "leniency not measured" for a protocol it does not name)."""
    from memeval.reports.judge_leniency import NOT_MEASURED

    judgments = judgments or {}
    leniency = {p: (leniency or {}).get(p, NOT_MEASURED) for p in judgments}
    text = full_report(answers, judgments, title=title, judge_model=judge_model, protocol_problem=protocol_problem,
                       leniency=leniency)
    head, _, rest = text.partition("\n")
    parts = [head, ""]
    parts += [f"> {md_markup(n)}" for n in notes]  # a note may quote an API's or a plug-in's message
    parts.append(rest)
    parts += ["## Evidence recall (×100) of the memories given to the reader", "", evidence_recall_table(answers)]
    parts += ["", "## Ranked retrieval: evidence recall@k (×100)", "", recall_at_k_table(answers)]
    parts += ["", "## F1 with bootstrap confidence intervals (by conversation where there are two or more)", "",
              f1_interval_table(answers)]
    parts += ["", "## Paired differences in F1 (questions in common)", "", paired_table(answers,
                                                                                       references=references)]
    parts += ["", "## Which differences in F1 are real (by category, 80% power at α = 0.05)", "",
              power_table(answers, _f1_x100, references=references)]
    for protocol, by_system in judgments.items():
        parts += ["", f"## Judge accounting ({protocol})", "", judge_accounting_table(answers, by_system, protocol)]
        parts += ["", f"## J beside answer length, by category ({protocol})", "",
                  j_length_table(answers, by_system, protocol, leniency[protocol])]
        if any(j.mean is not None for rows in by_system.values() for j in rows):
            parts += ["", f"## Which differences in J are real ({protocol}, by category, 80% power at α = 0.05)",
                      "", power_table({name: list(by_system.get(name, ())) for name in answers},
                                      attrgetter("mean"), references=references)]
        if len(answers) > 1:
            judged = any(j.mean is not None for rows in by_system.values() for j in rows)
            parts += ["", f"## Paired differences in J ({protocol})", "", paired_table(
                {name: list(by_system.get(name, ())) for name in answers}, attrgetter("mean"),
                unscored="no question judged for both systems" if judged else "no judged questions", scale=1.0,
                references=references)]
    return "\n".join(parts) + "\n"
