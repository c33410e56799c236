"""The Message Batches path for bulk calls (half price, asynchronous).

Cached requests are answered from the cache and never submitted. Every batch id is saved in the cache's
`batches` table the moment the API returns it, under a run-chosen name, so a killed process resumes polling
the same batch instead of paying twice. Results are joined on `custom_id` and written into the same response
cache the synchronous path uses, so a later run (sync or batch) finds them.

Requests are resolved like synchronous ones (model per role, API version, sampling sent); one batch holds one
API version, since the `anthropic-version` header belongs to the create call. Create, retrieve and results go
through the client's error policy, and an `errored` result is classified by its error type the same way: an
invalid request stops the command, an overloaded or rate-limited one is left for the next run.

A saved id can outlive its batch: deleted, made under another workspace or key (404 not_found_error), archived
29 days after creation (no `results_url`: the SDK's `results()` raises a bare AnthropicError), or ended with every
request expired. Such an id is forgotten with a one-line note and its uncached requests go into a new batch, so no
rerun is blocked by it; a transient error (429, 5xx, connection) never forgets an id, the next run resumes it.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from memeval.errors import InputError
from memeval.llm.cache import ResponseCache, SavedBatch
from memeval.llm.client import (
    CacheMiss,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    TransientError,
    classify_sdk_error,
    response_from_message,
)
from memeval.llm.errors import ERROR_TYPE_STATUS, APIRejected, decide
from memeval.llm.wire import request_body

MAX_REQUESTS_PER_BATCH = 10_000
_CUSTOM_ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RESULTS_KEPT_DAYS = 29  # results can be downloaded for 29 days after creation (batch-processing guide, limits)
# A 404 this soon after the id was saved is the API not having caught up with a new batch (retrieve and results
# 404 for minutes after create: anthropics/anthropic-sdk-python#1432); the batch is polled again, never forgotten.
NOT_FOUND_GRACE_S = 30 * 60.0
NOT_FOUND_RECHECK_S = 10.0  # an older 404 is asked once more, this much later, before the id is forgotten


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
    notify: Callable[[str], None] | None = None,
) -> dict[str, LLMResponse | LLMError]:
    """Answer `items` (label, request) through the Batches API; returns label → response or error.

    `name` identifies the run (e.g. the output directory and judge protocol): batches saved under it and still
    covering missing requests are polled rather than resubmitted, unless they are gone (see the module's
    docstring); `notify` gets the one line saying which id was forgotten and why (default: stderr). Raises
    APIRejected on a deterministic error.
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
    run = _BatchRun(client, backend.client, client.cache, name, missing, results, notify or _note, sleep)
    pending, covered = run.resume()
    run.submit(covered, pending)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    rejected: APIRejected | None = None
    for saved in pending:
        found = run.collect(saved, deadline, poll_interval_s, timeout_s, progress)
        rejected = rejected or found
    if rejected is not None:
        client.fatal = client.fatal or rejected
        raise rejected
    for label, _ in missing.values():
        results.setdefault(label, LLMError(f"{label}: no result line in the batch output"))
    return results


@dataclass
class _BatchRun:
    """One `run_batch`: the requests still missing (custom_id → (label, resolved request)) and the results so far,
    through the stages of a batch: resume saved batches, submit the rest, poll and collect each."""

    client: LLMClient
    sdk: object
    cache: object
    name: str
    missing: dict[str, tuple[str, LLMRequest]]
    results: dict[str, LLMResponse | LLMError]
    say: Callable[[str], None]
    sleep: Callable[[float], None]

    def probe_of(self, saved: SavedBatch) -> LLMRequest:
        return next(self.missing[c][1] for c in saved.custom_ids if c in self.missing)

    def needed(self, saved: SavedBatch) -> list[str]:
        return [c for c in saved.custom_ids if c in self.missing and self.missing[c][0] not in self.results]

    def resume(self) -> tuple[list[SavedBatch], set[str]]:
        """The saved batches still covering missing requests (polled, not resubmitted) and the ids they cover."""
        client, sdk, cache, say, sleep = self.client, self.sdk, self.cache, self.say, self.sleep
        pending: list[SavedBatch] = []
        covered: set[str] = set()
        for saved in cache.saved_batches(self.name):
            still_needed = self.needed(saved)
            if not still_needed:
                cache.forget_batch(saved.name)
                continue
            _, gone = _status(client, sdk, saved, self.probe_of(saved), sleep)
            if gone is not None:
                _forget(client, cache, saved, gone, len(still_needed), "are sent again in a new batch now", say)
                continue
            pending.append(saved)
            covered.update(still_needed)
        return pending, covered

    def submit(self, covered: set[str], pending: list[SavedBatch]) -> None:
        """The missing requests no saved batch covers, in new batches per API version (within the budget)."""
        client, sdk, cache, missing, results, name = self.client, self.sdk, self.cache, self.missing, self.results, \
            self.name
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
                pending.append(SavedBatch(stored_name, batch.id, tuple(chunk),
                                          datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")))

    def poll(self, saved: SavedBatch, probe: LLMRequest, deadline: float | None, poll_interval_s: float,
             timeout_s: float | None, progress: Callable[[dict], None] | None):
        """(batch, gone): `saved` polled until it ended or is gone; past the deadline an LLMError (rerun resumes)."""
        while True:
            batch, gone = _status(self.client, self.sdk, saved, probe, self.sleep)
            if gone is not None:
                return batch, gone
            status = batch.processing_status if batch is not None else "not found yet (404)"
            if progress is not None:
                progress({"batch_id": saved.batch_id, "status": status,
                          "counts": batch.request_counts.model_dump() if batch is not None else {}})
            if batch is not None and status == "ended":
                return batch, gone
            if deadline is not None and time.monotonic() > deadline:
                raise LLMError(f"batch {saved.batch_id} still {status} after {timeout_s} s; "
                               f"rerun to resume polling (saved under {saved.name!r})")
            self.sleep(poll_interval_s)

    def collect(self, saved: SavedBatch, deadline: float | None, poll_interval_s: float, timeout_s: float | None,
                progress: Callable[[dict], None] | None) -> APIRejected | None:
        """`saved`'s results into `results` (a gone batch's requests fail for now); the first rejection found."""
        client, sdk, cache, missing, results, say = self.client, self.sdk, self.cache, self.missing, self.results, \
            self.say
        batch_id = saved.batch_id
        probe = self.probe_of(saved)
        headers = {"anthropic-version": probe.api_version}
        batch, gone = self.poll(saved, probe, deadline, poll_interval_s, timeout_s, progress)
        lines = None if gone is not None else _results(client, sdk, batch, headers, probe)
        if lines is None:
            gone = gone or f"its results can no longer be downloaded (they are kept {RESULTS_KEPT_DAYS} days)"
            lost = self.needed(saved)
            _forget(client, cache, saved, gone, len(lost), "fail for now; the next run sends them again in a new "
                    "batch", say)
            for c in lost:
                results[missing[c][0]] = LLMError(f"batch {batch_id} is gone ({gone}); the next run sends "
                                                  "this request again in a new batch")
            return None
        rejected = None
        for line in lines:
            if line.custom_id not in missing:
                continue
            label, request = missing[line.custom_id]
            outcome = _result(client, batch_id, line, request)
            if isinstance(outcome, APIRejected):
                rejected = rejected or outcome
                continue
            results[label] = outcome
        cache.forget_batch(saved.name)
        return rejected


def unavailable(batch) -> str | None:
    """Why a retrieved batch's results can never be downloaded, or None while they can (or will)."""
    if batch.archived_at is not None:
        return (f"archived on {batch.archived_at:%Y-%m-%d}, its results are no longer downloadable (they are kept "
                f"{RESULTS_KEPT_DAYS} days after creation)")
    if batch.processing_status != "ended":
        return None
    counts = batch.request_counts
    if counts.expired and counts.expired == sum(counts.model_dump().values()):
        return (f"every one of its {counts.expired} requests expired unprocessed (a batch expires 24 hours after "
                "creation)")
    if not batch.results_url:
        return f"it ended without results to download (results are kept {RESULTS_KEPT_DAYS} days after creation)"
    return None


def describe(batch) -> str:
    """A batch's state in a few words: `ended (4 succeeded)`, `in_progress (4 processing)`, `gone: ...`."""
    gone = unavailable(batch)
    if gone is not None:
        return f"gone: {gone}"
    counts = ", ".join(f"{n} {kind}" for kind, n in batch.request_counts.model_dump().items() if n)
    return f"{batch.processing_status} ({counts or 'no requests'})"


def not_found(saved: SavedBatch) -> str:
    """The reason given for a batch the API answers 404 to (see NOT_FOUND_GRACE_S for a young one)."""
    if saved.age_s() < NOT_FOUND_GRACE_S:
        return (f"not found yet (404; saved {saved.age_s() / 60:.0f} min ago, the API can take minutes to show "
                "a new batch)")
    return "the API answers 404 not_found_error (deleted, or made under another workspace or API key)"


def _note(line: str) -> None:
    from memeval.safe_text import shown

    print(f"memeval: note: {shown(line)}", file=sys.stderr)  # it may quote a batch id or status from the API


def _forget(client: LLMClient, cache: ResponseCache, saved: SavedBatch, why: str, n: int, then: str,
            say: Callable[[str], None]) -> None:
    cache.forget_batch(saved.name)
    client.stats.log.append({"event": "batch_forgotten", "batch_id": saved.batch_id, "reason": why})
    say(f"saved batch {saved.batch_id} of {saved.run} forgotten: {why}; its {n} uncached "
        f"request{'' if n == 1 else 's'} {then}")


def _retrieve(client: LLMClient, sdk, batch_id: str, probe: LLMRequest):
    """The batch, or None when the API answers 404 not_found_error. That answer is kept out of the error policy,
    which would take it for a rejected request and stop the client: it says something about this one batch."""
    import anthropic

    def fetch():
        try:
            return sdk.messages.batches.retrieve(batch_id, extra_headers={"anthropic-version": probe.api_version})
        except anthropic.NotFoundError as exc:
            if exc.type != "not_found_error":  # a 404 page from something else at the base URL
                raise
            return None

    return _call(client, "batch retrieve", probe, fetch)


def _status(client: LLMClient, sdk, saved: SavedBatch, probe: LLMRequest, sleep: Callable[[float], None]):
    """(batch, why it is gone). (None, None) is a 404 within NOT_FOUND_GRACE_S of saving: poll again. An older
    404 is asked once more NOT_FOUND_RECHECK_S later before the batch counts as gone."""
    batch = _retrieve(client, sdk, saved.batch_id, probe)
    if batch is None and saved.age_s() >= NOT_FOUND_GRACE_S:
        sleep(NOT_FOUND_RECHECK_S)
        batch = _retrieve(client, sdk, saved.batch_id, probe)
        if batch is None:
            return None, not_found(saved)
    if batch is None:
        return None, None
    return batch, unavailable(batch)


def _results(client: LLMClient, sdk, batch, headers: dict, probe: LLMRequest) -> list | None:
    """The result lines, or None when they are gone: the SDK found no `results_url` (its bare AnthropicError),
    or a 404 on a batch past the results' lifetime. A 404 on a younger batch is the API catching up: retried
    under the error policy, and if it lasts the run stops with the id kept, so the next run fetches them."""
    import anthropic

    def fetch():
        try:
            return list(sdk.messages.batches.results(batch.id, extra_headers=headers))
        except anthropic.NotFoundError as exc:
            if exc.type == "not_found_error" and _age_days(batch.created_at) >= RESULTS_KEPT_DAYS:
                return None
            raise TransientError(f"batch {batch.id} results: 404 {exc.type or 'error'}: {exc.api_message or exc} "
                                 f"(request-id {exc.request_id or '-'})", status=404) from None
        except anthropic.APIError:
            raise
        except anthropic.AnthropicError:
            return None

    return _call(client, "batch results", probe, fetch)


def _age_days(created_at: datetime) -> float:
    if created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=timezone.utc)
    return (datetime.now(timezone.utc) - created_at).total_seconds() / 86400


def _result(client: LLMClient, batch_id: str, line, request: LLMRequest) -> LLMResponse | LLMError | APIRejected:
    result = line.result
    if result.type == "succeeded":
        try:
            response = response_from_message(result.message, request, result.message.id, batch=True,
                                             table=client.profile_table)
        except LLMError as exc:  # usage that is not a count: not priced, not kept, asked again
            client.stats.failures += 1
            return exc
        client.account.charge(request, response)
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
