"""`memeval locomo run`: the end-to-end LoCoMo QA evaluation (answers, judgments, report, manifest)."""

from __future__ import annotations

import argparse
import json
import sys

from memeval.commands.arguments import (
    add_answer_key,
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
    system_name,
)
from memeval.commands.llm_options import add_llm_arguments, llm_options
from memeval.memory.registry import BUILTIN
from memeval.qa.choices import ANSWERERS, JUDGE_CHOICES
from memeval.qa.selection import QUESTIONS_HELP
from memeval.rundir import ANSWERS, JUDGMENTS, MANIFEST, REPORT
from memeval.safe_text import shown

__all__ = ["register", "split_systems"]

# The sample ids of the released locomo10.json, for --help (tests/test_cli.py checks them against the data).
RELEASED_CONVERSATIONS = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48",
                          "conv-49", "conv-50")


def register(subparsers: argparse._SubParsersAction) -> None:
    locomo = command(subparsers, "locomo", "end-to-end QA on LoCoMo",
                     "memeval locomo run --conversations conv-26 --questions prototype --out runs/prototype")
    sub = locomo.add_subparsers(dest="locomo_command", required=True)
    run = command(sub, "run", "answer (and optionally judge) LoCoMo questions with memory systems",
                  "memeval locomo run --systems rag_turns,full_context --reader claude --judge graded "
                  "--out runs/claude")
    add_data(run, "LoCoMo file or directory (default: the documented search order)")
    run.add_argument("--conversations", default="all",
                     help="all, one id or a comma-separated list; the released data's ids: "
                          + ", ".join(RELEASED_CONVERSATIONS))
    run.add_argument("--questions", default="all", help=QUESTIONS_HELP)
    run.add_argument("--question-seed", type=bounded("--question-seed"), default=0, metavar="N",
                     help="the seed of the `N` / `sample:N` sample (default 0; recorded in the run's identity, so "
                          "another seed is another run)")
    add_systems(run, "rag_turns", "rag_turns:chunk_tokens=256", builtin=BUILTIN)
    run.add_argument("--reader", "--answerer", dest="answerer", choices=ANSWERERS, default="extractive",
                     help="who reads the memories and answers: extractive (no LLM, the default), claude (this "
                          "project's memory prompt) or claude_official (the LoCoMo paper's setting: its own prompts "
                          "byte for byte once `memeval data fetch protocols` has fetched them, else paraphrased), "
                          "evermemos_mem0, evermemos_memos or evermemos_cot (the EverMemOS framework's answer "
                          "prompts over the retrieved memories, fetched the same way); --answerer: older spelling, "
                          "still accepted")
    run.add_argument("--judge", choices=JUDGE_CHOICES, default="none",
                     help="none (default: F1 only), graded (0-100, 10 runs a question) or binary (Mem0's "
                          "CORRECT/WRONG judge: its prompt byte for byte once `memeval data fetch protocols` has "
                          "fetched it, else paraphrased; Mem0's label rule either way) or evermemos (the EverMemOS "
                          "framework's judge: system and user prompts, 3 runs, JSON label; fetched the same way); "
                          "needs a key or a cache holding the calls")
    run.add_argument("--judge-runs", type=bounded("--judge-runs"), default=None,
                     help="judge runs per question (default: graded 10, binary 1, evermemos 3)")
    run.add_argument("--judge-mode", choices=["sync", "batch"], default="sync",
                     help="sync: one request per judgment (default); batch: uncached judgments through the Message "
                          "Batches API at half price, resumed after a kill")
    run.add_argument("--k", type=bounded("--k"), default=10, help="memories given to the reader by ranked systems")
    run.add_argument("--answer-max-tokens", type=bounded("--answer-max-tokens"), default=None, metavar="N",
                     help="the LLM reader's output cap (default: its protocol's, 64; the paper's 50 with "
                          "claude_official's fetched prompts). A reply still running at the cap is never an answer: "
                          "a model with longer answers needs a larger cap (a small base model may never stop: use an "
                          "instruction-tuned one); part of the run's identity and of every request's cache key")
    add_answer_key(run)
    add_llm_arguments(run)
    add_out_dir(run, "run directory (resumable: rerun to continue; another configuration is refused)")
    add_restart(run)
    add_fail_fast(run)
    add_progress(run)
    run.add_argument("--json", action="store_true",
                     help="print a JSON summary instead of the report (with --dry-run: the estimate's raw numbers "
                          "instead of its table)")
    run.set_defaults(handler=_run)

    imp = command(sub, "import", "bring another harness's answers into a run directory, matched to LoCoMo "
                  "questions and scored; judge and table them with `locomo run --systems NAME --out DIR`",
                  "memeval locomo import mem0_results.json --format mem0 --system mem0-harness --out runs/mem0-harness")
    imp.add_argument("source", help="the answers file")
    imp.add_argument("--format", required=True, choices=["memeval", "mem0", "jsonl", "evermemos"],
                     help="memeval: answers.jsonl; mem0: Mem0 evaluation results JSON; jsonl: question/prediction; "
                          "evermemos: the EverMemOS framework's eval_results.json (`detailed_results`), its recorded "
                          "judgments kept as the judge evermemos_recorded (recorded, not re-run)")
    imp.add_argument("--system", required=True, type=system_name,
                     help="the name the imported answers carry in every table")
    add_data(imp, "LoCoMo file or directory the answers are matched against (default: the documented order)")
    add_out_dir(imp, "run directory to add the answers to")
    imp.add_argument("--skip-invalid", action="store_true",
                     help="leave malformed rows out (each reported, here and in the manifest) instead of refusing "
                          "the file")
    imp.add_argument("--from-system", default=None, metavar="NAME",
                     help="--format memeval: the system of the answers file to import (required when it holds "
                          "several)")
    imp.add_argument("--judge-model", default=None, metavar="MODEL",
                     help="--format evermemos: the model that made the file's recorded judgments, when the file "
                          "does not state it (default: \"not stated by the file\")")
    imp.add_argument("--judge-prompt", default=None, choices=["evermemos"],
                     help="--format evermemos: the judge prompt the file's producer states its judgments were made "
                          "with (evermemos: the framework's pinned prompts.yaml, temperature 0); with a stated judge "
                          "model this lets a measured leniency be shown beside the recorded J (default: the prompt "
                          "is not stated, and neither is its leniency)")
    imp.add_argument("--json", action="store_true", help="print the matching report as JSON")
    imp.set_defaults(handler=_import)

    from memeval.benchmarks.locomo import trust_command as trust

    trust.register(sub)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.task import LocomoRunConfig, estimate_run, run_locomo

    llm = llm_options(args)
    config = LocomoRunConfig(
        out=args.out, data=args.data, conversations=args.conversations, questions=args.questions,
        question_seed=args.question_seed,
        systems=split_systems(args.systems), answerer=args.answerer, judge=args.judge, judge_runs=args.judge_runs,
        judge_mode=args.judge_mode, k=args.k, answer_max_tokens=args.answer_max_tokens, llm_backend=llm.backend,
        budget_usd=llm.budget_usd, max_concurrency=llm.max_concurrency, sampling=llm.sampling, models=llm.models,
        response_format=llm.response_format,
        context_tokens=llm.context_tokens,
        prices=args.prices, progress=not args.no_progress, restart=args.restart, fail_fast=args.fail_fast,
        key=args.key, ambiguous=args.ambiguous,
    )
    if llm.dry_run:
        from memeval.commands.estimates import estimate_table

        _say_protocols(args)
        estimate = estimate_run(config)
        print(json.dumps(estimate.as_dict(), indent=2) if args.json else estimate_table(estimate))
        return 0
    result = run_locomo(config)
    if args.json:
        print(json.dumps(result.summary()))
    else:
        print(shown(result.report, lines=True))
        print(f"written to {result.out}/ ({_files(result.out)})")
    _say_protocols(args)
    return finish(result.closing_line())


def _say_protocols(args: argparse.Namespace) -> None:
    """Whether the paper's reader and Mem0's judge send the anchors' own prompts or this project's wording, on
    stderr: before a dry run's costs, and before a run's closing line (a refusal stays its one line)."""
    from memeval.protocols import store
    from memeval.protocols.store import PARAPHRASED

    asked = {"claude_official": ("reader claude_official", "locomo_reader")} if args.answerer == "claude_official" \
        else {}
    if args.answerer.startswith("evermemos_"):
        asked[args.answerer] = (f"reader {args.answerer}", "evermemos_prompts")
    if args.judge == "binary":
        asked["binary"] = ("judge binary", "mem0_judge")
    if args.judge == "evermemos":
        asked["evermemos"] = ("judge evermemos", "evermemos_prompts")
    for what, name in asked.values():
        found = store.load(name)
        print(f"memeval: note: {what}: " + (f"the published prompts, byte for byte ({shown(found.origin)})" if found
              else f"{PARAPHRASED} (`memeval data fetch protocols` fetches them)"), file=sys.stderr)


def _import(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.imports import import_answers

    report = import_answers(args.source, args.format, args.system, args.out, args.data, args.skip_invalid,
                            args.from_system, args.judge_model, args.judge_prompt)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{report['matched']} of {report['rows']} rows matched to LoCoMo questions -> {args.out}/answers.jsonl "
              f"({report['unmatched']} unmatched, {report['ambiguous']} ambiguous, {report['duplicates']} "
              f"duplicated, {report['mismatched']} gold mismatches, {report['skipped']} invalid, "
              f"{report['errored']} ended in errors; only the matched rows are imported)")
        if report["superseded"] or report["other_systems"]:
            print(f"  {report['superseded']} earlier rows superseded by a later row of the same question (a retry), "
                  f"{report['other_systems']} rows of other systems: not imported")
        if report["by_position"]:
            print(f"  {report['by_position']} rows whose question text repeats in their conversation were placed "
                  "by position (the k-th such row answers the k-th such question in dataset order)")
        for example in report["examples"]:
            print(f"  {shown(example)}")
        for skipped in report["skipped_rows"]:
            print(f"  skipped (invalid): {shown(skipped)}")
        if "recorded" in report:
            print(recorded_line(report["recorded"]))
        print(next_steps(args.system, args.out, bool(report.get("recorded", {}).get("rows"))))
    return 0


def next_steps(system: str, out: str, recorded: bool) -> str:
    """What to type after an import, with the folder as the user typed it. Recorded judgments need no key: the
    offline next steps are the tables; a re-judging `locomo run` needs one, so it is offered only without them."""
    import shlex

    folder = shown(shlex.quote(out))
    if not recorded:
        return f"next: memeval locomo run --systems {shown(shlex.quote(system))} --out {folder} [--judge binary]"
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES
    from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND, audit_dir
    from memeval.benchmarks.locomo.trust import suggested_out

    trust = shown(shlex.quote(suggested_out(out)))
    if not (audit_dir() / AUDIT_FILES["errors"].path).is_file():  # --published would refuse without the audit
        return (f"next (offline, no key needed): memeval results {folder}\n"
                f"      memeval locomo trust {folder} --out {trust}\n"
                f"      {FETCH_COMMAND} (then trust takes --published: the field's published runs beside yours)")
    return (f"next (offline, no key needed): memeval results {folder}\n"
            f"      memeval locomo trust {folder} --published --out {trust}")


def recorded_line(recorded: dict) -> str:
    """What an EverMemOS file's judgments became, and the file's own figures (over all its items)."""
    if not recorded["rows"]:
        return "  no recorded judgments in the file (llm_judgments empty): answers only"
    published = recorded["published"]

    def pct(value):
        return "–" if value is None else f"{value:.2f}"

    return (f"  {recorded['rows']} recorded judgments ({recorded['runs']} runs, judge {shown(recorded['model'])}, "
            f"prompt {recorded['prompt']}) -> judge {recorded['protocol']}, {recorded['status']}; the file's "
            f"per-run mean {pct(published['mean'])} ± {pct(published['std'])} (population std over runs), "
            f"majority vote {pct(published['majority'])}")


def _files(out: str) -> str:
    """The run's files that exist (judgments.jsonl only once a judge ran)."""
    from pathlib import Path

    names = (ANSWERS, JUDGMENTS, REPORT, MANIFEST)
    return ", ".join(n for n in names if (Path(out) / n).exists())
