"""Exact optima of a package at a budget: branch and bound (vectorised), exhaustive enumeration for tests, and
`solve_exact`, which picks B&B or the MILP (memaudit/milp.py) or checks one against the other. A result is
*certified* only when the solver proved optimality (tolerances: memaudit/tolerance.py). Results and statuses are
the typed records of memaudit/outcomes.py (SolveResult re-exported here)."""

from __future__ import annotations

import itertools
import time

import numpy as np

from memeval.memaudit.milp import MilpModel
from memeval.memaudit.objective import objective, store_cost
from memeval.memaudit.outcomes import SolveResult, SolveStatus
from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.tolerance import BOUND_RTOL, COST_EPS, GAIN_EPS, values_agree

AUTO_BNB_MAX_GROUPS = 12  # `auto` solves up to this many groups by B&B, larger packages by the MILP
_BOUND_BLOCK_CELLS = 4_000_000  # states x candidates x units per bound block (~32 MB of float64)


def _allowed(cp: CompiledPackage, allowed: np.ndarray | None) -> np.ndarray:
    return np.ones(cp.n_candidates, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)


def group_options(
    cp: CompiledPackage, budget: float, k: int, allowed: np.ndarray | None = None
) -> list[tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]]:
    """Per group: the non-empty subsets of at most k allowed candidates that fit the budget,
    with their summed cost and summed coverage rows (coverage sums are additive; h clips later).
    A group never keeps more candidates than it holds, so k is clamped to the group's size: the same subsets, and
    the loop runs over the members, never over k (a package's max_per_group of 10**30 is no hang)."""
    mask = _allowed(cp, allowed)
    out = []
    for members in cp.groups:
        members = [int(i) for i in members if mask[i] and cp.costs[i] <= budget + COST_EPS]
        sizes = range(1, min(k, len(members)) + 1)
        subsets = [s for r in sizes for s in itertools.combinations(members, r)]
        costs = np.array([cp.costs[list(s)].sum() for s in subsets]) if subsets else np.zeros(0)
        rows = np.array([cp.coverage[list(s)].sum(axis=0) for s in subsets]) if subsets else np.zeros((0, len(cp.weights)))
        keep = costs <= budget + COST_EPS
        out.append(([s for s, ok in zip(subsets, keep, strict=True) if ok], costs[keep], rows[keep]))
    return out


def _fractional_knapsack(gains: np.ndarray, costs: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """LP value of a 0-1 knapsack per row (items shared, gains per row); admissible as an upper bound."""
    if gains.shape[1] == 0:
        return np.zeros(gains.shape[0])
    density = gains / costs[None, :]
    order = np.argsort(-density, axis=1, kind="stable")
    g = np.take_along_axis(gains, order, axis=1)
    c = costs[order]
    before = np.cumsum(c, axis=1) - c
    take = np.clip((capacity[:, None] - before) / c, 0.0, 1.0)
    return (g * np.maximum(take, 0.0)).sum(axis=1)


def _greedy_incumbent(cp: CompiledPackage, budget: float, k: int, mask: np.ndarray) -> list[int]:
    """Best of gain-greedy and density-greedy: a cheap lower bound that lets B&B prune from the start."""
    best: list[int] = []
    best_value = -1.0
    for by_density in (False, True):
        z = np.zeros(len(cp.weights))
        spent, chosen = 0.0, []
        counts = np.zeros(len(cp.groups), dtype=np.int64)
        free = mask.copy()
        while True:
            ok = free & (cp.costs <= budget - spent + COST_EPS) & (counts[cp.group_of] < k)
            idx = np.flatnonzero(ok)
            if idx.size == 0:
                break
            gains = (cp.h(z + cp.coverage[idx]) - cp.h(z)) @ cp.weights
            score = gains / cp.costs[idx] if by_density else gains
            j = int(np.argmax(score))
            if gains[j] <= GAIN_EPS:
                break
            u = int(idx[j])
            chosen.append(u)
            z = z + cp.coverage[u]
            spent += cp.costs[u]
            counts[cp.group_of[u]] += 1
            free[u] = False
        value = objective(cp, chosen)
        if value > best_value:
            best, best_value = chosen, value
    return best


def solve_bnb(
    cp: CompiledPackage,
    budget: float,
    max_per_group: int | None = None,
    allowed: np.ndarray | None = None,
    max_states: int = 200_000,
    time_limit: float | None = None,
) -> SolveResult:
    """Branch and bound over groups, level by level with the whole frontier as numpy arrays.

    Each state is a partial store over the groups processed so far (the rest discarded), so every state is
    feasible and the incumbent is the best state seen. A state survives only if its optimistic bound beats
    the incumbent: the tightest of (a) a fractional knapsack over the current marginal gains of every
    remaining candidate (marginals only shrink under clipped coverage; the group limit is relaxed), (b) for
    k = 1, a fractional knapsack with one item per remaining group, its best gain at its cheapest cost, and
    (c) coverage if every remaining group contributed its per-unit maximum, ignoring the budget.
    """
    start = time.perf_counter()
    k = cp.max_per_group if max_per_group is None else max_per_group
    mask = _allowed(cp, allowed)
    w = cp.weights
    n_units = len(w)
    options = group_options(cp, budget, k, mask)
    n_groups = len(options)
    tol = BOUND_RTOL * max(1.0, float(w.sum()))

    # suffix per-unit maxima of what the remaining groups could add (bound b)
    group_max = np.array([rows.max(axis=0) if len(rows) else np.zeros(n_units) for _, _, rows in options])
    suffix_max = np.zeros((n_groups + 1, n_units))
    for g in range(n_groups - 1, -1, -1):
        suffix_max[g] = suffix_max[g + 1] + group_max[g]
    # remaining single candidates after each group (bound a)
    # remaining single candidates after each group (bound a), and the start of each group's run in them (bound c)
    remaining_after, group_starts, group_min_cost = [], [], []
    for g in range(n_groups):
        later, starts, mins = [], [], []
        for gg in range(g + 1, n_groups):
            members = [int(i) for i in cp.groups[gg] if mask[i] and cp.costs[i] <= budget + COST_EPS]
            if members:
                starts.append(len(later))
                mins.append(min(cp.costs[members]))
                later.extend(members)
        remaining_after.append(np.array(later, dtype=np.int64))
        group_starts.append(np.array(starts, dtype=np.int64))
        group_min_cost.append(np.array(mins, dtype=float))

    incumbent_sel = _greedy_incumbent(cp, budget, k, mask)
    incumbent = objective(cp, incumbent_sel)

    z = np.zeros((1, n_units))
    spent = np.zeros(1)
    choice = np.full((1, n_groups), -1, dtype=np.int64)
    nodes = 1
    status = SolveStatus.OPTIMAL
    for g, (subsets, opt_costs, opt_rows) in enumerate(options):
        if len(subsets):
            child_z = (z[:, None, :] + opt_rows[None, :, :]).reshape(-1, n_units)
            child_cost = (spent[:, None] + opt_costs[None, :]).reshape(-1)
            fits = child_cost <= budget + COST_EPS
            parent = np.repeat(np.arange(len(z)), len(subsets))[fits]
            which = np.tile(np.arange(len(subsets)), len(z))[fits]
            child_choice = choice[parent].copy()
            child_choice[:, g] = which
            z = np.vstack([z, child_z[fits]])
            spent = np.concatenate([spent, child_cost[fits]])
            choice = np.vstack([choice, child_choice])
            nodes += int(fits.sum())
        clipped = cp.h(z)
        values = clipped @ w
        best = int(np.argmax(values))
        if values[best] > incumbent + tol:
            incumbent_sel = [i for gg in range(n_groups) if choice[best, gg] >= 0 for i in options[gg][0][choice[best, gg]]]
            incumbent = objective(cp, incumbent_sel)
        if g == n_groups - 1:
            break
        rest = remaining_after[g]
        bound = np.minimum(cp.h(z + suffix_max[g + 1]) @ w, values)
        if rest.size:
            rows, costs = cp.coverage[rest], cp.costs[rest]
            block = max(1, _BOUND_BLOCK_CELLS // max(1, rest.size * n_units * cp.h_width))  # bounded memory
            for lo in range(0, len(z), block):
                hi = min(len(z), lo + block)
                gains = (cp.h(z[lo:hi, None, :] + rows[None, :, :]) - clipped[lo:hi, None, :]) @ w
                capacity = budget - spent[lo:hi]
                knap = _fractional_knapsack(gains, costs, capacity)
                if k == 1:
                    # one item per group: its best gain at its cheapest cost (over-estimates any single choice)
                    per_group = np.maximum.reduceat(gains, group_starts[g], axis=1)
                    knap = np.minimum(knap, _fractional_knapsack(per_group, group_min_cost[g], capacity))
                bound[lo:hi] = np.minimum(cp.h(z[lo:hi] + suffix_max[g + 1]) @ w, values[lo:hi] + knap)
        keep = bound > incumbent + tol
        z, spent, choice = z[keep], spent[keep], choice[keep]
        if len(z) == 0:
            break
        if len(z) > max_states:
            status = SolveStatus.NODE_LIMIT
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            status = SolveStatus.TIME_LIMIT
            break
    selected = sorted(incumbent_sel)
    value = objective(cp, selected)
    proved = status == SolveStatus.OPTIMAL  # every node's bound was within `tol` of the incumbent: no better store exists
    return SolveResult(
        method="bnb",
        value=value,
        selected=selected,
        cost=store_cost(cp, selected),
        status=status,
        certified=proved,
        runtime_s=time.perf_counter() - start,
        nodes=nodes,
        dual_bound=value + tol if proved else None,
        gap=tol / max(value, 1.0) if proved else None,
    )


def solve_exhaustive(
    cp: CompiledPackage, budget: float, max_per_group: int | None = None, allowed: np.ndarray | None = None
) -> SolveResult:
    """Every feasible store, for tests on small packages; exact by construction."""
    start = time.perf_counter()
    k = cp.max_per_group if max_per_group is None else max_per_group
    options = group_options(cp, budget, k, allowed)
    best_value, best_sel = 0.0, []
    for combo in itertools.product(*[[()] + subsets for subsets, _, _ in options]):
        sel = [i for part in combo for i in part]
        if store_cost(cp, sel) <= budget + COST_EPS:
            value = objective(cp, sel)
            if value > best_value + GAIN_EPS:
                best_value, best_sel = value, sel
    return SolveResult("exhaustive", best_value, sorted(best_sel), store_cost(cp, best_sel), SolveStatus.OPTIMAL,
                       True, time.perf_counter() - start)


def solve_exact(
    cp: CompiledPackage,
    budget: float,
    max_per_group: int | None = None,
    allowed: np.ndarray | None = None,
    method: str = "bnb",
    milp_model=None,
    max_states: int = 200_000,
) -> SolveResult:
    """OPT by B&B (`bnb`), by MILP (`milp`), by both (`both`: certified only if they agree), or `auto`
    (B&B up to AUTO_BNB_MAX_GROUPS groups, falling back to the MILP at its state limit; the MILP beyond and for
    large packages)."""
    if method == "auto" and (len(cp.groups) > AUTO_BNB_MAX_GROUPS or cp.is_large):
        method = "milp"  # B&B works on the dense matrix, which a large package never gets
    if method in ("bnb", "auto", "both"):
        result = solve_bnb(cp, budget, max_per_group, allowed, max_states=max_states)
        if method == "bnb" or (method == "auto" and result.certified):
            return result
    model = milp_model or MilpModel(cp, max_per_group, allowed)
    milp = model.solve(budget)
    if method in ("milp", "auto"):
        return milp
    agree = values_agree(result.value, milp.value)
    result.certified = bool(result.certified and milp.certified and agree)
    result.method = "bnb+milp"
    result.info["milp"] = {"value": milp.value, "status": milp.status, "gap": milp.gap, "nodes": milp.nodes,
                           "runtime_s": milp.runtime_s, "agree": agree}
    if not agree:
        result.status = SolveStatus.DISAGREEMENT
    return result
