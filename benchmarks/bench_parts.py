"""The exact solver over independent parts (memaudit/parts.py) where the MILP is slow, and as a sweep's certifier
(run on demand: `.venv/bin/python benchmarks/bench_parts.py [--size 20000] [--repeats 3] [--seeds 500]`).

1. The hard large package of bench_milp_gap.py (the base generator scaled to --size candidates), at 10% and 30%
   budgets: `solve_exact(method="parts")` end to end from the compiled package (min of --repeats), its parts and
   frontier sizes, and — once, at 30% — the MILP's certified value beside it (the two must agree, or the script
   fails).
2. The base sweep (`memeval memaudit sweep small --n-seeds N --budgets 1,2,4,8,16`, ten methods, --jobs 2) with
   `--certify milp` and with `--certify parts`, wall time of each, and every row compared: identical apart from the
   certificate and the timings, or the script fails.
Writes benchmarks/results/parts.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METHODS = "opt,gvt,greedy,density_greedy,density_only,recency_raw,fact_only,summary_only,no_tombstone_opt,random"


def large(size: int, repeats: int) -> dict:
    from memeval.memaudit.generators import generate
    from memeval.memaudit.milp import MilpModel
    from memeval.memaudit.solvers import solve_exact
    from memeval.memaudit.tolerance import values_agree

    items = size // 5
    cp = generate("base", 0, items * 3 // 5, items * 2 // 5).compiled
    out = {"candidates": cp.n_candidates, "units": len(cp.weights), "groups": len(cp.groups), "budgets": []}
    for share in (0.1, 0.3):
        budget = share * float(cp.costs.sum())
        times, result = [], None
        for _ in range(repeats):
            fresh = generate("base", 0, items * 3 // 5, items * 2 // 5).compiled  # no frontier memo carried over
            start = time.perf_counter()
            result = solve_exact(fresh, budget, method="parts")
            times.append(time.perf_counter() - start)
        row = {"share": share, "budget": budget, "parts_s": min(times), "value": result.value,
               "certified": result.certified, **result.info}
        if share == 0.3:
            start = time.perf_counter()
            milp = MilpModel(cp).solve(budget)
            row.update(milp_s=time.perf_counter() - start, milp_value=milp.value, milp_certified=milp.certified)
            if not (milp.certified and result.certified and values_agree(milp.value, result.value)):
                raise SystemExit(f"parts {result.value!r} vs MILP {milp.value!r}: not the same certified optimum")
        out["budgets"].append(row)
    return out


def sweeps(seeds: int) -> dict:
    out, rows = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for certify in ("milp", "parts"):
            target = Path(tmp) / certify
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "memeval", "memaudit", "sweep", "small", "--n-seeds", str(seeds),
                            "--budgets", "1,2,4,8,16", "--methods", METHODS, "--certify", certify, "--jobs", "2",
                            "--no-progress", "--out", str(target)], check=True, capture_output=True)
            out[f"certify_{certify}_s"] = time.perf_counter() - start
            rows[certify] = {}
            for line in (target / "raw_results.jsonl").read_text().splitlines():
                row = json.loads(line)
                row.pop("certificate", None)
                row.pop("runtime_s", None)
                rows[certify][(row["package_id"], row["budget"], row["method"])] = row
    if rows["milp"] != rows["parts"]:
        raise SystemExit("--certify parts changed a row (certificates and timings aside)")
    out["rows"] = len(rows["parts"])
    out["rows_identical"] = True
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=500)
    args = parser.parse_args()
    result = {"large": large(args.size, args.repeats), "sweep": sweeps(args.seeds), "seeds": args.seeds}
    (ROOT / "benchmarks" / "results" / "parts.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
