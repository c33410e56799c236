"""MEMAUDIT and graph-study figures: writers against the certified OPT on synthetic, stress and natural packages,
exported stores as union packages, the exact oracle's cost, and the memory-graph study. Each takes results
already read and returns (figure, caption) through `marks.finish`; every data mark goes through `marks.Panel`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memeval.publication.looks import GREY
from memeval.publication.marks import Panel, finish
from memeval.publication.readers import MissingResults
from memeval.publication.style import (
    WIDTH_DOUBLE,
    WIDTH_SINGLE,
    legend_below,
    panel_letters,
    style,
)
from memeval.records import SweepRow
from memeval.scoring.aggregate import Interval, bootstrap_mean, cluster_bootstrap

OVER_PACKAGES = "95% percentile bootstrap over packages"
BASE_PROTOCOL = "MEMAUDIT-Small base, the paper's generator parameters and budgets: ratio to the certified OPT"
STRESS_PROTOCOL = "MEMAUDIT stress generators, the paper's parameters: ratio to the certified OPT"
NATURAL_PROTOCOL = "LoCoMo-Natural-87, rule-adjudicated labels: ratio to the certified OPT"
PAPER_NATURAL_PROTOCOL = "MEMAUDIT paper: LongMemEval natural packages, model-adjudicated labels"
PRUNING_LABELS = {"recency": "recency: latest memories first",
                  "salience": "salience: declared TF-IDF salience first",
                  "upper": "upper: exact OPT over the store's own memories (a bound, not a writer)"}


def _dodge(i: int, count: int, spread: float = 0.05) -> float:
    """A factor on x for series i of `count` on a log₂ axis: equal values sit side by side, not on top of each
    other, and every series keeps the same side at every budget."""
    return float(2 ** ((i - (count - 1) / 2) * spread))


def _column(part: pd.DataFrame, key: str) -> list[float | None]:
    return [None if v is None or v != v else float(v) for v in part[key]] if key in part else [None] * len(part)


def budget_sweep(summary: dict):
    """Writers' mean ratio to OPT against the budget with bootstrap intervals, and the paper's published points
    at the budgets this sweep ran (notebooks 03, 07)."""
    from memeval.reports.memaudit import PUBLISHED_BASE

    df = pd.DataFrame(summary["rows"])
    df["budget"] = df["budget"].astype(float)
    budgets = sorted(df["budget"].unique())
    writers = sorted(m for m in df["method"].unique() if m != "opt")
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE * 0.8, 3.3))
        panel = Panel(ax, protocol=BASE_PROTOCOL)
        ax.axhline(1.0, color=GREY, lw=0.8, zorder=0)
        for i, writer in enumerate(writers):
            part = df[df["method"] == writer].sort_values("budget")
            panel.line(writer, part["budget"], _column(part, "mean_ratio"), _column(part, "ci_low"),
                       _column(part, "ci_high"), offset=_dodge(i, len(writers)), band=False,
                       interval=f"{OVER_PACKAGES} ({summary['packages']} packages)")
        shown = []
        for method, by_budget in PUBLISHED_BASE.items():
            at = [b for b in sorted(by_budget) if float(b) in budgets]
            if at:
                shown.append(method)
                panel.points(f"paper:{method}", at, [by_budget[b] for b in at], uncertainty="published",
                             label=f"paper (published, 500 seeds): {method}", mark="x", colour="#000000", size=40)
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [f"{b:g}" for b in budgets])
        ax.minorticks_off()
        ax.set_xlim(min(budgets) / 1.35, max(budgets) * 1.35)
        ax.set_xlabel("budget B (storage units)")
        ax.set_ylabel("F(X) / OPT")
        ax.set_ylim(-0.03, 1.05)
        legend_below(fig, [ax], ncol=4)
    paper = (f"Black crosses: the paper's published {', '.join(shown)} ratios (its own 500 seeds of the same "
             "generator), drawn only at budgets this sweep ran; " if shown else
             "None of the paper's published budgets is in this sweep, so no published point is drawn; ")
    return finish(fig, (
        f"Exact budget sweep on MEMAUDIT-Small `base` ({summary['packages']} seeded packages): mean ratio of each "
        f"writer to the certified OPT ({summary['opt_certified']}/{summary['opt_rows']} OPT rows certified), with "
        "95% bootstrap intervals over packages. Writers are shifted slightly left and right of each budget so "
        f"equal means stay visible; the grey line is OPT itself. {paper}the paper's density-only range is in "
        "tab_memaudit_base. It does not show natural text or answer quality: synthetic packages only."))


def validity(summaries: dict[str, dict]):
    """Stress suite: writer × distribution heatmap with each cell's interval, and the frontier gap below it
    (notebooks 04, 07)."""
    from memeval.reports.memaudit import PUBLISHED_STRESS_NO_TOMBSTONE_B6

    df = pd.DataFrame([{"distribution": name, **r} for name, summary in summaries.items()
                       for r in summary["rows"]])
    budget = float(df["budget"].max())
    at = df[(df["budget"].astype(float) == budget) & (df["method"] != "opt")]
    distributions = sorted(at["distribution"].unique())
    writers = sorted(at["method"].unique())

    def grid(key: str) -> pd.DataFrame:
        return at.pivot_table(index="method", columns="distribution", values=key, aggfunc="first",
                              dropna=False).reindex(index=writers, columns=distributions)

    mean, low, high = grid("mean_ratio"), grid("ci_low"), grid("ci_high")
    counts = grid("n")
    packages = sorted({s["packages"] for s in summaries.values()})
    with style():
        fig = plt.figure(figsize=(WIDTH_DOUBLE, 5.6))
        spec = fig.add_gridspec(2, 2, height_ratios=[3.2, 1.2], width_ratios=[40, 1], hspace=0.08, wspace=0.03)
        ax, bx, cax = fig.add_subplot(spec[0, 0]), fig.add_subplot(spec[1, 0]), fig.add_subplot(spec[0, 1])
        cells = Panel(ax, protocol=STRESS_PROTOCOL)
        for writer in writers:
            cells.record_cells(writer, distributions, mean.loc[writer].tolist(), low.loc[writer].tolist(),
                               high.loc[writer].tolist(), n=[None if c != c else int(c) for c in counts.loc[writer]],
                               interval=OVER_PACKAGES)
        values = mean.to_numpy(dtype=float)
        cmap = plt.get_cmap("viridis").with_extremes(bad="#FFFFFF")
        image = ax.imshow(np.ma.masked_invalid(values), vmin=0, vmax=1, cmap=cmap, aspect="auto")
        ax.set_yticks(range(len(writers)), writers)
        ax.set_xticks(range(len(distributions)), [])
        ax.grid(False)
        for (i, j), value in np.ndenumerate(values):
            if value != value:
                ax.text(j, i, "n/r", ha="center", va="center", fontsize=6, color="dimgrey")
                continue
            lo, hi = low.iat[i, j], high.iat[i, j]
            spread = "" if lo != lo or f"{lo:.2f}" == f"{hi:.2f}" else f"\n[{lo:.2f}, {hi:.2f}]"
            ax.text(j, i, f"{value:.2f}{spread}", ha="center", va="center", fontsize=5.5 if spread else 6.5,
                    color="white" if value < 0.6 else "black", linespacing=0.95)
        fig.colorbar(image, cax=cax, label="F / OPT")
        ax.set_title(f"mean ratio to OPT at B = {budget:g}; its 95% interval below, unless it rounds to one value",
                     fontsize=9)
        gap = Panel(bx, protocol=STRESS_PROTOCOL)
        if "no_tombstone_opt" in writers:
            nt = [(mean.at["no_tombstone_opt", d], low.at["no_tombstone_opt", d], high.at["no_tombstone_opt", d])
                  for d in distributions]
            gap.bars("no_tombstone_opt", range(len(distributions)), [None if m != m else 1 - m for m, _, _ in nt],
                     [None if h != h else 1 - h for _, _, h in nt], [None if lo != lo else 1 - lo for _, lo, _ in nt],
                     width=0.6, interval=OVER_PACKAGES, label="frontier gap (ours)",
                     n=[None if c != c else int(c) for c in counts.loc["no_tombstone_opt"]])
            published = [(j, 1 - PUBLISHED_STRESS_NO_TOMBSTONE_B6[d]) for j, d in enumerate(distributions)
                         if d in PUBLISHED_STRESS_NO_TOMBSTONE_B6]
            if budget == 6 and published:
                gap.points("paper:no_tombstone_opt", [j for j, _ in published], [g for _, g in published],
                           uncertainty="published", label="paper (published)", mark="x", colour="#000000",
                           size=40)
        bx.set_xticks(range(len(distributions)), distributions, rotation=30, ha="right")
        bx.set_xlim(-0.5, len(distributions) - 0.5)
        bx.set_ylim(0, 1)
        bx.set_ylabel("frontier gap")
        bx.set_xlabel("stress distribution")
        if gap.series:
            bx.legend(loc="upper left", frameon=False, fontsize=7)
        panel_letters([ax, bx])
    return finish(fig, (
        f"Stress suite at B = {budget:g} ({'/'.join(map(str, packages))} packages per distribution): (a) each "
        "writer's mean ratio to the certified OPT per distribution, with its 95% bootstrap interval over packages "
        "below it unless the interval rounds to a single value ('n/r': not run); (b) the frontier gap, 1 − no-tombstone OPT / OPT — the share "
        "of OPT that needs tombstones or compound updates — with its interval; a black tick at the base marks a "
        "measured gap of 0, and crosses the paper's published gaps (same generators and budget). It does not show "
        "how any real system behaves: the distributions are synthetic and built to stress invalidation."))


def natural_writers(summary: dict):
    """Natural packages: writer ratios by budget (a), and the paper's Estimated-GVT on its LongMemEval packages in
    a panel of its own (b) (notebooks 05, 07)."""
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    df = pd.DataFrame([r for r in summary["rows"] if "pruning" not in r and r["method"] != "opt"])
    df["budget"] = df["budget"].astype(float)
    budgets = sorted(df["budget"].unique())
    writers = sorted(df["method"].unique())
    with style():
        fig, (ax, px) = plt.subplots(1, 2, figsize=(WIDTH_DOUBLE, 3.3), gridspec_kw={"width_ratios": [4.2, 1]})
        panel = Panel(ax, protocol=NATURAL_PROTOCOL)
        width = 0.84 / len(writers)
        for i, writer in enumerate(writers):
            part = df[df["method"] == writer].set_index("budget").reindex(budgets)
            panel.bars(writer, np.arange(len(budgets)) + (i - (len(writers) - 1) / 2) * width,
                       _column(part, "mean_ratio"), _column(part, "ci_low"), _column(part, "ci_high"),
                       width=width, interval=OVER_PACKAGES,
                       n=[None if c != c else int(c) for c in part["n"]] if "n" in part else None)
        ax.set_xticks(range(len(budgets)), [f"B = {b:g} words" for b in budgets])
        ax.set_ylabel("F / OPT")
        ax.set_ylim(0, 1.08)
        ax.set_title("(a) LoCoMo-Natural, rule labels (ours)", fontsize=9)
        paper = Panel(px, protocol=PAPER_NATURAL_PROTOCOL)
        paper.points("paper:estimated_gvt", list(PAPER_NATURAL_ESTIMATED_GVT),
                     list(PAPER_NATURAL_ESTIMATED_GVT.values()), uncertainty="published", mark="x",
                     colour="#000000", size=40, label="paper (published): estimated_gvt, LongMemEval")
        px.set_xticks(list(PAPER_NATURAL_ESTIMATED_GVT), [f"{b:g}" for b in PAPER_NATURAL_ESTIMATED_GVT])
        px.set_xlim(10, 120)
        px.set_ylim(0, 1.08)
        px.set_xlabel("B (words)")
        px.set_title("(b) paper: LongMemEval,\nmodel labels", fontsize=8)
        legend_below(fig, [ax, px], ncol=5)
    return finish(fig, (
        "(a) LoCoMo-Natural-87 (rule-adjudicated): each writer's mean ratio to the certified OPT by budget, with "
        "95% bootstrap intervals over packages; a black tick at the base marks a measured 0, 'n/r' a writer not "
        "run. (b) The paper's Estimated-GVT on its own LongMemEval packages with model-adjudicated labels: another "
        "source and label process, so it has its own panel and is not a reference line for (a); tab_natural_writers "
        "sets the numbers side by side. It does not show a reproduction of the paper."))


def store_intervals(rows: Sequence[SweepRow]) -> dict[tuple[str, str, float], Interval]:
    """(system, pruning, budget) → mean union ratio over packages with its bootstrap interval: one computation
    for fig_natural_stores and tab_natural_stores, so both print the same numbers."""
    groups: dict[tuple[str, str, float], list[float]] = defaultdict(list)
    for r in rows:
        if r.is_union and r.certified and r.ratio is not None:
            groups[(r.system, r.pruning, float(r.budget))].append(float(r.ratio))
    return {key: bootstrap_mean(values) for key, values in sorted(groups.items())}


def natural_stores(rows: Sequence[SweepRow]):
    """Exported stores as union packages: union ratio by pruning and budget, with intervals (notebooks 05, 07)."""
    intervals = store_intervals(rows)
    if not intervals:
        raise MissingResults("no union rows in the natural sweep: execute notebook 05_memaudit_natural87")
    systems = sorted({s for s, _, _ in intervals})
    prunings = [p for p in PRUNING_LABELS if any(q == p for _, q, _ in intervals)]
    prunings += sorted({q for _, q, _ in intervals} - set(prunings))
    budgets = sorted({b for _, _, b in intervals})
    with style():
        fig, axes = plt.subplots(1, len(systems), figsize=(WIDTH_DOUBLE, 2.9), sharey=True, squeeze=False)
        for ax, system in zip(axes[0], systems, strict=True):
            panel = Panel(ax, protocol="LoCoMo-Natural union packages, rule labels: F / OPT(package ∪ store)")
            for i, pruning in enumerate(prunings):
                cells = [intervals.get((system, pruning, b)) for b in budgets]
                panel.line(pruning, budgets, [None if c is None else c.estimate for c in cells],
                           [None if c is None else c.low for c in cells], [None if c is None else c.high for c in cells],
                           label=PRUNING_LABELS.get(pruning, pruning), offset=_dodge(i, len(prunings), 0.06),
                           band=False, interval=f"{OVER_PACKAGES} ({max((c.n for c in cells if c), default=0)})")
            ax.set_title(system, fontsize=9)
            ax.set_xscale("log", base=2)
            ax.set_xticks(budgets, [f"{b:g}" for b in budgets])
            ax.minorticks_off()
            ax.set_xlim(min(budgets) / 1.3, max(budgets) * 1.3)
            ax.set_xlabel("budget B (words)")
        axes[0][0].set_ylabel("union ratio F / OPT(package ∪ store)", fontsize=8)
        axes[0][0].set_ylim(-0.03, 1.05)
        panel_letters(axes[0])
        legend_below(fig, axes[0], ncol=1)
    n = max(c.n for c in intervals.values())
    nothing_fits = _nothing_fits(rows)
    return finish(fig, (
        f"Exported stores as union packages ({n} natural packages): each system's memories over the support slice, "
        "pruned to the budget by recency (latest first) or by declared salience (TF-IDF, question-free, as at "
        "write time); 'upper' is no pruning rule but the exact OPT over the store's own memories alone — the best any "
        "pruning of that store could do — drawn as a bound. Union ratio = F / OPT over the package's candidates and "
        "the store's memories together, rule labels; 95% bootstrap intervals over packages; stores are shifted "
        f"slightly left and right of each budget so equal values stay visible.{nothing_fits} It does not show "
        "retrieval or answer quality."))


def _nothing_fits(rows: Sequence[SweepRow]) -> str:
    """Where a store's memories are mostly longer than the budget, every pruning scores 0 for that reason alone."""
    fitting: dict[tuple[str, float], list[int]] = defaultdict(list)
    for r in rows:
        if r.is_union and r.pruning == "upper" and r.exported_fitting is not None:
            fitting[(r.system, float(r.budget))].append(r.exported_fitting)
    short = [f"{system} at B = {budget:g}" for (system, budget), counts in sorted(fitting.items())
             if np.mean(counts) < 1]
    if not short:
        return ""
    chunks = " (rag_turns exports 128-token chunks)" if any(s.startswith("rag_turns ") for s in short) else ""
    return (f" Fewer than one memory per package fits the budget on its own for {', '.join(short)}{chunks}, so "
            "every pruning holds almost nothing there.")


def _score_kind(summary: dict) -> str:
    return str(summary.get("score_kind", "score")).replace(" (", ", ").replace(")", "")


def graph_questions(summary: dict) -> list[dict]:
    """The study's per-question rows (rows.jsonl) beside the summary, from the run directory the summary names:
    the intervals are over questions, which the summary alone no longer holds."""
    from memeval.jsonl import read_rows

    out = (summary.get("config") or {}).get("out")
    path = Path(out) / "rows.jsonl" if out else None
    if path is None or not path.is_file():
        raise MissingResults(f"{path or 'rows.jsonl'} is missing: execute notebook 06_memory_graph_study first")
    return read_rows(path)


def graph_intervals(questions: Sequence[dict]) -> dict[tuple[str, str], dict[str, Interval]]:
    """(system, type or "all") → score, gold-path and entity recall, each a mean with a 95% bootstrap interval
    over questions (a question's repeats resampled together): one computation for fig_graph_study and
    tab_graph_study."""
    scores: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    diagnostics: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for r in questions:
        for kind in (r["type"], "all"):
            key = (r["system"], kind)
            if r.get("score") is not None:
                scores[key].append((float(r["score"]), str(r["question_id"])))
            for name in ("path_recall", "entity_recall"):  # retrieval: the same in every repeat, so repeat 0
                if r.get("repeat", 0) == 0 and r.get(name) is not None:
                    diagnostics[(*key, name)].append(float(r[name]))
    out: dict[tuple[str, str], dict[str, Interval]] = defaultdict(dict)
    for key, pairs in scores.items():
        values, ids = zip(*pairs, strict=True)
        out[key]["score"] = cluster_bootstrap(values, ids)
    for (system, kind, name), values in diagnostics.items():
        out[(system, kind)][name] = bootstrap_mean(values)
    return dict(sorted(out.items()))


GRAPH_TYPES = ["fact", "preference", "relation", "multi-hop", "all"]


def graph_study(summary: dict, questions: Sequence[dict] | None = None):
    """graph80: score and gold-path recall by question type per system, with bootstrap intervals over questions
    (notebooks 06, 07). `questions`: the run's rows.jsonl; read from the run the summary names when not given."""
    questions = graph_questions(summary) if questions is None else questions
    intervals = graph_intervals(questions)
    systems = sorted({s for s, _ in intervals})
    if not systems:
        raise MissingResults("no question rows in the graph80 run: execute notebook 06_memory_graph_study")
    kind = _score_kind(summary)
    with style():
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(WIDTH_DOUBLE, 3.1))
        score = Panel(ax, protocol=f"graph80, {kind}")
        recall = Panel(bx, protocol="graph80: gold-path triples whose paragraph reached the reader")
        width = 0.84 / len(systems)
        x = np.arange(len(GRAPH_TYPES))
        for i, system in enumerate(systems):
            at = x + (i - (len(systems) - 1) / 2) * width
            for panel, key in ((score, "score"), (recall, "path_recall")):
                cells = [intervals.get((system, t), {}).get(key) for t in GRAPH_TYPES]
                panel.bars(system, at, [None if c is None else c.estimate for c in cells],
                           [None if c is None else c.low for c in cells], [None if c is None else c.high for c in cells],
                           width=width, n=[None if c is None else c.n for c in cells],
                           interval="95% percentile bootstrap over questions" + (
                               ", a question's repeats together" if key == "score" else ""))
        for a in (ax, bx):
            a.set_xticks(x, GRAPH_TYPES, rotation=20)
            a.set_xlabel("question type")
            a.set_ylim(0, 1.05)
        ax.set_ylabel("score, mean over questions")
        bx.set_ylabel("gold-path recall, mean over questions")
        ax.set_title(f"score: {kind}", fontsize=9)
        bx.set_title("gold-path triples that reached the reader", fontsize=9)
        panel_letters([ax, bx])
        fig.tight_layout()
        legend_below(fig, [ax], ncol=3)
    repeats = len({r.get("repeat", 0) for r in questions})
    per_type = min((c["score"].n // max(1, repeats) for c in intervals.values() if "score" in c), default=0)
    return finish(fig, (
        f"graph80 memory-graph study on a synthetic corpus: (a) score ({kind}) and (b) gold-path recall — the share "
        "of a question's gold-path triples whose stating paragraph reached the reader — by question type and "
        f"system, with 95% bootstrap intervals over questions ({repeats} {'repeat' if repeats == 1 else 'repeats'} of "
        "each question resampled together). A black tick at the base marks a measured 0; 'n/r' a type with no scored answer. It does not "
        f"show judged quality when offline (the score is then gold-answer containment), and each type rests on "
        f"about {per_type} questions."))


def ratio_ecdf(rows: Sequence[SweepRow], budget: float | None = None):
    """The distribution of per-package ratios to OPT for each writer at one budget, as ECDFs (notebooks 03,
    07): a mean ratio hides whether a writer is a little short everywhere or far short on a few packages."""
    usable = [r for r in rows if r.certified and r.ratio is not None and r.method != "opt" and not r.is_union]
    budgets = sorted({r.budget for r in usable})
    if not budgets:
        raise MissingResults("no certified writer rows in the base sweep: execute notebook 03_memaudit_small")
    budget = budget if budget in budgets else budgets[len(budgets) // 2]
    writers = sorted({r.method for r in usable})
    by_writer = {w: {r.package_id: r.ratio for r in usable if r.method == w and r.budget == budget} for w in writers}
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE * 0.8, 3.2))
        panel = Panel(ax, protocol=BASE_PROTOCOL)
        for i, writer in enumerate(writers):
            ratios = np.sort(list(by_writer[writer].values()))
            if not ratios.size:
                continue
            twins = [w for w in writers[:i] if by_writer[w] == by_writer[writer]]
            label = f"{writer} (= {twins[0]} on every package)" if twins else writer
            panel.steps(writer, np.concatenate([[ratios[0]], ratios]),
                        np.concatenate([[0.0], np.arange(1, ratios.size + 1) / ratios.size]), label=label)
            every = max(1, (ratios.size + 1) // 8)  # the layer's marker spacing; each writer starts elsewhere
            ax.get_lines()[-1].set_markevery((i * every // len(writers), every))
        ax.set_xlabel(f"ratio to OPT at B = {budget:g}, per package")
        ax.set_ylabel("share of packages ≤ ratio")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(0, 1.02)
        legend_below(fig, [ax], ncol=3)
    n = len({r.package_id for r in usable})
    return finish(fig, (
        f"MEMAUDIT-Small `base`: the empirical distribution (ECDF) of each writer's ratio to the certified OPT over "
        f"{n} packages at B = {budget:g}. Writers whose ratios are equal on every package are named so in the legend "
        "(their curves coincide; line style and marker tell them apart). It does not show other budgets "
        "(fig_budget_sweep has the means) or natural text."))


def bnb_nodes(rows: Sequence[SweepRow]):
    """Branch-and-bound states per certified OPT against the budget (notebooks 03, 07): the exact oracle's cost."""
    opt = [r for r in rows if r.method == "opt" and r.certificate and r.certificate.get("opt_nodes") is not None]
    if not opt:
        raise MissingResults("no OPT rows with B&B certificates: execute notebook 03_memaudit_small")
    budgets = sorted({r.budget for r in opt})
    nodes = [[max(1, r.certificate["opt_nodes"]) for r in opt if r.budget == b] for b in budgets]
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_SINGLE * 1.2, 2.8))
        panel = Panel(ax, protocol="MEMAUDIT-Small base: branch-and-bound states per certified OPT")
        ax.boxplot(nodes, positions=range(len(budgets)), widths=0.5, showfliers=True,
                   flierprops={"markersize": 2}, medianprops={"color": "#000000"})
        panel.record_box("opt", budgets, [float(np.median(n)) for n in nodes], label="B&B states per OPT solve")
        ax.set_xticks(range(len(budgets)), [f"{b:g}" for b in budgets])
        ax.set_yscale("log")
        ax.set_xlabel("budget B (storage units)")
        ax.set_ylabel("B&B states per OPT solve")
    return finish(fig, (
        f"Branch and bound: states generated per certified OPT, by budget, over {len(nodes[0])} packages (box: "
        "quartiles and median, whiskers 1.5 IQR, points beyond them; a solve with no branching counts as 1). It "
        "does not show wall time or the MILP, which certifies the same optima independently."))
