"""The send stage: a resolved request that missed the cache, on its way to its provider's backend (Anthropic:
memeval/llm/anthropic_backend.py; OpenAI and a user's server: memeval/llm/openai_backend.py; replay, which sends
nothing). Until a first call has succeeded calls go one at a time; every call runs under one error policy (`call`:
transient errors retried with backoff, a deterministic rejection stopping the client); a cached prefix too large
for a minute's input tokens is written in pieces first (memeval/llm/prefix_pieces.py); a request that cannot fit a
user's server's context window, or names a retired model, is refused before sending."""

from __future__ import annotations

import dataclasses
import os
import random
import threading
import time
from collections.abc import Callable

from memeval.llm import bounds
from memeval.llm.account import UNCAPPED_OUTPUT_ESTIMATE, Account, estimate_tokens
from memeval.llm.errors import APIRejected, CacheMiss, LLMError, ModelRetired, TimedOut, TransientError
from memeval.llm.limit import Limits
from memeval.llm.prefix_pieces import plan_cuts
from memeval.llm.ratelimit import limit_pool
from memeval.llm.router import Router
from memeval.llm.types import LLMRequest, LLMResponse

# The longest `retry-after` obeyed: the openai SDK's own bound (openai/_constants.py MAX_RETRY_AFTER_DELAY = 2 * 60,
# SDK 3.60; past it the SDK falls back to its backoff). Past it here the row fails at once (a rerun retries it)
# instead of a run sleeping for an hour, or for a date in 2099.
RETRY_AFTER_CAP_S = 120.0


class ReplayBackend:
    name = "replay"
    sends_requests = False  # a miss is an error, not a request

    def send(self, request: LLMRequest) -> LLMResponse:
        raise CacheMiss(f"replay: no cached response for {request.model} request {request.key[:12]} "
                        f"(template {request.template_version or '-'}, repeat {request.repeat_index})")


class Sender:
    def __init__(self, route: Router, limits: Limits, account: Account, lock, local, max_retries: int,
                 backoff_base_s: float, backoff_max_s: float, sleep: Callable[[float], None]):
        self.route, self.limits, self.account = route, limits, account
        self._lock = lock
        self.stats = account.stats
        self._local = local
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.sleep = sleep
        self.fatal: APIRejected | None = None
        self._answered = threading.Event()  # until one call succeeds, calls go one at a time (see send)
        self._probe = threading.Lock()
        self._written_prefixes: set[tuple[str, str]] = set()
        self._prefix_cuts: dict[tuple[str, str], tuple[int, ...]] = {}  # a prefix written in pieces: where cut
        self._cutting: dict[tuple[str, str], threading.Lock] = {}

    def refuse_retired(self, request: LLMRequest) -> None:
        """ModelRetired for a model past its retirement date, unless MEMEVAL_SEND_RETIRED=1."""
        profile = self.route.profile(request.model)
        if profile.retired() and os.environ.get("MEMEVAL_SEND_RETIRED") != "1":
            raise ModelRetired(request.model, profile.retires, profile.successor)

    def attempt(self, request: LLMRequest) -> LLMResponse:
        """One attempt at `request`, its latency measured."""
        start = time.perf_counter()
        response = self.send(request)
        response.latency_s = time.perf_counter() - start
        return response

    def call(self, fn: Callable, request: LLMRequest, where: str = "messages"):
        """Any API call (messages, token counting, batch create/retrieve/results) under one error policy:
        transient errors retried with backoff (the server's retry headers win), a deterministic rejection
        remembered so that this client sends nothing more, then raised. Returns (result, attempts)."""
        attempt = timeouts = 0
        while True:
            if self.fatal is not None:
                raise self.fatal
            if self.limits.cancel.is_set():
                raise LLMError("interrupted: not sent")
            attempt += 1
            self._local.attempt = attempt
            try:
                return fn(), attempt
            except APIRejected as exc:
                with self._lock:
                    self.stats.failures += 1
                    self.fatal = self.fatal or exc
                    self.stats.log.append({"event": "rejected", "where": where, "status": exc.status,
                                           "type": exc.error_type, "request_id": exc.request_id,
                                           "key": request.key[:12]})
                raise
            except TransientError as exc:
                timeouts += exc.timed_out
                if not exc.retry or attempt > self.max_retries or timeouts > bounds.TIMEOUT_RETRIES:
                    with self._lock:
                        self.stats.failures += 1
                    reason = "the server said not to retry" if not exc.retry else f"gave up after {attempt} attempts"
                    if timeouts > bounds.TIMEOUT_RETRIES:
                        reason += f" ({timeouts} without a reply in time; {bounds.TIMEOUT_VARIABLE} sets the timeout)"
                    raise (TimedOut if timeouts > bounds.TIMEOUT_RETRIES else LLMError)(("" if where == "messages" else f"{where}: ") + f"{reason}: {exc}") from None
                if exc.retry_after is not None and exc.retry_after > RETRY_AFTER_CAP_S:
                    with self._lock:
                        self.stats.failures += 1
                    raise LLMError(("" if where == "messages" else f"{where}: ") + f"the server asked to wait "
                                   f"{exc.retry_after:,.0f} s, past the {RETRY_AFTER_CAP_S:.0f} s cap: {exc}; "
                                   "this row fails now and a rerun retries it") from None
                delay = exc.retry_after if exc.retry_after is not None else min(
                    self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1) * (1 + random.random()))
                with self._lock:
                    self.stats.retries += 1
                    self.stats.log.append({"event": "retry", "where": where, "status": exc.status,
                                           "delay_s": delay, "attempt": attempt, "key": request.key[:12]})
                if self.sleep is time.sleep:
                    self.limits.cancel.wait(delay)
                else:
                    self.sleep(delay)
            except LLMError:
                with self._lock:
                    self.stats.failures += 1
                raise

    def send(self, request: LLMRequest) -> LLMResponse:
        """Until a first call has succeeded, calls go one at a time: a wrong key, model or version is then
        rejected after one request, not after a whole fan-out of them."""
        if self._answered.is_set():
            return self._send_now(request)
        with self._probe:
            if self.fatal is not None:
                raise self.fatal
            if not self._answered.is_set():  # the probe; those queued behind it fan out once it has succeeded
                response = self._send_now(request)
                self._answered.set()
                return response
        return self._send_now(request)

    def _send_now(self, request: LLMRequest) -> LLMResponse:
        backend = self.route.backend_for(request.provider)
        if not getattr(backend, "sends_requests", True):
            with self.limits.semaphore:
                return backend.send(request)
        return self._send_one(self._in_pieces(request, backend), backend)

    def _send_one(self, request: LLMRequest, backend) -> LLMResponse:
        reservation = self.limits.limiter.acquire(limit_pool(request.provider, request.model), self._input_estimate(request),
                                           request.max_tokens_sent or UNCAPPED_OUTPUT_ESTIMATE)
        with self.limits.semaphore, self.limits.server_slot(request), self.limits.sending(request.model):
            try:
                response = backend.send(request)
            except TransientError as exc:  # a 429 or an outage: nothing was used; its headers still tell
                self.limits.limiter.settle(reservation, exc.headers, 0, 0)
                raise
            except BaseException:
                self.limits.limiter.settle(reservation, None, 0, 0)
                raise
        if request.cache_prefix and (response.cache_creation_input_tokens or response.cache_read_input_tokens):
            text = request.messages[0][1]
            with self._lock:
                self._written_prefixes.update((request.model, text[:cut]) for cut in
                                              (*request.cache_splits, request.cache_prefix_chars))
        self.limits.limiter.settle(reservation, response.rate_headers,
                            response.input_tokens + response.cache_creation_input_tokens, response.output_tokens)
        return response

    def _in_pieces(self, request: LLMRequest, backend) -> LLMRequest:
        """A cached prefix larger than the account's per-minute input limit is written in pieces first (a request
        ending at each cut, its reply thrown away), so that the request itself counts only its last piece: see
        memeval/llm/prefix_pieces.py. Every later request sharing the prefix is cut the same way, so it reads
        what was written. Unknown limits, prefixes already written and requests that fit go as they are."""
        if request.provider != "anthropic" or not request.cache_prefix_chars or request.cache_splits:
            return request
        group = (request.model, request.cache_prefix)
        with self._lock:
            lock = self._cutting.setdefault(group, threading.Lock())
        with lock:
            with self._lock:
                cuts = self._prefix_cuts.get(group)
            if cuts is None:
                cuts = self._plan_cuts(request, group)
                if cuts:
                    self._write_pieces(request, cuts, backend)
                    with self._lock:
                        self._prefix_cuts[group] = cuts
        return dataclasses.replace(request, cache_splits=cuts) if cuts else request

    def _plan_cuts(self, request: LLMRequest, group: tuple[str, str]) -> tuple[int, ...] | None:
        capacity = self.limits.limiter.capacity(limit_pool(request.provider, request.model), "input")
        if capacity is None or group in self._written_prefixes:
            return None
        prefix = request.cache_prefix
        prefix_tokens = estimate_tokens(prefix, request.model)
        return plan_cuts(prefix, prefix_tokens, max(0, self._input_estimate(request) - prefix_tokens), capacity)

    def _write_pieces(self, request: LLMRequest, cuts: tuple[int, ...], backend) -> None:
        role, text = request.messages[0]
        for i, cut in enumerate(cuts):
            if (request.model, text[:cut]) in self._written_prefixes:
                continue
            piece = dataclasses.replace(request, messages=((role, text[:cut]),), cache_prefix_chars=cut,
                                        cache_splits=cuts[:i], max_tokens=1, truncation_ok=True)
            response = self._send_one(piece, backend)
            self.account.charge(piece, response)
            with self._lock:
                self.stats.log.append({"event": "cache-piece", "model": request.model, "chars": cut,
                                       "cache_creation_input_tokens": response.cache_creation_input_tokens,
                                       "key": request.key[:12]})

    def _input_estimate(self, request: LLMRequest) -> int:
        """Input tokens the request will count against a per-minute limit: cache reads do not count (Anthropic's
        rate-limits page), so the longest prefix already written is left out."""
        total = estimate_tokens(request.system + "".join(t for _, t in request.messages), request.model)
        if request.cache_prefix:
            text = request.messages[0][1]
            for cut in sorted((*request.cache_splits, request.cache_prefix_chars), reverse=True):
                if (request.model, text[:cut]) in self._written_prefixes:
                    return max(1, total - estimate_tokens(text[:cut], request.model))
        return total

    def refuse_misfit(self, request: LLMRequest) -> None:
        """DoesNotFit, counted as a failure, when the request cannot fit its server's context window."""
        problem = self.limits.fit.misfit(request)
        if problem is None:
            return
        with self._lock:
            self.stats.failures += 1
            self.stats.log.append({"event": "does-not-fit", "needed": problem.needed, "held": problem.held,
                                   "key": request.key[:12]})
        raise problem
