"""HiGHS's bounds over time on the hard large MILP (20,000 candidates, 30% budget), cold and started.

Solved cold and started from the best writer's store, with the model build beside HiGHS's own solve time (run on
demand: `.venv/bin/python benchmarks/bench_milp_gap.py [--size 20000] [--share 0.3] [--repeats 3]`).

The package is the base generator scaled up (20,000 candidates = 2,400 facts + 1,600 updates, 8,400 units), as in
bench_milp_scale.py. Per run: HiGHS's incumbent (primal bound) and dual bound, in the package's units, each time
HiGHS logs a line or finds an improving solution (its MIP callbacks), and its own log. The start is the best store
of the writers that run in seconds at this size (their times are listed, not counted in the solve). The build is
split as cvxpy's objects, the first canonicalisation into HiGHS's model, and a re-build at another budget (the
Parameter re-applied: what every later budget of a sweep pays). Every timing is the minimum of --repeats runs (the
machine may be shared); the traces are those of each mode's fastest run. Both modes must certify the same value, or
the script fails. Results: benchmarks/results/milp_gap.json and milp_gap_{cold,started}.log (HiGHS's logs).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.atomic import write_text_atomic  # noqa: E402
from memeval.manifest import base_manifest  # noqa: E402
from memeval.memaudit.generators import generate  # noqa: E402
from memeval.memaudit.milp import MilpModel, _silence_highs_banner, best_start, solver_versions  # noqa: E402
from memeval.memaudit.tolerance import values_agree  # noqa: E402
from memeval.memaudit.writers import run_writer  # noqa: E402

START_WRITERS = ("gvt", "density_only", "recency_raw", "estimated_gvt")  # the writers that take seconds here
CHECKPOINTS_S = (0.5, 1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120)


class BoundPoint(BaseModel):
    t_s: float  # HiGHS's clock
    primal: float | None  # incumbent value (None: none yet)
    dual: float | None  # best bound (None: none yet)
    event: str  # "solution" (an improving solution) or "log" (a log line)


class WriterTiming(BaseModel):
    method: str
    value: float
    seconds: float


class GapRun(BaseModel):
    mode: str  # "cold" or "started"
    total_s: list[float]  # each repeat: MilpModel.solve wall time
    build_s: float  # of the fastest repeat: cvxpy's data for this budget into HiGHS's model
    highs_s: float  # of the fastest repeat: HiGHS's own run time
    value: float
    certified: bool
    dual_bound: float | None
    nodes: int
    start_value: float | None
    start_outcome: str | None
    trace: list[BoundPoint]


class MilpGapResults(BaseModel):
    manifest: dict
    candidates: int
    units: int
    budget_share: float
    budget: float
    objects_s: float  # cvxpy variables, constraints and problem (min over repeats)
    first_build_s: float  # the first canonicalisation into HiGHS's model (min over repeats)
    rebuild_s: float  # the same at another budget, reusing it (min over repeats)
    writers: list[WriterTiming]
    runs: list[GapRun]


def package(size: int):
    items = size // 5
    return generate("base", 0, items * 3 // 5, items * 2 // 5).compiled


def build_timings(cp, budget: float, repeats: int) -> tuple[float, float, float]:
    objects, first, again = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        model = MilpModel(cp)
        objects.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.highs_problem(budget)
        first.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.highs_problem(budget * 0.9)
        again.append(time.perf_counter() - start)
    return min(objects), min(first), min(again)


def solve_traced(cp, budget: float, start, log_path: Path) -> tuple[float, object, list[BoundPoint]]:
    """One solve on a fresh model, HiGHS's bounds recorded from its callbacks and its log written to log_path."""
    model = MilpModel(cp)
    from highspy import cb

    model.highs_problem(budget)  # canonicalised before the clock starts, as for every later budget of a sweep
    points: list[BoundPoint] = []
    improving = cb.HighsCallbackType.kCallbackMipImprovingSolution

    def bound(raw: float) -> float | None:
        return None if not math.isfinite(raw) else -raw * model.scale  # HiGHS minimises -F / scale

    def record(event):
        data = event.data_out
        kind = "solution" if event.callback_type == improving else "log"
        points.append(BoundPoint(t_s=data.running_time, primal=bound(data.mip_primal_bound),
                                 dual=bound(data.mip_dual_bound), event=kind))

    def observe(highs):
        highs.setOptionValue("log_to_console", False)
        highs.setOptionValue("log_file", str(log_path))
        highs.setOptionValue("output_flag", True)
        highs.cbMipImprovingSolution.subscribe(record)
        highs.cbMipLogging.subscribe(record)

    began = time.perf_counter()
    result = model.solve(budget, time_limit=600.0, start=start, observe=observe)
    return time.perf_counter() - began, result, points


def at(trace: list[BoundPoint], t: float) -> tuple[float | None, float | None]:
    primal = dual = None
    for p in trace:
        if p.t_s <= t:
            primal = p.primal if p.primal is not None else primal
            dual = p.dual if p.dual is not None else dual
    return primal, dual


def gap_text(primal: float | None, dual: float | None) -> str:
    if primal is None or dual is None:
        return "—"
    return f"{100 * (dual - primal) / max(1.0, abs(primal)):.5f}%"


def value_text(v: float | None) -> str:
    return "—" if v is None else f"{v:,.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20000, help="candidates in the scaled base package")
    parser.add_argument("--share", type=float, default=0.3, help="budget as a share of the total candidate cost")
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode; timings are their minimum")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "milp_gap.json",
                        help="results JSON (HiGHS's logs are written beside it)")
    args = parser.parse_args(argv)
    _silence_highs_banner()
    MilpModel(generate("base", 1).compiled).solve(10.0)  # imports and first-use costs, paid before anything is timed

    cp = package(args.size)
    budget = args.share * float(cp.costs.sum())
    objects_s, first_s, rebuild_s = build_timings(cp, budget, args.repeats)
    writers, stores = [], []
    for method in START_WRITERS:
        began = time.perf_counter()
        res = run_writer(method, cp, budget)
        writers.append(WriterTiming(method=method, value=res.value, seconds=time.perf_counter() - began))
        stores.append(res.selected)
    start = best_start(cp, budget, stores)

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode, store in (("cold", None), ("started", start)):
            best = None
            totals = []
            for i in range(args.repeats):
                log = Path(tmp) / f"{mode}_{i}.log"
                total, result, trace = solve_traced(cp, budget, store, log)
                totals.append(total)
                print(f"{mode} run {i + 1}/{args.repeats}: {total:.2f} s, value {result.value:,.3f}, "
                      f"certified {result.certified}", file=sys.stderr, flush=True)
                if best is None or total < best[0]:
                    best = (total, result, trace, log)
            total, result, trace, log = best
            os.replace(log, args.out.with_name(f"{args.out.stem}_{mode}.log"))
            note = result.info.get("start") or {}
            runs.append(GapRun(mode=mode, total_s=totals, build_s=result.info["build_s"], highs_s=result.info["highs_s"],
                               value=result.value, certified=result.certified, dual_bound=result.dual_bound,
                               nodes=result.nodes, start_value=note.get("value"), start_outcome=note.get("outcome"),
                               trace=trace))
    if not (all(r.certified for r in runs) and values_agree(runs[0].value, runs[1].value)):
        raise SystemExit(f"{args.out.name}: cold and started solves disagree or are not certified "
                         f"({[(r.mode, r.value, r.certified) for r in runs]})")

    results = MilpGapResults(
        manifest=base_manifest(command="bench_milp_gap", argv=sys.argv, solver_versions=solver_versions()),
        candidates=cp.n_candidates, units=len(cp.weights), budget_share=args.share, budget=budget,
        objects_s=objects_s, first_build_s=first_s, rebuild_s=rebuild_s, writers=writers, runs=runs)
    write_text_atomic(args.out, results.model_dump_json(indent=1) + "\n")

    cold, started = runs
    print(f"{cp.n_candidates:,} candidates / {len(cp.weights):,} units, budget {100 * args.share:.0f}% "
          f"({budget:,.1f}); minimum of {args.repeats} runs on a shared machine\n")
    print("| | cold | started |")
    print("|---|---|---|")
    print(f"| solve, wall (min) | {min(cold.total_s):.2f} s | {min(started.total_s):.2f} s |")
    print(f"| of which build / HiGHS | {cold.build_s:.3f} s / {cold.highs_s:.2f} s | "
          f"{started.build_s:.3f} s / {started.highs_s:.2f} s |")
    print(f"| certified value | {cold.value:,.3f} | {started.value:,.3f} |")
    print(f"| start | — | {value_text(started.start_value)} ({started.start_outcome}) |")
    first_solution = [next((p.t_s for p in r.trace if p.event == "solution" and p.primal is not None
                            and values_agree(p.primal, r.value)), None) for r in runs]
    print(f"| optimum found at | {first_solution[0] or float('nan'):.2f} s | {first_solution[1] or float('nan'):.2f} s |")
    print()
    print("| HiGHS clock | cold: incumbent | cold: bound | cold: gap | started: incumbent | started: bound | "
          "started: gap |")
    print("|---|---|---|---|---|---|---|")
    end = max(r.highs_s for r in runs)
    for t in [c for c in CHECKPOINTS_S if c < end] + [end]:
        cells = []
        for r in runs:
            primal, dual = at(r.trace, t)
            cells += [value_text(primal), value_text(dual), gap_text(primal, dual)]
        print(f"| {t:.1f} s | " + " | ".join(cells) + " |")
    print()
    print("| build: cvxpy objects | first canonicalisation into HiGHS's model | again at another budget | "
          "HiGHS's solve (cold) |")
    print("|---|---|---|---|")
    print(f"| {objects_s:.3f} s | {first_s:.3f} s | {rebuild_s:.3f} s | {cold.highs_s:.2f} s |")
    print()
    print("| start writer | value | seconds |")
    print("|---|---|---|")
    for w in writers:
        print(f"| {w.method} | {w.value:,.3f} | {w.seconds:.2f} |")
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
