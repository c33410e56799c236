"""`memeval judge calibrate`: a judge's leniency, measured (calibration.py), or the rates the audit recorded for the
judge the field uses (`--recorded`, offline). LoCoMo's (the audit's answer sets over its questions), so its
declaration names this module in `Benchmark.commands`."""

from __future__ import annotations

import argparse
import sys

from memeval.benchmarks.locomo.command_config import CalibrateConfig
from memeval.commands.arguments import command, finish
from memeval.commands.llm_options import add_llm_arguments, llm_options
from memeval.errors import DataNotFoundError, InputError
from memeval.safe_text import shown
from memeval.scoring.leniency import ANSWER_SETS, dumps
from memeval.settings import add_config_arguments, config_from


def register(subparsers: argparse._SubParsersAction) -> None:
    judge = command(subparsers, "judge", "measure a judge: how often it accepts answers known to be wrong",
                    "memeval judge calibrate --judge evermemos --recorded")
    sub = judge.add_subparsers(dest="judge_command", required=True)
    calibrate = command(
        sub, "calibrate", "run a judge over the locomo-audit's wrong answers (v1 specific-but-wrong, v2 "
        "vague-but-topical) and over the gold answers, each against LoCoMo's original gold, for the non-adversarial "
        "questions: the share it accepts, per category, with Wilson 95% intervals, stored as a run and registered so "
        "every table shows it beside that judge's J",
        "memeval judge calibrate --judge binary --llm openai --questions 200 --out runs/calibrate-binary")
    add_config_arguments(calibrate, CalibrateConfig, "judge", "judge_runs", "sets", "questions", "recorded", "data")
    add_llm_arguments(calibrate, config_class=CalibrateConfig)
    add_config_arguments(calibrate, CalibrateConfig, "out", "restart", "progress", "json")
    calibrate.set_defaults(handler=_calibrate)


def _sets(spec: str) -> list[str]:
    sets = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in sets if s not in ANSWER_SETS]
    if unknown or not sets:
        raise InputError("--sets", ",".join(unknown) or "(empty)", "answer sets are " + ", ".join(ANSWER_SETS))
    return list(dict.fromkeys(sets))


def _calibrate(args: argparse.Namespace) -> int:
    sets = _sets(args.sets)
    if args.recorded:
        return _recorded(args, sets)
    if not args.out:
        raise InputError("--out", "(not given)", "a calibration run needs a directory (or --recorded for the audit's "
                         "recorded rates, no model call)")
    from memeval.benchmarks.locomo.calibration import CalibrationTask, audit_rows, gold_rows, select
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.engine import ModelSettings, RunSettings, run_task
    from memeval.scoring.judges import JUDGES

    llm = llm_options(args)
    judge = JUDGES[args.judge](args.judge_runs)
    conversations = load_locomo(find_locomo(args.data))
    rows = [row for s in sets for row in (gold_rows(conversations) if s == "gold" else audit_rows(s, conversations))]
    rows = select(rows, args.questions)
    config = {"judge": args.judge, "judge_runs": judge.runs, "sets": sets, "questions": args.questions,
              "data": args.data}
    task = CalibrationTask(judge, sets, rows, args.out, _command_line(args, sets), config)
    models = ModelSettings(backend=llm.backend, models=llm.models, sampling=llm.sampling, budget_usd=llm.budget_usd,
                           max_concurrency=llm.max_concurrency, prices=args.prices,
                           response_format=llm.response_format, context_tokens=llm.context_tokens)
    if llm.dry_run:
        return _dry_run(args, task, models)
    outcome = run_task(task, RunSettings(args.out, progress=not args.no_progress, restart=args.restart), models)
    if args.json:
        sys.stdout.write(dumps(task.leniency))
    else:
        print(shown(outcome.report, lines=True))
        print(f"written to {outcome.out}/ ({_files(outcome.out)})")
    if (outcome.llm or {}).get("backend") == "replay":
        print("memeval: note: no LLM is configured (set OPENAI_API_KEY or ANTHROPIC_API_KEY, or choose --llm): only "
              "judgments already in the cache were used; `--judge evermemos --recorded` shows the rates the audit "
              "recorded for gpt-4o-mini", file=sys.stderr)
    return finish(outcome.closing_line())


def _dry_run(args: argparse.Namespace, task, models) -> int:
    """The judge calls still to send (cache misses), their tokens and dollars, as `locomo run --dry-run` shows them;
    nothing is sent or written."""
    import json

    from memeval.commands.estimates import estimate_table
    from memeval.llm.client import checked_client
    from memeval.llm.count import token_counter
    from memeval.llm.types import RunEstimate

    client = checked_client(models, task.role_temperatures())
    judge = task.judge
    requests = [r for row in task.rows if judge.accepts(row) for r in judge.requests(row)]
    stage = client.estimate(requests, expected_output_tokens=60, counter=token_counter(client))
    estimate = RunEstimate({"judge": stage}, stage.usd_est,
                           f"{len(task.rows):,} answers × {judge.runs} run(s); cached calls are not counted; input "
                           "tokens as each stage's token_count says; prices from memeval/llm/profiles.py"
                           + (f" and --prices {args.prices}" if args.prices else "")
                           + " (check them before trusting the dollars)")
    print(json.dumps(estimate.as_dict(), indent=2) if args.json else estimate_table(estimate))
    return 0


def _recorded(args: argparse.Namespace, sets: list[str]) -> int:
    from memeval.benchmarks.locomo.audit_leniency import (
        RECORDED_JUDGE,
        RECORDED_MODEL,
        RECORDED_RUNS,
        recorded_leniency,
    )
    from memeval.benchmarks.locomo.calibration import identity_line, leniency_table

    if args.out:  # nothing to store: every table reads the recorded rates from the fetched audit itself
        raise InputError("--out", args.out, "is not used with --recorded: the audit's recorded rates are read from "
                         "the fetched audit wherever a J is shown, and nothing is written; drop --out, or drop "
                         "--recorded to measure the judge with a run stored there")
    if args.questions is not None:
        raise InputError("--recorded", f"--questions {args.questions}", "the recorded rates are over every question")
    if args.judge != RECORDED_JUDGE:
        raise InputError("--recorded", f"--judge {args.judge}", f"the audit recorded judgments of the {RECORDED_JUDGE} "
                         f"judge ({RECORDED_MODEL}) only; measure {args.judge} with a run (drop --recorded)")
    if args.judge_model not in (None, RECORDED_MODEL):
        raise InputError("--recorded", f"--judge-model {args.judge_model}", f"the audit's judgments are "
                         f"{RECORDED_MODEL}'s; measure another model with a run (drop --recorded)")
    if args.judge_runs not in (None, RECORDED_RUNS):
        raise InputError("--recorded", f"--judge-runs {args.judge_runs}", f"the audit recorded {RECORDED_RUNS} "
                         "runs a question")
    rates = [r for r in recorded_leniency() if r.answer_set in sets]
    if not rates and any(s != "gold" for s in sets):
        raise DataNotFoundError("the audit's scored files are not fetched: `memeval data fetch locomo-audit` stores "
                                "them (from github.com/dial481/locomo-audit, or --source DIR for a local copy)")
    if args.json:
        sys.stdout.write(dumps(rates))
    else:
        print(leniency_table(rates, sets))
        print()
        print(identity_line(rates[0] if rates else None))
    if "gold" in sets:
        print("memeval: note: gold answers: not measured (the audit recorded no judgments of the gold answers; a run "
              "without --recorded measures them)", file=sys.stderr)
    return 0


def _command_line(args: argparse.Namespace, sets: list[str]) -> list[str]:
    """The run's rerun command, from the settings' declarations (`--sets` as read: deduplicated, always written)."""
    return config_from(args, CalibrateConfig, sets=",".join(sets)).command_line()


def _files(out: str) -> str:
    from pathlib import Path

    from memeval.benchmarks.locomo.calibration import CALIBRATION
    from memeval.rundir import ANSWERS, JUDGMENTS, MANIFEST, REPORT

    return ", ".join(n for n in (CALIBRATION, ANSWERS, JUDGMENTS, REPORT, MANIFEST) if (Path(out) / n).exists())
