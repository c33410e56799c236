"""The Message Batches path for bulk calls (half price, asynchronous).

Cached requests are answered from the cache and never submitted. Every batch id is saved in the cache's
`batches` table the moment the API returns it, under a run-chosen name, so a killed process resumes polling
the same batch instead of paying twice. Results are joined on `custom_id` and written into the same response
cache the synchronous path uses, so a later run (sync or batch) finds them.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence

from memeval.llm.client import CacheMiss, LLMClient, LLMError, LLMRequest, LLMResponse, cost_usd

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


def _batch_params(request: LLMRequest) -> dict:
    params = request.api_params()
    params.update(params.pop("extra_body", {}))
    return params


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
    covering missing requests are polled rather than resubmitted.
    """
    results: dict[str, LLMResponse | LLMError] = {}
    missing: dict[str, tuple[str, LLMRequest]] = {}
    for label, request in items:
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
    backend = client.backend
    if not hasattr(backend, "client") or client.cache is None:
        for label, request in missing.values():
            results[label] = BatchUnavailable(
                f"batch mode needs the anthropic backend and a cache; {client.backend_name} cannot submit "
                f"({request.model}, {label})")
        return results
    sdk = backend.client
    cache = client.cache

    pending_batches: list[tuple[str, str, list[str]]] = []
    covered: set[str] = set()
    for stored_name, batch_id, custom_ids in cache.list_batches(name):
        still_needed = [c for c in custom_ids if c in missing]
        if still_needed:
            pending_batches.append((stored_name, batch_id, custom_ids))
            covered.update(still_needed)
        else:
            cache.forget_batch(stored_name)
    to_submit = [c for c in missing if c not in covered]
    for start in range(0, len(to_submit), MAX_REQUESTS_PER_BATCH):
        chunk = to_submit[start:start + MAX_REQUESTS_PER_BATCH]
        if client.budget_usd is not None and client.stats.cost_usd >= client.budget_usd:
            for c in chunk:
                results[missing[c][0]] = LLMError(f"budget ${client.budget_usd:.2f} spent; not submitted")
            continue
        batch = sdk.messages.batches.create(
            requests=[{"custom_id": c, "params": _batch_params(missing[c][1])} for c in chunk])
        stored_name = f"{name}#{batch.id}"
        cache.save_batch(stored_name, batch.id, chunk)
        client.stats.requests_sent += 1
        client.stats.log.append({"event": "batch_submitted", "batch_id": batch.id, "requests": len(chunk)})
        pending_batches.append((stored_name, batch.id, chunk))

    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    for stored_name, batch_id, _ in pending_batches:
        while True:
            batch = sdk.messages.batches.retrieve(batch_id)
            if progress is not None:
                progress({"batch_id": batch_id, "status": batch.processing_status,
                          "counts": batch.request_counts.model_dump()})
            if batch.processing_status == "ended":
                break
            if deadline is not None and time.monotonic() > deadline:
                raise LLMError(f"batch {batch_id} still {batch.processing_status} after {timeout_s} s; "
                               f"rerun to resume polling (saved under {stored_name!r})")
            sleep(poll_interval_s)
        for line in sdk.messages.batches.results(batch_id):
            if line.custom_id not in missing:
                continue
            label, request = missing[line.custom_id]
            result = line.result
            if result.type == "succeeded":
                message = result.message
                text = "".join(getattr(block, "text", "") for block in message.content)
                response = LLMResponse(
                    text=text, model=message.model, request_id=message.id,
                    input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens,
                    cost_usd=cost_usd(request.model, message.usage.input_tokens, message.usage.output_tokens,
                                      batch=True))
                cache.put(request.key, request.key_material(), response.to_cache())
                client.stats.cost_usd += response.cost_usd
                client.stats.input_tokens += response.input_tokens
                client.stats.output_tokens += response.output_tokens
                results[label] = response
            else:
                detail = getattr(getattr(result, "error", None), "error", None)
                client.stats.failures += 1
                results[label] = LLMError(f"batch {batch_id} {line.custom_id}: {result.type}"
                                          + (f" ({detail.type}: {detail.message})" if detail else ""))
        cache.forget_batch(stored_name)
    for label, _ in missing.values():
        results.setdefault(label, LLMError(f"{label}: no result line in the batch output"))
    return results
