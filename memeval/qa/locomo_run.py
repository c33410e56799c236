"""`memeval locomo run` as a function: select, answer, judge, report, manifest — each stage resumable.

Outputs in the run directory: answers.jsonl, judgments.jsonl, report.md, manifest.json. The notebooks call
`run_locomo` with the same configuration the CLI builds, so both produce identical files.
"""

from __future__ import annotations

import numbers
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memeval.atomic import write_json_atomic, write_text_atomic
from memeval.data.fetch import data_hashes
from memeval.data.locomo import load_locomo
from memeval.data.paths import find_locomo
from memeval.errors import InputError
from memeval.invocation import flag_args, path_text
from memeval.llm.client import LLMClient, checked_client, make_client
from memeval.llm.count import token_counter
from memeval.llm.manifest import llm_manifest, role_identity
from memeval.manifest import base_manifest
from memeval.memory.base import SystemConfig
from memeval.memory.extraction import EXTRACTION_TEMPERATURE
from memeval.memory.registry import build_system, known, needs_llm, system_names
from memeval.progress import progress_bar
from memeval.prompts import all_prompt_hashes
from memeval.qa.answer import ANSWER_TEMPERATURE, EXTRACTIVE_LABEL
from memeval.qa.answer_pass import (
    AnswerSettings,
    answer_requests,
    load_answers,
    planned_answer,
    retrieve,
    run_answer_pass,
)
from memeval.qa.choices import ANSWERERS, JUDGE_CHOICES, LLM_ANSWERERS
from memeval.qa.selection import select_conversations, select_questions
from memeval.records import AnswerRow, JudgmentRow, RunResult
from memeval.reports.run_report import run_report
from memeval.rundir import Claim, DirectoryLock, Identity, claim, read_manifest
from memeval.scoring.judge import BINARY_TEMPERATURE, GRADED_RUNS, GRADED_TEMPERATURE
from memeval.scoring.judge_pass import (
    judge_requests,
    judgeable,
    load_judgments,
    protocol_version,
    run_judge_pass,
)

PROTOTYPE_NOTE = "prototype only (20 questions, 1 conversation); the full evaluation is notebook 02"
NO_JUDGE_NOTE = ("J skipped: no judge was requested. Run with `--judge graded` (or `binary`) and "
                 "ANTHROPIC_API_KEY set, or point MEMEVAL_CACHE_DIR at a cache holding the judged run.")


@dataclass
class LocomoRunConfig:
    out: str
    data: str | None = None
    conversations: str = "all"
    questions: str = "all"
    systems: list[str] = field(default_factory=lambda: ["rag_turns"])
    answerer: str = "extractive"
    judge: str = "none"
    judge_runs: int | None = None
    judge_mode: str = "sync"
    k: int = 10
    llm_backend: str = "auto"
    budget_usd: float | None = None
    sampling: str = "protocol"
    models: dict = field(default_factory=dict)  # role → model id the user chose (defaults: llm/profiles.py)
    poll_interval_s: float = 30.0
    progress: bool = True
    restart: bool = False  # move a run with another identity (or this one) aside to DIR.replaced-<UTC> first
    fail_fast: bool = False  # the first plug-in failure stops the run (else it is recorded in the row's `error`)

    def validate(self) -> None:
        if self.answerer not in ANSWERERS:
            raise InputError("--reader", self.answerer, f"expected one of {', '.join(ANSWERERS)}")
        if self.judge not in JUDGE_CHOICES:
            raise InputError("--judge", self.judge, f"expected one of {', '.join(JUDGE_CHOICES)}")
        if self.judge_mode not in ("sync", "batch"):
            raise InputError("--judge-mode", self.judge_mode, "expected sync or batch")
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k <= 0:
            raise InputError("--k", str(self.k), "expected a positive integer")
        runs = self.judge_runs  # 0 runs would mark every question judged
        if runs is not None and (isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs <= 0):
            raise InputError("--judge-runs", str(self.judge_runs), "expected a positive integer")
        if not self.systems:
            raise InputError("--systems", "(none)", "name at least one memory system")
        imported = imported_systems(Path(self.out))
        for spec in self.systems:
            if spec in imported:  # answers another harness made, brought in by `memeval locomo import`
                continue
            try:
                config = SystemConfig.parse(spec)
            except ValueError as exc:
                raise InputError("--systems", spec, str(exc)) from None
            if not known(config.name):
                raise InputError("--systems", spec, f"unknown system; known: {', '.join(system_names())} (or name "
                                 "a factory as module.path:Factory)")
            build_system(config)  # parameters and their values checked before anything is written

    def command_line(self) -> list[str]:
        """This configuration as a `memeval locomo run` command."""
        values = asdict(self)
        values["systems"] = (";" if any("," in s for s in self.systems) else ",").join(self.systems)
        defaults = {**asdict(LocomoRunConfig(out="")), "systems": "rag_turns"}
        flags = {"data": "--data", "conversations": "--conversations", "questions": "--questions",
                 "systems": "--systems", "answerer": "--reader", "judge": "--judge", "judge_runs": "--judge-runs",
                 "judge_mode": "--judge-mode", "k": "--k", "llm_backend": "--llm", "budget_usd": "--budget-usd",
                 "sampling": "--sampling"}
        models = [arg for role, model in sorted(self.models.items()) for arg in (f"--{role}-model", model)]
        return ["memeval", "locomo", "run", *flag_args(values, defaults, flags, paths=("data",)), *models,
                "--out", path_text(self.out)]

    @property
    def runs(self) -> int:
        if self.judge_runs is not None:
            return self.judge_runs
        return GRADED_RUNS if self.judge == "graded" else 1


def imported_systems(out: Path) -> dict[str, dict]:
    """Systems whose answers were imported into this run directory (name → source file, format, SHA-256)."""
    import json

    path = out / "manifest.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text()).get("imported") or {}
    except json.JSONDecodeError:
        raise InputError(path, "manifest", "not valid JSON; move the run directory aside") from None


def locomo_identity(config: LocomoRunConfig, data_path: Path, selection, systems, imported: dict,
                    client: LLMClient | None) -> Identity:
    """Every setting that changes a stored answer or judgment. Systems and judge protocols are additive: a
    rerun may add one; changing one (or anything fixed) is another run."""
    from memeval.prompts import prompt_hash
    from memeval.qa.official import OFFICIAL_PROMPTS
    from memeval.rundir import identity_hash

    def role(name: str, temperature: float) -> dict:
        return role_identity(client, name, temperature)

    question_ids = [qa.sample_id for _, qs in selection for qa in qs]
    reader = {"reader": config.answerer, "k": config.k}
    if config.answerer in LLM_ANSWERERS:
        prompts = OFFICIAL_PROMPTS if config.answerer == "claude_official" else ("answer_memory",)
        reader.update(answer=role("answer", ANSWER_TEMPERATURE), answer_prompt=prompt_hash(*prompts))
    system_entries = {}
    for s in systems:
        if s.label in imported:
            system_entries[s.label] = {"imported": imported[s.label].get("sha256"),
                                       "format": imported[s.label].get("format")}
            continue
        entry = {"name": s.name, "params": dict(s.params)}
        if needs_llm(s):
            entry.update(extract=role("extract", EXTRACTION_TEMPERATURE), extract_prompt=prompt_hash("extract_triples"))
        system_entries[s.label] = entry
    judges = {}
    if config.judge != "none":
        judges[config.judge] = {**role("judge", GRADED_TEMPERATURE if config.judge == "graded" else BINARY_TEMPERATURE),
                                "runs": config.runs, "prompt_version": protocol_version(config.judge)}
    return Identity("locomo run", fixed={
        "data_sha256": data_hashes(data_path), "conversations": [c.sample_id for c, _ in selection],
        "questions": config.questions, "question_set": f"{len(question_ids)} questions, "
                                                       f"sha256 {identity_hash(question_ids)}", **reader},
        additive={"systems": system_entries, "judges": judges})


def legacy_identity(manifest: dict | None) -> Identity | None:
    """What a manifest written before identities were recorded pins down: its reader and k."""
    prior = (manifest or {}).get("config") or {}
    if not prior:
        return None
    return Identity("locomo run", fixed={k2: prior[k1] for k1, k2 in (("answerer", "reader"), ("k", "k"))
                                         if k1 in prior})


def role_temperatures(config: LocomoRunConfig) -> dict:
    """The roles this run calls and the temperature each protocol asks for."""
    roles = {}
    if config.answerer in LLM_ANSWERERS:
        roles["answer"] = ANSWER_TEMPERATURE
    if config.judge != "none":
        roles["judge"] = GRADED_TEMPERATURE if config.judge == "graded" else BINARY_TEMPERATURE
    imported = imported_systems(Path(config.out))
    if any(needs_llm(SystemConfig.parse(s)) for s in config.systems if s not in imported):
        roles["extract"] = EXTRACTION_TEMPERATURE
    return roles


def run_client(config: LocomoRunConfig, client: LLMClient | None = None) -> LLMClient | None:
    """The run's client, checked before any call: each role's model can honour its protocol's temperature
    (or --sampling model-default was chosen)."""
    return checked_client(config.llm_backend, role_temperatures(config), client, budget_usd=config.budget_usd,
                          sampling=config.sampling, models=config.models)


def run_locomo(config: LocomoRunConfig, client: LLMClient | None = None) -> RunResult:
    """Answer, judge, report. The directory's identity is checked (and claimed) before anything is written and
    its lock held throughout; `RunResult.complete` is False when a requested row is missing."""
    config.validate()
    out = Path(config.out)
    data_path = find_locomo(config.data)
    conversations = select_conversations(load_locomo(data_path), config.conversations)
    selection = [(c, select_questions(c, config.questions)) for c in conversations]
    imported = imported_systems(out)
    systems = [SystemConfig(s, {}, spelling=s) if s in imported else SystemConfig.parse(s) for s in config.systems]
    client = run_client(config, client)
    load_answers(out / "answers.jsonl"), load_judgments(out / "judgments.jsonl")  # a corrupt file: refused unclaimed
    identity = locomo_identity(config, data_path, selection, systems, imported, client)
    lock = DirectoryLock(out, shlex.join(config.command_line()))
    claimed = claim(out, identity, base_manifest(command="locomo run", command_line=config.command_line(),
                                                 config=_public_config(config)),
                    restart=config.restart, legacy=legacy_identity(read_manifest(out)), lock=lock)
    try:
        return _run_claimed(config, client, out, data_path, selection, systems, claimed)
    finally:
        lock.release()


def _run_claimed(config: LocomoRunConfig, client: LLMClient | None, out: Path, data_path: Path, selection,
                 systems: list[SystemConfig], claimed: Claim) -> RunResult:
    imported = imported_systems(out)
    native = [s for s in systems if s.label not in imported]
    invocations = (claimed.previous or {}).get("invocations", [])
    notes = list(claimed.notes())
    for name in (s.label for s in systems if s.label in imported):
        notes.append(f"{name}: answers imported from {imported[name]['source']} ({imported[name]['format']} "
                     "format); scored and judged here like every other system.")
    if client is not None and client.sampling == "model-default":
        notes.append("Sampling: --sampling model-default, so no temperature was sent; every model call used the "
                     "model's default sampling, not the protocols' temperatures.")
    if config.questions == "prototype":
        notes.append(PROTOTYPE_NOTE)
    if config.answerer == "extractive" and native:
        notes.append(f"Reader: {EXTRACTIVE_LABEL} — a classical no-LLM baseline, not a model's answers"
                     + (" (for the systems run here; imported systems bring their own reader's answers)."
                        if len(native) < len(systems) else "."))

    total = sum(len(q) for _, q in selection) * len(native)
    with progress_bar(total, "answers", "q", config.progress) as bar:
        answer_counts = run_answer_pass(selection, native, AnswerSettings(config.answerer, config.k),
                                        out / "answers.jsonl", client, progress=bar.callback,
                                        fail_fast=config.fail_fast)
    selected_ids = {(s.label, qa.sample_id) for s in systems for _, qs in selection for qa in qs}
    answers = [r for r in load_answers(out / "answers.jsonl") if r.key in selected_ids]
    if answer_counts["errors"]:
        notes.append(f"{answer_counts['errors']} answers failed this run (see the `error` field); "
                     "rerun to retry them" + (" — no LLM is configured (no ANTHROPIC_API_KEY or OPENAI_API_KEY), so only "
                                              "cached answers exist" if client and client.backend_name == "replay"
                                              else ""))

    judge_counts = None
    if config.judge != "none":
        final = [a for a in answers if a.final]
        with progress_bar(len(final), f"judge ({config.judge})", "q", config.progress) as bar:
            judge_counts = run_judge_pass(final, config.judge, client, out / "judgments.jsonl", config.runs,
                                          config.judge_mode, batch_name=f"judge-{config.judge}:{out.resolve()}",
                                          poll_interval_s=config.poll_interval_s, progress=bar.callback)
        if judge_counts["skipped_failed"]:
            notes.append(f"J incomplete: {judge_counts['skipped_failed']} questions have a judge call that failed "
                         "past its retries; no judgment is recorded for them and a rerun retries them.")
        if judge_counts["skipped_no_llm"]:
            notes.append(f"J incomplete: {judge_counts['skipped_no_llm']} questions were not judged because no "
                         "LLM is configured and the cache does not hold their judgments (set ANTHROPIC_API_KEY "
                         "and rerun; finished judgments are kept).")
    else:
        notes.append(NO_JUDGE_NOTE)

    by_system: dict[str, list[AnswerRow]] = {s.label: [] for s in systems}
    for row in answers:
        by_system[row.system].append(row)
    judgments: dict[str, dict[str, list[JudgmentRow]]] = {}
    wanted = {r.key for r in answers}
    for row in load_judgments(out / "judgments.jsonl"):
        if (row.system, row.sample_id) in wanted:
            judgments.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
    title = "LoCoMo prototype report" if config.questions == "prototype" else "LoCoMo evaluation report"
    judge_model = client.model_for("judge") if client is not None and config.judge != "none" else None
    report = run_report(by_system, judgments, title=title, notes=notes, judge_model=judge_model)
    write_text_atomic(out / "report.md", report)

    missing = missing_rows(selection, systems, answers, judgments, config)
    summary = {"answer_counts": answer_counts, "judge_counts": judge_counts, "notes": notes,
               "llm": _client_summary(client), "missing": missing}
    invocation = {"config": _public_config(config), "command_line": shlex.join(config.command_line()), **summary}
    manifest = base_manifest(
        command="locomo run",
        command_line=config.command_line(),
        config=_public_config(config),
        systems=[s.as_dict() for s in systems],
        data={"path": str(data_path), "sha256": claimed.identity.fixed["data_sha256"]},  # hashed once, at the claim
        models={"answerer": (client.model_for("answer") if config.answerer in LLM_ANSWERERS and client
                             else EXTRACTIVE_LABEL),
                "judge": client.model_for("judge") if config.judge != "none" and client else None},
        llm=llm_manifest(client, role_temperatures(config)),
        prompt_hashes=all_prompt_hashes(),
        rows={"answers": len(answers), "judgments": sum(len(v) for p in judgments.values() for v in p.values())},
        invocations=[*invocations, invocation],
        **({"imported": imported} if imported else {}),
        identity=claimed.identity.as_dict(),
        complete=not missing,
        missing=missing,
    )
    write_json_atomic(out / "manifest.json", manifest)
    return RunResult(out=str(out), report=report, answers=by_system, judgments=judgments, **summary)


def missing_rows(selection, systems: list[SystemConfig], answers: list[AnswerRow],
                 judgments: dict[str, dict[str, list[JudgmentRow]]], config: LocomoRunConfig) -> dict:
    """What this invocation asked for and does not have: answers that failed (by their error's kind) or were
    never written, and judgments missing for answered questions. Empty when the run is complete."""
    from collections import Counter

    by_key = {a.key: a for a in answers}
    imported = imported_systems(Path(config.out))  # they answer what their file held; a rerun cannot add to it
    wanted = [(s.label, qa.sample_id) for s in systems if s.label not in imported for _, qs in selection
              for qa in qs]
    failed = Counter()
    absent = 0
    for key in wanted:
        row = by_key.get(key)
        if row is None:
            absent += 1
        elif not row.final:
            failed[_error_kind(row.error)] += 1
    out: dict = {}
    if failed or absent:
        out["answers"] = {"requested": len(wanted), "failed": sum(failed.values()), "absent": absent,
                          "reasons": dict(failed.most_common())}
    if config.judge != "none":
        judged = {(r.system, r.sample_id) for rows in judgments.get(config.judge, {}).values() for r in rows}
        answered = judgeable([a for a in answers if a.system in {s.label for s in systems}], config.judge)
        owed = [a for a in answered if a.key not in judged]
        if owed:
            out["judgments"] = {"protocol": config.judge, "requested": len(answered), "missing": len(owed)}
    return out


def _error_kind(error: str | None) -> str:
    """The kind of a recorded failure: its exception name (and an HTTP status when the message has one)."""
    import re

    text = error or "unknown"
    kind = text.split(":", 1)[0].strip() or "error"
    status = re.search(r"\b(4\d\d|5\d\d)\b", text)
    return f"{kind} ({status.group(1)})" if status else kind


def estimate_run(config: LocomoRunConfig, client: LLMClient | None = None) -> dict:
    """Dry run: the LLM calls a run would still send (cache misses), their tokens and dollars. Nothing is
    written and nothing is sent. Answer prompts are built exactly (retrieval is local); judge prompts use the
    stored prediction when there is one, else a short placeholder that names the system (two systems' future
    answers are not identical requests, so the estimate must not count them once)."""
    config.validate()
    out = Path(config.out)
    conversations = select_conversations(load_locomo(find_locomo(config.data)), config.conversations)
    selection = [(c, select_questions(c, config.questions)) for c in conversations]
    imported = imported_systems(out)
    systems = [SystemConfig(s, {}, spelling=s) if s in imported else SystemConfig.parse(s) for s in config.systems]
    client = run_client(config, client) or make_client("replay")
    settings = AnswerSettings(config.answerer, config.k)
    stored = {r.key: r for r in load_answers(out / "answers.jsonl") if r.final}
    answer_reqs, judge_reqs, ingest_reqs = [], [], []
    for system in systems:
        for conversation, questions in selection:
            if system.label in imported:  # answered already: only the judge calls are still to come
                if config.judge != "none":
                    rows = [stored[(system.label, qa.sample_id)] for qa in questions
                            if (system.label, qa.sample_id) in stored]
                    for row in judgeable(rows, config.judge):
                        judge_reqs += judge_requests(config.judge, row, config.runs)
                continue
            planner = getattr(build_system(system), "planned_requests", None)
            if planner is not None:
                ingest_reqs += planner(conversation)
            if config.answerer in LLM_ANSWERERS:
                todo = [qa for qa in questions if (system.label, qa.sample_id) not in stored]
                if todo:
                    answer_reqs += answer_requests(retrieve(system, conversation, todo, settings, client)[1],
                                                   conversation, config.answerer)
            if config.judge != "none":
                rows = [stored.get((system.label, qa.sample_id))
                        or planned_answer(system, qa, f"a typical answer from {system.label}") for qa in questions]
                for row in judgeable(rows, config.judge):
                    judge_reqs += judge_requests(config.judge, row, config.runs)
    counter = token_counter(client)
    estimate = {"answers": client.estimate(answer_reqs, expected_output_tokens=16, counter=counter)}
    if ingest_reqs:
        estimate["ingest"] = client.estimate(ingest_reqs, expected_output_tokens=400, counter=counter)
    if config.judge != "none":
        estimate["judge"] = client.estimate(judge_reqs, expected_output_tokens=60,
                                            batch=config.judge_mode == "batch", counter=counter)
    estimate["usd_est_total"] = sum(e["usd_est"] for e in estimate.values() if isinstance(e, dict))
    estimate["note"] = ("Input tokens " + ("counted by the token-counting endpoint" if counter else
                        "estimated at 4 characters a token (no key: the token-counting endpoint was not used)")
                        + "; prices from memeval/llm/profiles.py (check them before trusting the dollars); "
                        "prompt caching priced as one cache write per shared context and reads after.")
    return estimate


def _public_config(config: LocomoRunConfig) -> dict:
    return {k: v for k, v in asdict(config).items() if k != "progress"}


def _client_summary(client: LLMClient | None) -> dict | None:
    if client is None:
        return None
    s = client.stats
    return {"backend": client.backend_name, "requests_sent": s.requests_sent, "cache_hits": s.cache_hits,
            "retries": s.retries, "failures": s.failures, "cost_usd": round(s.cost_usd, 6),
            "input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
            "cache_creation_input_tokens": s.cache_creation_input_tokens,
            "cache_read_input_tokens": s.cache_read_input_tokens}

