"""MEMAUDIT speed benchmarks (run on demand: `.venv/bin/python benchmarks/bench_memaudit.py`).

1. The full base sweep (500 seeds x 5 budgets x every writer, OPT by B&B), then with --certify milp.
2. B&B against a naive per-problem cvxpy + HiGHS build on the same problems.
3. Scaling with package size (base with more facts/updates): where B&B stops being practical.
Results go to benchmarks/results/memaudit.json and are printed as markdown.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.manifest import base_manifest  # noqa: E402
from memeval.memaudit.generators import generate  # noqa: E402
from memeval.memaudit.milp import solve_milp  # noqa: E402
from memeval.memaudit.solvers import solve_bnb  # noqa: E402


def timed_cli_sweep(certify: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    cmd = [sys.executable, "-m", "memeval", "memaudit", "sweep", "small", "--distribution", "base", "--n-seeds", "500",
           "--budgets", "1,2,4,8,16", "--out", str(out), "--certify", certify, "--no-progress"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - start
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "raw_results.jsonl").read_text().splitlines()]
    nodes = {}
    for r in rows:
        if r["method"] == "opt":
            nodes.setdefault(r["budget"], []).append(r["certificate"]["opt_nodes"])
    shutil.rmtree(out)
    return {"certify": certify, "wall_s": wall, "rows": summary["row_count"], "packages": summary["packages"],
            "packages_per_s": summary["packages"] / wall, "opt_certified": summary["opt_certified"],
            "bnb_nodes_mean_by_budget": {b: float(np.mean(v)) for b, v in sorted(nodes.items())},
            "bnb_nodes_max_by_budget": {b: int(np.max(v)) for b, v in sorted(nodes.items())}}


def bnb_vs_naive_cvxpy(n_packages: int = 60, budgets=(2, 4, 8, 16)) -> dict:
    cps = [generate("base", s).compiled for s in range(n_packages)]
    start = time.perf_counter()
    bnb = [solve_bnb(cp, b).value for cp in cps for b in budgets]
    bnb_s = time.perf_counter() - start
    start = time.perf_counter()
    milp = [solve_milp(cp, b).value for cp in cps for b in budgets]  # a fresh cvxpy problem per solve
    milp_s = time.perf_counter() - start
    assert np.allclose(bnb, milp, atol=1e-9)
    n = len(bnb)
    return {"problems": n, "bnb_ms_per_problem": 1000 * bnb_s / n, "naive_cvxpy_ms_per_problem": 1000 * milp_s / n,
            "speedup": milp_s / bnb_s}


def scaling(sizes=((3, 2), (5, 3), (8, 4), (11, 6), (14, 8), (17, 10), (20, 10)), seeds=2,
            bnb_time_limit=20.0) -> list[dict]:
    """B&B (state limit 200k, time limit) and a fresh MILP on growing packages; once B&B certifies nothing at
    a size, larger sizes run the MILP only (B&B is reported as not attempted)."""
    out = []
    bnb_gave_up = False
    for facts, updates in sizes:
        for budget_share in (0.1, 0.2):
            bnb_t, milp_t, nodes, certified = [], [], [], 0
            for seed in range(seeds):
                cp = generate("base", seed, facts=facts, updates=updates).compiled
                budget = round(budget_share * float(cp.costs.sum()), 1)
                m = solve_milp(cp, budget)
                milp_t.append(m.runtime_s)
                if bnb_gave_up:
                    continue
                b = solve_bnb(cp, budget, time_limit=bnb_time_limit)
                bnb_t.append(b.runtime_s)
                nodes.append(b.nodes)
                certified += int(b.certified and abs(b.value - m.value) <= 1e-9 * max(1, m.value))
            row = {"groups": facts + 2 * updates, "budget_share": budget_share,
                   "bnb_s_mean": float(np.mean(bnb_t)) if bnb_t else None, "milp_s_mean": float(np.mean(milp_t)),
                   "bnb_nodes_mean": float(np.mean(nodes)) if nodes else None,
                   "bnb_certified": f"{certified}/{seeds}" if bnb_t else "not attempted"}
            print(row, flush=True)
            out.append(row)
            if bnb_t and certified == 0:
                bnb_gave_up = True
    return out


def main() -> None:
    sweeps = [timed_cli_sweep("none"), timed_cli_sweep("milp")]
    print(sweeps, flush=True)
    naive = bnb_vs_naive_cvxpy()
    print(naive, flush=True)
    results = {"manifest": base_manifest(command="bench_memaudit"), "sweeps": sweeps, "bnb_vs_naive_cvxpy": naive,
               "scaling": scaling()}
    path = ROOT / "benchmarks" / "results" / "memaudit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print("| sweep | wall (s) | packages/s | rows | OPT certified |")
    print("|---|---|---|---|---|")
    for s in results["sweeps"]:
        print(f"| base, 500 seeds x 5 budgets, certify={s['certify']} | {s['wall_s']:.1f} | {s['packages_per_s']:.0f} | "
              f"{s['rows']} | {s['opt_certified']} |")
    print("\nB&B nodes by budget (mean / max):",
          {b: (round(m, 1), results["sweeps"][0]["bnb_nodes_max_by_budget"][b])
           for b, m in results["sweeps"][0]["bnb_nodes_mean_by_budget"].items()})
    c = results["bnb_vs_naive_cvxpy"]
    print(f"\nB&B {c['bnb_ms_per_problem']:.2f} ms vs naive cvxpy build {c['naive_cvxpy_ms_per_problem']:.1f} ms per "
          f"problem ({c['problems']} problems): {c['speedup']:.0f}x")
    print("\n| groups | budget (share of total cost) | B&B s | B&B nodes | MILP s | B&B certified |")
    print("|---|---|---|---|---|---|")
    for r in results["scaling"]:
        bnb_s = "–" if r["bnb_s_mean"] is None else f"{r['bnb_s_mean']:.3f}"
        bnb_n = "–" if r["bnb_nodes_mean"] is None else f"{r['bnb_nodes_mean']:.0f}"
        print(f"| {r['groups']} | {r['budget_share']:.1f} | {bnb_s} | {bnb_n} | {r['milp_s_mean']:.3f} | "
              f"{r['bnb_certified']} |")


if __name__ == "__main__":
    main()
