"""`memeval memaudit validate | solve | generate | sweep` (the MEMAUDIT command line; flags are a public
contract, and the first top-level spellings `memeval sweep ...` stay as aliases)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from memeval.commands.arguments import add_out_dir, add_output_file, add_progress, add_restart, command
from memeval.errors import InputError
from memeval.memaudit.config import GenerateConfig, SolveConfig, SweepConfig, ValidateConfig
from memeval.output_paths import notices
from memeval.rundir import RunDir
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, config_from


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
    add_config_arguments(val, ValidateConfig)
    val.set_defaults(handler=_validate)


def _solve_parser(sub, name: str, alias: str) -> None:
    solve = command(sub, name, "solve one package at a budget: the certified OPT or a writer" + alias,
                    "memeval memaudit solve package.json --budget 6 --method both --json")
    add_config_arguments(solve, SolveConfig)
    solve.set_defaults(handler=_solve)


def _generate_parser(sub, name: str, alias: str) -> None:
    gen = command(sub, name, "generate a MEMAUDIT-Small or stress package" + alias,
                  "memeval memaudit generate small --distribution base --seed 7 --output base-7.json")
    add_config_arguments(gen, GenerateConfig)
    add_output_file(gen, "the package file to write")
    gen.set_defaults(handler=_generate)


def _sweep_parser(sub, name: str, alias: str) -> None:
    sweep = command(sub, name, "budget sweep of writers against certified OPT denominators" + alias,
                    "memeval memaudit sweep small --distribution base --n-seeds 500 --budgets 2,4,6,8 "
                    "--certify milp --out sweep_base")
    add_config_arguments(sweep, SweepConfig)
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
        costs = [c.cost for c in pkg.candidates]
        raise InputError(args.package, "budget", "the package sets no budget (generated and natural packages never "
                         f"do); pass --budget in its cost units (its {len(costs)} candidates cost {min(costs):g} to "
                         f"{max(costs):g} each, {sum(costs):g} in all)")
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
    from memeval.memaudit.sweep import CertificationError, run_sweep

    config = config_from(args, SweepConfig)
    if config.kind == "natural" and not config.packages_dir:
        raise InputError("sweep natural", "--packages", "a directory of package files is required")
    if config.kind == "small":  # the counts give every seed's package the same shape: one is checked before any row
        from memeval.memaudit.generators import generate

        _refuse_empty(generate(config.distribution, config.seed_start, config.facts, config.updates, config.count),
                      "memaudit sweep small")
    scorer = None
    if config.kind == "natural":
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
