"""Sensitivity of natural-package results: the k = 2 relaxation, byte-overhead costs, label noise.

Each analysis re-scores the same writers on transformed packages and reports mean ratios to the (certified)
OPT of the transformed package; label noise also reports the mean absolute ratio change and whether the
writer ranking survives (Kendall tau).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy.stats import kendalltau

from memeval.memaudit.package import Package
from memeval.memaudit.solvers import solve_exact
from memeval.memaudit.writers import package_ratio, run_writer
from memeval.natural.rules import COST_RULES

NATURAL_WRITERS = ("opt", "gvt", "estimated_gvt", "density_only", "greedy", "recency_raw", "fact_only",
                   "summary_only", "random")
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)


def score_packages(packages: Sequence[Package], budgets: Sequence[float], methods: Sequence[str] = NATURAL_WRITERS,
                   max_per_group: int | None = None) -> list[dict]:
    """Ratio rows (package, budget, method); a package whose OPT is not certified gets ratio None."""
    rows = []
    for pkg in packages:
        cp = pkg.compiled
        for budget in budgets:
            opt = solve_exact(cp, budget, max_per_group, None, "auto")
            for method in methods:
                value = opt.value if method == "opt" else run_writer(method, cp, budget, max_per_group).value
                rows.append({"package_id": pkg.package_id, "budget": float(budget), "method": method,
                             "value": value, "opt": opt.value,
                             "ratio": package_ratio(value, opt.value) if opt.certified else None})
    return rows


def mean_ratios(rows: Sequence[dict]) -> dict[tuple[float, str], float]:
    groups: dict[tuple[float, str], list[float]] = defaultdict(list)
    for r in rows:
        if r["ratio"] is not None:
            groups[(r["budget"], r["method"])].append(r["ratio"])
    return {key: float(np.mean(v)) for key, v in sorted(groups.items())}


def with_cost_rule(pkg: Package, rule: str) -> Package:
    """The same package under another cost rule (coverage does not depend on cost)."""
    cost = COST_RULES[rule]
    return replace(pkg, candidates=tuple(replace(c, cost=cost(c.text)) for c in pkg.candidates),
                   meta={**pkg.meta, "cost_rule": rule})


def noisy_package(pkg: Package, rate: float, seed: int) -> Package:
    """Each cell of (candidate × unit) is, with probability `rate`, replaced by a uniformly drawn level of
    {0, .25, .5, .75, 1}: label noise over zero and nonzero cells alike."""
    rng = np.random.default_rng(seed)
    cells = {(c, u): v for c, u, v in pkg.coverage}
    coverage = []
    for cand in pkg.candidates:
        for unit in pkg.units:
            value = cells.get((cand.id, unit.id), 0.0)
            if rng.random() < rate:
                value = float(rng.choice(LEVELS))
            if value > 0:
                coverage.append((cand.id, unit.id, value))
    return replace(pkg, coverage=tuple(coverage))


def ranking_stability(clean: dict[tuple[float, str], float], noisy: dict[tuple[float, str], float],
                      budgets: Sequence[float]) -> dict[float, dict]:
    """Per budget: mean |ratio change| over writers and Kendall tau between the two writer rankings
    (`opt` left out: it is 1 by definition)."""
    out = {}
    for budget in budgets:
        methods = sorted(m for b, m in clean if b == float(budget) and m != "opt" and (b, m) in noisy)
        a = [clean[(float(budget), m)] for m in methods]
        b = [noisy[(float(budget), m)] for m in methods]
        tau = kendalltau(a, b).statistic if len(methods) > 1 else float("nan")
        out[float(budget)] = {"mean_abs_ratio_change": float(np.mean(np.abs(np.subtract(a, b)))),
                              "kendall_tau": float(tau), "writers": len(methods)}
    return out


def label_noise(packages: Sequence[Package], budgets: Sequence[float], rate: float = 0.1,
                seeds: Sequence[int] = (0, 1, 2), methods: Sequence[str] = NATURAL_WRITERS,
                clean: dict[tuple[float, str], float] | None = None) -> dict:
    """`clean`: the mean ratios of the unperturbed packages when already computed for these methods."""
    if clean is None:
        clean = mean_ratios(score_packages(packages, budgets, methods))
    runs = []
    for seed in seeds:
        noisy = mean_ratios(score_packages([noisy_package(p, rate, seed * 1000 + i)
                                            for i, p in enumerate(packages)], budgets, methods))
        runs.append({"seed": seed, "by_budget": ranking_stability(clean, noisy, budgets), "mean_ratios": noisy})
    return {"rate": rate, "clean": clean, "runs": runs}


def sensitivity(packages: Sequence[Package], budgets: Sequence[float], noise_rate: float = 0.1,
                noise_seeds: int = 3) -> dict:
    """All three analyses; the k = 1 word-cost ratios double as label noise's clean reference."""
    k1 = mean_ratios(score_packages(packages, budgets))
    return {"k1": k1,
            "k2": mean_ratios(score_packages(packages, budgets, max_per_group=2)),
            "bytes": mean_ratios(score_packages([with_cost_rule(p, "bytes") for p in packages], budgets)),
            "label_noise": label_noise(packages, budgets, noise_rate, tuple(range(noise_seeds)), clean=k1)}
