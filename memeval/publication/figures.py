"""Publication figures: each takes results already read (so notebooks 01–06 draw the same figures from what
they just computed) and returns (figure, caption). `FIGURES` builds the shared ones (MEMAUDIT, natural packages)
from the stored results under reports/artifacts for notebook 07 and `memeval publish` (never a solver or an API
call); a benchmark names its own builders in its publication contribution (publication/contribution.py), and a
figure by category takes the benchmark's CategorySet, so nothing here names a benchmark.

A caption says what the figure shows and what it does not; a missing input raises MissingResults naming the
notebook that produces it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from memeval.categories import CategorySet
from memeval.publication import readers
from memeval.publication.figure_rules import OVERALL_CATEGORIES, PER_CATEGORY
from memeval.publication.figures_memaudit import (
    bnb_nodes,
    budget_sweep,
    graph_study,
    natural_stores,
    natural_writers,
    ratio_ecdf,
    validity,
)
from memeval.publication.marks import Panel, finish
from memeval.publication.readers import MissingResults
from memeval.publication.style import (
    WIDTH_DOUBLE,
    WIDTH_SINGLE,
    legend_below,
    panel_letters,
    style,
)
from memeval.records import AnswerRow, JudgmentRow
from memeval.scoring.aggregate import Interval

__all__ = ["FIGURES", "MissingResults", "bnb_nodes", "budget_sweep", "bridge", "graph_study", "locomo",
           "locomo_heatmap", "locomo_pareto", "natural_stores", "natural_writers", "ratio_ecdf", "recall_bands",
           "validity"]


def _jitter(values: Sequence[float], seed: int, spread: float = 0.025) -> np.ndarray:
    """A fixed small shift per point, so questions with equal values (0, ½, 1) do not hide one another."""
    return np.asarray(values, dtype=float) + np.random.default_rng(seed).uniform(-spread, spread, len(values))


def bridge(pairs: Sequence[dict]):
    """Union ratio at write time against evidence recall in the QA run, per store (notebooks 05, 07)."""
    from memeval.natural.bridge import bridge_table

    budget = max((p["budget"] for p in pairs), default=0.0)
    chosen = [p for p in pairs if p["pruning"] == "salience" and p["budget"] == budget]
    stats = {r["system"]: r for r in bridge_table(chosen, n_boot=1000) if r["outcome"] == "evidence_recall"}
    systems = sorted({p["system"] for p in chosen})
    with style():
        fig, axes = plt.subplots(1, max(1, len(systems)), figsize=(WIDTH_DOUBLE, 2.9), squeeze=False, sharey=True)
        for i, (ax, system) in enumerate(zip(axes[0], systems, strict=False)):
            mine = [p for p in chosen if p["system"] == system and p["evidence_recall"] is not None]
            panel = Panel(ax, protocol="per question: union ratio at write time, evidence recall in the QA run")
            x = [p["union_ratio"] for p in mine]
            y = [p["evidence_recall"] for p in mine]
            panel.points(system, _jitter(x, 2 * i), _jitter(y, 2 * i + 1), size=7, alpha=0.45,
                         uncertainty="distribution", interval="each point is one question (jittered ±0.025)")
            for (px, py), count in Counter(zip(x, y, strict=True)).items():
                if count >= 5:  # a pile of equal values: say how many sit there
                    left = px < 0.5
                    ax.annotate(f"{count}", (px, py), xytext=(9 if left else -9, -2), textcoords="offset points",
                                fontsize=6, ha="left" if left else "right", va="center",
                                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
            s = stats.get(system)
            rho = "ρ undefined" if not s or s["rho"] is None else \
                f"ρ = {s['rho']:.2f} (95% CI {s['low']:.2f} to {s['high']:.2f})"
            store = ", 128-token chunks" if system == "rag_turns" else ""
            ax.set_title(f"{system}{store}\n{rho}\nn = {len(mine)} questions", fontsize=7)
            ax.set_xlabel("union ratio at write time")
            ax.set_xlim(-0.08, 1.08)
        axes[0][0].set_ylabel("evidence recall in the QA run")
        axes[0][0].set_ylim(-0.08, 1.08)
        panel_letters(axes[0], y=1.22)
    chunked = ("The rag_turns store audited here is its 128-token chunks while its QA run retrieves single turns: "
               "the same system family, not the same store. " if "rag_turns" in systems else "")
    return finish(fig, (
        f"The bridge: per question (n in each title), the union ratio of the salience-pruned store at B = {budget:g} "
        "against the same system's evidence recall in the offline QA run, with Spearman ρ and a bootstrap 95% "
        "interval over questions. Points are jittered by up to ±0.025 so equal values stay visible; a number beside a "
        f"pile counts the questions in it. {chunked}"
        "It does not show answer quality (J needs an LLM judge): the outcome is evidence recall."))


class _ItemLevel(Interval):
    """An interval over the questions of one conversation, where a clustered one is undefined."""


def _clustered(rows: Sequence, value) -> Interval:
    """Clustered by conversation; on one conversation, item level over its questions (as the run report does), so
    a prototype's bars carry an interval instead of caps of zero width."""
    from memeval.scoring.aggregate import cluster_bootstrap

    values = [value(r) for r in rows]
    if len({r.conversation_id for r in rows}) >= 2 or len(rows) < 2:
        return cluster_bootstrap(values, [r.conversation_id for r in rows])
    i = cluster_bootstrap(values, [r.sample_id for r in rows])
    return _ItemLevel(i.estimate, i.low, i.high, i.n, i.clusters)


def _interval_text(intervals: Sequence[Interval]) -> str:
    if any(isinstance(i, _ItemLevel) for i in intervals):
        return ("95% percentile bootstrap over the questions of one conversation (item level: narrower than a "
                "clustered interval would be)")
    clusters = max((i.clusters for i in intervals), default=0)
    if clusters < 2:
        return "none: one question, nothing to resample (the mark is the estimate alone)"
    return f"95% percentile bootstrap over whole conversations ({clusters} clusters)"


def _caption_interval(rows: Sequence) -> str:
    if len({r.conversation_id for r in rows}) >= 2:
        return "95% intervals from a bootstrap over whole conversations"
    return ("95% intervals from a bootstrap over the questions of the one conversation (item level, narrower than "
            "a clustered interval would be)")


def _scaled(interval: Interval, scale: float = 100.0) -> tuple[float | None, float | None, float | None]:
    if interval.n == 0:
        return None, None, None
    return scale * interval.estimate, scale * interval.low, scale * interval.high


def locomo(systems: Mapping[str, Sequence[AnswerRow]],
           by_protocol: Mapping[str, Mapping[str, Sequence[JudgmentRow]]], categories: CategorySet):
    """F1 by category, overall F1 (the headline categories), recall@k, and J when judged, each with
    conversation-clustered intervals (notebooks 01, 02, 07). `by_protocol`: protocol → system → judgment rows
    (graded drawn first); `categories`: the run's benchmark's CategorySet (its names, headline and the ids scored
    apart, marked *). Published rows are measured with LLM readers and other judges: they stay in tab_locomo_f1,
    off these axes."""
    answers = [r for rows in systems.values() for r in rows]
    protocol = "graded" if "graded" in by_protocol else next(iter(sorted(by_protocol)), None)
    judgments = by_protocol.get(protocol, {})
    reader = answers[0].answerer if answers else ""
    measured = f"this run: official LoCoMo F1 scorer, {reader} reader"
    cats = sorted({r.category for r in answers if r.f1 is not None})
    names = list(systems)
    with style():
        panels = 4 if judgments else 3
        fig, axes = plt.subplots(1, panels, figsize=(WIDTH_DOUBLE * panels / 2.4, 3.1),
                                 gridspec_kw={"width_ratios": [1.6] + [1] * (panels - 1)})
        ax, ox, bx = axes[0], axes[1], axes[2]
        by_cat = Panel(ax, protocol=measured, categories=PER_CATEGORY)
        overall = Panel(ox, protocol=measured, categories=OVERALL_CATEGORIES)
        recall = Panel(bx, protocol="this run: evidence turns among the first k memories")
        width = 0.8 / max(1, len(names))
        every = []
        for i, name in enumerate(names):
            scored = [r for r in systems[name] if r.f1 is not None]
            cells = [_clustered([r for r in scored if r.category == c], lambda r: r.f1) for c in cats]
            every += cells
            values = [_scaled(c) for c in cells]
            by_cat.bars(name, np.arange(len(cats)) + i * width, [v[0] for v in values], [v[1] for v in values],
                        [v[2] for v in values], width=width, n=[c.n for c in cells],
                        interval=_interval_text(cells))
            qa = [r for r in scored if r.category in categories.headline]
            whole = _clustered(qa, lambda r: r.f1)
            est, low, high = _scaled(whole)
            overall.bars(name, [i], [est], [low], [high], width=0.7, horizontal=True, n=[whole.n],
                         interval=_interval_text([whole]))
            ranked = [r for r in systems[name] if r.recall_curve]
            if ranked:
                k = len(ranked[0].recall_curve)
                points = [_clustered(ranked, lambda r, j=j: r.recall_curve[j]) for j in range(k)]
                recall.line(name, range(1, k + 1), [100 * p.estimate for p in points],
                            [100 * p.low for p in points], [100 * p.high for p in points],
                            interval=_interval_text(points), ms=2.5)
        ax.set_xticks(np.arange(len(cats)) + width * (len(names) - 1) / 2,
                      [f"{categories.name(c)} ({c})" + ("*" if categories.is_apart(c) else "") for c in cats],
                      rotation=30, ha="right")
        ax.set_ylabel("F1 ×100, per category")
        ax.set_title("F1 by category", fontsize=9)
        ox.set_yticks(range(len(names)), names, fontsize=7)
        ox.invert_yaxis()
        ox.set_xlabel(f"F1 ×100, {OVERALL_CATEGORIES}")
        ox.set_title("overall", fontsize=9)
        bx.set_xlabel("k (memories retrieved)")
        bx.set_ylabel("evidence recall@k ×100")
        bx.set_title("evidence recall", fontsize=9)
        bx.set_ylim(0, 100)
        if judgments:
            cx = axes[3]
            judged = Panel(cx, protocol=f"this run: {protocol} judge", categories=OVERALL_CATEGORIES)
            jnames = list(judgments)
            for i, name in enumerate(jnames):
                rows = [j for j in judgments[name] if j.category in categories.headline and j.mean is not None]
                whole = _clustered(rows, lambda j: j.mean)  # judgments are stored ×100 already
                est, low, high = _scaled(whole, scale=1.0)
                judged.bars(name, [i], [est], [low], [high], width=0.7, horizontal=True, n=[whole.n],
                            interval=_interval_text([whole]))
            cx.set_yticks(range(len(jnames)), jnames, fontsize=7)
            cx.invert_yaxis()
            cx.set_xlabel(f"J ×100 ({protocol} judge), {OVERALL_CATEGORIES}")
            cx.set_title("judge", fontsize=9)
            cx.set_xlim(0, 100)
        panel_letters(axes)
        fig.tight_layout()
        legend_below(fig, [ax])
    conversations = len({r.conversation_id for r in answers})
    present = ", ".join(f"{c} {categories.name(c)}" for c in cats)
    adversarial = (" *Adversarial (5) is scored 1 only when the prediction says the question cannot be answered "
                   "(the official scorer); a reader that always answers scores 0 there, drawn as a black tick."
                   if any(categories.is_apart(c) for c in cats) else "")
    return finish(fig, (
        f"LoCoMo, {conversations} conversation(s), {len(answers)} answers, reader {reader}: (a) F1 ×100 per category "
        f"present ({present}), (b) overall F1 ×100 over {OVERALL_CATEGORIES} as the Mem0 paper and our J average, "
        "(c) evidence recall@k of the ranked systems"
        + (f", (d) J ×100 from the {protocol} judge" if judgments else "")
        + f"; {_caption_interval(answers)}. A black tick at the base is a measured zero; "
        f"'n/r' marks nothing measured.{adversarial} It does not show the published rows — measured with LLM readers "
        "and other judges, they are in tab_locomo_f1 with their protocol — nor LLM answer quality when the reader is "
        "extractive (a sentence-overlap baseline)."))


def locomo_heatmap(systems: Mapping[str, Sequence[AnswerRow]], categories: CategorySet):
    """System × category F1 ×100 with each cell's interval and n (notebooks 02, 07)."""
    names = list(systems)
    cats = sorted({r.category for rows in systems.values() for r in rows if r.f1 is not None})
    grid = np.full((len(names), len(cats)), np.nan)
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.7, 0.5 * len(names) + 1.5))
        panel = Panel(ax, protocol="this run: official LoCoMo F1 scorer", categories=PER_CATEGORY)
        cells = {}
        for i, name in enumerate(names):
            scored = [r for r in systems[name] if r.f1 is not None]
            row = [_clustered([r for r in scored if r.category == c], lambda r: r.f1) for c in cats]
            cells[name] = row
            values = [_scaled(c) for c in row]
            grid[i] = [np.nan if v[0] is None else v[0] for v in values]
            panel.record_cells(name, [categories.name(c) for c in cats], [v[0] for v in values],
                               [v[1] for v in values], [v[2] for v in values], n=[c.n for c in row],
                               interval=_interval_text(row))
        top = max(1.0, float(np.nanmax(grid))) if np.isfinite(grid).any() else 1.0
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=top, aspect="auto")
        ax.set_xticks(range(len(cats)), [f"{categories.name(c)} ({c})" + ("*" if categories.is_apart(c) else "")
                                         for c in cats], rotation=30, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("LoCoMo category, each scored alone")
        ax.grid(False)
        for (i, j), value in np.ndenumerate(grid):
            c = cells[names[i]][j]
            text = ("n/r" if value != value else f"{value:.1f}\n[{100 * c.low:.0f}–{100 * c.high:.0f}]"
                    if c.defined else f"{value:.1f}\nn = {c.n}")
            ax.text(j, i, text, ha="center", va="center", fontsize=6,
                    color="white" if value != value or value < 0.6 * top else "black")
        fig.colorbar(image, ax=ax, label="F1 ×100 (official scorer)")
    adversarial = (" *Adversarial (5) scores 1 only when the prediction says the question cannot be answered; a "
                   "reader that always answers scores 0 there." if any(categories.is_apart(c) for c in cats) else "")
    return finish(fig, (
        "LoCoMo F1 ×100 per system and category (official scorer), with the 95% interval from a bootstrap over "
        "whole conversations in brackets (with one conversation there is nothing to resample, so a cell gives its "
        f"n instead); 'n/r' marks a category with no scored answer.{adversarial} It does not show J; "
        "tab_locomo_f1 has every cell's question count."))


def locomo_pareto(systems: Mapping[str, Sequence[AnswerRow]], categories: CategorySet, model: str | None = None):
    """Overall F1 (categories 1–4) against context tokens per question; the input cost of that context on a
    second axis only when the run's reader is an LLM, priced at that model (notebooks 02, 07)."""
    from memeval.llm.profiles import profile

    points = []
    for name, rows in systems.items():
        tokens = [r.context_tokens for r in rows if r.context_tokens is not None]
        qa = [r for r in rows if r.category in categories.headline and r.f1 is not None]
        if tokens and qa:
            points.append((name, float(np.mean(tokens)), _clustered(qa, lambda r: r.f1)))
    if not points:
        raise MissingResults("no answered questions with context tokens: execute notebook 02_full_run")
    price = None
    if model:
        try:
            price = profile(model).input_usd_mtok
        except Exception:  # a local or gateway id without a built-in price: no cost axis rather than a guess
            price = None
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.6, 3.0))
        panel = Panel(ax, protocol="this run: official LoCoMo F1 scorer", categories=OVERALL_CATEGORIES)
        for name, x, interval in points:
            est, low, high = _scaled(interval)
            panel.points(name, [max(x, 1.0)], [est], [low], [high], interval=_interval_text([interval]))
            ax.annotate(name, (max(x, 1.0), est), textcoords="offset points", xytext=(5, 3), fontsize=7)
        best, front = -1.0, []  # fewest tokens first; a point joins the front when it beats every cheaper one
        for _, x, interval in sorted(points, key=lambda p: (p[1], -p[2].estimate)):
            if interval.estimate > best:
                front.append((max(x, 1.0), 100 * interval.estimate))
                best = interval.estimate
        if len(front) > 1:
            ax.plot(*zip(*front, strict=True), color="black", lw=0.8, ls="--", zorder=1)
        ax.set_xscale("log")
        ax.set_xlabel("context tokens per question (mean, 4 characters a token)")
        ax.set_ylabel(f"F1 ×100, {OVERALL_CATEGORIES}")
        if price:
            cost = ax.secondary_xaxis("top", functions=(lambda t: t * price * 1000 / 1e6,
                                                        lambda usd: usd * 1e6 / (price * 1000)))
            cost.set_xlabel(f"input USD per 1,000 questions ({model}, ${price:g}/MTok)", fontsize=7)
    front_text = " The dashed line joins the Pareto front (no cheaper system scores higher)." if len(front) > 1 else ""
    cost_text = (f" The top axis prices that context at {model}'s input rate without prompt caching."
                 if price else " No LLM read these contexts (the reader is extractive), so no cost axis is drawn.")
    return finish(fig, (
        f"LoCoMo: overall F1 ×100 ({OVERALL_CATEGORIES}; {_caption_interval([r for rows in systems.values() for r in rows])}) "
        f"against the context each system hands the reader.{front_text}{cost_text} It does not show output tokens or the reader's latency."))


def recall_bands(systems: Mapping[str, Sequence[AnswerRow]], n_boot: int = 2000):
    """Evidence recall@k of the ranked systems with conversation-clustered bootstrap 95% bands (notebooks 02,
    07)."""
    curves = {n: [r for r in rows if r.recall_curve] for n, rows in systems.items()}
    curves = {n: rows for n, rows in curves.items() if rows}
    if not curves:
        raise MissingResults("no ranked system in the LoCoMo run: execute notebook 02_full_run")
    notes = {"summaries": "summaries (sources: whole sessions)", "observations": "observations (sources: turns)"}
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.6, 3.0))
        panel = Panel(ax, protocol="this run: evidence turns among the first k memories")
        for name, rows in curves.items():
            k = len(rows[0].recall_curve)
            points = [_clustered(rows, lambda r, j=j: r.recall_curve[j]) for j in range(k)]
            panel.line(name, range(1, k + 1), [100 * p.estimate for p in points], [100 * p.low for p in points],
                       [100 * p.high for p in points], label=f"{notes.get(name, name)}, n = {len(rows)}",
                       interval=_interval_text(points), ms=2.5)
        ax.set_xlabel("k (memories retrieved)")
        ax.set_ylabel("evidence recall@k ×100")
        ax.set_ylim(0, 102)
        ax.legend(loc="lower right", frameon=False)
    summary = (" A summary counts as holding every turn of its session, so summaries reach full recall at small k "
               "without quoting the evidence." if "summaries" in curves else "")
    return finish(fig, (
        "LoCoMo evidence recall@k ×100 of the ranked systems (questions with resolvable evidence; n per system in "
        "the legend), with "
        + ("95% bands from a bootstrap over whole conversations (10 clusters at most, so the bands are rough)"
           if len({r.conversation_id for rows in curves.values() for r in rows}) >= 2 else
           "95% bands from a bootstrap over the questions of the one conversation (item level)")
        + f".{summary} It does not show whether the reader used the evidence."))


def longmemeval_recall(answers: Sequence) -> tuple:
    """Session- and turn-level evidence recall@k of the ranked systems on LongMemEval (notebook 08), with a
    bootstrap over questions (each question has its own haystack, so questions are independent)."""
    from memeval.scoring.aggregate import bootstrap_mean

    systems = list(dict.fromkeys(a.system for a in answers if a.session_recall))
    if not systems:
        raise MissingResults("no ranked system in the LongMemEval run: execute notebook 08_longmemeval")
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(WIDTH_SINGLE * 2, 3.0), sharey=True)
        for ax, key, level in ((axes[0], "session_recall", "session"), (axes[1], "turn_recall", "turn")):
            panel = Panel(ax, protocol=f"this run: {level}-level evidence among the first k memories")
            for name in systems:
                curves = [getattr(a, key) for a in answers if a.system == name and getattr(a, key)]
                if not curves:
                    continue
                matrix = 100 * np.asarray(curves, dtype=float)
                points = [bootstrap_mean(matrix[:, j]) for j in range(matrix.shape[1])]
                panel.line(name, range(1, matrix.shape[1] + 1), [p.estimate for p in points],
                           [p.low for p in points], [p.high for p in points], label=f"{name} (n={len(curves)})",
                           interval="95% percentile bootstrap over questions", ms=2.5)
            ax.set_xlabel("k (memories retrieved)")
            ax.set_title(f"{level}-level evidence")
            ax.set_ylim(0, 102)
        axes[0].set_ylabel("evidence recall@k ×100")
        axes[1].legend(loc="lower right", frameon=False)
    return finish(fig, (
        "LongMemEval evidence recall@k ×100 of the ranked systems: the share of evidence sessions "
        "(answer_session_ids) and of has_answer turns among the first k memories, averaged over questions with "
        "evidence, with 95% bootstrap bands over questions. It does not show whether a reader used the evidence."))


# The shared figures (MEMAUDIT and natural packages); a benchmark's own are in its folder's publication.py.
FIGURES: dict[str, Callable[[Path], tuple]] = {
    "fig_budget_sweep": lambda root: budget_sweep(readers.base_sweep_summary(root)),
    "fig_validity": lambda root: validity(readers.stress_summaries(root)),
    "fig_natural_writers": lambda root: natural_writers(readers.natural_summary(root)),
    "fig_natural_stores": lambda root: natural_stores(readers.natural_raw_rows(root)),
    "fig_bridge": lambda root: bridge(_bridge_pairs(root)),
    "fig_ratio_ecdf": lambda root: ratio_ecdf(readers.base_sweep_rows(root)),
    "fig_bnb_nodes": lambda root: bnb_nodes(readers.base_sweep_rows(root)),
}


def _bridge_pairs(root: Path) -> list[dict]:
    from memeval.natural.bridge import bridge_pairs

    return bridge_pairs(readers.natural_raw_rows(root), readers.natural_qa_run(root))
