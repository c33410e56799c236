"""The package optimum as a MILP through cvxpy with HiGHS: binaries x_u, y_r in [0, 1], y_r <= sum_u a_ur x_u,
cost and group constraints, maximise sum_r w_r y_r. Zero relative gap, a time limit, one solver thread.

One model per (package, allowed candidates, k) with the budget as a cvxpy Parameter, so a sweep over
budgets canonicalises once and re-solves. The model is written in matrix form — the sparse coverage matrix, one
sparse group-incidence matrix for every group with more than k candidates, bounds on y — so building it costs a
few constraint objects whatever the package size, and the coverage is never made dense.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from memeval.memaudit.objective import objective, store_cost
from memeval.memaudit.outcomes import SolveResult, SolveStatus
from memeval.memaudit.package import CompiledPackage
from memeval.memaudit.tolerance import HIGHS_FEASIBILITY, MILP_CERT_GAP

HIGHS_THREADS = 1  # HiGHS fixes its thread pool at first use in a process: always pass the same value
# cvxpy warm-starts HiGHS by default (setSolution with the previous budget's store); with highspy 1.16.0 that
# returned a wrong "optimal" value (temporal_interval seed 11, B = 1 then B = 2: 1.6 instead of 3.2). Never warm-start.
WARM_START = False


@lru_cache(maxsize=1)
def solver_versions() -> dict:
    import cvxpy
    import highspy

    version = getattr(highspy, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as pkg_version

            version = pkg_version("highspy")
        except Exception:  # pragma: no cover - metadata missing
            version = "unknown"
    return {"cvxpy": cvxpy.__version__, "highspy": version}


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

    def solve(self, budget: float, time_limit: float = 60.0) -> SolveResult:
        start = time.perf_counter()
        self.budget.value = float(budget)
        info: dict = {"solver_versions": solver_versions()}
        if len(self.index) == 0 or len(self.units) == 0:
            return SolveResult("milp", 0.0, [], 0.0, SolveStatus.OPTIMAL, True, time.perf_counter() - start, 0, 0.0, 0.0,
                               info)
        try:
            self.problem.solve(
                solver="HIGHS", mip_rel_gap=0.0, mip_abs_gap=0.0, mip_feasibility_tolerance=HIGHS_FEASIBILITY,
                primal_feasibility_tolerance=HIGHS_FEASIBILITY, time_limit=float(time_limit), threads=HIGHS_THREADS, output_flag=False,
                warm_start=WARM_START,
                verbose=False,
            )
        except Exception as exc:  # solver failure is a result, never a crash of the sweep
            info["error"] = f"{type(exc).__name__}: {exc}"
            return SolveResult("milp", float("nan"), [], 0.0, SolveStatus.ERROR, False, time.perf_counter() - start,
                               info=info)
        stats = self.problem.solver_stats
        highs = getattr(stats, "extra_stats", None)
        gap = getattr(highs, "mip_gap", None)
        dual_bound = getattr(highs, "mip_dual_bound", None)
        nodes = int(getattr(highs, "mip_node_count", 0) or 0)
        status = SolveStatus(str(self.problem.status))  # cvxpy's status, as cvxpy spells it
        x = self.x.value
        selected = sorted(int(self.index[i]) for i in np.flatnonzero(np.asarray(x) > 0.5)) if x is not None else []
        optimal = status == SolveStatus.OPTIMAL and gap is not None and (
            gap <= MILP_CERT_GAP or not np.isfinite(gap) and nodes == 0)
        if status == SolveStatus.OPTIMAL and gap is not None and gap > MILP_CERT_GAP:
            status = SolveStatus.OPTIMAL_GAP_NONZERO
        info.update({"objective": None if self.problem.value is None else self.problem.value * self.scale, "cvxpy_status": str(self.problem.status)})
        return SolveResult(
            method="milp",
            value=objective(self.cp, selected),
            selected=selected,
            cost=store_cost(self.cp, selected),
            status=SolveStatus.OPTIMAL if optimal else status,
            certified=bool(optimal),
            runtime_s=time.perf_counter() - start,
            nodes=nodes,
            dual_bound=None if dual_bound is None else -float(dual_bound) * self.scale,  # HiGHS minimises -F
            gap=None if gap is None else float(gap),
            info=info,
        )


def solve_milp(
    cp: CompiledPackage,
    budget: float,
    max_per_group: int | None = None,
    allowed: np.ndarray | None = None,
    time_limit: float = 60.0,
) -> SolveResult:
    """A fresh model per call (the naive build the benchmarks compare against); sweeps reuse MilpModel."""
    return MilpModel(cp, max_per_group, allowed).solve(budget, time_limit)
