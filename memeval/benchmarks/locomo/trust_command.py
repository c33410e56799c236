"""`memeval locomo trust RUN_DIR... --out DIR`: how far a LoCoMo table can be trusted (memeval/benchmarks/locomo/trust.py)."""

from __future__ import annotations

import argparse

from memeval.benchmarks.locomo.command_config import TrustConfig
from memeval.commands.arguments import command
from memeval.settings import add_config_arguments


def register(sub: argparse._SubParsersAction) -> None:
    trust = command(sub, "trust", "one report on how far LoCoMo tables can be trusted: the runs side by side on the "
                    "original, corrected and excluded answer keys, the ceiling of a perfect system, each judge's "
                    "measured leniency and the minimum detectable difference per category (trust.md, trust.json, "
                    "figures/)", "memeval locomo trust runs/full runs/claude --published --out reports/trust")
    add_config_arguments(trust, TrustConfig, "runs", "published", "audit_dir", "ambiguous", "data", "out")
    trust.set_defaults(handler=_trust)


def _trust(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.benchmarks.locomo.trust import (
        already_imported,
        check_inputs,
        check_readable,
        import_published,
        write_trust,
    )
    from memeval.errors import InputError
    from memeval.safe_text import shown

    runs = list(args.runs)
    check_inputs(runs, args.out, args.audit_dir)
    if args.published:
        from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND, audit_dir, audit_path
        from memeval.benchmarks.locomo.trust import PUBLISHED

        if not any(audit_path(name, args.audit_dir) for name in PUBLISHED):
            raise InputError("--published", str(audit_dir(args.audit_dir)), "the LoCoMo audit is not fetched there; "
                             f"fetch it with `{FETCH_COMMAND}`")
        check_readable(runs, args.data)
        found = import_published(Path(args.out) / "published", args.audit_dir, args.data, already_imported(runs))
        runs += [str(p) for p in found]
    if not runs:
        raise InputError("memeval locomo trust", "RUN_DIR", "name at least one run directory, or --published")
    written = write_trust(runs, args.out, args.audit_dir, args.data, args.ambiguous)  # published: imported above
    print(shown(written["report"].read_text(), lines=True), end="")
    print(f"trust: {shown(written['report'])}, {shown(written['document'])}, {len(written['figures'])} figures in "
          f"{shown(Path(args.out) / 'figures')}")
    return 0
