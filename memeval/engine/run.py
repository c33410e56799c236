"""`run_task`: one task through one engine. Validate, load, make the checked client, read the stage files (a
corrupt one is refused before anything is written), claim the run directory under its identity and lock, answer
what is not final, judge what is not judged, then the report and the manifest. Every stage resumes: a killed run
loses at most the unit in progress."""

from __future__ import annotations

import re
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from memeval.atomic import write_text_atomic
from memeval.engine.directory import Directory, run_directory
from memeval.engine.judging import JudgeCounts, judge_stage
from memeval.engine.roles import ModelSettings
from memeval.engine.task import Task
from memeval.jsonl import JsonlWriter
from memeval.llm.fit import does_not_fit, fit_advice
from memeval.llm.manifest import llm_manifest
from memeval.progress import call_status, progress_bar
from memeval.records import latest, read_records, write_records
from memeval.rundir import RunDir, incomplete_line, read_manifest

PLUGIN_ERROR = "plugin: "  # how a row's error starts when a plug-in's own ingest or search raised


@dataclass(frozen=True)
class RunSettings:
    """How a run is carried out, apart from what it computes (none of these changes a row)."""

    out: str | Path
    progress: bool = True
    restart: bool = False  # move a run with another identity (or this one) aside to DIR.replaced-<UTC> first
    fail_fast: bool = False  # the first plug-in failure stops the run (else recorded in the row's `error`)
    judge_mode: str = "sync"  # or batch: Anthropic's Message Batches at half price
    poll_interval_s: float = 30.0


class AnswerCounts(BaseModel):
    model_config = ConfigDict(frozen=True)

    already_done: int
    written: int
    errors: int
    plugin_errors: int


@dataclass
class RunOutcome:
    """What a run returns, whatever the task: where it wrote, the report, this selection's rows, the counts, the
    notes and what is missing (empty: complete)."""

    out: str
    report: str
    answers: list
    judgments: list
    answer_counts: AnswerCounts
    judge_counts: list[JudgeCounts]
    notes: list[str]
    llm: dict | None
    missing: dict = field(default_factory=dict)
    summary: dict | None = None  # a task's derived summary (graph80's summary.json)

    @property
    def complete(self) -> bool:
        return not self.missing

    def closing_line(self) -> str | None:
        return incomplete_line(self.missing)


def run_task(task: Task, settings: RunSettings, models: ModelSettings = ModelSettings(), client=None) -> RunOutcome:
    """Run `task` into `settings.out`; see the module docstring. The directory's lock is held throughout."""
    task.validate()
    task.prepare()
    from memeval.llm.client import checked_client

    client = checked_client(models, task.role_temperatures(), client)
    rundir = RunDir(settings.out)
    read_records(rundir.answers, task.answer_record)  # a corrupt stage file is refused before the claim
    if task.judgment_record is not None:
        read_records(rundir.judgments, task.judgment_record)
    command = task.command_line()
    with run_directory(rundir.path, shlex.join(command), task.identity(client), kind=task.kind,
                       command_line=command, config=task.public_config(), restart=settings.restart,
                       legacy=task.legacy_identity(read_manifest(rundir.path))) as held:
        return _run_claimed(task, settings, client, rundir, held)


def _run_claimed(task: Task, settings: RunSettings, client, rundir: RunDir, held: Directory) -> RunOutcome:
    claimed = held.claim
    notes = [*claimed.notes(), *task.notes(client)]
    units = task.units()
    final = {r.key for r in latest(read_records(rundir.answers, task.answer_record), _key).values()
             if r.error is None}
    for line in task.refusals(units, final, client):  # prompts that cannot fit: said once, the rest runs
        print(f"memeval: {line}", file=sys.stderr)
        notes.append(line)  # it starts with a system's name: an identifier, never re-cased
    answer_counts = answer_stage(task, units, client, rundir, settings)
    notes += task.answered_notes(client)
    wanted = [key for unit in units for key in unit.keys]
    wanted_set = set(wanted)
    answers = [r for r in latest(read_records(rundir.answers, task.answer_record), _key).values()
               if r.key in wanted_set]
    advice = failure_advice(task, answers)
    if answer_counts.errors:
        notes.append(advice[0].upper() + advice[1:] + "." if advice else task.failure_note(answer_counts.errors, client))

    judges = task.judges()
    by_name = {judge.name: judge for judge in judges}
    judge_counts = []
    graded = task.judge_rows(answers)
    for judge in judges:
        done = {j.key for j in read_records(rundir.judgments, task.judgment_record) if _usable(j, by_name)}
        todo = sum(1 for a in graded if a.error is None and judge.accepts(a) and judge.key(a) not in done)
        with progress_bar(todo, f"judge ({judge.name})", "q", settings.progress, call_status(client)) as bar:
            counts = judge_stage(judge, graded, done, client, rundir.judgments, settings.judge_mode,
                                 batch_name=f"judge-{judge.name}:{rundir.path.resolve()}",
                                 poll_interval_s=settings.poll_interval_s, progress=bar.callback)
        judge_counts.append(counts)
        notes += counts.notes()
    if not judges and task.no_judge_note:
        notes.append(task.no_judge_note)
    judgments = []
    if task.judgment_record is not None:
        answer_keys = {a.key for a in answers}
        judgments = [j for j in latest(read_records(rundir.judgments, task.judgment_record), _key).values()
                     if task.judged_answer(j) in answer_keys and _usable(j, by_name)]

    report = task.report(answers, judgments, notes, client)
    write_text_atomic(rundir.report, report)
    missing = missing_rows(task, wanted, answers, judgments, judges, advice, judge_counts, graded)
    llm = client_summary(client)
    outcome = RunOutcome(out=str(rundir.path), report=report, answers=answers, judgments=judgments,
                         answer_counts=answer_counts, judge_counts=judge_counts, notes=notes, llm=llm,
                         missing=missing)
    task.finish(outcome, client)
    summary = {"answer_counts": answer_counts.model_dump(),
               "judge_counts": judge_counts[0].model_dump() if len(judge_counts) == 1 else
               [c.model_dump() for c in judge_counts] or None, "notes": notes, "llm": llm, "missing": missing}
    command = task.command_line()
    invocation = {"config": task.public_config(), "command_line": shlex.join(command), **summary}
    held.finish(missing, command_line=command, config=task.public_config(),
                **task.manifest_fields(answers, judgments, claimed, client),
                llm=llm_manifest(client, task.role_temperatures()),
                rows={"answers": len(answers), "judgments": len(judgments)},
                invocations=[*(claimed.previous or {}).get("invocations", []), invocation])
    return outcome


def failure_advice(task: Task, answers: list) -> str | None:
    """What to do about failed answers where a plain rerun would not help (None: a rerun is the remedy). Rows that
    do not fit the server's context come first; the task's own advice, a request past a per-minute limit and a cut
    extraction speak for the others."""
    misfits = sum(does_not_fit(a.error) for a in answers)
    rest = [a for a in answers if not does_not_fit(a.error)] if misfits else answers
    other = task.failure_advice(rest) or too_large_advice(rest) or cut_extraction_advice(rest)
    if not misfits:
        return other
    fit = fit_advice([(getattr(a, "system", None), a.error) for a in answers],
                     0 if other else sum(1 for a in rest if a.error))
    return fit + (f"; {other}" if other else "")


def too_large_advice(answers: list) -> str | None:
    """Rows refused because one request exceeds a whole per-minute limit of the account: a rerun at the same tier
    cannot send them either, so the closing line says what can (None when no row was)."""
    over = sum(1 for a in answers if (a.error or "").startswith("ExceedsLimit"))
    if not over:
        return None
    others = sum(1 for a in answers if a.error) - over
    return (f"{over:,} answer{'' if over == 1 else 's'} exceed{'s' if over == 1 else ''} the account's whole "
            "per-minute token limit in one request (see the `error` field): a rerun at this tier cannot send "
            "them; a higher tier, a smaller context (fewer retrieved memories, --k) or a smaller output cap can"
            + (f"; rerun to retry the other {others:,} failed" if others else ""))


def cut_extraction_advice(answers: list) -> str | None:
    """Rows whose memory could not be built because the extraction reply was cut at its cap: at temperature 0 a
    plain rerun is cut the same way, so say which knob raises the cap (None when no row was)."""
    cut = sum(1 for a in answers if (a.error or "").startswith("ingest failed: UnusableReply")
              and "cut at max_tokens" in (a.error or ""))
    if not cut:
        return None
    return (f"{cut:,} answer{'' if cut == 1 else 's'} had no memory: the extraction reply was cut at its output cap "
            "(see the `error` field), and a plain rerun at temperature 0 is cut the same way; raise it with "
            "memory_graph:extract_max_tokens=N (another --out, or --restart) or use a model that stops by itself")


def _reporting(client, tick):
    """The client's per-answer report while a unit is answered (a client without one: nothing)."""
    report = getattr(client, "reporting_answers", None)
    return report(tick) if report is not None else nullcontext()


def answer_stage(task: Task, units, client, rundir: RunDir, settings: RunSettings) -> AnswerCounts:
    """Answer every unit's keys that are not final; rows are appended a unit at a time."""
    final = {r.key for r in latest(read_records(rundir.answers, task.answer_record), _key).values()
             if r.error is None}
    written = errors = plugin_errors = 0
    units = [u for u in units if u.answerable]
    total = sum(len(u.keys) for u in units)
    done = sum(key in final for u in units for key in u.keys)  # on the bar from the start, not in its rate
    rundir.path.mkdir(parents=True, exist_ok=True)
    with JsonlWriter(rundir.answers) as writer, \
            progress_bar(total, task.progress_label, "q", settings.progress, call_status(client), done) as bar:
        for unit in units:
            todo = [k for k in unit.keys if k not in final]
            moved = 0
            if todo:
                def tick(n: int, room: int = len(todo)) -> None:
                    nonlocal moved
                    step = min(n, room - moved)
                    if step > 0:
                        moved += step
                        bar.update(step)

                with _reporting(client, tick):
                    rows = task.answer(unit, todo, client)
                written += write_records(writer, rows)
                errors += sum(1 for r in rows if r.error is not None)
                plugin_errors += sum(1 for r in rows if (r.error or "").startswith(PLUGIN_ERROR))
            bar.update(len(todo) - moved)
    return AnswerCounts(already_done=len(final), written=written, errors=errors, plugin_errors=plugin_errors)


def missing_rows(task: Task, wanted: list[tuple], answers: list, judgments: list, judges,
                 advice: str | None = None, judge_counts: Sequence[JudgeCounts] = (),
                 graded: list | None = None) -> dict:
    """What this invocation asked for and does not have: answers that failed (by their error's kind, with the
    task's `advice` when a rerun alone would not help) or were never written, and, per judge, judgments missing
    for answered rows (`graded`: the rows the judges grade, `task.judge_rows`; with how many of them this
    invocation found no usable label in, by reason). Empty when the run is complete."""
    by_key = {a.key: a for a in answers}
    owed = [k for k in wanted if task.owed(k)]
    failed: Counter = Counter()
    absent = 0
    for key in owed:
        row = by_key.get(key)
        if row is None:
            absent += 1
        elif row.error is not None:
            failed[error_kind(row.error)] += 1
    out: dict = {}
    if failed or absent:
        out["answers"] = {"requested": len(owed), "failed": sum(failed.values()), "absent": absent,
                          "reasons": dict(failed.most_common())}
        if advice and failed:
            out["answers"]["advice"] = advice
    judged = {j.key for j in judgments}
    unusable = {c.protocol: c.unusable for c in judge_counts}
    for judge in judges:
        answered = [a for a in (answers if graded is None else graded) if a.error is None and judge.accepts(a)]
        missing = [a for a in answered if judge.key(a) not in judged]
        if missing:
            entry = {"protocol": judge.name, "requested": len(answered), "missing": len(missing)}
            if unusable.get(judge.name):
                entry["unusable"] = dict(unusable[judge.name])
            out.setdefault("judgments", []).append(entry)
    return out


def _usable(judgment, judges: dict) -> bool:
    """A stored judgment counts unless the judge that made it, asked again in this run, finds no label in it (a
    row written before such judgments were left out)."""
    judge = judges.get(judgment.key[-1])
    return judge is None or judge.unusable(judgment) is None


def error_kind(error: str | None) -> str:
    """The kind of a recorded failure: its exception name (and an HTTP status when the message has one)."""
    text = error or "unknown"
    kind = text.split(":", 1)[0].strip() or "error"
    status = re.search(r"(?<![\d.,])\b([45]\d\d)\b(?![.,]\d)", text)  # not the tail of "≈25,562 tokens"
    return f"{kind} ({status.group(1)})" if status else kind


def client_summary(client) -> dict | None:
    if client is None:
        return None
    s = client.stats
    return {"backend": client.backend_name, "requests_sent": s.requests_sent, "cache_hits": s.cache_hits,
            "retries": s.retries, "failures": s.failures, "cost_usd": round(s.cost_usd, 6),
            "input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
            "cache_creation_input_tokens": s.cache_creation_input_tokens,
            "cache_read_input_tokens": s.cache_read_input_tokens}


def _key(row) -> tuple:
    return row.key
