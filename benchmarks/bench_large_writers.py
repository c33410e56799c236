"""Writers and OPT on one large package without a dense coverage matrix.

`.venv/bin/python benchmarks/bench_large_writers.py [--size 20000] [--share 0.1]`

The base generator scaled up (20,000 candidates = 2,400 facts + 1,600 updates, 8,400 units), budget a share of
the total cost. Per writer and for `solve_exact(method="auto")`: value, seconds, and the peak of Python-traced
memory over the whole run; the script fails if the dense matrix was ever made. Results:
benchmarks/results/large_writers.json, printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.manifest import base_manifest  # noqa: E402
from memeval.memaudit.generators import generate  # noqa: E402
from memeval.memaudit.solvers import solve_exact  # noqa: E402
from memeval.memaudit.writers import run_writer  # noqa: E402

WRITERS = ("gvt", "density_only", "recency_raw", "estimated_gvt")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--share", type=float, default=0.1)
    args = parser.parse_args(argv)
    items = args.size // 5
    cp = generate("base", 0, items * 3 // 5, items * 2 // 5).compiled
    budget = args.share * float(cp.costs.sum())
    tracemalloc.start()
    rows = []
    for writer in WRITERS:
        start = time.perf_counter()
        result = run_writer(writer, cp, budget)
        rows.append({"method": writer, "value": result.value, "seconds": time.perf_counter() - start})
    start = time.perf_counter()
    opt = solve_exact(cp, budget, method="auto")
    rows.append({"method": f"opt ({opt.method})", "value": opt.value, "seconds": time.perf_counter() - start,
                 "certified": opt.certified})
    peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
    dense_made = "coverage" in cp.__dict__
    if dense_made or not opt.certified:
        raise SystemExit("the dense matrix was made, or OPT is not certified")
    dense_mb = cp.n_candidates * len(cp.weights) * 8 / 1e6
    out = ROOT / "benchmarks" / "results" / "large_writers.json"
    out.write_text(json.dumps({**base_manifest(command="bench_large_writers", argv=sys.argv),
                               "candidates": cp.n_candidates, "units": len(cp.weights), "budget_share": args.share,
                               "peak_traced_mb": peak_mb, "dense_coverage_mb": dense_mb, "rows": rows},
                              indent=1) + "\n")
    print(f"{cp.n_candidates:,} candidates / {len(cp.weights):,} units, budget {100 * args.share:.0f}% of the total "
          f"cost; peak traced memory {peak_mb:.0f} MB (dense coverage alone: {dense_mb:,.0f} MB)\n")
    print("| method | value | seconds |\n|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['value']:.2f} | {r['seconds']:.2f} |")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
