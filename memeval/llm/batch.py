"""The Message Batches path for bulk calls (half price, asynchronous).

Cached requests are answered from the cache and never submitted. Every batch id is saved in the cache's
`batches` table the moment the API returns it, under a run-chosen name, so a killed process resumes polling
the same batch instead of paying twice. Results are joined on `custom_id` and written into the same response
cache the synchronous path uses, so a later run (sync or batch) finds them.

Requests are resolved like synchronous ones (model per role, API version, sampling sent); one batch holds one
API version, since the `anthropic-version` header belongs to the create call. Create, retrieve and results go
through the client's error policy, and an `errored` result is classified by its error type the same way: an
invalid request stops the command, an overloaded or rate-limited one is left for the next run.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence

from memeval.errors import InputError
from memeval.llm.client import (
    CacheMiss,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    classify_sdk_error,
    response_from_message,
)
from memeval.llm.errors import ERROR_TYPE_STATUS, APIRejected, decide
from memeval.llm.wire import request_body

MAX_REQUESTS_PER_BATCH = 10_000
_CUSTOM_ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class BatchUnavailable(CacheMiss):
    """Batch mode needs the Anthropic backend; replay and scripted backends cannot submit (like a replay miss,
    the call was never attempted)."""


def api_custom_id(label: str) -> str:
    """The API accepts [A-Za-z0-9_-]{1,64}; sample ids carry ':' so they are mapped, and long ones hashed."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", label)
    if _CUSTOM_ID_OK.match(cleaned):
        return cleaned
    return cleaned[:47] + "_" + hashlib.sha256(label.encode()).hexdigest()[:16]


def _call(client: LLMClient, what: str, request: LLMRequest, fn: Callable):
    """One batch-API call under the client's error policy (the SDK's exceptions classified first)."""
    def classified():
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 — classified, never swallowed
            raise classify_sdk_error(exc, request, what) from None

    return client.call(classified, request, what)[0]


def run_batch(
    client: LLMClient,
    items: Sequence[tuple[str, LLMRequest]],
    name: str,
    poll_interval_s: float = 30.0,
    timeout_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    progress: Callable[[dict], None] | None = None,
) -> dict[str, LLMResponse | LLMError]:
    """Answer `items` (label, request) through the Batches API; returns label → response or error.

    `name` identifies the run (e.g. the output directory and judge protocol): batches saved under it and still
    covering missing requests are polled rather than resubmitted. Raises APIRejected on a deterministic error.
    """
    results: dict[str, LLMResponse | LLMError] = {}
    missing: dict[str, tuple[str, LLMRequest]] = {}
    for label, request in items:
        request = client.resolve(request)
        hit = client.lookup(request)
        if hit is not None:
            results[label] = hit
            client.stats.cache_hits += 1
        else:
            missing[api_custom_id(label)] = (label, request)
    if len(missing) != len({label for label, _ in missing.values()}):
        raise LLMError("two batch labels map to the same custom_id")
    if not missing:
        return results
    other = sorted({r.model for _, r in missing.values() if r.provider != "anthropic"})
    if other:
        raise InputError("--judge-mode", "batch", f"batches go through Anthropic's Message Batches API; "
                         f"{', '.join(other)} is not an Anthropic model: use --judge-mode sync")
    backend = client.backend
    if not hasattr(backend, "client") or client.cache is None:
        for label, request in missing.values():
            results[label] = BatchUnavailable(
                f"batch mode needs the anthropic backend and a cache; {client.backend_name} cannot submit "
                f"({request.model}, {label})")
        return results
    sdk = backend.client
    cache = client.cache

    pending: list[tuple[str, str, list[str]]] = []
    covered: set[str] = set()
    for stored_name, batch_id, custom_ids in cache.list_batches(name):
        still_needed = [c for c in custom_ids if c in missing]
        if still_needed:
            pending.append((stored_name, batch_id, custom_ids))
            covered.update(still_needed)
        else:
            cache.forget_batch(stored_name)
    by_version: dict[str, list[str]] = {}
    for c in missing:
        if c not in covered:
            by_version.setdefault(missing[c][1].api_version, []).append(c)
    for version, ids in by_version.items():
        for start in range(0, len(ids), MAX_REQUESTS_PER_BATCH):
            chunk = ids[start:start + MAX_REQUESTS_PER_BATCH]
            if client.budget_usd is not None and client.stats.cost_usd >= client.budget_usd:
                for c in chunk:
                    results[missing[c][0]] = LLMError(f"budget ${client.budget_usd:.2f} spent; not submitted")
                continue
            first = missing[chunk[0]][1]
            batch = _call(client, "batch create", first, lambda chunk=chunk, version=version: sdk.messages.batches.create(
                requests=[{"custom_id": c, "params": request_body(missing[c][1])} for c in chunk],
                extra_headers={"anthropic-version": version}))
            stored_name = f"{name}#{batch.id}"
            cache.save_batch(stored_name, batch.id, chunk)
            client.stats.requests_sent += 1
            client.stats.log.append({"event": "batch_submitted", "batch_id": batch.id, "requests": len(chunk),
                                     "api_version": version})
            pending.append((stored_name, batch.id, chunk))

    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    rejected: APIRejected | None = None
    for stored_name, batch_id, custom_ids in pending:
        probe = next(missing[c][1] for c in custom_ids if c in missing)
        headers = {"anthropic-version": probe.api_version}
        while True:
            batch = _call(client, "batch retrieve", probe,
                          lambda b=batch_id, h=headers: sdk.messages.batches.retrieve(b, extra_headers=h))
            if progress is not None:
                progress({"batch_id": batch_id, "status": batch.processing_status,
                          "counts": batch.request_counts.model_dump()})
            if batch.processing_status == "ended":
                break
            if deadline is not None and time.monotonic() > deadline:
                raise LLMError(f"batch {batch_id} still {batch.processing_status} after {timeout_s} s; "
                               f"rerun to resume polling (saved under {stored_name!r})")
            sleep(poll_interval_s)
        lines = _call(client, "batch results", probe,
                      lambda b=batch_id, h=headers: list(sdk.messages.batches.results(b, extra_headers=h)))
        for line in lines:
            if line.custom_id not in missing:
                continue
            label, request = missing[line.custom_id]
            outcome = _result(client, batch_id, line, request)
            if isinstance(outcome, APIRejected):
                rejected = rejected or outcome
                continue
            results[label] = outcome
        cache.forget_batch(stored_name)
    if rejected is not None:
        client.fatal = client.fatal or rejected
        raise rejected
    for label, _ in missing.values():
        results.setdefault(label, LLMError(f"{label}: no result line in the batch output"))
    return results


def _result(client: LLMClient, batch_id: str, line, request: LLMRequest) -> LLMResponse | LLMError | APIRejected:
    result = line.result
    if result.type == "succeeded":
        response = response_from_message(result.message, request, result.message.id, batch=True,
                                         table=client.profile_table)
        client._account(request, response)
        try:
            client.keep(request, response)
        except LLMError as exc:  # not an answer: this row fails, the next run asks again
            return exc
        return response
    client.stats.failures += 1
    detail = getattr(getattr(result, "error", None), "error", None)
    if result.type == "errored" and detail is not None:
        status = ERROR_TYPE_STATUS.get(detail.type, 400)
        if decide(status, {}) == "fatal":
            return APIRejected(status, detail.type, detail.message, getattr(result.error, "request_id", None),
                               request.model, request.api_version, f"batch ({batch_id} {line.custom_id})")
        return LLMError(f"batch {batch_id} {line.custom_id}: errored ({detail.type}: {detail.message}); "
                        "retried on the next run")
    return LLMError(f"batch {batch_id} {line.custom_id}: {result.type}; retried on the next run")
