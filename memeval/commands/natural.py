"""`memeval natural build | sensitivity | audit-export | audit-llm | audit-compare | bridge`: LoCoMo natural
MEMAUDIT packages (rule-adjudicated, deterministic) and their analyses."""

from __future__ import annotations

import argparse
import json

from memeval.commands.arguments import (
    add_data,
    add_out_dir,
    add_output_file,
    add_progress,
    add_restart,
    command,
)
from memeval.commands.llm_options import add_llm_arguments, llm_options, make_llm_client
from memeval.natural.config import (
    AUDIT_ROLES,
    BUILD_ROLES,
    BridgeConfig,
    BuildConfig,
    CompareConfig,
    FrameConfig,
    SensitivityConfig,
    UnionConfig,
)
from memeval.output_paths import notices
from memeval.settings import add_config_arguments


def register(subparsers: argparse._SubParsersAction) -> None:
    natural = command(subparsers, "natural", "LoCoMo natural MEMAUDIT packages",
                      "memeval natural build --out natural87\n  memeval memaudit sweep natural --packages natural87 "
                      "--budgets 30,60,100 --out natural87_sweep")
    sub = natural.add_subparsers(dest="natural_command", required=True)
    build = command(sub, "build", "build the natural packages (one per accepted question) and their union packages",
                    "memeval natural build --out natural87")
    add_data(build, "LoCoMo file or directory (default: the documented search order)")
    add_out_dir(build, "directory for the package files, rejected.jsonl, manifest (a build with other settings is "
                       "refused)")
    add_restart(build)
    add_config_arguments(build, BuildConfig)
    add_progress(build)
    add_llm_arguments(build, roles=BUILD_ROLES)
    build.set_defaults(handler=_build)

    sens = command(sub, "sensitivity", "k = 2, byte-overhead costs and label noise, as JSON",
                   "memeval natural sensitivity --packages natural87 --output sensitivity.json")
    add_config_arguments(sens, SensitivityConfig)
    add_output_file(sens, "the JSON file to write")
    sens.set_defaults(handler=_sensitivity)

    export = _frame_parser(sub, "audit-export", "write the human audit frame (CSV)", "the CSV file to write",
                           "memeval natural audit-export --packages natural87 --output frame.csv")
    export.set_defaults(handler=_audit_export)

    llm = _frame_parser(sub, "audit-llm", "label the audit-frame cells with Claude (cached; needs a key or cache)",
                        "the verdict CSV to write (usable as --labels of audit-compare)",
                        "memeval natural audit-llm --packages natural87 --output llm_verdicts.csv --dry-run")
    add_llm_arguments(llm, roles=AUDIT_ROLES)
    llm.set_defaults(handler=_audit_llm)

    compare = command(sub, "audit-compare", "kappa, agreement and writer re-scoring: rule vs a filled frame",
                      "memeval natural audit-compare --packages natural87 --labels frame_filled.csv")
    add_config_arguments(compare, CompareConfig)
    compare.set_defaults(handler=_audit_compare)

    union = command(sub, "union", "union packages of another system's exported memory store beside the natural "
                    "packages, for `memeval memaudit sweep natural`",
                    "memeval natural union --packages natural87 --store mem0_store.json --format mem0 --system mem0 "
                    "--out natural87")
    add_config_arguments(union, UnionConfig)
    add_data(union, "LoCoMo file or directory (default: the documented search order)")
    add_out_dir(union, "packages directory to write into (the same as --packages adds the union packages there)")
    union.set_defaults(handler=_union)

    bridge = command(sub, "bridge", "union ratio vs QA outcomes (Spearman rho, bootstrap CI)",
                     "memeval natural bridge --sweep natural_sweep --run runs/offline --output bridge.json")
    add_config_arguments(bridge, BridgeConfig)
    add_output_file(bridge, "JSON file to write (default: print)", required=False)
    bridge.set_defaults(handler=_bridge)


def _frame_parser(sub, name: str, help_text: str, out_help: str, example: str) -> argparse.ArgumentParser:
    """The audit frame's cells are chosen the same way by every command that uses them."""
    parser = command(sub, name, help_text, example)
    add_config_arguments(parser, FrameConfig, "packages")
    add_output_file(parser, out_help)
    add_config_arguments(parser, FrameConfig, "zero_rate", "seed")
    return parser


def _sensitivity(args: argparse.Namespace) -> int:
    from memeval.atomic import write_json_atomic
    from memeval.natural.build import load_packages
    from memeval.natural.sensitivity import sensitivity

    packages, budgets = load_packages(args.packages), args.budgets
    result = sensitivity(packages, budgets, args.noise_rate, args.noise_seeds)
    write_json_atomic(args.output, _stringify_keys(result))
    print(f"sensitivity of {len(packages)} packages -> {args.output}", file=notices(args.output))
    return 0


def _stringify_keys(obj):
    if isinstance(obj, dict):
        return {("@".join(str(p) for p in k) if isinstance(k, tuple) else str(k)): _stringify_keys(v)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_stringify_keys(v) for v in obj]
    return obj


def _audit_export(args: argparse.Namespace) -> int:
    from memeval.natural.audit import write_audit_frame
    from memeval.natural.build import load_packages

    n = write_audit_frame(load_packages(args.packages), args.output, args.zero_rate, args.seed)
    print(f"{n} cells -> {args.output} (fill the verdict column with 0, 0.5 or 1)", file=notices(args.output))
    return 0


def _audit_llm(args: argparse.Namespace) -> int:
    from memeval.llm.count import token_counter
    from memeval.natural.audit import (
        ADJUDICATION_TEMPERATURE,
        adjudication_request,
        frame_cells,
        llm_labels,
        write_verdicts,
    )
    from memeval.natural.build import load_packages

    llm = llm_options(args)
    packages = load_packages(args.packages)
    cells = frame_cells(packages, args.zero_rate, args.seed)
    client = make_llm_client(llm)
    client.check_roles({"judge": ADJUDICATION_TEMPERATURE})
    if llm.dry_run:
        by_id = {p.package_id: p for p in packages}
        requests = [adjudication_request(by_id[p], c, u) for p, c, u in cells]
        print(json.dumps(client.estimate(requests, expected_output_tokens=40, counter=token_counter(client)).as_dict()))
        return 0
    labels, reasons = llm_labels(client, packages, cells)
    write_verdicts(args.output, labels, reasons)
    print(f"{len(labels)} of {len(cells)} cells labelled by the LLM -> {args.output}"
          + ("" if len(labels) == len(cells) else " (the rest failed or no LLM is configured; see `reason`)"),
          file=notices(args.output))
    return 0


def _audit_compare(args: argparse.Namespace) -> int:
    from memeval.natural.audit import compare_sources, read_verdicts, rule_labels
    from memeval.natural.build import load_packages

    packages = load_packages(args.packages)
    result = compare_sources(packages, rule_labels(packages), read_verdicts(args.labels), args.budgets)
    print(json.dumps(_stringify_keys(result), indent=2))
    return 0


def _bridge(args: argparse.Namespace) -> int:
    from memeval.atomic import write_json_atomic
    from memeval.memaudit.sweep import load_sweep_rows
    from memeval.natural.bridge import bridge_pairs, bridge_table

    pairs = bridge_pairs(load_sweep_rows(args.sweep), args.run)
    table = bridge_table(pairs)
    if args.output:
        write_json_atomic(args.output, {"pairs": len(pairs), "rows": table})
        print(f"{len(pairs)} joined pairs -> {args.output}", file=notices(args.output))
    else:
        print(json.dumps({"pairs": len(pairs), "rows": table}, indent=2))
    return 0


def _build(args: argparse.Namespace) -> int:
    from memeval.natural.source import natural_source

    return natural_source(args.source).build(args)


def _union(args: argparse.Namespace) -> int:
    from memeval.natural.stores import union_from_store

    result = union_from_store(args.packages, args.store, args.format, args.system, args.out, args.data)
    attribution = result["attribution"]
    share = attribution["share_attributed_by_content"]
    print(f"{result['union_packages']} union packages of {args.system} -> {args.out}/union/ ({attribution['items']} "
          f"memories: {attribution['with_source_ids']} named their turns, {attribution['attributed_by_content']} "
          f"attributed by content{'' if share is None else f' ({share:.0%})'}, {attribution['unattributed']} "
          "unattributed)")
    if result.get("replaced"):
        old = result["replaced"]
        print(f"replaced the previous import of {args.system} whole ({old['source']}, {old['union_packages']} union "
              f"packages): {result['removed']} packages its new store does not cover were removed")
    print(f"next: memeval memaudit sweep natural --packages {args.out} --budgets 30,60,100 --out SWEEP_DIR")
    return 0
