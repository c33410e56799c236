"""Exact optima of a package at a budget: branch and bound, exhaustive enumeration for tests, and `solve_exact`,
which picks B&B or the MILP (memaudit/milp.py) or checks one against the other. A result is *certified* only when
the solver proved optimality (tolerances: memaudit/tolerance.py). Results and statuses are the typed records of
memaudit/outcomes.py (SolveResult re-exported here).

The B&B's search (which states it opens, which it prunes, which store it returns among equal optima, its node
count) is fixed: a sweep's rows record them. What is tuned is how it gets there on packages of a few dozen
candidates, where numpy's per-call cost outweighs the arithmetic: tables built once per package, bounds in plain
Python for a small frontier and vectorised for a large one, the exact frontier arithmetic (numpy's own matrix
product, whose rounding decides between equal optima) computed only when a store could replace the incumbent.
"""

from __future__ import annotations

import bisect
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
PY_FRONTIER = 8  # a level with at most this many live states is bounded in plain Python (of 3, 8, 16, 32 on base
# packages, 8 and 32 were fastest; numpy wins on larger frontiers)
PY_CHILDREN = 32  # ... and expanded in plain Python while it opens at most this many children
# Two floats computed in different orders from the same terms differ by far less than this (relative to the
# package's total weight); a decision closer than it is taken by numpy's own arithmetic, as it always was.
NOISE_RTOL = 1e-9


def _allowed(cp: CompiledPackage, allowed: np.ndarray | None) -> np.ndarray:
    return np.ones(cp.n_candidates, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)


class _Tables:
    """What the B&B reads of a package, in plain Python: each candidate's non-zero coverage cells with their
    weights, costs and groups; and, built on first use and kept, each allowed set's members per group, each
    group's option table and each (k, eligible members) plan."""

    def __init__(self, cp: CompiledPackage):
        csr = cp.coverage_csr  # sorted indices, one entry per cell: the dense matrix's non-zeros, in unit order
        w = cp.weights.tolist()
        self.cp = cp
        self.n_units = len(w)
        self.weights = w
        self.weight_sum = max(1.0, float(cp.weights.sum()))
        bounds, units, values = csr.indptr.tolist(), csr.indices.tolist(), csr.data.tolist()
        unit_weights = [w[r] for r in units]
        self.cells = [tuple(zip(units[a:b], values[a:b], unit_weights[a:b], strict=True))
                      for a, b in zip(bounds, bounds[1:], strict=False)]
        if 0.0 in values:  # a cell written with value 0 covers nothing
            self.cells = [tuple(c for c in cells if c[1]) for cells in self.cells]
        self.costs = cp.costs.tolist()
        self.density_scale = self.weight_sum / min(1.0, min(self.costs, default=1.0))  # noise of gain / cost
        self.group_of = cp.group_of.tolist()
        self.members = [g.tolist() for g in cp.groups]
        zero = [0.0] * self.n_units
        self.initial_gains = [_gain(c, zero) for c in self.cells]
        self.by_unit: dict[int, list[int]] = {}
        for i, c in enumerate(self.cells):
            for r, _, _ in c:
                self.by_unit.setdefault(r, []).append(i)
        self._neighbours: dict[int, list[int]] = {}
        self.allowed: dict = {}
        self.subsets: dict = {}
        self.plans: dict = {}
        self.levels: dict = {}
        self.greedy: dict = {}

    def neighbours(self, u: int) -> list[int]:
        """The candidates sharing a unit with u (whose gains change when u is picked)."""
        out = self._neighbours.get(u)
        if out is None:
            out = self._neighbours[u] = sorted({j for r, _, _ in self.cells[u] for j in self.by_unit[r]})
        return out

    @staticmethod
    def of(cp: CompiledPackage) -> _Tables:
        tables = cp.memo.get("bnb")
        if tables is None:
            tables = cp.memo["bnb"] = _Tables(cp)
        return tables

    def eligible(self, allowed: np.ndarray | None, budget: float) -> tuple[tuple[int, ...], ...]:
        """Per group, the allowed members that fit the budget alone."""
        key = None if allowed is None else np.asarray(allowed, dtype=bool).tobytes()
        groups = self.allowed.get(key)
        if groups is None:
            mask = _allowed(self.cp, allowed)
            groups = self.allowed[key] = [[i for i in members if mask[i]] for members in self.members]
        limit, costs = budget + COST_EPS, self.costs
        return tuple([tuple([i for i in members if costs[i] <= limit]) for members in groups])

    def subset_table(self, members: tuple[int, ...], k: int):
        """The non-empty subsets of at most k of `members` (in itertools order) with their summed costs and
        coverage rows, built once per (members, k)."""
        key = (members, k)
        table = self.subsets.get(key)
        if table is None:
            cp = self.cp
            sizes = range(1, min(k, len(members)) + 1)
            subsets = [s for r in sizes for s in itertools.combinations(members, r)]
            larger = subsets[len(members):]  # singletons first (itertools order): a sum of one is the row itself
            costs, rows = cp.costs[list(members)], cp.coverage[list(members)].reshape(len(members), self.n_units)
            if larger:
                costs = np.concatenate([costs, [cp.costs[list(s)].sum() for s in larger]])
                rows = np.concatenate([rows, np.array([cp.coverage[list(s)].sum(axis=0) for s in larger])])
            table = self.subsets[key] = (subsets, costs, rows)
        return table

    def dearest(self, members: tuple[int, ...], k: int) -> float:
        """The cost of the dearest subset of at most k members (summed in Python: a check, not a decision)."""
        return sum(sorted((self.costs[i] for i in members), reverse=True)[:k])

    def plan(self, eligible: tuple[tuple[int, ...], ...], k: int, budget: float) -> _Plan:
        """The plan of these eligible members; a plan of its own for a budget that cuts some group's subsets of
        several members (each member fits alone: the eligible sets hold only those)."""
        cut = k > 1 and any(self.dearest(members, k) > budget + COST_EPS - NOISE_RTOL * max(1.0, budget)
                            for members in eligible if len(members) > 1)
        key = (eligible, k, budget if cut else None)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = _Plan(self, eligible, k, budget if cut else None)
        return plan


class _Plan:
    """A search's fixed inputs, shared by every budget with the same eligible members per group (and, where the
    budget cuts subsets, that budget): each group's options (subsets, costs, rows), built when the search reaches
    it, and the bound tables per level."""

    def __init__(self, t: _Tables, eligible: tuple[tuple[int, ...], ...], k: int, budget: float | None):
        self.t = t
        self.eligible = eligible
        self.k = k
        self.budget = budget
        self.options: dict[int, tuple] = {}
        self.levels: dict[int, _Level] = {}
        self.python: dict[int, tuple] = {}

    def option(self, g: int) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
        options = self.options.get(g)
        if options is None:
            subsets, costs, rows = self.t.subset_table(self.eligible[g], self.k)
            if self.budget is not None and len(subsets):
                keep = costs <= self.budget + COST_EPS
                if not keep.all():
                    subsets = [s for s, ok in zip(subsets, keep, strict=True) if ok]
                    costs, rows = costs[keep], rows[keep]
            options = self.options[g] = (subsets, costs, rows)
        return options

    def all_options(self) -> list[tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]]:
        return [self.option(g) for g in range(len(self.eligible))]

    def python_options(self, g: int) -> tuple[list[float], list[tuple]]:
        """Group g's option costs and each option's non-zero cells (unit, value, weight), for the Python frontier."""
        if g not in self.python:
            subsets, costs, rows = self.option(g)
            w, cells = self.t.weights, self.t.cells
            if self.k == 1:  # a singleton's cells are its candidate's
                option_cells = [cells[s[0]] for s in subsets]
            else:
                option_cells = [tuple((r, a, w[r]) for r, a in enumerate(row) if a) for row in rows.tolist()]
            self.python[g] = (costs.tolist(), option_cells)
        return self.python[g]

    def level(self, g: int) -> _Level:
        """The bound tables after group g, shared with every plan whose later groups hold the same members (and,
        where a budget cut some subsets, at the same budget)."""
        level = self.levels.get(g)
        if level is None:
            key = (self.eligible[g + 1:], self.k, self.budget)
            level = self.t.levels.get(key)
            if level is None:
                level = self.t.levels[key] = _Level(self.t, self.eligible[g + 1:], self._suffix(g))
            self.levels[g] = level
        return level

    def _suffix(self, g: int) -> np.ndarray:
        """Per unit, the sum over groups after g of the most any of their options covers (bound c)."""
        suffix = [0.0] * self.t.n_units
        if self.k == 1:  # an option is one candidate: the most its group covers is a maximum over members' cells
            cells = self.t.cells
            for members in self.eligible[g + 1:]:
                top: dict[int, float] = {}
                for i in members:
                    for r, a, _ in cells[i]:
                        if a > top.get(r, 0.0):
                            top[r] = a
                for r, a in top.items():
                    suffix[r] += a
            return np.array(suffix)
        out = np.zeros(self.t.n_units)
        for h in range(g + 1, len(self.eligible)):
            rows = self.option(h)[2]
            if len(rows):
                out = out + rows.max(axis=0)
        return out


def group_options(
    cp: CompiledPackage, budget: float, k: int, allowed: np.ndarray | None = None
) -> list[tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]]:
    """Per group: the non-empty subsets of at most k allowed candidates that fit the budget,
    with their summed cost and summed coverage rows (coverage sums are additive; h clips later).
    A group never keeps more candidates than it holds, so k is clamped to the group's size: the same subsets, and
    the loop runs over the members, never over k (a package's max_per_group of 10**30 is no hang)."""
    tables = _Tables.of(cp)
    return tables.plan(tables.eligible(allowed, budget), k, budget).all_options()


def _fractional_knapsack(gains: np.ndarray, costs: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """LP value of a 0-1 knapsack per row (gains per row; costs shared, or per row when 2-D); admissible as an
    upper bound."""
    if gains.shape[1] == 0:
        return np.zeros(gains.shape[0])
    order = np.argsort(-(gains / costs), axis=1, kind="stable")
    rows = np.arange(len(gains))[:, None]
    g = gains[rows, order]
    c = costs[rows, order] if costs.ndim == 2 else costs[order]
    room = capacity[:, None] - (np.cumsum(c, axis=1) - c)
    return (g * np.minimum(np.maximum(room / c, 0.0), 1.0)).sum(axis=1)


def _py_knapsack(items: list[tuple[float, float]], capacity: float) -> float:
    """LP value of a 0-1 knapsack over (gain, cost) items: the same bound as `_fractional_knapsack`."""
    total = 0.0
    for gain, cost in sorted(items, key=lambda item: -item[0] / item[1]):
        if capacity <= 0:
            break
        if cost <= capacity:
            total += gain
            capacity -= cost
        else:
            total += gain * capacity / cost
            break
    return total


def _near_best(scores: list[float], scale: float) -> list[int]:
    """Positions whose score is within floating-point noise of the best: where numpy's rounding may decide."""
    best = max(scores)
    floor = best - NOISE_RTOL * scale
    return [i for i, s in enumerate(scores) if s >= floor]


def _gain(cells: tuple, z: list[float]) -> float:
    """F(X + u) - F(X) under h = min(1, z) from u's non-zero cells, X's coverage sums z."""
    gain = 0.0
    for r, a, wr in cells:
        zr = z[r]
        if zr < 1.0:
            after = zr + a
            gain += wr * ((after if after < 1.0 else 1.0) - zr)
    return gain


def _one_term(cells: tuple, z: list[float]) -> bool:
    """Whether a candidate's gain at z has at most one non-zero term (its other units already saturated)."""
    return sum(1 for r, _, _ in cells if z[r] < 1.0) <= 1


def _greedy_incumbent(cp: CompiledPackage, budget: float, k: int, allowed: np.ndarray | None,
                      eligible: tuple[tuple[int, ...], ...]) -> list[int]:
    """Best of gain-greedy and density-greedy: a cheap lower bound that lets B&B prune from the start."""
    if cp.saturation is not None:
        return _greedy_incumbent_numpy(cp, budget, k, _allowed(cp, allowed))
    best: list[int] = []
    best_value = -1.0
    for by_density in (False, True):
        chosen = greedy_pass(cp, budget, k, allowed, by_density, eligible)
        value = objective(cp, chosen)
        if value > best_value:
            best, best_value = chosen, value
    return best


def greedy_pass(cp: CompiledPackage, budget: float, k: int, allowed: np.ndarray | None, by_density: bool,
                eligible: tuple[tuple[int, ...], ...] | None = None) -> list[int]:
    """Offline greedy under h = min(1, z): repeatedly the allowed candidate of largest gain (or gain per cost)
    that fits, until no gain is left; the picks in order. Shared by B&B's incumbent and the greedy writers, and
    remembered per (budget, k, allowed, rule), since both ask for the same passes.

    Gains are summed in Python over each candidate's few non-zero cells and updated only for candidates sharing a
    unit with a pick. When another candidate comes within rounding noise of the best and either's gain sums more
    than one term, the step is decided by the numpy expression it always was, so ties break as before."""
    t = _Tables.of(cp)
    key = (float(budget), k, None if allowed is None else np.asarray(allowed, dtype=bool).tobytes(), by_density)
    chosen = t.greedy.get(key)
    if chosen is not None:
        return list(chosen)
    if eligible is None:
        eligible = t.eligible(allowed, budget)
    costs, group_of, cells = t.costs, t.group_of, t.cells
    z = [0.0] * t.n_units
    spent, chosen = 0.0, []
    counts = [0] * len(cp.groups)
    free = [i for members in eligible for i in members]
    gains = t.initial_gains[:]
    while True:
        limit = budget - spent + COST_EPS
        idx = free = [i for i in free if costs[i] <= limit and counts[group_of[i]] < k]
        if not idx:
            break
        if by_density:
            scores = [gains[i] / costs[i] for i in idx]
            near = _near_best(scores, t.density_scale)
        else:
            scores = [gains[i] for i in idx]
            near = _near_best(scores, t.weight_sum)
        if len(near) == 1 or all(_one_term(cells[idx[j]], z) for j in near):
            # a gain of one non-zero term is one rounded product in any summation order: numpy's equals this
            j = near[0] if len(near) == 1 else max(near, key=lambda j: (scores[j], -j))
            gain_j = gains[idx[j]]
        else:
            zn = np.array(z)
            exact = (cp.h(zn + cp.coverage[idx]) - cp.h(zn)) @ cp.weights
            score = exact / cp.costs[idx] if by_density else exact
            j = int(np.argmax(score))
            gain_j = exact[j]
        if gain_j <= GAIN_EPS:
            break
        u = idx[j]
        chosen.append(u)
        for r, a, _ in cells[u]:
            z[r] += a
        spent += costs[u]
        counts[group_of[u]] += 1
        free = [i for i in free if i != u]
        for i in t.neighbours(u):
            gains[i] = _gain(cells[i], z)
    t.greedy[key] = tuple(chosen)
    return chosen


def _greedy_incumbent_numpy(cp: CompiledPackage, budget: float, k: int, mask: np.ndarray) -> list[int]:
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


class _Level:
    """The bounds' inputs after a group: the candidates of later groups that fit (with their costs and, for
    k = 1, each later group's run among them and cheapest cost), and what later groups could add per unit."""

    def __init__(self, t: _Tables, later: tuple[tuple[int, ...], ...], suffix: np.ndarray):
        later = [members for members in later if members]
        self.t = t
        self.rest = [i for members in later for i in members]
        starts = list(itertools.accumulate([0] + [len(m) for m in later[:-1]])) if later else []
        self.starts = np.array(starts, dtype=np.int64)
        self.min_cost = [min(t.costs[i] for i in members) for members in later]
        self.runs = [(s, s + len(m)) for s, m in zip(starts, later, strict=True)]
        self.rest_costs = [t.costs[i] for i in self.rest]
        self.rest_cost = sum(self.rest_costs)
        self.min_cost_sum = sum(self.min_cost)
        self.suffix = suffix
        self.suffix_cells = tuple((r, a, t.weights[r]) for r, a in enumerate(suffix.tolist()) if a > 0)
        self._arrays = None

    def arrays(self):
        """The rest as numpy: dense rows, costs, the later groups' cheapest costs, and the rest's non-zero cells
        (unit, value, weight) with a cell-to-candidate incidence, so that gains under h = min(1, z) cost the
        cells, not candidates x units."""
        if self._arrays is None:
            cp, idx = self.t.cp, np.array(self.rest, dtype=np.int64)
            cells = [(j, r, a, wr) for j, i in enumerate(self.rest) for r, a, wr in self.t.cells[i]]
            incidence = np.zeros((len(cells), len(self.rest)))
            incidence[np.arange(len(cells)), [c[0] for c in cells]] = 1.0
            self._arrays = (cp.coverage[idx], cp.costs[idx], np.array(self.min_cost, dtype=float),
                            np.array([c[1] for c in cells], dtype=np.int64), np.array([c[2] for c in cells]),
                            np.array([c[3] for c in cells]), incidence)
        return self._arrays


def _py_keep(t: _Tables, level: _Level, z: list[float], spent: float, budget: float, k: int, thr: float,
             value: float) -> bool:
    """Whether one state's bound beats thr: the B&B's three bounds (see solve_bnb) in plain Python, cheapest
    first; the state survives only if every one of them does."""
    if value + _gain(level.suffix_cells, z) <= thr:  # F(z + suffix), from F(z) and the units later groups reach
        return False
    if not level.rest:
        return value > thr
    cells = t.cells
    gains = []
    for i in level.rest:
        gain = 0.0
        for r, a, wr in cells[i]:
            zr = z[r]
            if zr < 1.0:
                after = zr + a
                gain += wr * ((after if after < 1.0 else 1.0) - zr)
        gains.append(gain)
    capacity = budget - spent
    if not _knapsack_beats(gains, level.rest_costs, level.rest_cost, capacity, thr - value):
        return False
    if k == 1:
        per_group = [max(gains[a:b]) for a, b in level.runs]
        if not _knapsack_beats(per_group, level.min_cost, level.min_cost_sum, capacity, thr - value):
            return False
    return True


def _knapsack_beats(gains: list[float], costs: list[float], total_cost: float, capacity: float,
                    target: float) -> bool:
    """Whether the knapsack's LP value exceeds target, sorting the items only when it is not already settled
    by every item together (worth at most their sum; exactly that when they all fit)."""
    total = sum(gains)
    if total <= target:
        return False
    if total_cost <= capacity:
        return True
    return _py_knapsack(list(zip(gains, costs, strict=True)), capacity) > target


def _np_keep(cp: CompiledPackage, level: _Level, z: np.ndarray, spent: np.ndarray, values: np.ndarray,
             budget: float, k: int, thr: float) -> np.ndarray:
    """The same test vectorised over a frontier, each bound computed only for the states the cheaper ones kept."""
    w = cp.weights
    keep = cp.h(z + level.suffix) @ w > thr
    if not level.rest:
        return keep & (values > thr)
    live = np.flatnonzero(keep)
    if live.size == 0:
        return keep
    rows, costs, min_cost, cell_unit, cell_value, cell_weight, incidence = level.arrays()
    plain = cp.saturation is None
    width = len(cell_unit) if plain else len(level.rest) * len(w) * cp.h_width
    block = max(1, _BOUND_BLOCK_CELLS // max(1, width))  # bounded memory
    for lo in range(0, live.size, block):
        part = live[lo:lo + block]
        zp = z[part]
        if plain:
            zc = zp[:, cell_unit]
            gains = ((np.minimum(1.0, zc + cell_value) - np.minimum(1.0, zc)) * cell_weight) @ incidence
        else:
            gains = (cp.h(zp[:, None, :] + rows[None, :, :]) - cp.h(zp)[:, None, :]) @ w
        capacity = budget - spent[part]
        if k == 1:  # both knapsacks in one batch: bound (b)'s rows padded with items worth nothing
            per_group = np.maximum.reduceat(gains, level.starts, axis=1)
            n, width = len(part), gains.shape[1]
            both = np.zeros((2 * n, width))
            both[:n] = gains
            both[n:, :per_group.shape[1]] = per_group
            item_costs = np.ones((2, width))
            item_costs[0] = costs
            item_costs[1, :per_group.shape[1]] = min_cost
            knap = _fractional_knapsack(both, np.repeat(item_costs, n, axis=0), np.concatenate([capacity, capacity]))
            keep[part] = values[part] + np.minimum(knap[:n], knap[n:]) > thr
        else:
            keep[part] = values[part] + _fractional_knapsack(gains, costs, capacity) > thr
    return keep


def solve_bnb(
    cp: CompiledPackage,
    budget: float,
    max_per_group: int | None = None,
    allowed: np.ndarray | None = None,
    max_states: int = 200_000,
    time_limit: float | None = None,
) -> SolveResult:
    """Branch and bound over groups, level by level with the whole frontier.

    Each state is a partial store over the groups processed so far (the rest discarded), so every state is
    feasible and the incumbent is the best state seen. A state survives only if its optimistic bound beats
    the incumbent: the tightest of (a) a fractional knapsack over the current marginal gains of every
    remaining candidate (marginals only shrink under clipped coverage; the group limit is relaxed), (b) for
    k = 1, a fractional knapsack with one item per remaining group, its best gain at its cheapest cost, and
    (c) coverage if every remaining group contributed its per-unit maximum, ignoring the budget.

    The frontier at a level lists the surviving states, then every child that fits in (parent, subset) order; an
    incumbent is replaced only by a state beating it by more than the tolerance, the first of the best by numpy's
    matrix product over that frontier.
    """
    start = time.perf_counter()
    k = cp.max_per_group if max_per_group is None else max_per_group
    t = _Tables.of(cp)
    w = cp.weights
    n_units = len(w)
    eligible = t.eligible(allowed, budget)
    plan = t.plan(eligible, k, budget)
    n_groups = len(eligible)
    tol = BOUND_RTOL * t.weight_sum
    plain = cp.saturation is None  # the Python bounds know h = min(1, z) only

    incumbent_sel = _greedy_incumbent(cp, budget, k, allowed, eligible)
    incumbent = objective(cp, incumbent_sel)

    # The frontier: coverage sums (Python lists while small, a numpy matrix once large), spent budget and each
    # state's node id. Nodes are recorded in chunks, one per level and path (first id, parent ids, group, which
    # option), from which the incumbent's store is read back.
    zs: list[list[float]] | None = [[0.0] * n_units]
    z = spent = None
    spent_list, vals = [0.0], [0.0]  # vals: F of each state while in lists (h = min(1, z) only), from its parent's
    ids: list[int] | np.ndarray = [0]
    chunks = _Chunks(plan)
    nodes = 1
    status = SolveStatus.OPTIMAL
    limit = budget + COST_EPS
    for g in range(n_groups):
        subsets, opt_costs, opt_rows = plan.option(g)
        n_live = len(ids)
        if len(subsets):
            if zs is not None and n_live * len(subsets) <= PY_CHILDREN:
                cost_list, option_cells = plan.python_options(g)
                parents, whiches = [], []
                for p in range(n_live):
                    zp, sp, vp = zs[p], spent_list[p], vals[p]
                    for which, oc in enumerate(cost_list):
                        cost = sp + oc
                        if cost <= limit:
                            child = zp[:]  # + the option's row: adding its zeros would change no bit
                            for r, a, _ in option_cells[which]:
                                child[r] += a
                            zs.append(child)
                            spent_list.append(cost)
                            vals.append(vp + _gain(option_cells[which], zp) if plain else 0.0)
                            parents.append(ids[p])
                            whiches.append(which)
                ids = ids + chunks.add(g, parents, whiches)
            else:
                if zs is not None:
                    z, spent, ids, zs = np.array(zs).reshape(-1, n_units), np.array(spent_list), np.array(ids), None
                child_cost = spent[:, None] + opt_costs[None, :]
                parent, which = np.nonzero(child_cost <= limit)
                if parent.size:
                    z = np.concatenate([z, z[parent] + opt_rows[which]])
                    spent = np.concatenate([spent, child_cost[parent, which]])
                    ids = np.concatenate([ids, chunks.add_array(g, ids[parent], which)])
            nodes += len(ids) - n_live
        values = None
        if zs is None:
            values = cp.h(z) @ w
        elif not plain or max(vals) > incumbent + tol - NOISE_RTOL * t.weight_sum:  # could replace the incumbent
            values = cp.h(np.array(zs)) @ w
        if values is not None:
            best = int(np.argmax(values))
            if values[best] > incumbent + tol:
                incumbent_sel = chunks.store(int(ids[best]))
                incumbent = objective(cp, incumbent_sel)
        if g == n_groups - 1:
            break
        level = plan.level(g)
        thr = incumbent + tol
        if zs is not None and plain and len(ids) <= PY_FRONTIER:
            keep = [i for i in range(len(ids)) if _py_keep(t, level, zs[i], spent_list[i], budget, k, thr, vals[i])]
            zs = [zs[i] for i in keep]
            spent_list = [spent_list[i] for i in keep]
            vals = [vals[i] for i in keep]
            ids = [ids[i] for i in keep]
        else:
            if zs is not None:
                z, spent, ids, zs = np.array(zs).reshape(-1, n_units), np.array(spent_list), np.array(ids), None
                if values is None:
                    values = cp.h(z) @ w
            keep = _np_keep(cp, level, z, spent, values, budget, k, thr)
            z, spent, ids = z[keep], spent[keep], ids[keep]
            if plain and len(ids) <= PY_FRONTIER:
                zs, spent_list, vals, ids = z.tolist(), spent.tolist(), values[keep].tolist(), ids.tolist()
        if not len(ids):
            break
        if len(ids) > max_states:
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


class _Chunks:
    """The search tree's nodes, appended a level at a time: node ids first..first+n-1 are children of `parents`
    through option `which` of group g. The root is node 0."""

    def __init__(self, plan: _Plan):
        self.plan = plan
        self.first = [0]
        self.parent: list = [[-1]]
        self.group = [-1]
        self.which: list = [[-1]]
        self.size = 1

    def _append(self, g: int, parents, whiches, n: int) -> int:
        first = self.size
        self.first.append(first)
        self.parent.append(parents)
        self.group.append(g)
        self.which.append(whiches)
        self.size += n
        return first

    def add(self, g: int, parents: list[int], whiches: list[int]) -> list[int]:
        first = self._append(g, parents, whiches, len(parents))
        return list(range(first, self.size))

    def add_array(self, g: int, parents: np.ndarray, whiches: np.ndarray) -> np.ndarray:
        first = self._append(g, parents, whiches, len(parents))
        return np.arange(first, self.size)

    def store(self, node: int) -> list[int]:
        """The candidates of a node's store, in group order."""
        parts = []
        while node > 0:
            c = bisect.bisect_right(self.first, node) - 1
            at = node - self.first[c]
            parts.append(self.plan.option(self.group[c])[0][int(self.which[c][at])])
            node = int(self.parent[c][at])
        return [i for part in reversed(parts) for i in part]


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
    """OPT by B&B (`bnb`), by MILP (`milp`), by independent parts (`parts`: memaudit/parts.py), by both B&B and
    MILP (`both`: certified only if they agree), or `auto` (B&B up to AUTO_BNB_MAX_GROUPS groups, falling back to
    the MILP at its state limit; the MILP beyond and for large packages)."""
    if method == "parts":
        from memeval.memaudit.parts import solve_parts

        return solve_parts(cp, budget, max_per_group, allowed)
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
