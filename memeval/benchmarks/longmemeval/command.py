"""`memeval longmemeval run`: memory systems on LongMemEval, each question over its own haystack."""

from __future__ import annotations

import argparse

from memeval.benchmarks.longmemeval.config import LongMemEvalConfig
from memeval.commands.arguments import command, finish
from memeval.commands.llm_options import add_run_arguments, llm_options
from memeval.safe_text import shown
from memeval.settings import config_from


def register(subparsers: argparse._SubParsersAction) -> None:
    group = command(subparsers, "longmemeval", "memory systems on LongMemEval (data fetched by the user)",
                    "memeval data fetch longmemeval --variant s\n  memeval longmemeval run --data "
                    "data/longmemeval/longmemeval_s_cleaned.json --questions 50 --out runs/lme")
    sub = group.add_subparsers(dest="longmemeval_command", required=True)
    run = command(sub, "run", "answer LongMemEval questions with memory systems over each question's haystack; "
                  "evidence recall offline, accuracy with --judge longmemeval",
                  "memeval longmemeval run --data data/longmemeval/longmemeval_s_cleaned.json --systems "
                  "rag_turns,full_context --questions 50 --out runs/lme")
    add_run_arguments(run, LongMemEvalConfig, "data", "systems", "questions", "k", "reader", "judge",
                      "answer_max_tokens")
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.task import run_longmemeval

    llm = llm_options(args)
    result = run_longmemeval(config_from(args, LongMemEvalConfig))
    if llm.dry_run:
        print(shown(result.note, lines=True))
        return 0
    from memeval.benchmarks.locomo.command import _files

    print(shown(result.report, lines=True))
    print(f"written to {result.out}/ ({_files(result.out)})")
    return finish(result.closing_line())
