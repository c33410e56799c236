"""`memeval ls` and `memeval results` wall times, run as a user types them (run on demand:
`.venv/bin/python benchmarks/bench_results_ls.py [ROOT]`).

ROOT is a tree of stored runs and sweeps: by default reports/artifacts when it holds any, else give one (`memeval
reproduce --out DIR` writes DIR/artifacts) or let `--generate DIR` write a realistic one first: a full offline
LoCoMo run with four systems (1,986 questions each, a 24 MB answers file), a second run of two of them at k = 20,
and the 500-package base MEMAUDIT sweep (about a minute on two cores).

Each command is a fresh process of the installed `memeval` script with its default flags, from ROOT's parent so
paths print as a user sees them. `results` is timed twice: cold (an empty cache directory: every answers file read
and its BLEU-1 computed) and warm (the median of the following calls, as every call after the first is). Prints
the median wall and CPU seconds against the 1 s target.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMEVAL = Path(sys.executable).with_name("memeval")
TARGET_S = 1.0


def run(argv: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one `memeval ARGV` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(MEMEVAL), *argv], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(argv: list[str], cwd: Path, env: dict, repeats: int) -> tuple[float, float]:
    times = [run(argv, cwd, env) for _ in range(repeats)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def generate(out: Path) -> Path:
    """A realistic artifacts tree, laid out as the notebooks write it."""
    steps = [["locomo", "run", "--conversations", "all", "--questions", "all", "--systems",
              "full_context,rag_turns,observations,summaries", "--out", str(out / "02_full_run" / "run")],
             ["locomo", "run", "--conversations", "all", "--questions", "all", "--systems", "rag_turns,observations",
              "--k", "20", "--out", str(out / "02_full_run" / "run_k20")],
             ["memaudit", "sweep", "small", "--n-seeds", "500", "--budgets", "1,2,4,8,16", "--jobs", "2",
              "--out", str(out / "03_memaudit_small" / "sweep")]]
    for argv in steps:
        if not (Path(argv[-1]) / "manifest.json").is_file():
            print("generating:", "memeval", " ".join(argv), flush=True)
            subprocess.run([str(MEMEVAL), *argv, "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    return out


def listed(root: Path, env: dict) -> list[dict]:
    found = subprocess.run([str(MEMEVAL), "ls", str(root), "--json"], env=env, check=True, capture_output=True,
                           text=True).stdout
    return json.loads(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=None, help="tree of runs (default: reports/artifacts)")
    parser.add_argument("--generate", metavar="DIR", default=None, help="write a realistic tree here first")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    root = Path(args.root or ROOT / "reports" / "artifacts")
    if args.generate:
        root = generate(Path(args.generate).resolve())
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "MEMEVAL_CACHE_DIR": cache}
        found = listed(root, env) if root.is_dir() else []
        runs = sorted((r for r in found if r["kind"] in ("locomo run", "memeval locomo run")),
                      key=lambda r: -sum(r["rows"].values()))
        sweeps = [r for r in found if r["kind"] in ("memaudit sweep", "sweep") and r["status"] == "complete"]
        if len(runs) < 2:
            sys.exit(f"{root}: fewer than two LoCoMo runs; give a ROOT holding some, or --generate DIR")
        cwd = root.parent
        shown = [os.path.relpath(r["directory"], cwd) for r in runs[:2]] + \
            [os.path.relpath(s["directory"], cwd) for s in sweeps[:1]]
        ls = ["ls", os.path.relpath(root, cwd)]
        results = ["results", *shown[:2]]
        print(f"{root}: {len(found)} directories, {len(runs)} LoCoMo runs ({', '.join(shown[:2])}), "
              f"{len(sweeps)} sweeps; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        run(ls, cwd, env)  # the OS file cache warm, as for a user's second look
        timings = {"memeval " + " ".join(ls): median(ls, cwd, env, args.repeats),
                   "memeval " + " ".join(results) + " (cold: empty cache)": run(results, cwd, env),
                   "memeval " + " ".join(results): median(results, cwd, env, args.repeats)}
        if len(shown) > 2:
            both = ["results", *shown]
            timings["memeval " + " ".join(both)] = median(both, cwd, env, args.repeats)
    width = max(map(len, timings))
    for command, (wall, cpu) in timings.items():
        flag = "" if wall < TARGET_S else f"  (over the {TARGET_S:g} s target)"
        print(f"{command:<{width}}  {wall:5.2f} s wall  {cpu:5.2f} s CPU{flag}")


if __name__ == "__main__":
    main()
