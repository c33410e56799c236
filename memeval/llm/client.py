"""Model calls: `LLMClient`, the façade every caller holds, over five stages with one job each, in the order a
request passes them (docs/llm.md draws it):

  route   memeval/llm/router.py       role → model, profile, provider, endpoint, backend; the request as it is sent
  cache   memeval/llm/reply_cache.py  a stored reply replays; only an answer is ever kept
  account memeval/llm/account.py      budget before a call, tokens and dollars after it; the dry run's estimate
  send    memeval/llm/send.py         refusals before sending, the backend, retries, prefix pieces, a rejection stops
  limit   memeval/llm/limit.py        concurrency, server slots, rate buckets, calls in flight, the worker pool

`make_client` / `checked_client` build a client from typed settings (memeval/llm/settings.py) only. The request and
response records live in memeval/llm/types.py, the backends in anthropic_backend.py and openai_backend.py (names
re-exported here for the callers that import them from this module)."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import as_completed
from contextlib import contextmanager

from memeval.llm import account, profiles
from memeval.llm.account import UNCAPPED_OUTPUT_ESTIMATE, Account, ClientStats, estimate_tokens
from memeval.llm.anthropic_backend import AnthropicBackend, classify_sdk_error, response_from_message
from memeval.llm.cache import ResponseCache
from memeval.llm.endpoints import OPENAI_BASE_URL, endpoint_for
from memeval.llm.errors import (
    APIRejected,
    BackendNotConfigured,
    BudgetExceeded,
    CacheMiss,
    LLMError,
    TransientError,
)
from memeval.llm.fit import FitCheck
from memeval.llm.limit import Limits, waves
from memeval.llm.openai_backend import OpenAIBackend
from memeval.llm.prices import load_prices, require_local
from memeval.llm.profiles import CLOUD, ProfileTable, cost_usd
from memeval.llm.reply_cache import ReplyCache
from memeval.llm.router import ANTHROPIC_REQUIRED_MAX_TOKENS, LOCAL_UNCAPPED_MAX_TOKENS, Router
from memeval.llm.send import RETRY_AFTER_CAP_S, ReplayBackend, Sender
from memeval.llm.settings import ModelSettings
from memeval.llm.types import (
    ANTHROPIC_DEFAULT_BASE_URL,
    KEY_SCHEMA,
    CostEstimate,
    LLMRequest,
    LLMResponse,
    anthropic_endpoint,
)

__all__ = ["APIRejected", "BudgetExceeded", "CacheMiss", "LLMError", "TransientError", "LLMRequest",
           "LLMResponse", "LLMClient", "AnthropicBackend", "ReplayBackend", "make_client", "checked_client",
           "cost_usd", "estimate_tokens", "KEY_SCHEMA", "ANTHROPIC_DEFAULT_BASE_URL", "anthropic_endpoint",
           "ClientStats", "classify_sdk_error", "response_from_message", "ANTHROPIC_REQUIRED_MAX_TOKENS",
           "LOCAL_UNCAPPED_MAX_TOKENS", "UNCAPPED_OUTPUT_ESTIMATE", "RETRY_AFTER_CAP_S"]


def _stage(stage: str, name: str) -> property:
    """A stage's attribute read and set through the façade, where callers and tests have always found it."""
    return property(lambda self: getattr(getattr(self, stage), name),
                    lambda self, value: setattr(getattr(self, stage), name, value))


class LLMClient:
    backend, backends, models = _stage("route", "backend"), _stage("route", "backends"), _stage("route", "models")
    profile_table, endpoints = _stage("route", "profile_table"), _stage("route", "endpoints")
    sampling, response_format = _stage("route", "sampling"), _stage("route", "response_format")
    backend_name = _stage("route", "backend_name")
    fatal, sleep, max_retries = _stage("sender", "fatal"), _stage("sender", "sleep"), _stage("sender", "max_retries")
    semaphore, limiter = _stage("limits", "semaphore"), _stage("limits", "limiter")
    max_concurrency = _stage("limits", "max_concurrency")
    budget_usd, cache = _stage("account", "budget_usd"), _stage("replies", "cache")

    def __init__(self, backend, cache: ResponseCache | None = None, settings: ModelSettings | None = None, *,
                 backends: Mapping[str, object] | None = None, endpoints: Mapping[str, str] | None = None,
                 profile_table: ProfileTable = CLOUD, sleep: Callable[[float], None] = time.sleep,
                 max_retries: int = 6, backoff_base_s: float = 0.5, backoff_max_s: float = 30.0):
        """`settings`: the run's model settings, as `make_client` takes them (the model per role, sampling, budget,
        concurrency, response format, context window; `backend="local"` makes every role name its model). The
        rest is wiring: the backend per provider (`backend` for Anthropic and any provider without its own), the
        base URLs, the profile table, and the send stage's clock and retry knobs."""
        settings = ModelSettings() if settings is None else settings
        models = dict(settings.models)
        if settings.backend == "openai":  # the roles the user did not name go to OpenAI's models
            models = {**profiles.role_defaults("openai"), **models}
        self.route = Router(backend, backends or {}, models, settings.backend == "local",
                            endpoints if endpoints is not None else {p: endpoint_for(p) for p in ("openai", "local")},
                            anthropic_endpoint(), profile_table, settings.sampling, settings.response_format)
        self._lock = threading.Lock()
        self._local = threading.local()
        self.stats = ClientStats()
        self.account = Account(self._lock, self.stats, settings.budget_usd)
        self.replies = ReplyCache(cache, self._lock, self.stats)
        # a user's server: each request checked against its context window before it is sent (memeval/llm/fit.py)
        self.fit = FitCheck(self, settings.context_tokens)
        self.limits = Limits(settings.max_concurrency, self.fit, self._lock, self.stats, self._local)
        self.sender = Sender(self.route, self.limits, self.account, self._lock, self._local, max_retries,
                             backoff_base_s, backoff_max_s, sleep)
        self._embedder = None

    def complete(self, request: LLMRequest) -> LLMResponse:
        """route → cache (a hit is counted and returned before any rate limiting: a fully cached run sends nothing)
        → account (the budget) → send (refusals, then the call under its retries; limits inside) → account (what
        it cost) → cache (kept only if an answer)."""
        request = self.resolve(request)
        hit = self.replies.get(request)
        if hit is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return hit
        self.account.check_budget()
        self.sender.refuse_retired(request)
        self.sender.refuse_misfit(request)
        response, response.attempts = self.sender.call(lambda: self.sender.attempt(request), request)
        self.account.charge(request, response)
        self.replies.keep(request, response)
        return response

    def complete_many(self, requests: Sequence[LLMRequest], max_workers: int | None = None) -> list:
        """Results in request order; a failed call is returned as its LLMError and the rest still complete.
        A deterministic rejection (APIRejected) is raised. Identical requests (LoCoMo repeats some questions)
        are sent once; requests sharing a cached prefix go first one alone per prefix (limit.waves)."""
        def one(r):
            try:
                return self.complete(r)
            except LLMError as exc:
                return exc

        owner, first, rest = waves(requests, [self.resolve(r).key for r in requests])
        results: list = [None] * len(requests)
        answered_by = Counter(owner)
        report = getattr(self._local, "on_answer", None)
        with self.pool(max_workers or self.max_concurrency) as pool:
            for wave in (first, rest):
                futures = {pool.submit(one, requests[i]): i for i in wave}
                for future in as_completed(futures):
                    i = futures[future]
                    results[i] = future.result()
                    if report is not None and requests[i].role == "answer":
                        report(answered_by[i])
        return [results[o] for o in owner]

    @contextmanager
    def reporting_answers(self, on_answer: Callable[[int], None]):
        """While in this block, `complete_many` called from this thread reports each answer-role reply as it
        arrives (with how many requested questions it answers), so a progress bar moves per question rather than
        per conversation."""
        self._local.on_answer = on_answer
        try:
            yield
        finally:
            self._local.on_answer = None

    def resolve(self, request: LLMRequest) -> LLMRequest:
        return self.route.resolve(request)

    def profile(self, model: str, source: str = "model") -> profiles.ModelProfile:
        return self.route.profile(model, source)

    def sent_temperature(self, model: str, temperature: float | None) -> float | None:
        return self.route.sent_temperature(model, temperature)

    def backend_for(self, provider: str):
        return self.route.backend_for(provider)

    def endpoint(self, provider: str) -> str | None:
        return self.route.endpoint(provider)

    def endpoint_is_default(self, provider: str) -> bool:
        return self.route.endpoint_is_default(provider)

    def model_for(self, role: str) -> str:
        """The model `role`'s requests go to in this run (named, else the role's default)."""
        return self.route.model_for(role)

    def check_roles(self, temperatures: Mapping[str, float | None]) -> None:
        self.route.check_roles(temperatures)

    def lookup(self, request: LLMRequest) -> LLMResponse | None:
        return self.replies.get(self.resolve(request))

    def keep(self, request: LLMRequest, response: LLMResponse) -> None:
        self.replies.keep(request, response)

    def misfit(self, request: LLMRequest):
        """DoesNotFit when `request` would be sent and cannot fit its server's context window, else None (a cached
        reply needs no room; an unknown window is not checked). Nothing is sent but the server's token counts."""
        resolved = self.resolve(request)
        return None if self.replies.get(resolved) is not None else self.fit.misfit(resolved)

    def call(self, fn: Callable, request: LLMRequest, where: str = "messages"):
        return self.sender.call(fn, request, where)

    def sending(self, model: str):
        return self.limits.sending(model)

    def waiting(self) -> tuple[str, int, float, int] | None:
        return self.limits.waiting()

    def pool(self, max_workers: int):
        return self.limits.pool(max_workers)

    def estimate(self, requests: Sequence[LLMRequest], expected_output_tokens: int | None = None,
                 batch: bool = False, counter: Callable[[LLMRequest], int] | None = None) -> CostEstimate:
        return account.estimate(self, requests, expected_output_tokens, batch, counter)

    @property
    def embedder(self):
        """The embeddings role of this client (memeval/llm/embeddings.py), made on first use."""
        with self._lock:
            if self._embedder is None:
                from memeval.llm.embeddings import Embedder

                self._embedder = Embedder(self)
            return self._embedder

    def embed(self, texts: Sequence[str], dimensions: int | None = None, role: str = "embed"):
        """`texts` as an (n, d) float32 matrix from the `embed` role's model (memeval/llm/embeddings.py)."""
        return self.embedder.embed(texts, dimensions, role)

    def estimate_embeddings(self, calls: Sequence[Sequence[str]], dimensions: int | None = None, role: str = "embed"):
        """Dry run of the `embed` calls `calls` (each a list of texts): see memeval/llm/embeddings.py."""
        return self.embedder.estimate(calls, dimensions, role)


BACKENDS = ("auto", "anthropic", "openai", "local", "replay")


def checked_client(settings: ModelSettings, roles: Mapping[str, float | None],
                   client: LLMClient | None = None) -> LLMClient | None:
    """A run's client, made from `settings` only when some role calls a model, and checked before any call: each
    role's model can honour its protocol's temperature (or --sampling model-default was chosen)."""
    if client is None and roles:
        client = make_client(settings.backend, settings=settings)
    if client is not None:
        client.check_roles(roles)
    return client


def make_client(backend: str = "auto", cache_dir: str | None = None, settings: ModelSettings | None = None, *,
                sleep: Callable[[float], None] = time.sleep) -> LLMClient:
    """A provider is live when its key is set (`auto`), must be live when named (`anthropic`, `openai`: its key is
    required), and answers only from the cache otherwise; `replay` sends nothing at all. `openai` makes the roles
    the user did not name default to OpenAI models; `local` sends every named role's model to OPENAI_BASE_URL
    (each a local model of this client only, priced $0 or from the settings' `prices`: a `--prices` file's path or
    its loaded table, memeval/llm/prices.py) and keeps cloud OpenAI models to the cache, since the base URL is taken.
    Every other setting comes from `settings` (memeval/llm/settings.py), whose backend must be `backend`."""
    if backend not in BACKENDS:
        raise BackendNotConfigured(f"unknown LLM backend {backend!r} ({', '.join(BACKENDS)})")
    settings = ModelSettings(backend) if settings is None else settings
    if settings.backend != backend:
        raise ValueError(f"make_client({backend!r}) given settings for backend {settings.backend!r}")
    cache = ResponseCache(cache_dir)
    anthropic_live = backend == "anthropic" or (backend in ("auto", "openai", "local")
                                                and bool(os.environ.get("ANTHROPIC_API_KEY")))
    openai_live = backend == "openai" or (backend in ("auto", "anthropic") and bool(os.environ.get("OPENAI_API_KEY")))
    backends = {"openai": OpenAIBackend("openai") if openai_live else ReplayBackend()}
    named = dict(settings.models)
    # under --llm local OPENAI_BASE_URL is the user's server, so cloud OpenAI models keep OpenAI's own URL (cache only)
    endpoints = {"openai": OPENAI_BASE_URL if backend == "local" else endpoint_for("openai"),
                 "local": endpoint_for("local")}
    prices = settings.prices
    if isinstance(prices, (str, os.PathLike)):  # a configuration records the file's path; the table is read here
        prices = load_prices(prices)
    require_local(prices, backend)
    table = CLOUD
    if backend == "local":
        table = ProfileTable.with_local(named.values(), prices)
        backends["local"] = OpenAIBackend("local")
        backends["local"].profile = table.profile  # replies priced like estimates: from --prices when given
    return LLMClient(AnthropicBackend() if anthropic_live else ReplayBackend(), cache, settings, backends=backends,
                     endpoints=endpoints, profile_table=table, sleep=sleep)
