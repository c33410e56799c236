"""`memeval locomo run`: the end-to-end LoCoMo QA evaluation (answers, judgments, report, manifest)."""

from __future__ import annotations

import argparse
import json
import sys

from memeval.benchmarks.locomo.command_config import RUN_JSON, ImportConfig
from memeval.benchmarks.locomo.config import RELEASED_CONVERSATIONS, LocomoRunConfig
from memeval.commands.arguments import command, finish, split_systems
from memeval.commands.llm_options import add_run_arguments, llm_options
from memeval.rundir import ANSWERS, JUDGMENTS, MANIFEST, REPORT
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, add_setting, config_from

__all__ = ["RELEASED_CONVERSATIONS", "register", "split_systems"]


def register(subparsers: argparse._SubParsersAction) -> None:
    locomo = command(subparsers, "locomo", "end-to-end QA on LoCoMo",
                     "memeval locomo run --conversations conv-26 --questions prototype --out runs/prototype")
    sub = locomo.add_subparsers(dest="locomo_command", required=True)
    run = command(sub, "run", "answer (and optionally judge) LoCoMo questions with memory systems",
                  "memeval locomo run --systems rag_turns,full_context --reader claude --judge graded "
                  "--out runs/claude")
    add_run_arguments(run, LocomoRunConfig, "data", "conversations", "questions", "question_seed", "systems",
                      "answerer", "judge", "judge_runs", "judge_mode", "k", "answer_max_tokens", "key", "ambiguous")
    add_setting(run, RUN_JSON)
    run.set_defaults(handler=_run)

    imp = command(sub, "import", "bring another harness's answers into a run directory, matched to LoCoMo "
                  "questions and scored; judge and table them with `locomo run --systems NAME --out DIR`",
                  "memeval locomo import mem0_results.json --format mem0 --system mem0-harness --out runs/mem0-harness")
    add_config_arguments(imp, ImportConfig, "source", "format", "system", "data", "out", "skip_invalid",
                         "from_system", "judge_model", "judge_prompt", "json")
    imp.set_defaults(handler=_import)

    from memeval.benchmarks.locomo import trust_command as trust

    trust.register(sub)


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.task import estimate_run, run_locomo

    llm = llm_options(args)
    config = config_from(args, LocomoRunConfig)
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

    config = config_from(args, ImportConfig)
    report = import_answers(config.source, config.format, config.system, config.out, config.data,
                            config.skip_invalid, config.from_system, config.judge_model, config.judge_prompt)
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
