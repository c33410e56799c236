"""`memeval longmemeval run`: memory systems on LongMemEval, each question over its own haystack."""

from __future__ import annotations

import argparse

from memeval.commands.arguments import (
    add_data,
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
from memeval.safe_text import shown


def register(subparsers: argparse._SubParsersAction) -> None:
    group = command(subparsers, "longmemeval", "memory systems on LongMemEval (data fetched by the user)",
                    "memeval data fetch longmemeval --variant s\n  memeval longmemeval run --data "
                    "data/longmemeval/longmemeval_s_cleaned.json --questions 50 --out runs/lme")
    sub = group.add_subparsers(dest="longmemeval_command", required=True)
    run = command(sub, "run", "answer LongMemEval questions with memory systems over each question's haystack; "
                  "evidence recall offline, accuracy with --judge longmemeval",
                  "memeval longmemeval run --data data/longmemeval/longmemeval_s_cleaned.json --systems "
                  "rag_turns,full_context --questions 50 --out runs/lme")
    add_data(run, "a LongMemEval file (memeval data fetch longmemeval --variant s)", required=True)
    add_systems(run, "rag_turns", "rag_turns:chunk_tokens=256")
    run.add_argument("--questions", type=bounded("--questions"), default=None, help="the first N questions (default: all)")
    run.add_argument("--k", type=bounded("--k"), default=10, help="memories given to the reader by ranked systems")
    run.add_argument("--reader", choices=["extractive", "llm"], default="extractive",
                     help="extractive: the no-LLM baseline; llm: the answer model reads the memories")
    run.add_argument("--judge", choices=["none", "longmemeval"], default="none",
                     help="longmemeval: the benchmark's yes/no protocol (needs a key or a cache); the published "
                          "one is --judge-model gpt-4o-2024-08-06 --llm openai")
    run.add_argument("--answer-max-tokens", type=bounded("--answer-max-tokens"), default=None, metavar="N",
                     help="--reader llm: the reader's output cap (default: its protocol's, 200; the benchmark's 500 "
                          "with its fetched prompt). A reply still running at the cap is never an answer; part of "
                          "the run's identity and of every request's cache key")
    add_llm_arguments(run, roles=("answer", "judge"))
    add_out_dir(run, "run directory (resumable: rerun to continue; another configuration is refused)")
    add_restart(run)
    add_fail_fast(run)
    add_progress(run)
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.task import LongMemEvalConfig, run_longmemeval

    llm = llm_options(args)
    result = run_longmemeval(LongMemEvalConfig(
        args.data, args.out, split_systems(args.systems), args.questions, args.k, args.judge, llm.backend,
        progress=not args.no_progress, reader=args.reader, models=llm.models, sampling=llm.sampling,
        budget_usd=llm.budget_usd, dry_run=llm.dry_run, restart=args.restart, fail_fast=args.fail_fast,
        max_concurrency=llm.max_concurrency, prices=args.prices, answer_max_tokens=args.answer_max_tokens,
        response_format=llm.response_format, context_tokens=llm.context_tokens))
    if llm.dry_run:
        print(shown(result.note, lines=True))
        return 0
    from memeval.benchmarks.locomo.command import _files

    print(shown(result.report, lines=True))
    print(f"written to {result.out}/ ({_files(result.out)})")
    return finish(result.closing_line())
