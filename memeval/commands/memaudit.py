"""`memeval validate | solve | generate | sweep` (the MEMAUDIT command line; flags are a public contract)."""

from __future__ import annotations

import argparse
import json
import sys

from memeval.errors import InputError


def _floats(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("no budgets given")
    return values


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:
    from memeval.memaudit.generators import DISTRIBUTIONS
    from memeval.memaudit.writers import ALL_WRITERS

    val = subparsers.add_parser("validate", help="check a memaudit.package/v1 file")
    val.add_argument("package")
    val.set_defaults(handler=_validate)

    solve = subparsers.add_parser("solve", help="solve one package at a budget")
    solve.add_argument("package")
    solve.add_argument("--budget", type=float, default=None, help="default: the package's own budget")
    solve.add_argument("--method", default="opt", choices=["opt", "bnb", "milp", "both", *ALL_WRITERS[1:]])
    solve.add_argument("--max-per-group", type=int, default=None)
    solve.add_argument("--json", action="store_true")
    solve.set_defaults(handler=_solve)

    gen = subparsers.add_parser("generate", help="generate a MEMAUDIT-Small or stress package")
    gen.add_argument("family", choices=["small"])
    gen.add_argument("--distribution", default="base", choices=list(DISTRIBUTIONS))
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--facts", type=int, default=3)
    gen.add_argument("--updates", type=int, default=2)
    gen.add_argument("--count", type=int, default=None, help="override a stress distribution's item count")
    gen.add_argument("--out", required=True)
    gen.set_defaults(handler=_generate)

    sweep = subparsers.add_parser("sweep", help="budget sweep with certified OPT denominators")
    sweep.add_argument("family", choices=["small", "natural"])
    sweep.add_argument("--distribution", default="base", choices=list(DISTRIBUTIONS))
    sweep.add_argument("--seeds", type=int, default=500)
    sweep.add_argument("--seed-start", type=int, default=0)
    sweep.add_argument("--packages", default=None, help="directory of package files (natural)")
    sweep.add_argument("--budgets", type=_floats, required=True)
    sweep.add_argument("--methods", type=_names, default=None, help="comma-separated writers")
    sweep.add_argument("--max-per-group", type=int, default=None)
    sweep.add_argument("--certify", choices=["none", "milp"], default="none")
    sweep.add_argument("--facts", type=int, default=3)
    sweep.add_argument("--updates", type=int, default=2)
    sweep.add_argument("--count", type=int, default=None)
    sweep.add_argument("--jobs", type=int, default=2, help="worker processes (joblib)")
    sweep.add_argument("--out", required=True)
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.set_defaults(handler=_sweep)


def _validate(args: argparse.Namespace) -> int:
    from memeval.memaudit.package import load_package

    pkg = load_package(args.package)
    print(f"{args.package}: valid {pkg.package_id}: {len(pkg.experiences)} experiences, "
          f"{len(pkg.candidates)} candidates, {len(pkg.units)} units, {len(pkg.coverage)} coverage cells")
    return 0


def _solve(args: argparse.Namespace) -> int:
    from memeval.memaudit.package import load_package
    from memeval.memaudit.solvers import solve_exact
    from memeval.memaudit.writers import run_writer

    pkg = load_package(args.package)
    budget = args.budget if args.budget is not None else pkg.budget
    if budget is None:
        raise InputError(args.package, "budget", "the package sets no budget; pass --budget")
    if args.max_per_group is not None and args.max_per_group < 1:
        raise InputError(args.package, "--max-per-group", "must be >= 1")
    cp = pkg.compiled
    if args.method in ("opt", "bnb", "milp", "both"):
        solver = {"opt": "auto", "bnb": "bnb", "milp": "milp", "both": "both"}[args.method]
        res = solve_exact(cp, budget, args.max_per_group, None, solver)
        out = {"value": res.value, "certified": res.certified, "status": res.status, "selected": res.selected_ids(cp),
               "cost": res.cost, "runtime_s": res.runtime_s, "solver": res.method, "nodes": res.nodes,
               "gap": res.gap, "dual_bound": res.dual_bound}
        if "milp" in res.info:
            out["milp"] = res.info["milp"]
    else:
        res = run_writer(args.method, cp, budget, args.max_per_group)
        out = {"value": res.value, "certified": res.certified, "status": res.status,
               "selected": [cp.candidate_ids[i] for i in res.selected], "cost": res.cost, "runtime_s": res.runtime_s,
               **res.info}
    doc = {"package_id": pkg.package_id, "budget": budget, "method": args.method,
           "max_per_group": args.max_per_group or pkg.max_per_group, **out}
    if args.json:
        print(json.dumps(doc, default=str))
    else:
        cert = "certified optimal" if doc["certified"] else ("heuristic" if doc["certified"] is None else "NOT certified")
        print(f"{pkg.package_id} B={budget:g} {args.method}: F = {doc['value']:.6f} ({cert}, status {doc['status']}), "
              f"cost {doc['cost']:g}")
        print("selected: " + (", ".join(doc["selected"]) or "(nothing)"))
    return 0


def _generate(args: argparse.Namespace) -> int:
    from memeval.memaudit.generators import generate

    pkg = generate(args.distribution, args.seed, args.facts, args.updates, args.count)
    path = pkg.write(args.out)
    print(f"wrote {path} ({pkg.package_id}: {len(pkg.experiences)} groups, {len(pkg.candidates)} candidates)")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from memeval.memaudit.sweep import DEFAULT_SMALL_METHODS, CertificationError, SweepConfig, run_sweep

    if args.family == "natural" and not args.packages:
        raise InputError("sweep natural", "--packages", "a directory of package files is required")
    methods = args.methods or (list(DEFAULT_SMALL_METHODS) if args.family == "small" else
                               ["opt", "gvt", "estimated_gvt", "density_only", "greedy", "recency_raw", "fact_only",
                                "summary_only", "random"])
    config = SweepConfig(
        kind=args.family, budgets=args.budgets, methods=methods,
        distribution=args.distribution if args.family == "small" else None, seeds=args.seeds,
        seed_start=args.seed_start, packages_dir=args.packages, max_per_group=args.max_per_group,
        certify=args.certify, facts=args.facts, updates=args.updates, count=args.count, n_jobs=args.jobs,
    )
    scorer = None
    if args.family == "natural":
        from memeval.natural.sweep import UnionAwareScorer

        scorer = UnionAwareScorer()
    try:
        summary = run_sweep(config, args.out, progress=not args.quiet, scorer=scorer)
    except CertificationError as exc:
        print(f"memeval: CERTIFICATION FAILED: {exc}", file=sys.stderr)
        return 3
    except ValueError as exc:
        raise InputError("sweep", "arguments", str(exc)) from None
    print(f"{summary['row_count']} rows ({summary['computed_rows']} computed, {summary['reused_rows']} reused); "
          f"OPT certified {summary['opt_certified']}/{summary['opt_rows']}"
          + (f"; union rows certified {summary['union_certified']}/{summary['union_rows']}"
             if summary.get("union_rows") else "") + f" -> {args.out}/summary.json")
    return 0
