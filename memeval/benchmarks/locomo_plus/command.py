"""`memeval locomo-plus fetch` and `memeval locomo-plus run`: LoCoMo-Plus's Cognitive items (and LoCoMo's questions)
with memory systems, judged by the benchmark's per-category judge. Flags mirror `memeval locomo run` where they
apply."""

from __future__ import annotations

import argparse
import json

from memeval.commands.arguments import (
    add_fail_fast,
    add_out_dir,
    add_progress,
    add_restart,
    add_systems,
    bounded,
    command,
    finish,
    split_systems,
)
from memeval.commands.llm_options import add_llm_arguments, llm_options
from memeval.memory.registry import BUILTIN
from memeval.qa.selection import QUESTIONS_HELP
from memeval.safe_text import shown


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
    fetch.add_argument("--dest", default=None, metavar="DIR",
                       help="where to write them (default: $MEMEVAL_LOCOMO_PLUS_DIR, else data/locomo_plus/)")
    fetch.set_defaults(handler=_fetch)

    run = command(sub, "run", "answer LoCoMo-Plus's triggers (and LoCoMo's questions) with memory systems; "
                  "evidence recall offline, J with --judge locomo_plus",
                  "memeval locomo-plus run --systems rag_turns,full_context --reader claude --judge locomo_plus "
                  "--out runs/plus")
    run.add_argument("--data", default=None, help="the fetched LoCoMo-Plus directory, or its locomo_plus.json "
                     "(default: $MEMEVAL_LOCOMO_PLUS_DIR, else data/locomo_plus/); a prompt.py beside it gives the "
                     "judge the benchmark's own prompts")
    run.add_argument("--locomo", default=None, help="LoCoMo file or directory (default: the documented search order)")
    run.add_argument("--conversations", default="all",
                     help="all, or LoCoMo conversation ids (comma-separated): their questions, and the items "
                          "stitched into them")
    run.add_argument("--questions", default="all", help="LoCoMo's questions per conversation, or none; "
                     + QUESTIONS_HELP)
    run.add_argument("--question-seed", type=bounded("--question-seed"), default=0, metavar="N",
                     help="the seed of a `N` / `sample:N` question sample (default 0; in the run's identity)")
    run.add_argument("--items", default="all", help="Cognitive items: all (default), none, or the first N")
    run.add_argument("--choice", choices=["cyclic", "random"], default="cyclic",
                     help="which conversation an item goes into: cyclic (item i into conversation i mod 10, the "
                          "benchmark's evaluation input; default) or random (build_conv.py's draw, seeded by --seed)")
    run.add_argument("--seed", type=bounded("--seed"), default=0, metavar="N",
                     help="--choice random: the seed (default 0; in the run's identity)")
    add_systems(run, "rag_turns", "rag_turns:chunk_tokens=256", builtin=BUILTIN)
    run.add_argument("--reader", choices=["extractive", "claude"], default="extractive",
                     help="extractive (no LLM, the default) or claude (the answer role's model, any provider, over "
                          "the memories)")
    run.add_argument("--judge", choices=["none", "locomo_plus"], default="none",
                     help="locomo_plus: the benchmark's per-category judge (correct 1, partial 0.5, wrong 0): its "
                          "prompts byte for byte once fetched, else paraphrased; needs a key, a server or a cache")
    run.add_argument("--k", type=bounded("--k"), default=10, help="memories given to the reader by ranked systems")
    run.add_argument("--answer-max-tokens", type=bounded("--answer-max-tokens"), default=None, metavar="N",
                     help="the LLM reader's output cap (default: 64 for LoCoMo's questions, 200 for a trigger's "
                          "reply); part of the run's identity")
    add_llm_arguments(run)
    add_out_dir(run, "run directory (resumable: rerun to continue; another configuration is refused)")
    add_restart(run)
    add_fail_fast(run)
    add_progress(run)
    run.add_argument("--json", action="store_true", help="print a JSON summary instead of the report")
    run.set_defaults(handler=_run)


def _fetch(args: argparse.Namespace) -> int:
    """`memeval locomo-plus fetch`: the documented spelling of `memeval data fetch locomo-plus`."""
    from memeval.benchmarks.locomo_plus.datasets import fetch_command

    return fetch_command(args)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo_plus.task import LocomoPlusConfig, run_locomo_plus

    llm = llm_options(args)
    if llm.dry_run:
        from memeval.errors import InputError

        raise InputError("--dry-run", "locomo-plus run", "not offered yet for LoCoMo-Plus")
    config = LocomoPlusConfig(
        out=args.out, data=args.data, locomo=args.locomo, conversations=args.conversations, questions=args.questions,
        question_seed=args.question_seed, items=args.items, choice=args.choice, seed=args.seed,
        systems=split_systems(args.systems), reader=args.reader, judge=args.judge, k=args.k,
        answer_max_tokens=args.answer_max_tokens, llm_backend=llm.backend, budget_usd=llm.budget_usd,
        max_concurrency=llm.max_concurrency, sampling=llm.sampling, response_format=llm.response_format,
        context_tokens=llm.context_tokens, models=llm.models, prices=args.prices, progress=not args.no_progress,
        restart=args.restart, fail_fast=args.fail_fast)
    result = run_locomo_plus(config)
    if args.json:
        print(json.dumps({"out": result.out, "answers": result.answer_counts.model_dump(),
                          "judges": [c.model_dump() for c in result.judge_counts], "missing": result.missing}))
    else:
        from memeval.benchmarks.locomo.command import _files

        print(shown(result.report, lines=True))
        print(f"written to {result.out}/ ({_files(result.out)})")
    return finish(result.closing_line())
