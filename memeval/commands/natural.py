"""`memeval natural build | sensitivity | audit-export | audit-llm | audit-compare | bridge`: LoCoMo natural
MEMAUDIT packages (rule-adjudicated, deterministic) and their analyses."""

from __future__ import annotations

import argparse
import json

from memeval.commands.arguments import (
    add_budgets,
    add_data,
    add_out_dir,
    add_output_file,
    add_progress,
    add_restart,
    bounded,
    command,
    share,
)
from memeval.commands.llm_options import add_llm_arguments, llm_options, make_llm_client
from memeval.natural.defaults import SAMPLE_SEED, TARGET_ACCEPTED
from memeval.natural.source import source_names
from memeval.output_paths import notices


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
    build.add_argument("--cost", choices=["words", "bytes"], default="words",
                       help="candidate cost: word count (default) or 8 + ceil(bytes/24)")
    build.add_argument("--target", type=bounded("--target"), default=TARGET_ACCEPTED,
                       help=f"packages to accept ({TARGET_ACCEPTED})")
    build.add_argument("--seed", type=bounded("--seed"), default=SAMPLE_SEED,
                       help=f"the examination-order seed ({SAMPLE_SEED})")
    build.add_argument("--source", choices=source_names(), default=source_names()[0],
                       help="locomo (default) or longmemeval (--data names the file; evidence from has_answer turns)")
    build.add_argument("--scope", choices=["question", "conversation"], default="question",
                       help="question: one package per accepted question (default); conversation: one package per "
                            "LoCoMo conversation with every turn and every question's evidence units")
    build.add_argument("--conversations", default="all", help="--scope conversation: all, conv-26, or a list")
    build.add_argument("--no-union", action="store_true", help="skip the union packages of exported stores")
    build.add_argument("--with-graph", action="store_true",
                       help="also export the memory graph (LLM extraction: cache first, then ANTHROPIC_API_KEY; "
                            "check the cost with --dry-run)")
    add_progress(build)
    add_llm_arguments(build)
    build.set_defaults(handler=_build)

    sens = command(sub, "sensitivity", "k = 2, byte-overhead costs and label noise, as JSON",
                   "memeval natural sensitivity --packages natural87 --output sensitivity.json")
    sens.add_argument("--packages", required=True, help="a `natural build` directory")
    add_budgets(sens, required=False, default="30,60,100")
    sens.add_argument("--noise-rate", type=share, default=0.1,
                      help="share of coverage cells replaced by a random level in the label-noise check (0.1)")
    sens.add_argument("--noise-seeds", type=bounded("--noise-seeds"), default=3, help="how many label-noise seeds")
    add_output_file(sens, "the JSON file to write")
    sens.set_defaults(handler=_sensitivity)

    export = _frame_parser(sub, "audit-export", "write the human audit frame (CSV)", "the CSV file to write",
                           "memeval natural audit-export --packages natural87 --output frame.csv")
    export.set_defaults(handler=_audit_export)

    llm = _frame_parser(sub, "audit-llm", "label the audit-frame cells with Claude (cached; needs a key or cache)",
                        "the verdict CSV to write (usable as --labels of audit-compare)",
                        "memeval natural audit-llm --packages natural87 --output llm_verdicts.csv --dry-run")
    add_llm_arguments(llm)
    llm.set_defaults(handler=_audit_llm)

    compare = command(sub, "audit-compare", "kappa, agreement and writer re-scoring: rule vs a filled frame",
                      "memeval natural audit-compare --packages natural87 --labels frame_filled.csv")
    compare.add_argument("--packages", required=True, help="a `natural build` directory")
    compare.add_argument("--labels", required=True, help="filled audit-frame CSV (verdict column)")
    add_budgets(compare, required=False, default="30,60,100")
    compare.set_defaults(handler=_audit_compare)

    union = command(sub, "union", "union packages of another system's exported memory store beside the natural "
                    "packages, for `memeval memaudit sweep natural`",
                    "memeval natural union --packages natural87 --store mem0_store.json --format mem0 --system mem0 "
                    "--out natural87")
    union.add_argument("--packages", required=True, help="a `natural build` directory")
    union.add_argument("--store", required=True, help="the exported store: a JSON object keyed by conversation id")
    union.add_argument("--format", required=True, choices=["memeval", "mem0", "letta", "amem"],
                       help="the store's shape: memeval items, Mem0 get_all(), Letta archival passages or "
                            "A-Mem notes")
    union.add_argument("--system", required=True, help="the name the store carries in every table")
    add_data(union, "LoCoMo file or directory (default: the documented search order)")
    add_out_dir(union, "packages directory to write into (the same as --packages adds the union packages there)")
    union.set_defaults(handler=_union)

    bridge = command(sub, "bridge", "union ratio vs QA outcomes (Spearman rho, bootstrap CI)",
                     "memeval natural bridge --sweep natural_sweep --run runs/offline --output bridge.json")
    bridge.add_argument("--sweep", required=True, help="a `memaudit sweep natural` output directory")
    bridge.add_argument("--run", required=True, help="a `locomo run` output directory")
    add_output_file(bridge, "JSON file to write (default: print)", required=False)
    bridge.set_defaults(handler=_bridge)


def _frame_parser(sub, name: str, help_text: str, out_help: str, example: str) -> argparse.ArgumentParser:
    """The audit frame's cells are chosen the same way by every command that uses them."""
    parser = command(sub, name, help_text, example)
    parser.add_argument("--packages", required=True, help="a `natural build` directory")
    add_output_file(parser, out_help)
    parser.add_argument("--zero-rate", type=share, default=0.2, help="share of zero cells sampled per kind")
    parser.add_argument("--seed", type=bounded("--seed"), default=0, help="the seed of the zero-cell sample")
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
