"""`memeval natural build`: LoCoMo natural MEMAUDIT packages (rule-adjudicated, deterministic)."""

from __future__ import annotations

import argparse
import json

from memeval.natural.construct import SAMPLE_SEED, TARGET_ACCEPTED


def register(subparsers: argparse._SubParsersAction) -> None:
    natural = subparsers.add_parser("natural", help="LoCoMo natural MEMAUDIT packages")
    sub = natural.add_subparsers(dest="natural_command", required=True)
    build = sub.add_parser("build", help="build the natural packages (one per accepted question)")
    build.add_argument("--data", help="LoCoMo file or directory (default: the documented search order)")
    build.add_argument("--out", required=True, help="directory for the package files, rejected.jsonl, manifest")
    build.add_argument("--cost", choices=["words", "bytes"], default="words",
                       help="candidate cost: word count (default) or 8 + ceil(bytes/24)")
    build.add_argument("--target", type=int, default=TARGET_ACCEPTED, help="packages to accept (87)")
    build.add_argument("--seed", type=int, default=SAMPLE_SEED, help="examination-order seed (87)")
    build.add_argument("--no-union", action="store_true", help="skip the union packages of exported stores")
    build.set_defaults(handler=_build)


def _build(args: argparse.Namespace) -> int:
    from memeval.natural.build import build_directory

    manifest = build_directory(args.out, args.data, args.cost, args.target, args.seed, union=not args.no_union)
    print(json.dumps({k: manifest[k] for k in ("examined", "accepted", "rejected", "rejected_by_reason",
                                               "accepted_by_category", "rule_version")}))
    return 0
