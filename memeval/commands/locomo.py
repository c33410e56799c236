"""`memeval locomo run|report`: the end-to-end LoCoMo QA evaluation (answers, judgments, report, manifest)."""

from __future__ import annotations

import argparse
import json

from memeval.commands.llm_options import add_llm_arguments, llm_options
from memeval.qa.answer_pass import ANSWERERS
from memeval.qa.locomo_run import JUDGE_CHOICES, LocomoRunConfig, estimate_run, run_locomo


def register(subparsers: argparse._SubParsersAction) -> None:
    locomo = subparsers.add_parser("locomo", help="end-to-end QA on LoCoMo")
    sub = locomo.add_subparsers(dest="locomo_command", required=True)
    run = sub.add_parser("run", help="answer (and optionally judge) LoCoMo questions with memory systems")
    run.add_argument("--data", help="LoCoMo file or directory (default: the documented search order)")
    run.add_argument("--conversations", default="all", help="all, conv-26, or a comma-separated list")
    run.add_argument("--questions", default="all", help="prototype, all, or N (the first N per conversation)")
    run.add_argument("--systems", default="rag_turns",
                     help="comma-separated systems; parameters as name:key=value (e.g. rag_turns:chunk_tokens=256) "
                          "— separate such systems with ';'")
    run.add_argument("--answerer", choices=ANSWERERS, default="extractive")
    run.add_argument("--judge", choices=JUDGE_CHOICES, default="none")
    run.add_argument("--judge-runs", type=int, default=None, help="runs per question (graded 10, binary 1)")
    run.add_argument("--judge-mode", choices=["sync", "batch"], default="sync")
    run.add_argument("--k", type=int, default=10, help="memories given to the reader by ranked systems")
    add_llm_arguments(run)
    run.add_argument("--out", required=True, help="run directory (resumable: rerun to continue)")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("--json", action="store_true", help="print a JSON summary instead of the report")
    run.set_defaults(handler=_run)


def split_systems(spec: str) -> list[str]:
    """`a,b` or, when parameters contain commas, `a:x=1,y=2;b`."""
    if ";" in spec:
        return [s.strip() for s in spec.split(";") if s.strip()]
    return [s.strip() for s in spec.split(",") if s.strip()]


def _run(args: argparse.Namespace) -> int:
    llm = llm_options(args)
    config = LocomoRunConfig(
        out=args.out, data=args.data, conversations=args.conversations, questions=args.questions,
        systems=split_systems(args.systems), answerer=args.answerer, judge=args.judge, judge_runs=args.judge_runs,
        judge_mode=args.judge_mode, k=args.k, llm_backend=llm.backend, budget_usd=llm.budget_usd,
        sampling=llm.sampling, models=llm.models, progress=not args.no_progress,
    )
    if llm.dry_run:
        print(json.dumps(estimate_run(config), indent=2))
        return 0
    result = run_locomo(config)
    if args.json:
        print(json.dumps({k: result[k] for k in ("out", "answer_counts", "judge_counts", "notes", "llm")}))
    else:
        print(result["report"])
        print(f"written to {result['out']}/ (answers.jsonl, judgments.jsonl, report.md, manifest.json)")
    return 0
