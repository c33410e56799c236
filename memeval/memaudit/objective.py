"""The write-time objective F(X) = sum_r w_r * h_r(sum_{u in X} a_ur) — h_r = min(1, z) unless the package gives a
unit its own concave saturation (saturation.py) — its marginal gains, and an incremental state so that writers
never recompute F from scratch."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.tolerance import COST_EPS


def coverage_sums(cp: CompiledPackage, selected: Iterable[int]) -> np.ndarray:
    idx = sorted(int(i) for i in selected)
    if not idx:
        return np.zeros(len(cp.weights))
    if cp.is_large:  # never densify a large package to score a store
        return np.asarray(cp.coverage_sparse[idx].sum(axis=0)).ravel()
    return cp.coverage[idx].sum(axis=0)


def objective(cp: CompiledPackage, selected: Iterable[int]) -> float:
    """F of a store given as candidate indices; summed in a canonical order, so equal stores give equal bits.
    A small package remembers each store's value: the solvers, writers and a sweep's rows score the same few
    stores over and over."""
    key = tuple(sorted(int(i) for i in selected))
    if cp.is_large:
        return float(cp.h(coverage_sums(cp, key)) @ cp.weights)
    memo = cp.memo.get("objective")
    if memo is None:
        memo = cp.memo["objective"] = {}
    value = memo.get(key)
    if value is None:
        value = memo[key] = float(cp.h(coverage_sums(cp, key)) @ cp.weights)
    return value


def sparse_gains(cp: CompiledPackage, z: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """F(X + u) - F(X) from each candidate's nonzero cells only (a large package is never made dense)."""
    sub = cp.coverage_sparse[np.asarray(candidates)]
    cols = sub.indices
    before = z[cols]
    values = (cp.h_at(before + sub.data, cols) - cp.h_at(before, cols)) * cp.weights[cols]
    out = np.zeros(sub.shape[0])
    filled = np.diff(sub.indptr) > 0
    if values.size:
        out[filled] = np.add.reduceat(values, sub.indptr[:-1][filled])
    return out


def marginal_gains(cp: CompiledPackage, z: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
    """F(X + u) - F(X) for each candidate u, given X's coverage sums z."""
    if cp.is_large:
        return sparse_gains(cp, z, np.arange(cp.n_candidates) if candidates is None else candidates)
    rows = cp.coverage if candidates is None else cp.coverage[candidates]
    return (cp.h(z + rows) - cp.h(z)) @ cp.weights


def invalidation_covered(cp: CompiledPackage, selected: Iterable[int]) -> float | None:
    """Mean saturated coverage of the package's invalidation units, as a share of each one's maximum (None when
    it declares none)."""
    key = tuple(sorted(int(i) for i in selected))
    memo = None if cp.is_large else cp.memo.setdefault("invalidation", {})
    if memo is not None and key in memo:
        return memo[key]
    if not cp.invalidation_mask.any():
        value = None
    elif cp.saturation is None:
        value = float(np.minimum(1.0, coverage_sums(cp, key)[cp.invalidation_mask]).mean())
    else:
        value = float((cp.h(coverage_sums(cp, key)) / cp.h_max)[cp.invalidation_mask].mean())
    if memo is not None:
        memo[key] = value
    return value


class CoverageState:
    """A store under construction: coverage sums, spent budget and per-group counts."""

    def __init__(self, cp: CompiledPackage, budget: float, max_per_group: int | None = None):
        self.cp = cp
        self.budget = float(budget)
        self.k = cp.max_per_group if max_per_group is None else max_per_group
        self.z = np.zeros(len(cp.weights))
        self.cost = 0.0
        self.selected: list[int] = []
        self.group_count = np.zeros(len(cp.groups), dtype=np.int64)
        self.chosen = np.zeros(cp.n_candidates, dtype=bool)

    @property
    def remaining(self) -> float:
        return self.budget - self.cost

    def feasible_mask(self, candidates: np.ndarray) -> np.ndarray:
        """Not yet chosen, fits the remaining budget, and its group has room."""
        cp = self.cp
        return (
            ~self.chosen[candidates]
            & (cp.costs[candidates] <= self.remaining + COST_EPS)
            & (self.group_count[cp.group_of[candidates]] < self.k)
        )

    def gains(self, candidates: np.ndarray) -> np.ndarray:
        return marginal_gains(self.cp, self.z, candidates)

    def add(self, candidate: int) -> None:
        candidate = int(candidate)
        self.z = self.z + self.cp.row(candidate)
        self.cost += float(self.cp.costs[candidate])
        self.selected.append(candidate)
        self.chosen[candidate] = True
        self.group_count[self.cp.group_of[candidate]] += 1

    def value(self) -> float:
        return objective(self.cp, self.selected)


def store_cost(cp: CompiledPackage, selected: Sequence[int]) -> float:
    costs = cp.memo.get("costs")
    if costs is None:
        costs = cp.memo["costs"] = cp.costs.tolist()
    return float(sum(costs[int(i)] for i in sorted(selected)))


def is_feasible(cp: CompiledPackage, selected: Sequence[int], budget: float, max_per_group: int | None = None) -> bool:
    k = cp.max_per_group if max_per_group is None else max_per_group
    if len(set(selected)) != len(selected):
        return False
    counts = np.bincount(cp.group_of[list(selected)], minlength=len(cp.groups)) if selected else np.zeros(1)
    return store_cost(cp, selected) <= budget + COST_EPS and int(counts.max(initial=0)) <= k
