"""MEMAUDIT and graph-study figures: writers against the certified OPT on synthetic, stress and natural packages,
exported stores as union packages, the exact oracle's cost, and the memory-graph study. Each takes results
already read and returns (figure, caption) through `marks.finish`; every data mark goes through `marks.Panel`."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memeval.publication.readers import MissingResults
from memeval.publication.style import (
    WIDTH_DOUBLE,
    WIDTH_SINGLE,
    color,
    legend_below,
    marker,
    panel_letters,
    style,
)
from memeval.records import SweepRow


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
