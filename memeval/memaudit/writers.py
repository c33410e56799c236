"""Writers: rules that choose a store from a package under a budget. All face the same package and budget;
exact-family writers (opt and its restrictions) carry the solver's certificate, heuristics never do."""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from memeval.memaudit.names import ALL_WRITERS, EXACT_WRITERS
from memeval.memaudit.objective import CoverageState, marginal_gains, objective, store_cost
from memeval.memaudit.outcomes import SolveStatus
from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.solvers import NOISE_RTOL, _gain, _one_term, _Tables, greedy_pass, solve_exact
from memeval.memaudit.tolerance import COST_EPS, GAIN_EPS

# benchmarks/bench_memaudit.py: B&B certifies base packages of 11 groups in < 0.05 s but needs ~1e6 states at
# 16 groups and 20% budget, where a fresh MILP takes 0.02 s
KIND_FILTERS: dict[str, Callable[[str], bool]] = {
    "fact_only": lambda kind: kind == "fact",
    "summary_only": lambda kind: kind == "summary",
    "no_tombstone_opt": lambda kind: kind not in ("tombstone", "update"),
}


@dataclass
class WriterResult:
    method: str
    selected: list[int]
    value: float
    cost: float
    certified: bool | None  # None: a heuristic (nothing to certify)
    status: SolveStatus = SolveStatus.DONE  # an exact writer's: its solver's
    runtime_s: float = 0.0
    info: dict = field(default_factory=dict)


def _result(method: str, cp: CompiledPackage, selected: list[int], start: float, **kw) -> WriterResult:
    selected = sorted(int(i) for i in selected)
    return WriterResult(method, selected, objective(cp, selected), store_cost(cp, selected),
                        kw.pop("certified", None), runtime_s=time.perf_counter() - start, **kw)


# --- exact family ----------------------------------------------------------------------------------------
def kind_mask(cp: CompiledPackage, method: str) -> np.ndarray | None:
    keep = KIND_FILTERS.get(method)
    if keep is None:
        return None
    masks = cp.memo.setdefault("kind_masks", {})
    if method not in masks:
        masks[method] = np.array([keep(k) for k in cp.kinds], dtype=bool)
        masks[method].flags.writeable = False  # shared by every call: nobody may change it
    return masks[method]


def _fast(cp: CompiledPackage) -> bool:
    """The plain-Python paths (solvers.greedy_pass and the rules below) hold for h = min(1, z) on a dense matrix."""
    return cp.saturation is None and not cp.is_large


def exact_writer(method: str, cp: CompiledPackage, budget: float, max_per_group: int | None = None,
                 solver: str = "auto") -> WriterResult:
    start = time.perf_counter()
    res = solve_exact(cp, budget, max_per_group, kind_mask(cp, method), solver)
    return _result(method, cp, res.selected, start, certified=res.certified, status=res.status,
                   info={"nodes": res.nodes, "solver": res.method, **res.info})


# --- online rules over the stream ------------------------------------------------------------------------
def lambda_grid(cp: CompiledPackage, size: int = 40, span: float = 1e-3) -> np.ndarray:
    """0 plus a geometric grid from span * d_max to d_max, d_max the best initial gain per unit cost (made once
    per package and size: it does not depend on the budget)."""
    grids = cp.memo.setdefault("lambda_grid", {})
    grid = grids.get((size, span))
    if grid is None:
        grid = grids[(size, span)] = _lambda_grid(cp, size, span)
        grid.flags.writeable = False
    return grid


def _lambda_grid(cp: CompiledPackage, size: int, span: float) -> np.ndarray:
    initial = marginal_gains(cp, np.zeros(len(cp.weights))) / cp.costs  # h(0) = 0: each candidate's own value
    d_max = float(initial.max()) if initial.size else 0.0
    if d_max <= 0:
        return np.array([0.0])
    return np.concatenate([[0.0], np.geomspace(span * d_max, d_max, size)])


def _threshold_pass(cp: CompiledPackage, budget: float, lam: float, k: int,
                    values: Callable[[CoverageState, np.ndarray], np.ndarray]) -> list[int]:
    state = CoverageState(cp, budget, k)
    for members in cp.groups:
        members = members[state.feasible_mask(members)]
        if members.size == 0:
            continue
        gains = values(state, members)
        admissible = (gains > GAIN_EPS) & (gains / cp.costs[members] >= lam)
        if admissible.any():
            pick = members[admissible][int(np.argmax(gains[admissible]))]
            state.add(pick)
    return state.selected


def gvt(cp: CompiledPackage, budget: float, max_per_group: int | None = None,
        grid: np.ndarray | None = None) -> WriterResult:
    """Grouped value threshold with exact marginals, best over the lambda grid (a calibration baseline)."""
    return gvt_budgets(cp, [budget], grid)[0]


def gvt_budgets(cp: CompiledPackage, budgets, grid: np.ndarray | None = None) -> list[WriterResult]:
    """`gvt` at each of `budgets`, in one pass over the stream (a sweep asks for every budget of a package).

    Every (budget, lambda) pair is one row of state; rows never interact, so each budget's store is the one a
    pass at that budget alone picks. A group's gains are computed over the units its candidates touch (elsewhere
    a gain term is exactly 0), so a pass costs the coverage's non-zeros times the rows, near-linear in the
    package's size. Each result's runtime_s is an equal share of the pass.
    """
    start = time.perf_counter()
    lams = lambda_grid(cp) if grid is None else np.asarray(grid, dtype=float)
    n_lams = len(lams)
    limits = np.repeat(np.asarray(budgets, dtype=float), n_lams)  # row b * n_lams + j: budget b, lambda j
    lam_rows = np.tile(lams, len(budgets))
    w = cp.weights
    z = np.zeros((len(limits), len(w)))
    spent = np.zeros(len(limits))
    picks = np.full((len(limits), len(cp.groups)), -1, dtype=np.int64)
    for g, (members, cols, rows, costs, w_cols) in enumerate(_group_tables(cp)):
        if members.size == 0:
            continue
        zc = z[:, cols]
        gains = (cp.h_cols(zc[:, None, :] + rows[None, :, :], cols) - cp.h_cols(zc, cols)[:, None, :]) @ w_cols
        admissible = ((costs[None, :] <= (limits - spent)[:, None] + COST_EPS) & (gains > GAIN_EPS)
                      & (gains / costs[None, :] >= lam_rows[:, None]))
        chosen = np.argmax(np.where(admissible, gains, -np.inf), axis=1)
        has = admissible.any(axis=1)
        if has.any():
            z[np.ix_(has, cols)] += rows[chosen[has]]
        spent[has] += costs[chosen[has]]
        picks[has, g] = members[chosen[has]]
    distinct, store_of = np.unique(picks, axis=0, return_inverse=True)  # rows that pick alike are scored once
    store_of = store_of.ravel()
    stores = [[i for i in p if i >= 0] for p in distinct.tolist()]  # one pick per group: stream order
    values = np.array([objective(cp, store) for store in stores])[store_of]
    results = []
    for b in range(len(budgets)):
        block = values[b * n_lams:(b + 1) * n_lams]
        best = int(np.flatnonzero(block >= block.max() - GAIN_EPS)[0])
        results.append(_result("gvt", cp, stores[store_of[b * n_lams + best]], start,
                               info={"lambda": float(lams[best])}))
    share = (time.perf_counter() - start) / max(1, len(budgets))
    for result in results:
        result.runtime_s = share
    return results


def _group_tables(cp: CompiledPackage) -> list:
    """Per group: members, the units they touch, their rows over those units, costs and those units' weights."""
    tables = cp.memo.get("gvt_groups")
    if tables is None:
        tables = cp.memo["gvt_groups"] = []
        for members in cp.groups:
            cols, rows = cp.touched(members) if members.size else (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
            tables.append((members, cols, rows, cp.costs[members], cp.weights[cols]))
    return tables


class Estimator(Protocol):
    """Estimated marginal value of candidates given the store so far; never reads the coverage matrix."""

    name: str

    def __call__(self, candidates: np.ndarray, selected: list[int]) -> np.ndarray: ...


@dataclass
class KindPriorEstimator:
    """A declared, coverage-free estimator for synthetic packages: a prior value per candidate kind,
    discounted once its experience already has a stored candidate."""

    kinds: tuple[str, ...]
    prior: dict = field(default_factory=lambda: {"update": 3.0, "tombstone": 2.0, "fact": 1.5, "interval_fact": 2.0,
                                                 "summary": 1.5, "raw": 2.5, "abstention": 1.5, "uncertainty": 1.5})
    name: str = "kind_prior"

    def __call__(self, candidates: np.ndarray, selected: list[int]) -> np.ndarray:
        return np.array([self.prior.get(self.kinds[i], 1.0) for i in candidates], dtype=float)


@dataclass
class TfidfSalienceEstimator:
    """A declared, coverage-free estimator for natural packages: the summed IDF of a candidate's distinct
    words over the package's candidate texts, scaled to [0, 1]. It reads candidate text only."""

    texts: tuple[str, ...]
    name: str = "tfidf_salience"

    def __post_init__(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        if not any(t.strip() for t in self.texts):
            self.salience = np.ones(len(self.texts))
            return
        vectorizer = TfidfVectorizer(lowercase=True, stop_words="english", use_idf=True, norm=None,
                                     binary=True, sublinear_tf=False)
        matrix = vectorizer.fit_transform([t or "" for t in self.texts])
        raw = np.asarray(matrix.sum(axis=1)).ravel()
        self.salience = raw / raw.max() if raw.max() > 0 else np.ones(len(self.texts))

    def __call__(self, candidates: np.ndarray, selected: list[int]) -> np.ndarray:
        return self.salience[np.asarray(candidates, dtype=int)]


def declared_estimator(cp: CompiledPackage) -> Estimator:
    """The estimator a package declares (meta.estimator), else the kind prior of synthetic packages."""
    if cp.estimator == "tfidf_salience":
        return TfidfSalienceEstimator(cp.texts)
    return KindPriorEstimator(cp.kinds)


def estimated_gvt(cp: CompiledPackage, budget: float, estimator: Estimator | None = None,
                  max_per_group: int | None = None, grid_size: int = 40) -> WriterResult:
    """GVT with estimated values: the threshold grid and every choice use only the estimator."""
    start = time.perf_counter()
    k = cp.max_per_group if max_per_group is None else max_per_group
    if estimator is None:  # the declared estimators score a candidate alone: one table per package
        name, values, lam = _declared_scores(cp, grid_size)
        selected = _static_threshold_pass(cp, budget, lam, k, values)
        return _result("estimated_gvt", cp, selected, start, info={"lambda": lam, "estimator": name})
    lam = _median_lambda(estimator(np.arange(cp.n_candidates), []) / cp.costs, grid_size)
    selected = _threshold_pass(cp, budget, lam, k, lambda st, m: estimator(m, st.selected))
    return _result("estimated_gvt", cp, selected, start, info={"lambda": lam, "estimator": estimator.name})


def _median_lambda(initial: np.ndarray, grid_size: int) -> float:
    d_max = float(initial.max()) if initial.size else 0.0
    grid = np.concatenate([[0.0], np.geomspace(1e-3 * d_max, d_max, grid_size)]) if d_max > 0 else np.array([0.0])
    # without the coverage matrix the writer cannot score its own stores, so it commits to one lambda:
    # the median of the grid's positive values (declared, not tuned on the package)
    return float(np.median(grid[1:])) if len(grid) > 1 else 0.0


def _declared_scores(cp: CompiledPackage, grid_size: int) -> tuple[str, list[float], float]:
    """The declared estimator's name, its value of every candidate and its lambda, made once per package."""
    key = ("declared_scores", grid_size)
    if key not in cp.memo:
        estimator = declared_estimator(cp)
        values = estimator(np.arange(cp.n_candidates), [])
        cp.memo[key] = (estimator.name, values.tolist(), _median_lambda(values / cp.costs, grid_size))
    return cp.memo[key]


def _static_threshold_pass(cp: CompiledPackage, budget: float, lam: float, k: int, values: list[float]) -> list[int]:
    """_threshold_pass for values that do not depend on the store: in each group, of the members that fit, the
    first of largest value among those worth more than GAIN_EPS at lam per unit cost or better."""
    costs = _costs(cp)
    selected, spent = [], 0.0
    if k < 1:
        return selected
    for members in _members(cp):
        limit = budget - spent + COST_EPS
        pick, best = -1, 0.0
        for i in members:
            v = values[i]
            if costs[i] <= limit and v > GAIN_EPS and v / costs[i] >= lam and (pick < 0 or v > best):
                pick, best = i, v
        if pick >= 0:
            selected.append(pick)
            spent += costs[pick]
    return selected


def _costs(cp: CompiledPackage) -> list[float]:
    costs = cp.memo.get("costs")
    if costs is None:
        costs = cp.memo["costs"] = cp.costs.tolist()
    return costs


def _members(cp: CompiledPackage) -> list[list[int]]:
    members = cp.memo.get("members")
    if members is None:
        members = cp.memo["members"] = [g.tolist() for g in cp.groups]
    return members


def density_only(cp: CompiledPackage, budget: float, max_per_group: int | None = None) -> WriterResult:
    """The paper's negative control: per group in stream order, the best positive gain per cost that fits."""
    start = time.perf_counter()
    if _fast(cp):
        return _result("density_only", cp, _density_only_fast(cp, budget, max_per_group), start)
    state = CoverageState(cp, budget, max_per_group)
    for members in cp.groups:
        members = members[state.feasible_mask(members)]
        if members.size == 0:
            continue
        gains = state.gains(members)
        positive = gains > GAIN_EPS
        if positive.any():
            density = np.where(positive, gains / cp.costs[members], -np.inf)
            state.add(members[int(np.argmax(density))])
    return _result("density_only", cp, state.selected, start)


def _density_only_fast(cp: CompiledPackage, budget: float, max_per_group: int | None) -> list[int]:
    """density_only in plain Python: gains from each member's non-zero cells; a step whose best density has a
    rival within rounding noise (and a gain of more than one term) is decided by the numpy expression."""
    t = _Tables.of(cp)
    k = cp.max_per_group if max_per_group is None else max_per_group
    costs, cells = t.costs, t.cells
    z = [0.0] * t.n_units
    selected, spent = [], 0.0
    if k < 1:
        return selected
    for members in t.members:
        limit = budget - spent + COST_EPS
        feasible = [i for i in members if costs[i] <= limit]
        if not feasible:
            continue
        gains = [_gain(cells[i], z) for i in feasible]
        density = [g / costs[i] if g > GAIN_EPS else -np.inf for g, i in zip(gains, feasible, strict=True)]
        top = max(density)
        if top == -np.inf:
            continue
        near = [j for j, d in enumerate(density) if d >= top - NOISE_RTOL * t.density_scale]
        if len(near) == 1 or all(_one_term(cells[feasible[j]], z) for j in near):
            u = feasible[near[0] if len(near) == 1 else max(near, key=lambda j: (density[j], -j))]
        else:
            idx = np.array(feasible)
            exact = (cp.h(np.array(z) + cp.coverage[idx]) - cp.h(np.array(z))) @ cp.weights
            positive = exact > GAIN_EPS
            if not positive.any():
                continue
            u = int(idx[int(np.argmax(np.where(positive, exact / cp.costs[idx], -np.inf)))])
        selected.append(u)
        for r, a, _ in cells[u]:
            z[r] += a
        spent += costs[u]
    return selected


def _offline_greedy(cp: CompiledPackage, budget: float, max_per_group: int | None, by_density: bool) -> list[int]:
    if _fast(cp):  # the very passes B&B's incumbent made at this budget (solvers.greedy_pass)
        return greedy_pass(cp, budget, cp.max_per_group if max_per_group is None else max_per_group, None, by_density)
    state = CoverageState(cp, budget, max_per_group)
    everything = np.arange(cp.n_candidates)
    while True:
        members = everything[state.feasible_mask(everything)]
        if members.size == 0:
            break
        gains = state.gains(members)
        score = gains / cp.costs[members] if by_density else gains
        j = int(np.argmax(score))
        if gains[j] <= GAIN_EPS:
            break
        state.add(members[j])
    return state.selected


def greedy(cp: CompiledPackage, budget: float, max_per_group: int | None = None) -> WriterResult:
    start = time.perf_counter()
    return _result("greedy", cp, _offline_greedy(cp, budget, max_per_group, False), start)


def density_greedy(cp: CompiledPackage, budget: float, max_per_group: int | None = None) -> WriterResult:
    start = time.perf_counter()
    return _result("density_greedy", cp, _offline_greedy(cp, budget, max_per_group, True), start)


def recency_raw(cp: CompiledPackage, budget: float, max_per_group: int | None = None) -> WriterResult:
    """Raw spans from the most recent experience backwards, stopping at the first that does not fit
    (a sliding window of the latest raw text)."""
    start = time.perf_counter()
    selected, spent = [], 0.0
    for members in reversed(cp.groups):
        raws = [int(i) for i in members if cp.kinds[i] == "raw"]
        if not raws:
            continue
        u = raws[0]
        if spent + cp.costs[u] > budget + COST_EPS:
            break
        selected.append(u)
        spent += cp.costs[u]
    return _result("recency_raw", cp, selected, start)


def random_writer(cp: CompiledPackage, budget: float, max_per_group: int | None = None, seed: int = 0) -> WriterResult:
    """A seeded random feasible store: candidates in random order, each kept if it still fits (a floor)."""
    start = time.perf_counter()
    rng = random.Random(zlib.crc32(f"{cp.package_id}|{budget}|{seed}".encode()))
    order = list(range(cp.n_candidates))
    rng.shuffle(order)
    k = cp.max_per_group if max_per_group is None else max_per_group
    costs, group_of = _costs(cp), cp.group_of.tolist()
    counts = [0] * len(cp.groups)
    selected, spent, budget = [], 0.0, float(budget)
    for u in order:  # each candidate comes once, so "not yet chosen" always holds
        if costs[u] <= budget - spent + COST_EPS and counts[group_of[u]] < k:
            selected.append(u)
            spent += costs[u]
            counts[group_of[u]] += 1
    return _result("random", cp, selected, start)


def run_writer(method: str, cp: CompiledPackage, budget: float, max_per_group: int | None = None,
               solver: str = "auto", estimator: Estimator | None = None, seed: int = 0) -> WriterResult:
    if method in EXACT_WRITERS:
        return exact_writer(method, cp, budget, max_per_group, solver)
    if method == "gvt":
        return gvt(cp, budget, max_per_group)
    if method == "estimated_gvt":
        return estimated_gvt(cp, budget, estimator, max_per_group)
    if method == "density_only":
        return density_only(cp, budget, max_per_group)
    if method == "greedy":
        return greedy(cp, budget, max_per_group)
    if method == "density_greedy":
        return density_greedy(cp, budget, max_per_group)
    if method == "recency_raw":
        return recency_raw(cp, budget, max_per_group)
    if method == "random":
        return random_writer(cp, budget, max_per_group, seed)
    raise ValueError(f"unknown method {method!r}; choose from {', '.join(ALL_WRITERS)}")


def package_ratio(value: float, opt: float) -> float:
    """rho = F(X) / OPT, with rho = 1 when both are 0."""
    if opt <= 0:
        return 1.0 if value <= 0 else float("inf")
    return value / opt
