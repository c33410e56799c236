"""The package optimum as a MILP: binaries x_u, y_r in [0, 1], y_r <= sum_u a_ur x_u, cost and group constraints,
maximise sum_r w_r y_r. Zero relative gap, a time limit, one solver thread.

cvxpy builds the model once per (package, allowed candidates, k) with the budget as a Parameter, so a sweep over
budgets canonicalises once; each solve then takes cvxpy's problem data for the budget and hands it to HiGHS
through highspy, which is what lets a solve carry a MIP start (cvxpy 1.9.3 passes HiGHS only its own previous
solution) and lets a caller watch HiGHS's bounds. The model is written in matrix form — the sparse coverage
matrix, one sparse group-incidence matrix for every group with more than k candidates, bounds on y — so building
it costs a few constraint objects whatever the package size, and the coverage is never made dense.

A solve is certified only when HiGHS proves optimality with a zero gap *and* the store it returns scores (by the
package's own objective) the value HiGHS reports for it; a warm-started solve that fails the second test is
discarded and solved again cold (see MIP_START below).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from memeval.memaudit.objective import objective, store_cost
from memeval.memaudit.outcomes import SolveResult, SolveStatus
from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.tolerance import COST_EPS, HIGHS_FEASIBILITY, MILP_CERT_GAP, values_agree

HIGHS_THREADS = 1  # HiGHS fixes its thread pool at first use in a process: always pass the same value
TIME_LIMIT_S = 60.0
TIME_LIMIT_ENV = "MEMEVAL_MILP_TIME_LIMIT"


def time_limit_s() -> float:
    """The MILP's wall-clock limit, a safety net only: a solve it stops proves nothing, and a sweep writes no row
    from it (memaudit/sweep.py), so no row depends on the machine's load. MEMEVAL_MILP_TIME_LIMIT (seconds)
    raises it on a slow or busy machine."""
    text = os.environ.get(TIME_LIMIT_ENV, "").strip()
    if not text:
        return TIME_LIMIT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        from memeval.errors import InputError

        raise InputError(TIME_LIMIT_ENV, text, "expected a positive number of seconds")
    return value

# MIP_START. Why cvxpy's warm start was turned off: highspy 1.16.0 mishandles a feasible MIP start that its presolve
# maps to a different point. temporal_interval seed 11 at B = 2, started from the B = 1 optimum {22} (F = 1.6): HiGHS
# logs "MIP start solution is feasible: objective value is -1", then "... is feasible in the reduced space: objective
# value is -2" (the mapped point also holds the other cost-1 tombstone, 27), keeps -2 as its incumbent's value,
# finds nothing strictly better and returns Optimal, objective -2 (F = 3.2), gap 0 — with the unmapped start {22}
# as its solution. The start itself is feasible: the defect is HiGHS's, not the start's. It happens with the full
# start cvxpy passes and with x alone (setSolution by index), not with presolve off, and not in highspy 1.15.1 (same
# MPS file and start: {22, 27}). In 1.15.1's source (HighsMipSolverData::runSetup) the start is mapped by
# postSolveStack.getReducedPrimalSolution, valued by its own original objective, and kept as mipsolver.solution_;
# 1.16's extra log line values the mapped point instead. cvxpy (highs_conif.py, solve_via_data, added in
# cvxpy/cvxpy#2796) calls setSolution(old_result["solution"]) whenever warm_start=True and it cached a previous
# solve: the previous budget's optimum, the start that triggers this. No HiGHS or cvxpy issue reports it (nearest:
# ERGO-Code/HiGHS#902, a wrong status after an infeasible start; cvxpy/cvxpy#3490, open, starts from
# Variable.value). Here: the start is a store (the best writer's) made complete, y = h(z), and refused if the
# model excludes it; presolve stays on (off, the 20,000 / 30% case ran past 1,000 s); and every solve is checked —
# its store must score HiGHS's objective — a started solve that fails is solved again cold. Against the cvxpy path
# on 14,012 solves (8 distributions x 40-100 seeds x 10-12 budgets, saturated and larger packages, scaled base to
# 7,000 candidates; starts from the best writer or from the previous budget's optimum) every value and
# certificate was identical; 101 started solves were discarded (temporal_interval B = 2, one saturated package).


@lru_cache(maxsize=1)
def solver_versions() -> dict:
    """The installed cvxpy and highspy, read from their distributions' metadata: a sweep's manifest records them
    without importing cvxpy (about a second) in a process that never solves a MILP."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("cvxpy", "highspy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:  # pragma: no cover - both are dependencies
            out[name] = "unknown"
    return out


@lru_cache(maxsize=1)
def _silence_highs_banner() -> None:
    """HiGHS prints a banner to fd 1 when its first instance is created in a process; it would corrupt
    `--json` output, so the first instance is created with fd 1 pointed at /dev/null."""
    import os
    import sys

    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def highs_options(time_limit: float) -> dict:
    """The options of every MILP solve (the certificate's tolerances: memaudit/tolerance.py)."""
    return {"mip_rel_gap": 0.0, "mip_abs_gap": 0.0, "mip_feasibility_tolerance": HIGHS_FEASIBILITY,
            "primal_feasibility_tolerance": HIGHS_FEASIBILITY, "time_limit": float(time_limit),
            "threads": HIGHS_THREADS}


def group_incidence(groups: np.ndarray, k: int):
    """One row per group holding more than k candidates (the others cannot exceed k), a 1 per member; None when
    no group can."""
    import scipy.sparse as sparse

    labels, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    crowded = counts > k
    if not crowded.any():
        return None
    row_of = np.full(len(labels), -1)
    row_of[crowded] = np.arange(int(crowded.sum()))
    members = np.flatnonzero(crowded[inverse])
    return sparse.csr_matrix((np.ones(len(members)), (row_of[inverse[members]], members)),
                             shape=(int(crowded.sum()), len(groups)))


def saturation_cuts(y, x, coverage, slopes: np.ndarray, intercepts: np.ndarray) -> list:
    """y_r <= s_rp z_r + b_rp for every unit r and line p (padding lines, b = inf, left out)."""
    import scipy.sparse as sparse

    zt = coverage.T.tocsr()
    cuts = []
    for p in range(slopes.shape[1]):
        rows = np.flatnonzero(np.isfinite(intercepts[:, p]))
        if rows.size == 0:
            continue
        scaled = sparse.diags(slopes[rows, p]) @ zt[rows]
        cuts.append(y[rows] <= scaled @ x + intercepts[rows, p])
    return cuts


def highs_lp(data: dict):
    """cvxpy's HIGHS problem data as a highspy model, built as cvxpy's own HiGHS interface builds it
    (cvxpy/reductions/solvers/conic_solvers/highs_conif.py, solve_via_data), so a solve here and a solve through
    cvxpy hand HiGHS the same model."""
    import cvxpy.settings as s
    import highspy

    inf = highspy.kHighsInf
    a = data[s.A].tocsc()
    n_eq = data[s.DIMS].zero
    b = np.asarray(data[s.B], dtype=float)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.offset_ = 0
    lp.col_cost_ = data[s.C]
    lp.row_lower_ = np.concatenate([b[:n_eq], np.full(len(b) - n_eq, -inf)])
    lp.row_upper_ = b
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr
    lp.a_matrix_.index_ = a.indices
    lp.a_matrix_.value_ = a.data
    lower, upper = data[s.LOWER_BOUNDS], data[s.UPPER_BOUNDS]
    col_lower = np.full(lp.num_col_, -inf) if lower is None else np.array(lower, dtype=float)
    col_upper = np.full(lp.num_col_, inf) if upper is None else np.array(upper, dtype=float)
    booleans = np.asarray(data[s.BOOL_IDX], dtype=int)
    if booleans.size or data[s.INT_IDX]:
        integrality = [highspy.HighsVarType.kContinuous] * lp.num_col_
        for i in booleans.tolist() + [int(i) for i in data[s.INT_IDX]]:
            integrality[i] = highspy.HighsVarType.kInteger
        col_lower[booleans] = np.maximum(col_lower[booleans], 0)
        col_upper[booleans] = np.minimum(col_upper[booleans], 1)
        lp.integrality_ = integrality
    lp.col_lower_ = col_lower
    lp.col_upper_ = col_upper
    return lp


class InfeasibleStart(ValueError):
    """A store that cannot start the solve: it does not fit the budget, the group limit or the allowed set."""


@dataclass
class _Run:
    status: str  # as cvxpy spells HiGHS's model status
    x: np.ndarray | None  # None: HiGHS holds no feasible solution
    objective: float | None  # HiGHS's value of its solution, in the package's units
    dual_bound: float | None
    gap: float | None
    nodes: int
    build_s: float
    highs_s: float


class MilpModel:
    def __init__(self, cp: CompiledPackage, max_per_group: int | None = None, allowed: np.ndarray | None = None):
        import cvxpy as cp_

        _silence_highs_banner()
        self.cp = cp
        self.k = cp.max_per_group if max_per_group is None else max_per_group
        mask = np.ones(cp.n_candidates, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
        self.index = np.flatnonzero(mask)
        n = len(self.index)
        self.budget = cp_.Parameter(nonneg=True, name="budget")
        self.x = cp_.Variable(n, boolean=True, name="x")
        units = np.flatnonzero(cp.weights > 0)
        self.units = units
        coverage = cp.coverage_sparse[self.index][:, units].tocsc()
        self.coverage = coverage
        if cp.saturation is None:  # h = min(1, z): y in [0, 1], y <= z
            self.y = cp_.Variable(len(units), bounds=[0, 1], name="y")
            constraints = [self.y <= coverage.T @ self.x]
        else:  # h = min over lines: one cut y <= s z + b per line (concave h makes them exact)
            self.y = cp_.Variable(len(units), nonneg=True, name="y")
            constraints = saturation_cuts(self.y, self.x, coverage, cp.saturation.slopes[units],
                                          cp.saturation.intercepts[units])
        constraints.append(cp.costs[self.index] @ self.x <= self.budget)
        incidence = group_incidence(cp.group_of[self.index], self.k)
        if incidence is not None:
            constraints.append(incidence @ self.x <= self.k)
        weights = cp.weights[units]
        self.scale = float(weights.max()) if len(units) else 1.0  # HiGHS's tolerances are absolute: solve on max 1
        self.problem = cp_.Problem(cp_.Maximize((weights / self.scale) @ self.y), constraints)
        self.layout: tuple[int, int, int] | None = None  # HiGHS's columns: first of x, first of y, how many

    # --- the model for one budget, as HiGHS gets it ------------------------------------------------------------
    def highs_problem(self, budget: float):
        """(highspy model, first column of x, first column of y) at this budget: cvxpy re-applies the Parameter
        to the problem it canonicalised on the first call."""
        import cvxpy.settings as s

        self.budget.value = float(budget)
        data, _, _ = self.problem.get_problem_data("HIGHS")
        columns = data[s.PARAM_PROB].var_id_to_col
        lp = highs_lp(data)
        self.layout = (columns[self.x.id], columns[self.y.id], lp.num_col_)
        return lp, columns[self.x.id], columns[self.y.id]

    def start_columns(self, selected: Iterable[int], budget: float) -> np.ndarray:
        """A complete MIP start from a store: x its candidates, y_r = h_r(z_r), the most each coverage constraint
        allows (so the start's objective is the store's F). Raises InfeasibleStart for a store the model excludes."""
        if self.layout is None:
            self.highs_problem(budget)
        x0, y0, n_columns = self.layout
        items = [int(i) for i in selected]
        chosen = sorted(set(items))
        if len(chosen) != len(items):
            raise InfeasibleStart("a candidate appears twice")
        positions = np.searchsorted(self.index, chosen)
        if any(p >= len(self.index) or self.index[p] != c for p, c in zip(positions.tolist(), chosen, strict=True)):
            raise InfeasibleStart("a candidate outside the allowed set")
        if store_cost(self.cp, chosen) > budget + COST_EPS:
            raise InfeasibleStart(f"cost {store_cost(self.cp, chosen):g} exceeds the budget {budget:g}")
        if chosen and int(np.bincount(self.cp.group_of[chosen]).max()) > self.k:
            raise InfeasibleStart(f"more than {self.k} candidates of one group")
        x = np.zeros(len(self.index))
        x[positions] = 1.0
        columns = np.zeros(n_columns)
        columns[x0:x0 + len(x)] = x
        columns[y0:y0 + len(self.units)] = self.cp.h_cols(self.coverage.T @ x, self.units)
        return columns

    def _run(self, budget: float, time_limit: float, start: np.ndarray | None,
             observe: Callable | None) -> _Run:
        import highspy
        from cvxpy.reductions.solvers.conic_solvers.highs_conif import HIGHS

        began = time.perf_counter()
        lp, x0, _ = self.highs_problem(budget)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for name, value in highs_options(time_limit).items():
            h.setOptionValue(name, value)
        h.passModel(lp)
        if start is not None:
            solution = highspy.HighsSolution()
            solution.col_value = start
            solution.value_valid = True
            h.setSolution(solution)
        if observe is not None:
            observe(h)
        build_s = time.perf_counter() - began
        h.run()
        info = h.getInfo()
        model_status = h.getModelStatus().name
        # cvxpy spells a time limit as it spells an iteration or objective limit ("user_limit"); only a time
        # limit depends on the machine's load, so it keeps its own name (the sweep writes no row from it)
        status = SolveStatus.TIME_LIMIT.value if model_status == "kTimeLimit" else \
            HIGHS.STATUS_MAP.get(model_status, "unknown")
        feasible = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value)[x0:x0 + len(self.index)] if feasible else None
        dual = info.mip_dual_bound
        return _Run(status=status, x=x,
                    objective=-float(info.objective_function_value) * self.scale if feasible else None,
                    dual_bound=None if dual is None else -float(dual) * self.scale,  # HiGHS minimises -F
                    gap=None if info.mip_gap is None else float(info.mip_gap), nodes=int(info.mip_node_count or 0),
                    build_s=build_s, highs_s=float(h.getRunTime()))

    # --- solving ----------------------------------------------------------------------------------------------
    def solve(self, budget: float, time_limit: float | None = None, start: Iterable[int] | None = None,
              observe: Callable | None = None) -> SolveResult:
        """OPT at `budget`. `start`: a store (candidate indices, e.g. the best writer's) handed to HiGHS as a
        complete MIP start; an infeasible one is refused (info["start"] says why) and the solve runs cold.
        `observe(highs)` is called before HiGHS runs (benchmarks subscribe to its callbacks there)."""
        columns, note = None, None
        if start is not None and len(self.index) and len(self.units):
            start = list(start)
            try:
                columns = self.start_columns(start, budget)
                note = {"value": objective(self.cp, start), "outcome": "used"}
            except InfeasibleStart as exc:
                note = {"value": None, "outcome": f"refused: {exc}"}
        return self.solve_from(budget, columns, time_limit, observe, note)

    def solve_from(self, budget: float, columns: np.ndarray | None, time_limit: float | None = None,
                   observe: Callable | None = None, note: dict | None = None) -> SolveResult:
        """`solve` with the start given as HiGHS's columns, unchecked (tests hand it deliberately wrong ones)."""
        start = time.perf_counter()
        time_limit = time_limit_s() if time_limit is None else time_limit
        self.budget.value = float(budget)
        info: dict = {"solver_versions": solver_versions()}
        if len(self.index) == 0 or len(self.units) == 0:
            return SolveResult("milp", 0.0, [], 0.0, SolveStatus.OPTIMAL, True, time.perf_counter() - start, 0, 0.0, 0.0,
                               info)
        if columns is not None and note is None:
            note = {"value": None, "outcome": "used"}
        try:
            run = self._run(budget, time_limit, columns, observe)
            selected = self._selected(run)
            if columns is not None and not self._consistent(run, selected):
                note = {**note, "outcome": (f"discarded: HiGHS returned a store of value {objective(self.cp, selected)!r} "
                                            f"as {run.objective!r}; solved again cold")}
                run = self._run(budget, time_limit, None, observe)
                selected = self._selected(run)
        except Exception as exc:  # solver failure is a result, never a crash of the sweep
            info["error"] = f"{type(exc).__name__}: {exc}"
            return SolveResult("milp", float("nan"), [], 0.0, SolveStatus.ERROR, False, time.perf_counter() - start,
                               info=info)
        status = SolveStatus(run.status)  # cvxpy's spelling of HiGHS's status
        value = objective(self.cp, selected)
        consistent = self._consistent(run, selected)
        optimal = status == SolveStatus.OPTIMAL and run.gap is not None and consistent and (
            run.gap <= MILP_CERT_GAP or not np.isfinite(run.gap) and run.nodes == 0)
        if status == SolveStatus.OPTIMAL and not consistent:
            status = SolveStatus.OPTIMAL_INACCURATE
        elif status == SolveStatus.OPTIMAL and run.gap is not None and run.gap > MILP_CERT_GAP:
            status = SolveStatus.OPTIMAL_GAP_NONZERO
        info.update({"objective": run.objective, "cvxpy_status": run.status, "build_s": run.build_s,
                     "highs_s": run.highs_s})
        if note is not None:
            info["start"] = note
        return SolveResult(
            method="milp",
            value=value,
            selected=selected,
            cost=store_cost(self.cp, selected),
            status=SolveStatus.OPTIMAL if optimal else status,
            certified=bool(optimal),
            runtime_s=time.perf_counter() - start,
            nodes=run.nodes,
            dual_bound=run.dual_bound,
            gap=run.gap,
            info=info,
        )

    def _selected(self, run: _Run) -> list[int]:
        return [] if run.x is None else sorted(int(self.index[i]) for i in np.flatnonzero(run.x > 0.5))

    def _consistent(self, run: _Run, selected: list[int]) -> bool:
        """Whether the store HiGHS returns scores what HiGHS says it scores (see MIP_START)."""
        return run.objective is not None and values_agree(objective(self.cp, selected), run.objective)


def best_start(cp: CompiledPackage, budget: float, stores: Iterable[Iterable[int]], max_per_group: int | None = None,
               allowed: np.ndarray | None = None) -> list[int] | None:
    """The highest-valued store among `stores` (writers' choices) that the MILP at this budget admits."""
    k = cp.max_per_group if max_per_group is None else max_per_group
    mask = None if allowed is None else np.asarray(allowed, dtype=bool)
    best, best_value = None, -1.0
    for store in stores:
        store = sorted(int(i) for i in store)
        if len(set(store)) != len(store) or store_cost(cp, store) > budget + COST_EPS:
            continue
        if store and (int(np.bincount(cp.group_of[store]).max()) > k or mask is not None and not mask[store].all()):
            continue
        value = objective(cp, store)
        if value > best_value:
            best, best_value = store, value
    return best


def solve_milp(
    cp: CompiledPackage,
    budget: float,
    max_per_group: int | None = None,
    allowed: np.ndarray | None = None,
    time_limit: float | None = None,
    start: Iterable[int] | None = None,
) -> SolveResult:
    """A fresh model per call (the naive build the benchmarks compare against); sweeps reuse MilpModel."""
    return MilpModel(cp, max_per_group, allowed).solve(budget, time_limit, start)
