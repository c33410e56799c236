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


def reliability_table(manifest: dict, categories: Sequence | None = None) -> pd.DataFrame:
    """How many questions the build examined, accepted and rejected, each rejection reason and what was accepted
    (by category, named with its id as `categories` name it — default: the CategorySets of the benchmarks that offer
    natural packages — and by type)."""
    sets = list(categories) if categories is not None else _natural_categories()
    rows = [("examined", manifest["examined"]), ("accepted", manifest["accepted"]), ("rejected", manifest["rejected"])]
    rows += [(f"rejected: {reason.replace('_', ' ')}", n) for reason, n in manifest["rejected_by_reason"].items()]
    rows += [(f"accepted: {_category(cat, sets)}", n) for cat, n in manifest.get("accepted_by_category", {}).items()]
    rows += [(f"accepted: {kind}", n) for kind, n in manifest.get("accepted_by_type", {}).items()]
    return pd.DataFrame(rows, columns=["questions", "count"]).set_index("questions")


def _natural_categories() -> list:
    """The CategorySets of the benchmarks that declare a natural source (a build manifest's categories are its)."""
    from memeval.benchmarks import declarations, load

    return [load(b.categories) for b in declarations() if b.natural_source and b.categories]


def _category(value: object, sets: Sequence) -> str:
    try:
        found = next((c for c in sets if int(value) in c), None)
    except (TypeError, ValueError):
        return f"category {value}"
    return found.label(int(value)) if found is not None else f"category {value}"


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


# store_table's columns, named for a reader (the sweep rows' field names are raw_F, exported_fitting, ...)
RAW_F, PACKAGE_RATIO, UNION_RATIO = "F (mean)", "F / OPT(package)", "F / OPT(package ∪ store)"
EXPORTED, FITTING = "memories in store (mean)", "memories within B (mean)"


def store_table(raw_rows: Sequence[SweepRow]) -> pd.DataFrame:
    """Per exported store, pruning and budget: mean F of the pruned store, its ratio to the package-only OPT (may
    exceed 1) and to the OPT over package ∪ store, and the store's size and how many of its memories fit the
    budget one at a time."""
    rows = [r for r in raw_rows if r.is_union and r.certified]
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame([{"system": r.system, "pruning": r.pruning, "budget": r.budget,
                        "raw_F": r.value, "package_ratio": r.package_ratio, "union_ratio": r.ratio,
                        "exported": r.exported, "fitting": r.exported_fitting} for r in rows])
    table = df.groupby(["system", "pruning", "budget"]).agg(
        packages=("raw_F", "size"), raw_F=("raw_F", "mean"), package_ratio=("package_ratio", "mean"),
        union_ratio=("union_ratio", "mean"), exported=("exported", "mean"), fitting=("fitting", "mean"))
    return table.rename(columns={"raw_F": RAW_F, "package_ratio": PACKAGE_RATIO, "union_ratio": UNION_RATIO,
                                 "exported": EXPORTED, "fitting": FITTING})


def store_display(stores: pd.DataFrame) -> pd.DataFrame:
    """`store_table` as a report prints it: F and ratios to three decimals, mean counts of memories to two (so
    0.03 of a memory is not printed as 0)."""
    from memeval.reports.tables import readable_frame

    return readable_frame(stores, digits={RAW_F: 3, PACKAGE_RATIO: 3, UNION_RATIO: 3, EXPORTED: 2, FITTING: 2})


def bottleneck_statements(stores: pd.DataFrame, gap: float = 0.1) -> list[str]:
    """Upper-pruned far above salience: extraction is fine, selection is the bottleneck; both low: extraction."""
    out = []
    if stores.empty:
        return out
    for (system, budget), group in stores.reset_index().groupby(["system", "budget"]):
        by = group.set_index("pruning")[UNION_RATIO]
        upper, salience = float(by.get("upper", np.nan)), float(by.get("salience", np.nan))
        fitting = group[FITTING].mean()  # memories of the store that fit the budget on their own, per package
        if fitting == fitting and fitting < 1:
            verdict = (f"granularity: on average {fitting:.2f} of its memories fit the budget at all (fewer than "
                       "one), so neither extraction nor selection can be judged here")
        elif upper - salience > gap:
            verdict = "selection is the bottleneck (its own memories could reach more)"
        elif upper < 0.5:
            verdict = "extraction is the bottleneck (even the best subset of its memories covers little)"
        else:
            verdict = "neither dominates (salience pruning is near its own upper bound)"
        out.append(f"{system} @ B={budget:g}: upper {upper:.3f} vs salience {salience:.3f} — {verdict}")
    return out


def sensitivity_table(k1: dict, k2: dict, bytes_: dict) -> pd.DataFrame:
    """Each writer's mean ratio to OPT per budget under the three cost and coverage variants side by side, one row
    per writer and budget, so a change of variant reads along a row."""
    keys = sorted(k1, key=lambda key: (key[1], float(key[0])))  # (budget, method) by writer, then budget
    return pd.DataFrame(
        {"k = 1 (words)": [k1[key] for key in keys], "k = 2": [k2.get(key, np.nan) for key in keys],
         "byte-overhead costs": [bytes_.get(key, np.nan) for key in keys]},
        index=pd.MultiIndex.from_tuples([(method, budget) for budget, method in keys], names=["writer", "budget"]))


def noise_table(noise: dict) -> pd.DataFrame:
    rows = []
    for run in noise["runs"]:
        for budget, stats in run["by_budget"].items():
            rows.append({"seed": run["seed"], "budget": budget, **stats})
    return pd.DataFrame(rows).groupby("budget").agg(
        mean_abs_ratio_change=("mean_abs_ratio_change", "mean"), kendall_tau_min=("kendall_tau", "min"),
        kendall_tau_mean=("kendall_tau", "mean"), seeds=("seed", "size")).round(3)


NOISE_LABELS = {"mean_abs_ratio_change": "mean |change of ratio|", "kendall_tau_min": "Kendall τ (min)",
                "kendall_tau_mean": "Kendall τ (mean)", "seeds": "seeds"}


def noise_display(noise: dict) -> pd.DataFrame:
    """`noise_table` (whose field names metrics.json keeps) with headers for a reader."""
    from memeval.reports.tables import readable_frame

    return readable_frame(noise_table(noise), NOISE_LABELS)


SIZE_LABELS = {"candidates": "candidates", "units": "evidence units", "groups": "groups", "questions": "questions",
               "total_cost": "all candidates' cost (words)"}


def sizes_display(sizes: pd.DataFrame) -> pd.DataFrame:
    """Conversation-scale package sizes, one row per conversation (its id, not the package's), counts as integers."""
    from memeval.reports.tables import readable_frame

    shown = sizes.copy()
    shown.index = pd.Index([str(i).rsplit("-conversation-", 1)[-1] for i in shown.index], name="conversation")
    return readable_frame(shown, SIZE_LABELS, digits=2)


BRIDGE_MIN_PAIRS = 10  # fewer questions than this give a rank correlation too loose to read


def bridge_shown(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if r["n"] >= BRIDGE_MIN_PAIRS and r["rho"] is not None]


OUTCOMES = {"f1": "F1", "evidence_recall": "evidence recall"}


def bridge_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Spearman ρ of each store, pruning and budget with each QA outcome, with its bootstrap 95% CI over questions
    (two decimals: on about 90 pairs the interval is some 0.4 wide), for the groups with at least
    BRIDGE_MIN_PAIRS pairs and a defined ρ; `bridge_note` says what was dropped."""
    shown = bridge_shown(rows)
    if not shown:
        return pd.DataFrame({"note": ["no group has enough pairs for a rank correlation"]}).set_index("note")
    cells: dict[tuple, dict] = {}
    for r in shown:
        key = (r["system"], r["pruning"], f"{r['budget']:g}")
        outcome = OUTCOMES.get(r["outcome"], str(r["outcome"]).replace("_", " "))
        cells.setdefault(key, {})[f"ρ with {outcome} [95% CI]"] = f"{r['rho']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
        cells[key]["pairs"] = max(cells[key].get("pairs", 0), r["n"])
    frame = pd.DataFrame.from_dict(cells, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["system", "pruning", "budget"])
    ordered = [c for c in frame.columns if c != "pairs"] + ["pairs"]
    return frame[ordered].fillna("–")


def bridge_note(rows: Sequence[dict]) -> str:
    shown = bridge_shown(rows)
    few = sum(1 for r in rows if r["n"] < BRIDGE_MIN_PAIRS)
    constant = sum(1 for r in rows if r["n"] >= BRIDGE_MIN_PAIRS and r["rho"] is None)
    return (f"{len(shown)} of {len(rows)} groups shown; dropped {few} with fewer than {BRIDGE_MIN_PAIRS} pairs and "
            f"{constant} where one side is constant (ρ undefined). {len(shown)} correlations are reported side "
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
