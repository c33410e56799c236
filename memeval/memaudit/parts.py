"""A third exact method: OPT by independent parts. Why it is exact: F is a sum over units, so experiences that share
no unit (through any of their candidates) never interact; the package splits into parts — groups joined by shared
units — and a store's value is the sum of its parts' values. Within a part every feasible choice (at most k
candidates a group) is enumerated and kept on its Pareto frontier (no choice costing more for no more value);
across parts, a knapsack over the budget combines one frontier point per part — by dynamic programming over the
budget when costs are whole multiples of a quarter (words and bytes are), else by merging frontiers.

It finishes on packages whose parts are small (the generators' and natural packages' experiences touch few units),
and refuses — `NODE_LIMIT`, not certified — when a part has more choices than `max_part_choices` or a merged
frontier grows past `max_frontier`. The B&B and the MILP never see its tables, so it can check either of them.
Among equal optima it returns the one the DP meets first (parts in stream order, each part's cheapest point on a
tie), not necessarily the store the B&B returns; the value is recomputed by `objective` on the store it returns.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from memeval.memaudit.objective import objective, store_cost
from memeval.memaudit.outcomes import SolveResult, SolveStatus
from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.tolerance import COST_EPS, values_agree

MAX_PART_CHOICES = 200_000
MAX_FRONTIER = 2_000_000
MAX_DP_CELLS = 400_000_000  # parts x budget cells of the DP's choice table (uint8/uint16)
COST_SCALES = (1, 2, 4)  # costs are word or byte counts, at finest multiples of 1/4 (memaudit/tolerance.py)


def _parts(cp: CompiledPackage, allowed: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """(parts as lists of group indices, each group's allowed candidates): groups joined when their allowed
    candidates cover a common unit; groups with no allowed candidate covering anything are left out (only the
    empty choice can help there)."""
    csr = cp.coverage_csr
    indptr, indices, data = csr.indptr, csr.indices, csr.data
    parent = list(range(len(cp.groups)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    owner: dict[int, int] = {}
    members: list[list[int]] = []
    useful = [False] * len(cp.groups)
    for g, group in enumerate(cp.groups):
        kept = [int(i) for i in group if allowed[i]]
        members.append(kept)
        for i in kept:
            for unit, value in zip(indices[indptr[i]:indptr[i + 1]].tolist(), data[indptr[i]:indptr[i + 1]].tolist(),
                                   strict=True):
                if value == 0.0:
                    continue
                useful[g] = True
                if unit in owner:
                    a, b = find(owner[unit]), find(g)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                else:
                    owner[unit] = g
    by_root: dict[int, list[int]] = {}
    for g in range(len(cp.groups)):
        if useful[g]:
            by_root.setdefault(find(g), []).append(g)
    return [by_root[r] for r in sorted(by_root)], members


def _choices(members: list[int], k: int) -> list[tuple[int, ...]]:
    return [c for j in range(min(k, len(members)) + 1) for c in itertools.combinations(members, j)]


def _frontier(cp: CompiledPackage, part: list[int], members: list[list[int]], k: int, budget: float,
              limit: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]] | None:
    """The part's Pareto frontier within the budget: (costs ascending, gains over the empty store strictly
    ascending, stores), a zero-cost store first; None when the part has more than `limit` choices."""
    per_group = [_choices(members[g], k) for g in part]
    if math.prod(len(c) for c in per_group) > limit:
        return None
    local = sorted({i for g in part for i in members[g]})
    position = {i: n for n, i in enumerate(local)}
    cols, dense = cp.coverage_csr.block(local)
    stores = [tuple(i for choice in combo for i in choice) for combo in itertools.product(*per_group)]
    picks = np.zeros((len(stores), len(local)))
    for row, store in enumerate(stores):
        for i in store:
            picks[row, position[i]] = 1.0
    costs = picks @ cp.costs[local]
    values = cp.h_cols(picks @ dense, cols) @ cp.weights[cols]
    values = values - values[0]  # stores[0] is the empty store: each part's gain over it, so gains add across parts
    order = np.lexsort((-values, costs))  # by cost, the most valuable first on a tie
    keep_cost, keep_value, keep_store, best = [], [], [], -math.inf
    for n in order.tolist():
        if costs[n] > budget + COST_EPS:
            break
        if values[n] > best:
            best = values[n]
            keep_cost.append(costs[n])
            keep_value.append(values[n])
            keep_store.append(stores[n])
    return np.array(keep_cost), np.array(keep_value), keep_store


def _all_frontiers(cp: CompiledPackage, k: int, mask: np.ndarray, limit: int):
    """(parts, each part's whole frontier), built once per package, k and allowed set and kept in the package's
    memo: every budget of a sweep reads the same frontiers, cut at its budget."""
    memo = cp.memo.setdefault("parts", {})
    key = (k, mask.tobytes(), limit)
    if key not in memo:
        parts, members = _parts(cp, mask)
        whole = []
        for part in parts:
            made = _frontier(cp, part, members, k, math.inf, limit)
            if made is None:
                memo[key] = None
                break
            whole.append(made)
        else:
            memo[key] = (parts, whole)
    return memo[key]


def _scale(cp: CompiledPackage) -> int | None:
    for s in COST_SCALES:
        scaled = cp.costs * s
        if np.all(scaled == np.round(scaled)) and np.all(scaled >= 0):
            return s
    return None


def _dp(frontiers, capacity: int, scale: int) -> tuple[list[int], float] | None:
    """One point per part maximising the summed value within `capacity` (scaled whole costs); None when the
    choice table would pass MAX_DP_CELLS."""
    if len(frontiers) * (capacity + 1) > MAX_DP_CELLS:
        return None
    best = np.zeros(capacity + 1)  # best value at total scaled cost <= c, over the parts seen
    table = []
    reach = 0
    for costs, values, _ in frontiers:
        whole = np.rint(costs * scale).astype(np.int64)
        reach = min(capacity, reach + int(whole[-1]))
        top = reach + 1
        candidates = np.full((len(whole), top), -np.inf)
        for j, (c, v) in enumerate(zip(whole.tolist(), values.tolist(), strict=True)):
            if c < top:
                candidates[j, c:] = best[: top - c] + v
        pick = candidates.argmax(axis=0)  # the first (cheapest) point on a tie
        dtype = np.uint8 if len(whole) <= 255 else np.uint16
        table.append((pick.astype(dtype), whole))
        best = np.concatenate([candidates[pick, np.arange(top)], np.full(capacity + 1 - top, 0.0)])
        if top <= capacity:
            best[top:] = best[top - 1]
    chosen, c = [], capacity
    for pick, whole in reversed(table):
        j = int(pick[min(c, len(pick) - 1)])
        chosen.append(j)
        c -= int(whole[j])
    chosen.reverse()
    return chosen, float(best[capacity])


def _merge(frontiers, budget: float, limit: int) -> tuple[list[int], float] | None:
    """The same by merging frontiers (any costs): each step keeps the Pareto frontier of (cost, value) sums; None
    when a merged frontier passes `limit`."""
    cost, value = np.zeros(1), np.zeros(1)
    back = []
    for costs, values, _ in frontiers:
        c = (cost[:, None] + costs[None, :]).ravel()
        v = (value[:, None] + values[None, :]).ravel()
        if c.size > limit:
            return None
        ok = np.flatnonzero(c <= budget + COST_EPS)
        order = ok[np.lexsort((-v[ok], c[ok]))]
        keep = order[np.flatnonzero(v[order] > np.maximum.accumulate(np.concatenate([[-np.inf], v[order][:-1]])))]
        back.append((keep // len(costs), keep % len(costs)))
        cost, value = c[keep], v[keep]
    at = int(np.argmax(value))  # the first (cheapest) of the most valuable
    total = float(value[at])
    chosen = []
    for previous, j in reversed(back):
        chosen.append(int(j[at]))
        at = int(previous[at])
    chosen.reverse()
    return chosen, total


def solve_parts(cp: CompiledPackage, budget: float, max_per_group: int | None = None,
                allowed: np.ndarray | None = None, max_part_choices: int = MAX_PART_CHOICES,
                max_frontier: int = MAX_FRONTIER) -> SolveResult:
    """OPT by independent parts (see the module docstring): certified when every part was enumerated."""
    start = time.perf_counter()
    k = cp.max_per_group if max_per_group is None else max_per_group
    mask = np.ones(cp.n_candidates, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    made = _all_frontiers(cp, k, mask, max_part_choices)
    if made is None:
        return SolveResult("parts", 0.0, [], 0.0, SolveStatus.NODE_LIMIT, False, time.perf_counter() - start,
                           info={"refused": f"a part has more than {max_part_choices} choices"})
    parts, whole = made
    frontiers = []
    for costs, values, stores in whole:
        n = int(np.searchsorted(costs, budget + COST_EPS, side="right"))
        frontiers.append((costs[:n], values[:n], stores[:n]))
    scale = _scale(cp)
    capacity = None if scale is None else int(math.floor(budget * scale + COST_EPS * scale))
    combined = _dp(frontiers, capacity, scale) if scale is not None and capacity >= 0 else None
    how = "dp"
    if combined is None:
        combined, how = _merge(frontiers, budget, max_frontier), "merge"
    if combined is None:
        return SolveResult("parts", 0.0, [], 0.0, SolveStatus.NODE_LIMIT, False, time.perf_counter() - start,
                           info={"parts": len(parts), "refused": f"a merged frontier passed {max_frontier} points"})
    chosen, total = combined
    selected = sorted(i for (_, _, stores), j in zip(frontiers, chosen, strict=True) for i in stores[j])
    value = objective(cp, selected)
    total += objective(cp, [])  # the gains sit on the empty store's value (h(0) of every unit)
    info = {"parts": len(parts), "largest_part_groups": max((len(p) for p in parts), default=0),
            "frontier_points": int(sum(len(f[0]) for f in frontiers)), "combine": how, "dp_value": total}
    agree = values_agree(value, total)
    status = SolveStatus.OPTIMAL if agree else SolveStatus.ERROR
    return SolveResult("parts", value, selected, store_cost(cp, selected), status, agree,
                       time.perf_counter() - start, info=info)
