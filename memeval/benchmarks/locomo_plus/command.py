"""`memeval locomo-plus fetch` and `memeval locomo-plus run`: LoCoMo-Plus's Cognitive items (and LoCoMo's questions)
with memory systems, judged by the benchmark's per-category judge. Flags mirror `memeval locomo run` where they
apply."""

from __future__ import annotations

import argparse
import json

from memeval.benchmarks.locomo_plus.config import LocomoPlusConfig
from memeval.benchmarks.locomo_plus.datasets import DATA_ENV, LOCOMO_PLUS
from memeval.commands.arguments import command, finish
from memeval.commands.data import add_fetch_arguments
from memeval.commands.llm_options import add_run_arguments, llm_options
from memeval.safe_text import shown
from memeval.settings import Setting, add_setting, config_from

JSON = Setting("--json", switch=True, rerun=False, help="print a JSON summary instead of the report")


def register(subparsers: argparse._SubParsersAction) -> None:
    group = command(subparsers, "locomo-plus", "LoCoMo-Plus: cue and trigger stitched into LoCoMo conversations "
                    "(data fetched by the user)",
                    "memeval locomo-plus fetch\n  memeval locomo-plus run --systems rag_turns --items 20 "
                    "--questions none --out runs/plus")
    sub = group.add_subparsers(dest="locomo_plus_command", required=True)
    fetch = command(sub, "fetch", "download LoCoMo-Plus's items and judge prompts at the pinned commit, each checked "
                    "by SHA-256 (the repository has no licence file: they stay on your machine); the same as "
                    "`memeval data fetch locomo-plus`",
                    "memeval locomo-plus fetch --dest data/locomo_plus")
    add_fetch_arguments(fetch, [LOCOMO_PLUS], f"${DATA_ENV}, else {LOCOMO_PLUS.dest}/")

    run = command(sub, "run", "answer LoCoMo-Plus's triggers (and LoCoMo's questions) with memory systems; "
                  "evidence recall offline, J with --judge locomo_plus",
                  "memeval locomo-plus run --systems rag_turns,full_context --reader claude --judge locomo_plus "
                  "--out runs/plus")
    add_run_arguments(run, LocomoPlusConfig, "data", "locomo", "conversations", "questions", "question_seed",
                      "items", "choice", "seed", "systems", "reader", "judge", "k", "answer_max_tokens")
    add_setting(run, JSON)
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo_plus.task import run_locomo_plus

    llm = llm_options(args)
    if llm.dry_run:
        from memeval.errors import InputError

        raise InputError("--dry-run", "locomo-plus run", "not offered yet for LoCoMo-Plus")
    config = config_from(args, LocomoPlusConfig)
    result = run_locomo_plus(config)
    if args.json:
        print(json.dumps({"out": result.out, "answers": result.answer_counts.model_dump(),
                          "judges": [c.model_dump() for c in result.judge_counts], "missing": result.missing}))
    else:
        from memeval.benchmarks.locomo.command import _files

        print(shown(result.report, lines=True))
        print(f"written to {result.out}/ ({_files(result.out)})")
    return finish(result.closing_line())
