"""The exact search on MEMAUDIT-Small beside its floor, and the sweep it serves (run on demand:
`.venv/bin/python benchmarks/bench_bnb_floor.py`).

1. µs per solve of `solve_bnb` on N base packages at budgets 1, 2, 4, 8, 16, against a minimal exact search written
   here (a plain depth-first search over groups, pruned by the sum of each later group's best standalone gain):
   the floor a search in plain Python reaches on packages this small. B&B on fresh packages (its tables built
   inside the timing) and on packages solved before at another budget (as in a sweep, where each package is
   solved at every budget and restriction); the floor on fresh packages. Every optimum must agree.
2. µs per call of each heuristic writer on the same packages.
3. The base 500-seed sweep as a user types it (`memeval memaudit sweep small --distribution base --n-seeds 500
   --budgets 1,2,4,8,16`, the default writers, progress bar on), with `--certify none` (OPT certified by the B&B's
   own bound), `parts` and `milp` (a second exact solver checks every OPT row), wall time from the shell; with
   --reference DIR, every row is checked identical, but for its timings, to DIR/<certify>/raw_results.jsonl (write
   those with --write-reference DIR at the code to compare against).
4. The import time of the sweep, solvers, parts and writers in a fresh interpreter, and the heavy modules it loaded.

Every timing is the minimum of --repeats runs (the machine may be shared). Results: benchmarks/results/bnb_floor.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
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
from memeval.memaudit.names import HEURISTIC_WRITERS  # noqa: E402
from memeval.memaudit.solvers import solve_bnb  # noqa: E402
from memeval.memaudit.tolerance import COST_EPS, values_agree  # noqa: E402
from memeval.memaudit.writers import run_writer  # noqa: E402

BUDGETS = (1, 2, 4, 8, 16)
HEAVY = ("nltk", "scipy", "pandas", "cvxpy", "sklearn")


class SolveTiming(BaseModel):
    budget: float
    bnb_us: float  # a fresh package: its tables built inside the timing
    bnb_warm_us: float  # a package already solved at another budget (as in a sweep)
    floor_us: float
    bnb_nodes_mean: float
    floor_nodes_mean: float


class SweepTiming(BaseModel):
    jobs: int
    certify: str = "milp"
    wall_s: float
    rows: int
    opt_certified: int
    identical_to_reference: bool | None  # None: no --reference given


class BnbFloorResults(BaseModel):
    manifest: dict
    packages: int
    repeats: int
    solves: list[SolveTiming]
    bnb_us_mean: float
    bnb_warm_us_mean: float
    floor_us_mean: float
    writers_us: dict[str, float]
    sweeps: list[SweepTiming]
    import_s: float | None
    import_loaded_heavy: list[str]


def floor_search(cp, budget: float) -> tuple[float, int]:
    """The optimum of a package with one candidate per group (k = 1) by a plain depth-first search: at each group
    take each member that fits or none; prune when the value so far plus every later group's best standalone gain
    (an upper bound: gains only shrink as coverage grows) cannot beat the best store found. (value, nodes)."""
    cov, w = cp.coverage, cp.weights.tolist()
    cells = [[(int(r), float(cov[i, r]), w[r]) for r in cov[i].nonzero()[0]] for i in range(cp.n_candidates)]
    costs = cp.costs.tolist()
    groups = [[int(i) for i in members if costs[i] <= budget + COST_EPS] for members in cp.groups]
    z = [0.0] * len(w)
    best = [0.0]
    nodes = [0]

    def gain(i: int) -> float:
        total = 0.0
        for r, a, wr in cells[i]:
            if z[r] < 1.0:
                total += wr * (min(1.0, z[r] + a) - z[r])
        return total

    def visit(g: int, value: float, spent: float) -> None:
        nodes[0] += 1
        if value > best[0]:
            best[0] = value
        if g == len(groups):
            return
        room = budget - spent + COST_EPS
        bound = sum(max((gain(i) for i in members if costs[i] <= room), default=0.0) for members in groups[g:])
        if value + bound <= best[0] + 1e-12:
            return
        for i in groups[g]:
            if costs[i] <= room:
                step = gain(i)
                for r, a, _ in cells[i]:
                    z[r] += a
                visit(g + 1, value + step, spent + costs[i])
                for r, a, _ in cells[i]:
                    z[r] -= a
        visit(g + 1, value, spent)

    visit(0, 0.0, 0.0)
    return best[0], nodes[0]


def fresh_packages(n: int) -> list:
    cps = [generate("base", seed).compiled for seed in range(n)]
    for cp in cps:
        cp.coverage  # the dense matrix both searches read, made before the clock starts  # noqa: B018
    return cps


def time_solves(n: int, repeats: int) -> tuple[list[SolveTiming], dict[str, float]]:
    best: dict[tuple[str, float], float] = {}
    nodes: dict[tuple[str, float], float] = {}
    writers: dict[str, float] = {}
    for _ in range(repeats):
        for budget in BUDGETS:
            for name in ("bnb", "warm", "floor"):
                cps = fresh_packages(n)
                if name == "warm":
                    for cp in cps:
                        solve_bnb(cp, 0.5)
                start = time.perf_counter()
                if name in ("bnb", "warm"):
                    out = [solve_bnb(cp, budget) for cp in cps]
                    found = [(r.value, r.nodes) for r in out]
                else:
                    found = [floor_search(cp, budget) for cp in cps]
                elapsed = time.perf_counter() - start
                best[name, budget] = min(best.get((name, budget), float("inf")), 1e6 * elapsed / n)
                nodes[name, budget] = sum(x for _, x in found) / n
                if name == "bnb":
                    values = [v for v, _ in found]
                elif name == "floor":
                    for cp, v, (f, _) in zip(cps, values, found, strict=True):
                        if not values_agree(v, f):
                            raise SystemExit(f"{cp.package_id} B={budget}: B&B {v!r} but the floor search {f!r}")
        for method in HEURISTIC_WRITERS:
            cps = fresh_packages(n)
            start = time.perf_counter()
            for cp in cps:
                for budget in BUDGETS:
                    run_writer(method, cp, budget)
            writers[method] = min(writers.get(method, float("inf")), 1e6 * (time.perf_counter() - start) /
                                  (n * len(BUDGETS)))
    solves = [SolveTiming(budget=b, bnb_us=best["bnb", b], bnb_warm_us=best["warm", b], floor_us=best["floor", b],
                          bnb_nodes_mean=nodes["bnb", b], floor_nodes_mean=nodes["floor", b]) for b in BUDGETS]
    return solves, writers


def untimed_rows(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        row.pop("runtime_s", None)
        for key in [k for k in row.get("certificate") or {} if k.endswith("runtime_s")]:
            row["certificate"].pop(key)
        out[(row["package_id"], row["budget"], row["method"], row["max_per_group"])] = json.dumps(row, sort_keys=True)
    return out


def sweep_command(seeds: int, certify: str, jobs: int, out: Path) -> list[str]:
    """The base sweep as typed (default writers; the progress bar on, drawn to a pipe as to a terminal)."""
    return [str(Path(sys.executable).parent / "memeval"), "memaudit", "sweep", "small", "--distribution", "base",
            "--n-seeds", str(seeds), "--budgets", ",".join(map(str, BUDGETS)), "--certify", certify,
            "--jobs", str(jobs), "--out", str(out)]


def time_sweep(jobs: int, seeds: int, repeats: int, certify: str, reference: Path | None) -> SweepTiming:
    walls, identical, summary = [], None, {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="bench-bnb-sweep-") as tmp:
            out = Path(tmp) / "sweep"
            start = time.perf_counter()
            subprocess.run(sweep_command(seeds, certify, jobs, out), check=True, capture_output=True, cwd=ROOT)
            walls.append(time.perf_counter() - start)
            summary = json.loads((out / "summary.json").read_text())
            if reference is not None:
                same = untimed_rows(out / "raw_results.jsonl") == untimed_rows(reference / certify / "raw_results.jsonl")
                identical = same if identical is None else identical and same
    return SweepTiming(jobs=jobs, certify=certify, wall_s=min(walls), rows=summary["row_count"],
                       opt_certified=summary["opt_certified"], identical_to_reference=identical)


def time_import(repeats: int) -> tuple[float, list[str]]:
    probe = ("import sys, time, json; t = time.perf_counter(); import memeval.memaudit.sweep, memeval.memaudit.solvers,"
             " memeval.memaudit.parts, memeval.memaudit.writers; t = time.perf_counter() - t; "
             "print(json.dumps([t, sorted({m.split('.')[0] for m in sys.modules})]))")
    runs = [json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                                      cwd=ROOT).stdout) for _ in range(repeats)]
    return min(t for t, _ in runs), sorted(set(runs[0][1]) & set(HEAVY))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The exact search on MEMAUDIT-Small beside its floor, the writers, "
                                     "and the base 500-seed sweep (see the module docstring).")
    parser.add_argument("--packages", type=int, default=200, help="base packages timed per budget (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing; the minimum is reported (default 3)")
    parser.add_argument("--seeds", type=int, default=500, help="seeds of the timed sweep (default 500)")
    parser.add_argument("--jobs", default="2", help="--jobs values of the timed sweep (default 2; empty: no sweep)")
    parser.add_argument("--certify", default="none,parts,milp", help="--certify values of the timed sweep "
                        "(default none,parts,milp)")
    parser.add_argument("--reference", type=Path, help="a directory of sweeps with the same settings, one per "
                        "--certify value (DIR/<certify>/raw_results.jsonl): every row must match but for its timings")
    parser.add_argument("--write-reference", type=Path, metavar="DIR", help="only write those reference sweeps "
                        "into DIR with the code checked out now, then stop")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bnb_floor.json",
                        help="results file (default: the recorded benchmarks/results/bnb_floor.json; give another "
                        "path for a trial run with smaller settings)")
    args = parser.parse_args(argv)
    certify = [c for c in args.certify.split(",") if c]
    if args.write_reference is not None:
        taken = [c for c in certify if (args.write_reference / c).exists()]
        if taken:  # a sweep would reuse the rows there: a reference must be written by the code checked out now
            parser.error(f"--write-reference {args.write_reference}: {taken[0]}/ exists; choose a new directory")
        for c in certify:
            done = subprocess.run(sweep_command(args.seeds, c, 2, args.write_reference / c), capture_output=True,
                                  text=True, cwd=ROOT)
            if done.returncode:
                raise SystemExit(f"reference sweep --certify {c} failed: {done.stderr.strip().splitlines()[-1]}")
        print(f"reference sweeps ({', '.join(certify)}) -> {args.write_reference}")
        return
    missing = [c for c in certify if args.reference is not None
               and not (args.reference / c / "raw_results.jsonl").is_file()]
    if missing:
        parser.error(f"--reference {args.reference}: no {missing[0]}/raw_results.jsonl (make it with --write-reference)")

    solves, writers = time_solves(args.packages, args.repeats)
    sweeps = [time_sweep(int(j), args.seeds, args.repeats, c, args.reference) for j in args.jobs.split(",") if j
              for c in certify]
    import_s, heavy = time_import(args.repeats)
    results = BnbFloorResults(
        manifest=base_manifest(command="bench_bnb_floor"), packages=args.packages, repeats=args.repeats,
        solves=solves, bnb_us_mean=sum(s.bnb_us for s in solves) / len(solves),
        bnb_warm_us_mean=sum(s.bnb_warm_us for s in solves) / len(solves),
        floor_us_mean=sum(s.floor_us for s in solves) / len(solves), writers_us=writers, sweeps=sweeps,
        import_s=import_s, import_loaded_heavy=heavy)
    write_text_atomic(args.out, results.model_dump_json(indent=2) + "\n")

    print(f"{args.packages} base packages per budget, µs per solve, min of {args.repeats} runs\n")
    print("| budget | B&B, fresh package | B&B, package solved before | floor search | B&B nodes | floor nodes |")
    print("|---|---|---|---|---|---|")
    for s in solves:
        print(f"| {s.budget:g} | {s.bnb_us:.0f} | {s.bnb_warm_us:.0f} | {s.floor_us:.0f} | {s.bnb_nodes_mean:.1f} | "
              f"{s.floor_nodes_mean:.1f} |")
    print(f"| mean | {results.bnb_us_mean:.0f} | {results.bnb_warm_us_mean:.0f} | {results.floor_us_mean:.0f} | | |")
    print("\n| writer | µs/call |\n|---|---|")
    for method, us in writers.items():
        print(f"| {method} | {us:.0f} |")
    if sweeps:
        print(f"\n| base sweep as typed, {args.seeds} seeds x {len(BUDGETS)} budgets, default writers | wall (s) | "
              "rows | OPT certified | rows identical to reference |\n|---|---|---|---|---|")
        for s in sweeps:
            same = "not checked" if s.identical_to_reference is None else ("yes" if s.identical_to_reference else "NO")
            print(f"| --certify {s.certify} --jobs {s.jobs} | {s.wall_s:.2f} | {s.rows} | {s.opt_certified} | {same} |")
    print(f"\nimport memeval.memaudit.sweep, .solvers, .parts, .writers: {import_s:.2f} s; heavy modules loaded: "
          f"{', '.join(heavy) or 'none'}")
    print(f"-> {args.out}")
    if any(s.identical_to_reference is False for s in sweeps):
        raise SystemExit("rows differ from the reference sweep")


if __name__ == "__main__":
    main()
