"""`memeval memaudit validate | solve | generate | sweep` (the MEMAUDIT command line; flags are a public
contract, and the first top-level spellings `memeval sweep ...` stay as aliases)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from memeval.commands.arguments import (
    add_budgets,
    add_n_seeds,
    add_out_dir,
    add_output_file,
    add_progress,
    add_restart,
    bounded,
    command,
    names,
    positive_finite_float,
    positive_int,
)
from memeval.errors import InputError
from memeval.memaudit.names import ALL_WRITERS, DISTRIBUTIONS
from memeval.output_paths import notices
from memeval.rundir import RunDir
from memeval.safe_text import shown


def register(subparsers: argparse._SubParsersAction) -> None:
    group = command(subparsers, "memaudit", "MEMAUDIT packages: validate, solve, generate, sweep",
                    "memeval memaudit sweep small --n-seeds 50 --budgets 2,4,8 --out sweeps/small")
    group.description = "MEMAUDIT write-time audit: packages, certified optima, sweeps."
    sub = group.add_subparsers(dest="memaudit_command", required=True)
    for name, build in VERBS.items():
        build(sub, name, "")
    for name, build in VERBS.items():  # the first spellings, kept as aliases
        build(subparsers, name, f" (alias of `memeval memaudit {name}`)")


def _validate_parser(sub, name: str, alias: str) -> None:
    val = command(sub, name, "check a memaudit.package/v1 file" + alias, "memeval memaudit validate package.json")
    val.add_argument("package", help="a memaudit.package/v1 JSON file")
    val.set_defaults(handler=_validate)


def _solve_parser(sub, name: str, alias: str) -> None:
    solve = command(sub, name, "solve one package at a budget: the certified OPT or a writer" + alias,
                    "memeval memaudit solve package.json --budget 6 --method both --json")
    solve.add_argument("package", help="a memaudit.package/v1 JSON file")
    solve.add_argument("--budget", type=positive_finite_float, default=None, help="default: the package's own budget")
    solve.add_argument("--method", default="opt", choices=["opt", "bnb", "milp", "parts", "both", *ALL_WRITERS[1:]],
                       help="opt: the certified optimum by the solver that suits the package (default); bnb, milp: "
                            "that solver; parts: the exact solver over independent parts (fast where experiences share few units); both: B&B and MILP, checked against each other; any other name: that writer")
    solve.add_argument("--max-per-group", type=positive_int, default=None,
                       help="candidates kept per experience (default: the package's own, usually 1)")
    solve.add_argument("--json", action="store_true", help="print the result as one JSON object")
    solve.set_defaults(handler=_solve)


def _generate_parser(sub, name: str, alias: str) -> None:
    gen = command(sub, name, "generate a MEMAUDIT-Small or stress package" + alias,
                  "memeval memaudit generate small --distribution base --seed 7 --output base-7.json")
    gen.add_argument("family", choices=["small"], help="the package family (MEMAUDIT-Small)")
    gen.add_argument("--distribution", default="base", choices=list(DISTRIBUTIONS),
                     help="base (default) or a stress distribution")
    gen.add_argument("--seed", type=bounded("--seed"), default=0, help="the one seed of this package")
    gen.add_argument("--facts", type=bounded("--facts"), default=3, help="stable facts in the package (default 3)")
    gen.add_argument("--updates", type=bounded("--updates"), default=2,
                     help="preferences that are later changed (default 2)")
    gen.add_argument("--count", type=bounded("--count"), default=None, help="override a stress distribution's item count")
    add_output_file(gen, "the package file to write")
    gen.set_defaults(handler=_generate)


def _sweep_parser(sub, name: str, alias: str) -> None:
    sweep = command(sub, name, "budget sweep of writers against certified OPT denominators" + alias,
                    "memeval memaudit sweep small --distribution base --n-seeds 500 --budgets 2,4,6,8 "
                    "--certify milp --out sweep_base")
    sweep.add_argument("family", choices=["small", "natural"],
                       help="small: generated packages (--distribution, --n-seeds); natural: the package files in "
                            "--packages")
    sweep.add_argument("--distribution", default="base", choices=list(DISTRIBUTIONS),
                       help="small: base (default) or a stress distribution")
    add_n_seeds(sweep, 500)
    sweep.add_argument("--packages", default=None, help="directory of package files (natural)")
    add_budgets(sweep)
    sweep.add_argument("--methods", type=names, default=None, help="comma-separated writers")
    sweep.add_argument("--max-per-group", type=positive_int, default=None,
                       help="candidates kept per experience (default: each package's own)")
    sweep.add_argument("--certify", choices=["none", "milp", "parts"], default="none",
                       help="milp: solve every OPT row by the MILP as well; parts: by the exact solver over "
                            "independent parts (memaudit/parts.py, faster); either stops (exit 3) if the solvers "
                            "disagree")
    sweep.add_argument("--facts", type=bounded("--facts"), default=3, help="small: stable facts per package (default 3)")
    sweep.add_argument("--updates", type=bounded("--updates"), default=2,
                       help="small: preferences later changed, per package (default 2)")
    sweep.add_argument("--count", type=bounded("--count"), default=None,
                       help="small: override a stress distribution's item count")
    sweep.add_argument("--jobs", type=bounded("--jobs"), default=2,
                       help="worker processes (joblib; with --backend dask and no "
                            "--scheduler, the local cluster's workers)")
    sweep.add_argument("--backend", choices=["local", "dask"], default="local",
                       help="local: joblib processes; dask: joblib's Dask backend (pip install 'memeval[dask]')")
    sweep.add_argument("--scheduler", default=None,
                       help="address of an existing Dask scheduler (tcp://host:8786); default: a local cluster")
    add_out_dir(sweep, "sweep directory (raw_results.jsonl, summary.json, manifest.json; rerun to resume; "
                       "another configuration is refused)")
    add_restart(sweep)
    add_progress(sweep, old_quiet=True)
    sweep.set_defaults(handler=_sweep)


VERBS = {"validate": _validate_parser, "solve": _solve_parser, "generate": _generate_parser,
         "sweep": _sweep_parser}


def _validate(args: argparse.Namespace) -> int:
    from memeval.memaudit.package import load_package

    pkg = load_package(args.package)
    print(f"{shown(args.package)}: valid {pkg.package_id}: {len(pkg.experiences)} experiences, "
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
    if args.method in ("opt", "bnb", "milp", "parts", "both"):
        solver = {"opt": "auto", "bnb": "bnb", "milp": "milp", "parts": "parts", "both": "both"}[args.method]
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
        print(json.dumps(_finite_or_null(doc), default=str, allow_nan=False))  # strict JSON: never NaN
    else:
        cert = "certified optimal" if doc["certified"] else ("heuristic" if doc["certified"] is None else "NOT certified")
        print(f"{pkg.package_id} B={budget:g} {args.method}: F = {doc['value']:.6f} ({cert}, status {doc['status']}), "
              f"cost {doc['cost']:g}")
        print("selected: " + shown(", ".join(doc["selected"]) or "(nothing)"))
    return 0


def _finite_or_null(value):
    """A result as strict JSON: a non-finite number (no solver should give one) becomes null, never `NaN`."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(v) for v in value]
    return value


def _refuse_empty(pkg, source: str) -> None:
    """--facts 0 --updates 0 builds a package with nothing to store, whose optimum 0 would pass as certified."""
    if not pkg.candidates or not pkg.units:
        raise InputError(source, "--facts/--updates/--count", f"these counts give {pkg.package_id} no "
                         f"{'candidates' if not pkg.candidates else 'units'}; give at least one fact or update")


def _generate(args: argparse.Namespace) -> int:
    from memeval.memaudit.generators import generate

    pkg = generate(args.distribution, args.seed, args.facts, args.updates, args.count)
    _refuse_empty(pkg, "memaudit generate")
    path = pkg.write(args.output)
    print(f"wrote {path} ({pkg.package_id}: {len(pkg.experiences)} groups, {len(pkg.candidates)} candidates)",
          file=notices(args.output))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from memeval.errors import EXIT_UNCERTIFIED
    from memeval.memaudit.sweep import DEFAULT_SMALL_METHODS, CertificationError, SweepConfig, run_sweep

    if args.family == "natural" and not args.packages:
        raise InputError("sweep natural", "--packages", "a directory of package files is required")
    if args.family == "small":  # the counts give every seed's package the same shape: one is checked before any row
        from memeval.memaudit.generators import generate

        _refuse_empty(generate(args.distribution, args.seed_start, args.facts, args.updates, args.count),
                      "memaudit sweep small")
    methods = args.methods or (list(DEFAULT_SMALL_METHODS) if args.family == "small" else
                               ["opt", "gvt", "estimated_gvt", "density_only", "greedy", "recency_raw", "fact_only",
                                "summary_only", "random"])
    config = SweepConfig(
        kind=args.family, budgets=args.budgets, methods=methods,
        distribution=args.distribution if args.family == "small" else None, seeds=args.n_seeds,
        seed_start=args.seed_start, packages_dir=args.packages, max_per_group=args.max_per_group,
        certify=args.certify, facts=args.facts, updates=args.updates, count=args.count, n_jobs=args.jobs,
        backend=args.backend, scheduler=args.scheduler,
    )
    scorer = None
    if args.family == "natural":
        from memeval.natural.sweep import UnionAwareScorer

        scorer = UnionAwareScorer()
    try:
        summary = run_sweep(config, args.out, progress=not args.no_progress, scorer=scorer, restart=args.restart)
    except CertificationError as exc:
        print(f"memeval: CERTIFICATION FAILED: {exc}", file=sys.stderr)
        return EXIT_UNCERTIFIED
    except InputError:
        raise
    except ValueError as exc:
        raise InputError("sweep", "arguments", str(exc)) from None
    from memeval.reports.results import markdown, sweep_rows

    manifest = json.loads(RunDir(args.out).manifest.read_text())
    print(markdown(sweep_rows(Path(args.out), manifest), compact=True))
    print(f"{summary['row_count']} rows ({summary['computed_rows']} computed, {summary['reused_rows']} reused); "
          f"OPT certified {summary['opt_certified']}/{summary['opt_rows']}, solver disagreements "
          f"{summary['opt_disagreements']}"
          + (f"; union rows certified {summary['union_certified']}/{summary['union_rows']}"
             if summary.get("union_rows") else "") + f" -> {shown(args.out)}/summary.json")
    from memeval.commands.arguments import finish

    return finish(summary.closing_line())
