"""Tables and metrics.json for notebook 05 (LoCoMo-Natural-87), built from build, sweep and analysis outputs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from memeval.records import SweepRow
from memeval.reports.memaudit import ratio_table

# The MEMAUDIT paper's natural packages (LongMemEval support slices, model-adjudicated): Estimated-GVT's
# mean ratio to OPT. A different source and label process from ours: shown beside, never as a baseline row.
PAPER_NATURAL_ESTIMATED_GVT = {30: 0.53, 60: 0.68, 100: 0.83}
PAPER_SOURCE = "MEMAUDIT paper, LongMemEval Natural-87 (model-adjudicated) — a different source"


def reliability_table(manifest: dict) -> pd.DataFrame:
    rows = [{"": "examined", "questions": manifest["examined"]},
            {"": "accepted", "questions": manifest["accepted"]},
            {"": "rejected", "questions": manifest["rejected"]}]
    rows += [{"": f"  rejected: {reason.replace('_', ' ')}", "questions": n}
             for reason, n in manifest["rejected_by_reason"].items()]
    rows += [{"": f"  accepted: category {cat}", "questions": n}
             for cat, n in manifest.get("accepted_by_category", {}).items()]
    rows += [{"": f"  accepted: {kind}", "questions": n} for kind, n in manifest.get("accepted_by_type", {}).items()]
    return pd.DataFrame(rows).set_index("")


def writer_table(summary: dict, methods: Sequence[str]) -> pd.DataFrame:
    return ratio_table(summary, list(methods))


def paper_comparison(summary: dict, source: str = "LoCoMo, rule-adjudicated") -> pd.DataFrame:
    df = pd.DataFrame(summary["rows"]).set_index(["method", "budget"])
    rows = []
    for budget, paper in PAPER_NATURAL_ESTIMATED_GVT.items():
        key = ("estimated_gvt", float(budget))
        ours = df.loc[key] if key in df.index else None
        rows.append({"budget": budget, "paper (LongMemEval)": paper,
                     f"ours ({source})": None if ours is None else round(float(ours["mean_ratio"]), 3),
                     "ours 95% CI": None if ours is None else f"[{ours['ci_low']:.3f}, {ours['ci_high']:.3f}]"})
    return pd.DataFrame(rows).set_index("budget")


def store_table(raw_rows: Sequence[SweepRow]) -> pd.DataFrame:
    """Per exported store, pruning and budget: mean raw F(Y), package ratio (may exceed 1), union ratio."""
    rows = [r for r in raw_rows if r.is_union and r.certified]
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame([{"system": r.system, "pruning": r.pruning, "budget": r.budget,
                        "raw_F": r.value, "package_ratio": r.package_ratio, "union_ratio": r.ratio,
                        "exported": r.exported, "fitting": r.exported_fitting} for r in rows])
    return df.groupby(["system", "pruning", "budget"]).agg(
        packages=("raw_F", "size"), raw_F=("raw_F", "mean"), package_ratio=("package_ratio", "mean"),
        union_ratio=("union_ratio", "mean"), exported=("exported", "mean"),
        fitting_budget=("fitting", "mean")).round(3)


def bottleneck_statements(stores: pd.DataFrame, gap: float = 0.1) -> list[str]:
    """Upper-pruned far above salience: extraction is fine, selection is the bottleneck; both low: extraction."""
    out = []
    if stores.empty:
        return out
    for (system, budget), group in stores.reset_index().groupby(["system", "budget"]):
        by = group.set_index("pruning")["union_ratio"]
        upper, salience = float(by.get("upper", np.nan)), float(by.get("salience", np.nan))
        fitting = group["fitting_budget"].mean() if "fitting_budget" in group else np.nan
        if fitting == fitting and fitting < 1:
            verdict = (f"granularity: on average {fitting:.2f} of its memories fit the budget at all, so "
                       "neither extraction nor selection can be judged here")
        elif upper - salience > gap:
            verdict = "selection is the bottleneck (its own memories could reach more)"
        elif upper < 0.5:
            verdict = "extraction is the bottleneck (even the best subset of its memories covers little)"
        else:
            verdict = "neither dominates (salience pruning is near its own upper bound)"
        out.append(f"{system} @ B={budget:g}: upper {upper:.3f} vs salience {salience:.3f} — {verdict}")
    return out


def sensitivity_table(k1: dict, k2: dict, bytes_: dict) -> pd.DataFrame:
    rows = []
    for (budget, method), value in k1.items():
        rows.append({"method": method, "budget": budget, "k=1 (words)": round(value, 3),
                     "k=2": round(k2.get((budget, method), np.nan), 3),
                     "byte-overhead costs": round(bytes_.get((budget, method), np.nan), 3)})
    return pd.DataFrame(rows).pivot_table(index="method", columns="budget",
                                          values=["k=1 (words)", "k=2", "byte-overhead costs"])


def noise_table(noise: dict) -> pd.DataFrame:
    rows = []
    for run in noise["runs"]:
        for budget, stats in run["by_budget"].items():
            rows.append({"seed": run["seed"], "budget": budget, **stats})
    return pd.DataFrame(rows).groupby("budget").agg(
        mean_abs_ratio_change=("mean_abs_ratio_change", "mean"), kendall_tau_min=("kendall_tau", "min"),
        kendall_tau_mean=("kendall_tau", "mean"), seeds=("seed", "size")).round(3)


BRIDGE_MIN_PAIRS = 10  # fewer questions than this give a rank correlation too loose to read


def bridge_shown(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if r["n"] >= BRIDGE_MIN_PAIRS and r["rho"] is not None]


def bridge_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Spearman rho per store, pruning, budget and QA outcome (bootstrap 95% CI over questions), for the groups
    with at least BRIDGE_MIN_PAIRS pairs and a defined rho; `bridge_note` says what was dropped."""
    shown = bridge_shown(rows)
    if not shown:
        return pd.DataFrame({"note": ["no group has enough pairs for a rank correlation"]}).set_index("note")
    frame = pd.DataFrame([{"system": r["system"], "pruning": r["pruning"], "budget": f"{r['budget']:g}",
                           "outcome": r["outcome"], "rho": round(r["rho"], 3),
                           "95% CI": f"[{r['low']:.3f}, {r['high']:.3f}]", "pairs": r["n"]} for r in shown])
    return frame.set_index(["system", "pruning", "budget", "outcome"])


def bridge_note(rows: Sequence[dict]) -> str:
    shown = bridge_shown(rows)
    few = sum(1 for r in rows if r["n"] < BRIDGE_MIN_PAIRS)
    constant = sum(1 for r in rows if r["n"] >= BRIDGE_MIN_PAIRS and r["rho"] is None)
    return (f"{len(shown)} of {len(rows)} groups shown; dropped {few} with fewer than {BRIDGE_MIN_PAIRS} pairs and "
            f"{constant} where one side is constant (rho undefined). {len(shown)} correlations are reported side "
            "by side with no correction for multiple comparisons: at 95% each, about one in twenty would exclude 0 "
            "by chance alone, so read them as exploratory.")


def writer_mean_ratios(summary: dict) -> dict[str, float | None]:
    """`method@budget` → mean ratio to OPT, from a sweep summary."""
    return {f"{r['method']}@{r['budget']:g}": r["mean_ratio"] for r in summary["rows"]}


def conversation_scope_metrics(sizes: pd.DataFrame, summary: dict) -> dict:
    """The conversation-scale part of notebook 05's metrics.json: package sizes (one row per package, a
    `candidates` column) and the conversation sweep's certification and writer ratios."""
    return {
        "packages": len(sizes), "candidates_max": int(sizes["candidates"].max()),
        "opt_certified": summary["opt_certified"], "opt_rows": summary["opt_rows"],
        "opt_disagreements": summary["opt_disagreements"],
        "writer_mean_ratio": writer_mean_ratios(summary),
    }


MANIFEST_METRICS = ("examined", "accepted", "rejected", "rejected_by_reason", "accepted_by_category",
                    "accepted_by_type", "rule_version")


def natural_metrics(manifest: dict, summary: dict, pairs: Sequence, bridge: Sequence, noise: dict,
                    audit: dict | None = None, conversation_scope: dict | None = None) -> dict:
    """Notebook 05's metrics.json: the build's manifest counts, the sweep's certification and writer ratios, the
    bridge's size, label-noise stability per budget, the label audit's kappa (None without a second label
    source) and the conversation-scale metrics (`conversation_scope_metrics`, None when not built)."""
    return {
        "source": manifest["source"],
        "manifest": {k: manifest[k] for k in MANIFEST_METRICS if k in manifest},
        "opt_certified": summary["opt_certified"], "opt_rows": summary["opt_rows"],
        "union_certified": summary["union_certified"], "union_rows": summary["union_rows"],
        "writer_mean_ratio": writer_mean_ratios(summary),
        "bridge_rows": len(bridge), "bridge_pairs": len(pairs),
        "noise": {str(b): s for b, s in noise_table(noise).to_dict(orient="index").items()},
        "audit": None if audit is None else {"kappa": audit["kappa"], "cells": audit["cells"]},
        "conversation_scope": conversation_scope,
    }
