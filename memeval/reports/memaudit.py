"""Tables for the MEMAUDIT notebooks, built from sweep outputs (summary.json, raw rows); their figures are in
memeval/publication/figures.py."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from memeval.memaudit.package import Package, package_from_dict
from memeval.memaudit.tolerance import values_agree

# The MEMAUDIT paper's published numbers (arXiv 2605.02199), for side-by-side tables only.
PUBLISHED_BASE = {
    "no_tombstone_opt": {2: 0.523, 4: 0.654, 8: 0.689, 16: 0.815},
}
PUBLISHED_BASE_RANGES = {"density_only": ((2, 4, 8), 0.264, 0.361)}
PUBLISHED_STRESS_NO_TOMBSTONE_B6 = {"update_chain": 0.513, "temporal_interval": 0.700}


def summary_frame(summary: dict) -> pd.DataFrame:
    return pd.DataFrame(summary["rows"])


def ratio_table(summary: dict, methods: Sequence[str] | None = None) -> pd.DataFrame:
    df = summary_frame(summary)
    if methods:
        df = df[df["method"].isin(methods)]
    df = df.assign(cell=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" if m is not None and m == m else "–"
                         for m, lo, hi in zip(df["mean_ratio"], df["ci_low"], df["ci_high"], strict=True)])
    return df.pivot_table(index="method", columns="budget", values="cell", aggfunc="first")


def invalidation_table(summary: dict, methods: Sequence[str] | None = None) -> pd.DataFrame:
    df = summary_frame(summary)
    if methods:
        df = df[df["method"].isin(methods)]
    return df.pivot_table(index="method", columns="budget", values="mean_invalidation_covered", aggfunc="first")


def published_comparison(summary: dict) -> pd.DataFrame:
    df = summary_frame(summary).set_index(["method", "budget"])
    rows = []
    for method, by_budget in PUBLISHED_BASE.items():
        for budget, value in by_budget.items():
            ours = df.loc[(method, float(budget))] if (method, float(budget)) in df.index else None
            rows.append({"method": method, "budget": budget, "paper": f"{value:.3f}",
                         "ours": None if ours is None else round(float(ours["mean_ratio"]), 3),
                         "ours_ci": None if ours is None else f"[{ours['ci_low']:.3f}, {ours['ci_high']:.3f}]"})
    for method, (budgets, lo, hi) in PUBLISHED_BASE_RANGES.items():
        for budget in budgets:
            ours = df.loc[(method, float(budget))] if (method, float(budget)) in df.index else None
            rows.append({"method": method, "budget": budget, "paper": f"{lo:.3f}–{hi:.3f} (range over B)",
                         "ours": None if ours is None else round(float(ours["mean_ratio"]), 3),
                         "ours_ci": None if ours is None else f"[{ours['ci_low']:.3f}, {ours['ci_high']:.3f}]"})
    if ("gvt", 4.0) in df.index:
        g = df.xs("gvt", level="method")["mean_ratio"]
        rows.append({"method": "gvt", "budget": "all", "paper": "near OPT",
                     "ours": f"{g.min():.3f}–{g.max():.3f}", "ours_ci": ""})
    return pd.DataFrame(rows)


def certification_table(raw_rows: Sequence[dict]) -> pd.DataFrame:
    """B&B against MILP on every OPT row that carries a MILP certificate."""
    records = []
    for r in raw_rows:
        cert = r.get("certificate") or {}
        if r["method"] != "opt" or "milp_value" not in cert:
            continue
        records.append({"budget": r["budget"], "diff": abs(r["value"] - cert["milp_value"]),
                        "match": values_agree(r["value"], cert["milp_value"]),
                        "bnb_nodes": cert.get("opt_nodes"), "milp_nodes": cert.get("milp_nodes")})
    if not records:
        return pd.DataFrame(columns=["budget", "rows", "matches", "max_abs_difference", "mean_bnb_nodes"])
    df = pd.DataFrame(records)
    return df.groupby("budget").agg(rows=("match", "size"), matches=("match", "sum"), max_abs_difference=("diff", "max"),
                                    mean_bnb_nodes=("bnb_nodes", "mean"), mean_milp_nodes=("milp_nodes", "mean"))


def heatmap_frame(summaries: dict[str, dict], budget: float) -> pd.DataFrame:
    rows = []
    for dist, summary in summaries.items():
        for r in summary["rows"]:
            if float(r["budget"]) == float(budget):
                rows.append({"distribution": dist, "method": r["method"], "ratio": r["mean_ratio"]})
    return pd.DataFrame(rows).pivot_table(index="distribution", columns="method", values="ratio")


def frontier_gap(summaries: dict[str, dict], budget: float) -> pd.DataFrame:
    """Full OPT minus no-tombstone OPT, as ratios to OPT (so 1 - no_tombstone ratio)."""
    rows = []
    for dist, summary in summaries.items():
        nt = [r for r in summary["rows"] if r["method"] == "no_tombstone_opt" and float(r["budget"]) == float(budget)]
        if nt and nt[0]["mean_ratio"] is not None:
            rows.append({"distribution": dist, "no_tombstone_opt": nt[0]["mean_ratio"],
                         "frontier_gap": 1 - nt[0]["mean_ratio"],
                         "paper_no_tombstone_opt": PUBLISHED_STRESS_NO_TOMBSTONE_B6.get(dist)})
    return pd.DataFrame(rows).set_index("distribution")


def vegetarian_package() -> Package:
    """The illustrative tombstone package: a diet preference changes, and only an invalidation keeps a
    stale "vegetarian" from being served as current."""
    doc = {
        "schema": "memaudit.package/v1",
        "package_id": "illustrative-vegetarian-pescatarian",
        "budget": 4.0,
        "meta": {"source": "illustrative", "note": "hand-built to show why tombstones matter"},
        "experiences": [
            {"id": "e0", "text": "I'm vegetarian, so no meat or fish for me.", "time": 0},
            {"id": "e1", "text": "Update: I've started eating fish again, so I'm pescatarian now.", "time": 1},
        ],
        "candidates": [
            {"id": "e0:raw", "experience": "e0", "kind": "raw", "cost": 4.0, "text": "I'm vegetarian, so no meat or fish for me."},
            {"id": "e0:fact", "experience": "e0", "kind": "fact", "cost": 2.0, "text": "User is vegetarian."},
            {"id": "e1:raw", "experience": "e1", "kind": "raw", "cost": 5.0,
             "text": "Update: I've started eating fish again, so I'm pescatarian now."},
            {"id": "e1:fact", "experience": "e1", "kind": "fact", "cost": 2.0, "text": "User is pescatarian."},
            {"id": "e1:tombstone", "experience": "e1", "kind": "tombstone", "cost": 1.0,
             "text": "User is no longer vegetarian."},
            {"id": "e1:update", "experience": "e1", "kind": "update", "cost": 3.0,
             "text": "User changed from vegetarian to pescatarian (eats fish)."},
        ],
        "units": [
            {"id": "diet:current", "weight": 2.0, "kind": "current", "description": "the user is pescatarian now"},
            {"id": "diet:invalid", "weight": 2.0, "kind": "invalidation",
             "description": "'vegetarian' no longer holds"},
            {"id": "diet:history", "weight": 0.2, "kind": "stale", "description": "the user used to be vegetarian"},
        ],
        "coverage": [
            {"candidate": "e0:raw", "unit": "diet:history", "value": 1.0},
            {"candidate": "e0:fact", "unit": "diet:history", "value": 1.0},
            {"candidate": "e1:raw", "unit": "diet:current", "value": 1.0},
            {"candidate": "e1:raw", "unit": "diet:invalid", "value": 0.5},
            {"candidate": "e1:raw", "unit": "diet:history", "value": 0.3},
            {"candidate": "e1:fact", "unit": "diet:current", "value": 1.0},
            {"candidate": "e1:tombstone", "unit": "diet:invalid", "value": 1.0},
            {"candidate": "e1:update", "unit": "diet:current", "value": 1.0},
            {"candidate": "e1:update", "unit": "diet:invalid", "value": 1.0},
            {"candidate": "e1:update", "unit": "diet:history", "value": 0.5},
        ],
        "invalidation_units": ["diet:invalid"],
    }
    return package_from_dict(doc, "illustrative")


def writer_table(pkg: Package, budget: float, methods: Sequence[str]) -> pd.DataFrame:
    from memeval.memaudit.writers import package_ratio, run_writer

    cp = pkg.compiled
    opt = run_writer("opt", cp, budget)
    rows = []
    for m in methods:
        res = opt if m == "opt" else run_writer(m, cp, budget)
        rows.append({"method": m, "value": round(res.value, 4), "ratio": round(package_ratio(res.value, opt.value), 4),
                     "cost": res.cost, "store": ", ".join(cp.candidate_ids[i] for i in res.selected) or "(empty)"})
    return pd.DataFrame(rows).set_index("method")
