"""Publication figures: each takes results already read (so notebooks 01–06 draw the same figures from what
they just computed) and returns (figure, caption); `FIGURES` builds each from the stored results under
reports/artifacts for notebook 07 and `memeval publish` (never a solver or an API call).

A caption says what the figure shows and what it does not; a missing input raises MissingResults naming the
notebook that produces it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memeval.categories import QA_CATEGORIES
from memeval.publication import readers
from memeval.publication.readers import MissingResults
from memeval.publication.style import (
    GREY,
    WIDTH_DOUBLE,
    WIDTH_SINGLE,
    color,
    legend_below,
    marker,
    panel_letters,
    style,
)
from memeval.records import AnswerRow, JudgmentRow, SweepRow

__all__ = ["FIGURES", "MissingResults", "bnb_nodes", "budget_sweep", "bridge", "graph_study", "locomo",
           "locomo_heatmap", "locomo_pareto", "natural_stores", "natural_writers", "ratio_ecdf", "recall_bands",
           "validity"]


def budget_sweep(summary: dict):
    """Writers' mean ratio to OPT against the budget, bootstrap bands, the paper's points and its density-only
    range (notebooks 03, 07)."""
    from memeval.reports.memaudit import PUBLISHED_BASE, PUBLISHED_BASE_RANGES

    df = pd.DataFrame(summary["rows"])
    budgets = sorted(df["budget"].unique())
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE * 0.72, 3.2))
        for method, part in df[df["method"] != "opt"].groupby("method"):
            part = part.sort_values("budget")
            ax.plot(part["budget"], part["mean_ratio"], marker=marker(method), ms=3.5, label=method,
                    color=color(method))
            ax.fill_between(part["budget"], part["ci_low"], part["ci_high"], alpha=0.15, color=color(method))
        for i, by_budget in enumerate(PUBLISHED_BASE.values()):
            ax.scatter(list(by_budget), list(by_budget.values()), marker="x", s=30, color="black", zorder=4,
                       label="paper (point)" if i == 0 else None)
        for method, (on, low, high) in PUBLISHED_BASE_RANGES.items():
            ax.fill_between([min(on), max(on)], low, high, color=color(method), alpha=0.12, hatch="///",
                            edgecolor="black", lw=0, zorder=1, label=f"paper: {method} {low:.3f}–{high:.3f}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [f"{b:g}" for b in budgets])
        ax.minorticks_off()
        ax.set_xlabel("budget B (storage units)")
        ax.set_ylabel("F(X) / OPT (ratio)")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    caption = (f"Exact budget sweep on MEMAUDIT-Small `base` ({summary['packages']} seeded packages): mean ratio "
               f"of each writer to the certified OPT ({summary['opt_certified']}/{summary['opt_rows']} OPT rows "
               "certified), bootstrap 95% bands over packages; crosses mark the paper's published "
               f"{', '.join(PUBLISHED_BASE)} ratios and the hatched band its density-only range. It does not show "
               "natural text or answer quality: synthetic packages only.")
    return fig, caption


def validity(summaries: dict[str, dict]):
    """Stress suite: writer × distribution heatmap and the frontier gap (notebooks 04, 07)."""
    from memeval.reports.memaudit import PUBLISHED_STRESS_NO_TOMBSTONE_B6

    df = pd.DataFrame([{"distribution": name, **r} for name, summary in summaries.items()
                       for r in summary["rows"]])
    budget = float(df["budget"].max())
    heat = df[(df["budget"] == budget) & (df["method"] != "opt")].pivot_table(
        index="distribution", columns="method", values="mean_ratio")
    with style():
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(WIDTH_DOUBLE, 3.4), gridspec_kw={"width_ratios": [3, 1]})
        image = ax.imshow(heat.values.astype(float), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(heat.shape[1]), heat.columns, rotation=45, ha="right")
        ax.set_yticks(range(heat.shape[0]), heat.index)
        ax.grid(False)
        for (i, j), value in np.ndenumerate(heat.values.astype(float)):
            if value == value:
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if value < 0.6 else "black")
        fig.colorbar(image, ax=ax, label="F / OPT (ratio)")
        ax.set_title(f"mean ratio to OPT at B = {budget:g}", fontsize=9)
        if "no_tombstone_opt" in heat:
            gap = 1 - heat["no_tombstone_opt"]
            bx.barh(range(len(gap)), gap.values, color=color("no_tombstone_opt"))
            bx.set_yticks(range(len(gap)), [])
            bx.set_ylim(len(gap) - 0.5, -0.5)  # the heatmap's row order, top to bottom
            bx.set_xlabel("frontier gap\n(1 − no-tombstone OPT / OPT)")
            bx.set_title("needs tombstones", fontsize=9)
            if budget == 6:
                published = [(i, 1 - PUBLISHED_STRESS_NO_TOMBSTONE_B6[d]) for i, d in enumerate(gap.index)
                             if d in PUBLISHED_STRESS_NO_TOMBSTONE_B6]
                bx.scatter([g for _, g in published], [i for i, _ in published], marker="x", color="black",
                           zorder=3, label="paper")
                bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
        panel_letters([ax, bx])
    caption = (f"Stress suite at B = {budget:g}: mean ratio to OPT per writer and distribution, and the frontier "
               "gap — the share of OPT that needs tombstones or compound updates. It does not show how any real "
               "system behaves: the distributions are synthetic and built to stress invalidation.")
    return fig, caption


def natural_writers(summary: dict):
    """Natural packages: writer ratios by budget beside the paper's Estimated-GVT (notebooks 05, 07)."""
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    df = pd.DataFrame([r for r in summary["rows"] if "pruning" not in r and r["method"] != "opt"])
    budgets = sorted(df["budget"].unique())
    methods = sorted(df["method"].unique())
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE, 3.0))
        width = 0.8 / len(budgets)
        for i, budget in enumerate(budgets):
            part = df[df["budget"] == budget].set_index("method").reindex(methods)
            x = np.arange(len(methods)) + i * width
            ax.bar(x, part["mean_ratio"], width, label=f"B = {budget:g}", alpha=0.85,
                   yerr=[part["mean_ratio"] - part["ci_low"], part["ci_high"] - part["mean_ratio"]], capsize=2)
            if "estimated_gvt" in methods and int(budget) in PAPER_NATURAL_ESTIMATED_GVT:
                j = methods.index("estimated_gvt")
                ax.scatter([j + i * width], [PAPER_NATURAL_ESTIMATED_GVT[int(budget)]], marker="x", color="black",
                           zorder=3, label="paper (LongMemEval)" if i == 0 else None)
        ax.set_xticks(np.arange(len(methods)) + width * (len(budgets) - 1) / 2, methods, rotation=30, ha="right")
        ax.set_ylabel("F / OPT (ratio)")
        ax.set_ylim(0, 1.1)
        ax.set_xlabel("writer (bars: budget B in words; error bars: bootstrap 95% CI over packages)")
        ax.legend(ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.42), frameon=False)
    caption = ("LoCoMo-Natural-87 (rule-adjudicated): writer ratios to the certified OPT by budget, bootstrap 95% "
               "intervals over packages; crosses mark the paper's Estimated-GVT on its LongMemEval packages. It "
               "does not show a reproduction of the paper: a different source and label process.")
    return fig, caption


def natural_stores(rows: Sequence[SweepRow]):
    """Exported stores as union packages: union ratio by pruning and budget (notebooks 05, 07)."""
    df = pd.DataFrame([r.to_row() for r in rows if r.is_union and r.ratio is not None])
    if df.empty:
        raise MissingResults("no union rows in the natural sweep: execute notebook 05_memaudit_natural87")
    table = df.groupby(["system", "pruning", "budget"])["ratio"].mean().unstack("pruning")
    with style():
        fig, axes = plt.subplots(1, len(table.index.levels[0]), figsize=(WIDTH_DOUBLE, 2.8), sharey=True,
                                 squeeze=False)
        for ax, system in zip(axes[0], table.index.levels[0], strict=False):
            part = table.loc[system]
            for pruning in part.columns:
                ax.plot(part.index, part[pruning], marker="o", ms=3, label=pruning, color=color(pruning))
            ax.set_title(system, fontsize=9)
            ax.set_xticks(list(part.index), [f"{b:g}" for b in part.index])
            ax.set_xlabel("budget B (words)")
        axes[0][0].set_ylabel("union ratio F / OPT(package ∪ export)")
        axes[0][0].set_ylim(0, 1.05)
        panel_letters(axes[0])
        legend_below(fig, axes[0], ncol=3)
    caption = ("Exported stores as union packages: each system's memories over the support slice, pruned to the "
               "budget by recency, declared salience, or the analysis-only upper bound (exact OPT over its own "
               "memories). Union ratio = F / OPT(package ∪ export), rule labels. It does not show retrieval or "
               "answer quality.")
    return fig, caption


def bridge(pairs: Sequence[dict]):
    """Union ratio at write time against evidence recall in the QA run, per store (notebooks 05, 07)."""
    from memeval.natural.bridge import bridge_table

    budget = max((p["budget"] for p in pairs), default=0.0)
    chosen = [p for p in pairs if p["pruning"] == "salience" and p["budget"] == budget]
    stats = {r["system"]: r for r in bridge_table(chosen, n_boot=1000) if r["outcome"] == "evidence_recall"}
    systems = sorted({p["system"] for p in chosen})
    with style():
        fig, axes = plt.subplots(1, max(1, len(systems)), figsize=(WIDTH_DOUBLE, 2.6), squeeze=False, sharey=True)
        for ax, system in zip(axes[0], systems, strict=False):
            mine = [p for p in chosen if p["system"] == system and p["evidence_recall"] is not None]
            ax.scatter([p["union_ratio"] for p in mine], [p["evidence_recall"] for p in mine], s=8, alpha=0.6,
                       color=color(system))
            s = stats.get(system)
            rho = "–" if not s or s["rho"] is None else f"ρ = {s['rho']:.2f} [{s['low']:.2f}, {s['high']:.2f}]"
            ax.set_title(f"{system}\n{rho}", fontsize=8)
            ax.set_xlabel("union ratio (write time)")
            ax.set_xlim(-0.05, 1.05)
        axes[0][0].set_ylabel("evidence recall (QA run, share)")
        axes[0][0].set_ylim(-0.05, 1.05)
        panel_letters(axes[0], y=1.12)
    caption = (f"The bridge: per question, the union ratio of the salience-pruned store at B = {budget:g} against "
               "the same system's evidence recall in the offline QA run, with Spearman ρ and a bootstrap 95% "
               "interval. It does not show answer quality (J needs an LLM judge): the outcome is evidence recall.")
    return fig, caption


def locomo(systems: Mapping[str, Sequence[AnswerRow]],
           by_protocol: Mapping[str, Mapping[str, Sequence[JudgmentRow]]]):
    """F1 by category, overall F1 beside the published rows, recall@k, and J when judged (notebooks 01, 02,
    07). `by_protocol`: protocol → system → judgment rows (the graded judge is drawn when present)."""
    from memeval.baselines import f1_baselines
    from memeval.reports.run_report import recall_curve_means
    from memeval.scoring.aggregate import by_category, overall_mean

    answers = [r for rows in systems.values() for r in rows]
    protocol = "graded" if "graded" in by_protocol else next(iter(sorted(by_protocol)), None)
    judgments = by_protocol.get(protocol, {})
    published = [b for b in f1_baselines("locomo") if b.overall is not None]
    with style():
        panels = 4 if judgments else 3
        fig, axes = plt.subplots(1, panels, figsize=(WIDTH_DOUBLE * panels / 2.4, 3.0))
        ax, ox, bx = axes[0], axes[1], axes[2]
        cats = [1, 2, 3, 4, 5]
        width = 0.8 / max(1, len(systems))
        for i, (name, rows) in enumerate(systems.items()):
            stats = by_category([r for r in rows if r.f1 is not None])
            ax.bar(np.arange(5) + i * width, [100 * stats[c].mean if c in stats else 0 for c in cats], width,
                   label=name, color=color(name))
            curve = recall_curve_means(rows)
            if curve:
                bx.plot(range(1, len(curve) + 1), [100 * v for v in curve], label=name, color=color(name))
        ax.set_xticks(np.arange(5) + width * (len(systems) - 1) / 2,
                      ["multi-hop", "temporal", "open", "single", "advers."], rotation=30, ha="right")
        ax.set_ylabel("F1 ×100 (official scorer)")
        ax.set_title("F1 by category", fontsize=9)
        # beside the LoCoMo paper's overall, which averages all five categories: ours over 1–5 too
        overall = [(name, 100 * overall_mean([r for r in rows if r.f1 is not None]))
                   for name, rows in systems.items()]
        labels = [name for name, _ in overall] + [f"{b.system} (published)" for b in published]
        ox.barh(labels, [v for _, v in overall] + [b.overall for b in published],
                color=[color(name) for name, _ in overall] + [GREY] * len(published))
        ox.invert_yaxis()
        ox.tick_params(axis="y", labelsize=6)
        ox.set_xlabel("overall F1 ×100, categories 1–5")
        ox.set_title("beside the LoCoMo paper", fontsize=9)
        bx.set_xlabel("k (memories retrieved)")
        bx.set_ylabel("evidence recall@k ×100")
        bx.set_title("evidence recall", fontsize=9)
        bx.set_ylim(0, 100)
        if judgments:
            from memeval.baselines import J_BASELINES
            from memeval.scoring.aggregate import pool_judgments

            cx = axes[3]
            names = list(judgments)
            means = [pool_judgments([j for j in judgments[n] if j.category in QA_CATEGORIES]).mean for n in names]
            cx.barh(names, means, color=[color(n) for n in names])
            for b in J_BASELINES:
                if b.overall is not None:
                    cx.axvline(b.overall, color="grey", lw=0.6, ls=":")
                    cx.text(b.overall, len(names) - 0.5, b.system, rotation=90, fontsize=5, va="top")
            cx.set_xlabel(f"J ×100 ({protocol} judge), categories 1–4\n(dotted: Mem0-paper J)")
            cx.set_title("judge", fontsize=9)
            cx.set_xlim(0, 100)
        panel_letters(axes)
        fig.tight_layout()
        legend_below(fig, [ax])
    reader = answers[0].answerer if answers else ""
    conversations = len({r.conversation_id for r in answers})
    caption = (f"LoCoMo, {conversations} conversations, {len(answers)} answers: F1 by category (official scorer), "
               "overall F1 over all five categories beside the LoCoMo paper's overall rows, which average the same "
               "five (grey, same scorer, LLM readers), and evidence "
               f"recall@k of the ranked systems. Reader: {reader}. It does not show LLM answer quality when the "
               "reader is extractive (a sentence-overlap baseline, far below the published LLM rows), nor J unless "
               "a judge ran; published J used another judge (gpt-4o-mini, binary), so the J panel compares "
               "protocols as much as systems.")
    return fig, caption


def graph_study(summary: dict):
    """graph80: score and gold-path recall by question type per system (notebooks 06, 07)."""
    df = pd.DataFrame(summary["rows"])
    types = ["fact", "preference", "relation", "multi-hop", "all"]
    systems = sorted(df["system"].unique())
    with style():
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(WIDTH_DOUBLE, 3.0))
        width = 0.8 / len(systems)
        for i, system in enumerate(systems):
            part = df[df["system"] == system].set_index("type").reindex(types)
            scores = pd.to_numeric(part["score_mean"], errors="coerce")  # None: no scored answer, no bar
            ax.bar(np.arange(len(types)) + i * width, scores, width,
                   yerr=pd.to_numeric(part["score_std"], errors="coerce").where(scores.notna()),
                   label=system, color=color(system))
            bx.bar(np.arange(len(types)) + i * width, pd.to_numeric(part["path_recall"], errors="coerce"), width,
                   color=color(system))
        for a, label in ((ax, f"score, share ({summary['score_kind']})"), (bx, "gold-path recall (share)")):
            a.set_xticks(np.arange(len(types)) + width * (len(systems) - 1) / 2, types, rotation=20)
            a.set_ylabel(label, fontsize=7)
            a.set_xlabel("question type")
            a.set_ylim(0, 1.05)
        panel_letters([ax, bx])
        fig.tight_layout()
        legend_below(fig, [ax], ncol=3)
    caption = ("graph80 memory-graph study: score by question type (mean ± std over repeats) and gold-path "
               "recall per system on a synthetic corpus. It does not show judged quality when offline (the score "
               "is then gold-answer containment), and per-type differences rest on 20 questions.")
    return fig, caption


def ratio_ecdf(rows: Sequence[SweepRow], budget: float | None = None):
    """The distribution of per-package ratios to OPT for each writer at one budget, as ECDFs (notebooks 03,
    07): a mean ratio hides whether a writer is a little short everywhere or far short on a few packages."""
    usable = [r for r in rows if r.certified and r.ratio is not None and r.method != "opt" and not r.is_union]
    budgets = sorted({r.budget for r in usable})
    if not budgets:
        raise MissingResults("no certified writer rows in the base sweep: execute notebook 03_memaudit_small")
    budget = budget if budget in budgets else budgets[len(budgets) // 2]
    writers = sorted({r.method for r in usable})
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE * 0.72, 3.0))
        for writer in writers:
            ratios = np.sort([r.ratio for r in usable if r.method == writer and r.budget == budget])
            if ratios.size:
                ax.step(ratios, np.arange(1, ratios.size + 1) / ratios.size, where="post", label=writer,
                        color=color(writer), lw=1.2)
        ax.set_xlabel(f"ratio to OPT at B = {budget:g} (per package)")
        ax.set_ylabel("share of packages ≤ ratio")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(0, 1.02)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    n = len({r.package_id for r in usable})
    caption = (f"MEMAUDIT-Small `base`: the empirical distribution (ECDF) of each writer's ratio to the certified "
               f"OPT over {n} packages at B = {budget:g}. It does not show other budgets (fig_budget_sweep has "
               "the means) or natural text.")
    return fig, caption


def bnb_nodes(rows: Sequence[SweepRow]):
    """Branch-and-bound states per certified OPT against the budget (notebooks 03, 07): the exact oracle's cost."""
    opt = [r for r in rows if r.method == "opt" and r.certificate and r.certificate.get("opt_nodes") is not None]
    if not opt:
        raise MissingResults("no OPT rows with B&B certificates: execute notebook 03_memaudit_small")
    budgets = sorted({r.budget for r in opt})
    nodes = [[max(1, r.certificate["opt_nodes"]) for r in opt if r.budget == b] for b in budgets]
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.2, 2.8))
        ax.boxplot(nodes, positions=range(len(budgets)), widths=0.5, showfliers=True,
                   flierprops={"markersize": 2}, medianprops={"color": color("opt")})
        ax.set_xticks(range(len(budgets)), [f"{b:g}" for b in budgets])
        ax.set_yscale("log")
        ax.set_xlabel("budget B (storage units)")
        ax.set_ylabel("B&B states per OPT solve")
    caption = (f"Branch and bound: states generated per certified OPT, by budget, over {len(nodes[0])} packages "
               "(box: quartiles, whiskers 1.5 IQR). It does not show wall time or the MILP, which certifies the same "
               "optima independently.")
    return fig, caption


def locomo_heatmap(systems: Mapping[str, Sequence[AnswerRow]]):
    """System × category F1 ×100 (notebooks 02, 07)."""
    from memeval.categories import CATEGORY_NAMES
    from memeval.scoring.aggregate import by_category

    names = list(systems)
    cats = list(CATEGORY_NAMES)
    grid = np.full((len(names), len(cats)), np.nan)
    for i, name in enumerate(names):
        stats = by_category([r for r in systems[name] if r.f1 is not None])
        for j, c in enumerate(cats):
            if c in stats:
                grid[i, j] = 100 * stats[c].mean
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.5, 0.45 * len(names) + 1.4))
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=max(1.0, float(np.nanmax(grid))), aspect="auto")
        ax.set_xticks(range(len(cats)), [f"{CATEGORY_NAMES[c]} ({c})" for c in cats], rotation=30, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.grid(False)
        for (i, j), value in np.ndenumerate(grid):
            ax.text(j, i, "–" if value != value else f"{value:.1f}", ha="center", va="center", fontsize=7,
                    color="white" if value != value or value < 0.6 * np.nanmax(grid) else "black")
        fig.colorbar(image, ax=ax, label="F1 ×100 (official scorer)")
    caption = ("LoCoMo F1 ×100 per system and category (official scorer). It does not show how many questions "
               "each cell holds (tab_locomo_f1 has them) or J.")
    return fig, caption


def locomo_pareto(systems: Mapping[str, Sequence[AnswerRow]], model: str | None = None):
    """Overall F1 (1–4) against context tokens per question, with the input cost of that context for an LLM
    reader on a second axis (notebooks 02, 07)."""
    from memeval.llm.profiles import ROLE_DEFAULTS, profile
    from memeval.scoring.aggregate import overall_mean

    model = model or ROLE_DEFAULTS["answer"]
    price = profile(model).input_usd_mtok
    points = []
    for name, rows in systems.items():
        tokens = [r.context_tokens for r in rows if r.context_tokens is not None]
        qa = [r for r in rows if r.category in QA_CATEGORIES and r.f1 is not None]
        if tokens and qa:
            points.append((name, float(np.mean(tokens)), 100 * overall_mean(qa)))
    if not points:
        raise MissingResults("no answered questions with context tokens: execute notebook 02_full_run")
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.5, 3.0))
        for name, x, y in points:
            ax.scatter([max(x, 1.0)], [y], s=30, color=color(name), label=name, zorder=3)
            ax.annotate(name, (max(x, 1.0), y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        best, front = -1.0, []  # fewest tokens first; a point joins the front when it beats every cheaper one
        for _, x, y in sorted(points, key=lambda p: (p[1], -p[2])):
            if y > best:
                front.append((max(x, 1.0), y))
                best = y
        ax.plot(*zip(*front, strict=True), color="black", lw=0.8, ls="--", label="Pareto front")
        ax.set_xscale("log")
        ax.set_xlabel("context tokens per question (mean, 4 characters a token)")
        ax.set_ylabel("overall F1 ×100, categories 1–4")
        cost = ax.secondary_xaxis("top", functions=(lambda t: t * price * 1000 / 1e6,
                                                    lambda usd: usd * 1e6 / (price * 1000)))
        cost.set_xlabel(f"input cost per 1,000 questions, USD ({model}, ${price:g}/MTok)", fontsize=7)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    caption = (f"LoCoMo: overall F1 (categories 1–4) against the context each system hands the reader, with what that "
               f"context would cost an LLM reader ({model} input price, no prompt caching). It does not show the "
               "extractive reader's own cost (none) or output tokens.")
    return fig, caption


def recall_bands(systems: Mapping[str, Sequence[AnswerRow]], n_boot: int = 2000):
    """Evidence recall@k of the ranked systems with conversation-clustered bootstrap 95% bands (notebooks 02,
    07)."""
    curves = {n: [r for r in rows if r.recall_curve] for n, rows in systems.items()}
    curves = {n: rows for n, rows in curves.items() if rows}
    if not curves:
        raise MissingResults("no ranked system in the LoCoMo run: execute notebook 02_full_run")
    rng = np.random.default_rng(0)
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.5, 3.0))
        for name, rows in curves.items():
            matrix = 100 * np.asarray([r.recall_curve for r in rows], dtype=float)
            labels, inverse = np.unique([r.conversation_id for r in rows], return_inverse=True)
            sums = np.zeros((len(labels), matrix.shape[1]))
            np.add.at(sums, inverse, matrix)
            counts = np.bincount(inverse, minlength=len(labels)).astype(float)
            picks = rng.integers(0, len(labels), size=(n_boot, len(labels)))
            boot = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)[:, None]
            low, high = np.quantile(boot, [0.025, 0.975], axis=0)
            k = np.arange(1, matrix.shape[1] + 1)
            ax.plot(k, matrix.mean(axis=0), color=color(name), label=name)
            ax.fill_between(k, low, high, color=color(name), alpha=0.2, lw=0)
        ax.set_xlabel("k (memories retrieved)")
        ax.set_ylabel("evidence recall@k ×100")
        ax.set_ylim(0, 100)
        ax.legend(loc="lower right", frameon=False)
    caption = ("LoCoMo evidence recall@k of the ranked systems (questions with resolvable evidence), with 95% "
               "bands from a bootstrap over whole conversations (10 clusters at most, so the bands are rough). It "
               "does not show whether the reader used the evidence.")
    return fig, caption


def longmemeval_recall(answers: Sequence) -> tuple:
    """Session- and turn-level evidence recall@k of the ranked systems on LongMemEval (notebook 08)."""
    systems = list(dict.fromkeys(a.system for a in answers if a.session_recall))
    if not systems:
        raise MissingResults("no ranked system in the LongMemEval run: execute notebook 08_longmemeval")
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(WIDTH_SINGLE * 2, 3.0), sharey=True)
        for ax, key, level in ((axes[0], "session_recall", "session"), (axes[1], "turn_recall", "turn")):
            for name in systems:
                curves = [getattr(a, key) for a in answers if a.system == name and getattr(a, key)]
                if not curves:
                    continue
                mean = 100 * np.asarray(curves, dtype=float).mean(axis=0)
                ax.plot(np.arange(1, len(mean) + 1), mean, color=color(name), label=f"{name} (n={len(curves)})")
            ax.set_xlabel("k (memories retrieved)")
            ax.set_title(f"{level}-level evidence")
            ax.set_ylim(0, 100)
        axes[0].set_ylabel("evidence recall@k ×100")
        axes[1].legend(loc="lower right", frameon=False)
    caption = ("LongMemEval evidence recall@k of the ranked systems: the share of evidence sessions "
               "(answer_session_ids) and of has_answer turns among the first k memories, averaged over questions "
               "with evidence. It does not show whether a reader used the evidence.")
    return fig, caption


FIGURES: dict[str, Callable[[Path], tuple]] = {
    "fig_budget_sweep": lambda root: budget_sweep(readers.base_sweep_summary(root)),
    "fig_validity": lambda root: validity(readers.stress_summaries(root)),
    "fig_natural_writers": lambda root: natural_writers(readers.natural_summary(root)),
    "fig_natural_stores": lambda root: natural_stores(readers.natural_raw_rows(root)),
    "fig_bridge": lambda root: bridge(_bridge_pairs(root)),
    "fig_locomo": lambda root: locomo(readers.locomo_answers(readers.locomo_run_dir(root)),
                                      readers.locomo_judgments(readers.locomo_run_dir(root))),
    "fig_graph_study": lambda root: graph_study(readers.graph_study_summary(root)),
    "fig_ratio_ecdf": lambda root: ratio_ecdf(readers.base_sweep_rows(root)),
    "fig_bnb_nodes": lambda root: bnb_nodes(readers.base_sweep_rows(root)),
    "fig_locomo_heatmap": lambda root: locomo_heatmap(readers.locomo_answers(readers.locomo_run_dir(root))),
    "fig_locomo_pareto": lambda root: locomo_pareto(readers.locomo_answers(readers.locomo_run_dir(root)),
                                                    readers.answer_model(readers.locomo_run_dir(root))),
    "fig_recall_bands": lambda root: recall_bands(readers.locomo_answers(readers.locomo_run_dir(root))),
}


def _bridge_pairs(root: Path) -> list[dict]:
    from memeval.natural.bridge import bridge_pairs

    return bridge_pairs(readers.natural_raw_rows(root), readers.natural_qa_run(root))
