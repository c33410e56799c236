"""The judge stage: every final answer a judge accepts and has not judged gets its requests sent (cache first) and
one judgment row, appended as it completes. A request that could not be made (no LLM configured and not in the
cache) or failed past its retries writes no row, and neither does a judgment the judge finds no usable label in
(its unusable replies are dropped from the cache), so a rerun fills exactly those gaps; a deterministic API
rejection propagates and stops the stage, keeping the rows already written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from memeval.engine.judge import Judge
from memeval.jsonl import JsonlWriter
from memeval.llm.client import CacheMiss, LLMError
from memeval.records import write_records

ANSWERS_IN_FLIGHT = 3


class JudgeCounts(BaseModel):
    """One judge stage: what was there, what it wrote, and why the rest was not judged."""

    model_config = ConfigDict(frozen=True)

    protocol: str
    already_done: int
    written: int
    skipped_no_llm: int
    skipped_failed: int
    to_judge: int
    unusable: dict[str, int] = Field(default_factory=dict)  # judgments with no usable label, by the judge's reason

    def notes(self) -> list[str]:
        out = []
        head = f"judge {self.protocol} incomplete:"
        if self.skipped_failed:
            out.append(f"{head} {self.skipped_failed} questions have a judge call that failed past its retries; no "
                       "judgment is recorded for them and a rerun retries them.")
        for reason, n in self.unusable.items():
            out.append(f"{head} {n} questions got no usable judgment ({reason}); none is recorded for them and a "
                       "rerun asks the judge again.")
        if self.skipped_no_llm:
            out.append(f"{head} {self.skipped_no_llm} questions were not judged because no LLM is configured and the "
                       "cache does not hold their judgments (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or choose "
                       "--llm, and rerun; finished judgments are kept).")
        return out


def _why_not(replies: Sequence) -> str | None:
    """None when every reply is usable; else `no_llm` (a request could not be attempted) or `failed`."""
    if not any(isinstance(r, LLMError) for r in replies):
        return None
    return "no_llm" if any(isinstance(r, CacheMiss) for r in replies) else "failed"


def judge_stage(judge: Judge, answers: Sequence, done: set, client, path: Path, mode: str = "sync",
                batch_name: str | None = None, poll_interval_s: float = 30.0,
                progress: Callable[[int], None] | None = None) -> JudgeCounts:
    """Judge what `judge` accepts among the final `answers` and is not in `done` (judgment keys)."""
    todo = [a for a in answers if a.error is None and judge.accepts(a) and judge.key(a) not in done]
    model = client.model_for(judge.role) if client is not None else None
    written = 0
    skipped = {"no_llm": 0, "failed": 0}
    unusable: dict[str, int] = {}
    with JsonlWriter(path) as writer:
        def record(answer, requests, replies) -> None:
            nonlocal written
            why = _why_not(replies)
            if why is not None:
                skipped[why] += 1
                return
            row = judge.judgment(answer, replies, model)
            reason = judge.unusable(row)
            if reason is None:
                if "request_keys" in getattr(type(row), "model_fields", {}):  # the viewer shows each run's exchange
                    row = row.replace(request_keys=[client.resolve(r).key for r in requests])
                written += write_records(writer, [row])
                return
            unusable[reason] = unusable.get(reason, 0) + 1
            forget(client, [requests[i] for i in judge.unusable_replies(row) if i < len(requests)])

        if mode == "batch":
            if not judge.batchable:
                raise ValueError(f"the {judge.name} judge cannot be sent as a batch")
            from memeval.llm.batch import run_batch

            labelled = {a.key: judge.requests(a) for a in todo}
            labels = {(key, i): ":".join(map(str, (*key[::-1], f"r{i}"))) for key, reqs in labelled.items()
                      for i in range(len(reqs))}
            results = run_batch(client, [(labels[(key, i)], r) for key, reqs in labelled.items()
                                         for i, r in enumerate(reqs)],
                                batch_name or f"judge-{judge.name}", poll_interval_s=poll_interval_s)
            for a in todo:
                record(a, labelled[a.key], [results[labels[(a.key, i)]] for i in range(len(labelled[a.key]))])
            if progress is not None:
                progress(len(todo))
        elif mode == "sync":
            def judge_one(answer):
                requests = judge.requests(answer)
                return answer, requests, client.complete_many(requests, judge.in_flight)

            # Ctrl-C does not wait for the judge calls in flight (a run without a client has nothing in flight)
            workers = client.pool(ANSWERS_IN_FLIGHT) if client is not None else ThreadPoolExecutor(ANSWERS_IN_FLIGHT)
            with workers as pool:
                for answer, requests, replies in pool.map(judge_one, todo):
                    record(answer, requests, replies)
                    if progress is not None:
                        progress(1)
        else:
            raise ValueError(f"unknown judge mode {mode!r}; expected sync or batch")
    return JudgeCounts(protocol=judge.name, already_done=len(done), written=written,
                       skipped_no_llm=skipped["no_llm"], skipped_failed=skipped["failed"], to_judge=len(todo),
                       unusable=unusable)


def forget(client, requests: Sequence) -> None:
    """Drop these requests' cached replies: a reply that gave no label is not kept, as a reply that is not an
    answer is not (memeval/llm/client.py `keep`), so the next run asks again."""
    cache = getattr(client, "cache", None)
    if cache is None or not requests:
        return
    for request in requests:
        cache.forget(client.resolve(request).key)
