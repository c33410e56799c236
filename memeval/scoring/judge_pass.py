"""The judge pass over stored answers: judgments.jsonl, append-only, rerunnable alone.

Sync mode judges question by question through the client (cache first); batch mode sends every uncached
judge call through the Message Batches API at half price. A call that cannot be made because no LLM is
configured (a replay cache miss), or a call that failed past its retries, writes no row either, so a later
run fills exactly those gaps; only an unusable successful reply is a recorded -1 run. A deterministic API
rejection (APIRejected) propagates and stops the pass; rows already written stay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memeval.jsonl import JsonlWriter
from memeval.llm.batch import run_batch
from memeval.llm.client import CacheMiss, LLMClient
from memeval.qa.choices import JUDGE_PROTOCOLS
from memeval.records import AnswerRow, JudgeOutcome, JudgmentRow, latest, read_records, write_records
from memeval.scoring.judge import (
    GRADED_IN_FLIGHT,
    binary_request,
    binary_version,
    graded_request,
    graded_version,
    judgment_from_outcomes,
)

PROTOCOLS = JUDGE_PROTOCOLS
QUESTIONS_IN_FLIGHT = 3


def load_judgments(path: Path) -> list[JudgmentRow]:
    """The latest row per (system, question, protocol), as for answers."""
    return list(latest(read_records(path, JudgmentRow), lambda r: r.key).values())


def protocol_version(protocol: str) -> str:
    return graded_version() if protocol == "graded" else binary_version()


def judge_requests(protocol: str, row: AnswerRow, runs: int) -> list:
    gold = "" if row.gold is None else str(row.gold)
    if protocol == "graded":
        return [graded_request(row.question, gold, row.prediction, row.category, i) for i in range(runs)]
    return [binary_request(row.question, gold, row.prediction, i) for i in range(runs)]


def _judgment(protocol: str, outcomes: Sequence) -> tuple[JudgeOutcome | None, str | None]:
    """(judgment, None), or (None, why): `no_llm` when a run could not be attempted, `failed` when a call
    failed; nothing is recorded for the question either way."""
    judgment = judgment_from_outcomes(protocol, outcomes)
    if judgment is not None:
        return judgment, None
    return None, "no_llm" if any(isinstance(o, CacheMiss) for o in outcomes) else "failed"


def _row(answer: AnswerRow, judgment: JudgeOutcome, version: str, model: str | None) -> JudgmentRow:
    return JudgmentRow(sample_id=answer.sample_id, conversation_id=answer.conversation_id,
                       category=answer.category, system=answer.system, prompt_version=version, judge_model=model,
                       **judgment.model_dump())


def judgeable(answers: Sequence[AnswerRow], protocol: str) -> list[AnswerRow]:
    """Answered rows the protocol judges (binary, like the Mem0 paper, leaves category 5 out)."""
    return [a for a in answers if a.final and not (protocol == "binary" and a.category == 5)]


def run_judge_pass(
    answers: Sequence[AnswerRow],
    protocol: str,
    client: LLMClient,
    out_path: Path,
    runs: int,
    mode: str = "sync",
    batch_name: str | None = None,
    poll_interval_s: float = 30.0,
    progress: Callable[[int], None] | None = None,
) -> dict:
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown judge protocol {protocol!r}; expected one of {PROTOCOLS}")
    done = {r.key for r in load_judgments(out_path)}
    todo = [a for a in judgeable(answers, protocol) if (*a.key, protocol) not in done]
    version = protocol_version(protocol)
    model = client.model_for("judge") if client is not None else None
    written = 0
    skipped = {"no_llm": 0, "failed": 0}
    with JsonlWriter(out_path) as writer:
        if mode == "batch":
            labelled = [(f"{a.sample_id}:{a.system}:r{i}", request, a)
                        for a in todo for i, request in enumerate(judge_requests(protocol, a, runs))]
            results = run_batch(client, [(label, request) for label, request, _ in labelled],
                                batch_name or f"judge-{protocol}", poll_interval_s=poll_interval_s)
            for a in todo:
                outcomes = [results[f"{a.sample_id}:{a.system}:r{i}"] for i in range(runs)]
                judgment, why = _judgment(protocol, outcomes)
                if judgment is None:
                    skipped[why] += 1
                    continue
                written += write_records(writer, [_row(a, judgment, version, model)])
            if progress is not None:
                progress(len(todo))
        elif mode == "sync":
            def judge_one(a: AnswerRow):
                in_flight = GRADED_IN_FLIGHT if protocol == "graded" else 1
                return a, _judgment(protocol, client.complete_many(judge_requests(protocol, a, runs), in_flight))

            with ThreadPoolExecutor(max_workers=QUESTIONS_IN_FLIGHT) as pool:
                for a, (judgment, why) in pool.map(judge_one, todo):
                    if judgment is None:
                        skipped[why] += 1
                    else:
                        written += write_records(writer, [_row(a, judgment, version, model)])
                    if progress is not None:
                        progress(1)
        else:
            raise ValueError(f"unknown judge mode {mode!r}; expected sync or batch")
    return {"protocol": protocol, "already_done": len(done), "written": written,
            "skipped_no_llm": skipped["no_llm"], "skipped_failed": skipped["failed"], "to_judge": len(todo)}

