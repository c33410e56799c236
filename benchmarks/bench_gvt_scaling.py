"""How the gvt writer's time grows with the package: gains over the units a group touches (memeval's gvt) against
the same rule computing every gain over all units (how gvt worked before), on the base generator scaled up.

`.venv/bin/python benchmarks/bench_gvt_scaling.py [--sizes 2500,5000,10000,20000,40000] [--reference-up-to 10000]`

Budget 10% of the total cost; both versions must pick the same store (the script fails otherwise). Results:
benchmarks/results/gvt_scaling.json, printed as Markdown with the time per candidate (flat = linear).
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

from memeval.manifest import base_manifest  # noqa: E402
from memeval.memaudit.generators import generate  # noqa: E402
from memeval.memaudit.objective import objective  # noqa: E402
from memeval.memaudit.tolerance import COST_EPS, GAIN_EPS  # noqa: E402
from memeval.memaudit.writers import gvt, lambda_grid  # noqa: E402


def gvt_all_units(cp, budget: float) -> list[int]:
    """The reference: every group's gains over every unit of the package (quadratic in its size)."""
    lams = lambda_grid(cp)
    w = cp.weights
    z = np.zeros((len(lams), len(w)))
    spent = np.zeros(len(lams))
    picks = np.full((len(lams), len(cp.groups)), -1, dtype=np.int64)
    for g, members in enumerate(cp.groups):
        if members.size == 0:
            continue
        rows, costs = cp.rows(members), cp.costs[members]
        gains = (cp.h(z[:, None, :] + rows[None, :, :]) - cp.h(z)[:, None, :]) @ w
        admissible = ((costs[None, :] <= (budget - spent)[:, None] + COST_EPS) & (gains > GAIN_EPS)
                      & (gains / costs[None, :] >= lams[:, None]))
        chosen = np.argmax(np.where(admissible, gains, -np.inf), axis=1)
        has = admissible.any(axis=1)
        z[has] += rows[chosen[has]]
        spent[has] += costs[chosen[has]]
        picks[has, g] = members[chosen[has]]
    values = np.array([objective(cp, p[p >= 0]) for p in picks])
    best = int(np.flatnonzero(values >= values.max() - GAIN_EPS)[0])
    return sorted(int(i) for i in picks[best] if i >= 0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2500,5000,10000,20000,40000")
    parser.add_argument("--reference-up-to", type=int, default=10000)
    args = parser.parse_args(argv)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        items = size // 5
        cp = generate("base", 0, items * 3 // 5, items * 2 // 5).compiled
        budget = 0.1 * float(cp.costs.sum())
        start = time.perf_counter()
        mine = gvt(cp, budget)
        seconds = time.perf_counter() - start
        row = {"candidates": cp.n_candidates, "units": len(cp.weights), "seconds": seconds,
               "us_per_candidate": 1e6 * seconds / cp.n_candidates, "reference_seconds": None}
        if size <= args.reference_up_to:
            start = time.perf_counter()
            reference = gvt_all_units(cp, budget)
            row["reference_seconds"] = time.perf_counter() - start
            if reference != mine.selected:
                raise SystemExit(f"gvt and the all-units reference differ at {size} candidates")
        rows.append(row)
    out = ROOT / "benchmarks" / "results" / "gvt_scaling.json"
    out.write_text(json.dumps({**base_manifest(command="bench_gvt_scaling", argv=sys.argv), "budget_share": 0.1,
                               "rows": rows}, indent=1) + "\n")
    print("| candidates / units | gvt (s) | µs per candidate | all-units reference (s) |\n|---|---|---|---|")
    for r in rows:
        ref = "not run" if r["reference_seconds"] is None else f"{r['reference_seconds']:.2f}"
        print(f"| {r['candidates']:,} / {r['units']:,} | {r['seconds']:.2f} | {r['us_per_candidate']:.0f} | {ref} |")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
