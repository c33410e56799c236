"""Certified OPT on large packages: the vectorised MILP beside the model it replaced, in one run.

`.venv/bin/python benchmarks/bench_milp_scale.py [--sizes 700,2100,7000,20000] [--repeats 3]`

Packages: the base generator scaled up (facts:updates 3:2; 700 candidates = 84 facts + 56 updates), budgets at
10% and 30% of the total candidate cost, one process, one HiGHS thread. Per size and budget: the old model (one
cvxpy constraint per crowded group in a Python loop, dense coverage; rebuilt here as it was) and the new
`MilpModel` (sparse coverage and group-incidence matrices), each split into model build (Python objects and
cvxpy canonicalisation: the first solve's wall time minus HiGHS's own time) and HiGHS's solve time, the new
model's build at a later budget (its Parameter re-applied to the problem canonicalised once), and
`solve_exact(method="auto")` end to end from the compiled package. Every pair of optima must agree and be
certified, or the script fails. Every timing is the minimum of --repeats runs (the machine may be shared).
Results: benchmarks/results/milp_scale.json, printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.atomic import write_text_atomic  # noqa: E402
from memeval.manifest import base_manifest  # noqa: E402
from memeval.memaudit.generators import generate  # noqa: E402
from memeval.memaudit.milp import HIGHS_THREADS, MilpModel, _silence_highs_banner, solver_versions  # noqa: E402
from memeval.memaudit.solvers import solve_exact  # noqa: E402
from memeval.memaudit.tolerance import HIGHS_FEASIBILITY, values_agree  # noqa: E402

SOLVE_OPTIONS = dict(solver="HIGHS", mip_rel_gap=0.0, mip_abs_gap=0.0, mip_feasibility_tolerance=HIGHS_FEASIBILITY,
                     primal_feasibility_tolerance=HIGHS_FEASIBILITY, threads=HIGHS_THREADS, output_flag=False,
                     warm_start=False, verbose=False)


def loop_model(cp):
    """The model before this change: dense coverage slice, y bounds as constraints, one constraint per group."""
    import cvxpy as cvx

    x = cvx.Variable(cp.n_candidates, boolean=True)
    units = np.flatnonzero(cp.weights > 0)
    y = cvx.Variable(len(units))
    budget = cvx.Parameter(nonneg=True)
    a = cp.coverage[:, units]
    constraints = [y >= 0, y <= 1, y <= a.T @ x, cp.costs @ x <= budget]
    for g in np.unique(cp.group_of):
        members = np.flatnonzero(cp.group_of == g)
        if len(members) > cp.max_per_group:
            constraints.append(cvx.sum(x[members]) <= cp.max_per_group)
    weights = cp.weights[units]
    scale = float(weights.max())
    return cvx.Problem(cvx.Maximize((weights / scale) @ y), constraints), budget, scale


def timed_old(cp, budget_value: float) -> dict:
    start = time.perf_counter()
    problem, budget, scale = loop_model(cp)
    budget.value = budget_value
    objects = time.perf_counter() - start
    problem.solve(**SOLVE_OPTIONS)
    total = time.perf_counter() - start
    highs = float(problem.solver_stats.solve_time or 0.0)
    return {"value": float(problem.value) * scale, "status": str(problem.status), "total_s": total,
            "build_s": total - highs, "objects_s": objects, "highs_s": highs}


def timed_new(cp, budget_value: float) -> dict:
    start = time.perf_counter()
    model = MilpModel(cp)
    objects = time.perf_counter() - start
    result = model.solve(budget_value)
    total = time.perf_counter() - start
    highs = float(result.info["highs_s"])
    start = time.perf_counter()
    model.highs_problem(0.9 * budget_value)  # the Parameter re-applied: what every later budget pays to build
    rebuild = time.perf_counter() - start
    return {"value": result.value, "certified": result.certified, "status": result.status, "total_s": total,
            "build_s": total - highs, "objects_s": objects, "highs_s": highs, "rebuild_s": rebuild}


def timed_auto(cp, budget_value: float) -> dict:
    start = time.perf_counter()
    result = solve_exact(cp, budget_value, method="auto")
    return {"value": result.value, "certified": result.certified, "method": result.method,
            "total_s": time.perf_counter() - start}


def measure(size: int, share: float, repeats: int, old: bool) -> dict:
    items = size // 5
    pkg = generate("base", 0, items * 3 // 5, items * 2 // 5)
    start = time.perf_counter()
    cp = pkg.compiled
    compile_s = time.perf_counter() - start
    budget = share * float(cp.costs.sum())
    row = {"candidates": cp.n_candidates, "units": len(cp.weights), "groups": len(cp.groups), "budget_share": share,
           "budget": budget, "compile_s": compile_s}
    news = [timed_new(cp, budget) for _ in range(repeats)]
    autos = [timed_auto(cp, budget) for _ in range(repeats)]
    row["new"] = {k: float(np.min([r[k] for r in news]))
                  for k in ("total_s", "build_s", "objects_s", "highs_s", "rebuild_s")}
    row["auto_total_s"] = float(np.min([r["total_s"] for r in autos]))
    row["value"] = news[0]["value"]
    row["certified"] = all(r["certified"] for r in news + autos)
    agree = all(values_agree(r["value"], row["value"]) for r in news + autos)
    if old:
        olds = [timed_old(cp, budget) for _ in range(repeats)]
        row["old"] = {k: float(np.min([r[k] for r in olds])) for k in ("total_s", "build_s", "objects_s", "highs_s")}
        agree = agree and all(values_agree(r["value"], row["value"]) and r["status"] == "optimal" for r in olds)
    if not (agree and row["certified"]):
        raise SystemExit(f"optima disagree or are not certified at {size} candidates, budget share {share}")
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="700,2100,7000,20000")
    parser.add_argument("--shares", default="0.1,0.3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--old-up-to", type=int, default=7000, help="largest size the old model is run at")
    args = parser.parse_args(argv)
    _silence_highs_banner()
    warm = generate("base", 1).compiled  # imports and first-use costs, paid before anything is timed
    timed_old(warm, 10.0), timed_new(warm, 10.0), timed_auto(warm, 10.0)
    rows = [measure(int(size), float(share), args.repeats, int(size) <= args.old_up_to)
            for size in args.sizes.split(",") for share in args.shares.split(",")]
    out = ROOT / "benchmarks" / "results" / "milp_scale.json"
    write_text_atomic(out, json.dumps({**base_manifest(command="bench_milp_scale", argv=sys.argv,
                                               solver_versions=solver_versions()), "rows": rows}, indent=1) + "\n")
    print("| candidates / units | budget | old: total (build + HiGHS) | new: total (build + HiGHS) | "
          "new: build at a later budget | solve_exact(auto) | certified |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        old = (f"{r['old']['total_s']:.2f} s ({r['old']['build_s']:.2f} + {r['old']['highs_s']:.2f})"
               if "old" in r else "not run")
        new = f"{r['new']['total_s']:.2f} s ({r['new']['build_s']:.2f} + {r['new']['highs_s']:.2f})"
        print(f"| {r['candidates']:,} / {r['units']:,} | {100 * r['budget_share']:.0f}% | {old} | {new} | "
              f"{r['new']['rebuild_s']:.3f} s | {r['auto_total_s']:.2f} s | {r['certified']} |")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
