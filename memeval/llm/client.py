"""Model calls: a request record, backends (the real Anthropic SDK, cache-only replay, a scripted fake for
unit tests), and a client that looks in the cache before anything else, then retries transient failures with
backoff under a concurrency limit and a run-level dollar budget."""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from memeval.llm.cache import ResponseCache

# USD per million tokens (input, output). Prices change: check the provider's page before trusting estimates.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-6": (5.0, 25.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
}
BATCH_DISCOUNT = 0.5


class LLMError(RuntimeError):
    """A call that failed for good (after retries, or not retryable)."""


class TransientError(LLMError):
    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class CacheMiss(LLMError):
    """Replay mode found no cached response: nothing is sent, nothing is invented."""


class BudgetExceeded(LLMError):
    """The run's dollar budget is spent: no new calls are scheduled; finished ones stay cached."""


@dataclass(frozen=True)
class LLMRequest:
    model: str
    messages: tuple[tuple[str, str], ...]  # (role, text)
    system: str = ""
    max_tokens: int = 256
    temperature: float = 0.0
    template_version: str = ""
    repeat_index: int = 0
    provider: str = "anthropic"

    def key_material(self) -> dict:
        return {
            "provider": self.provider, "model": self.model, "system": self.system,
            "messages": [list(m) for m in self.messages], "max_tokens": self.max_tokens,
            "temperature": self.temperature, "template_version": self.template_version,
            "repeat_index": self.repeat_index,
        }

    @property
    def key(self) -> str:
        blob = json.dumps(self.key_material(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def api_params(self) -> dict:
        """SDK keyword arguments. The 1.x/2.x SDKs dropped `temperature` from the typed signature, while the
        API still takes it for the models this project uses, so it travels in `extra_body` (same wire JSON)."""
        params = {"model": self.model, "max_tokens": self.max_tokens, "extra_body": {"temperature": self.temperature},
                  "messages": [{"role": r, "content": t} for r, t in self.messages]}
        if self.system:
            params["system"] = self.system
        return params


@dataclass
class LLMResponse:
    text: str
    model: str
    request_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    latency_s: float = 0.0
    attempts: int = 1

    def to_cache(self) -> dict:
        d = asdict(self)
        d.pop("cached")
        return d


def cost_usd(model: str, input_tokens: int, output_tokens: int, batch: bool = False) -> float:
    price_in, price_out = PRICES_PER_MTOK.get(model, (0.0, 0.0))
    cost = (input_tokens * price_in + output_tokens * price_out) / 1e6
    return cost * (BATCH_DISCOUNT if batch else 1.0)


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for dry-run estimates only."""
    return max(1, len(text) // 4)


class AnthropicBackend:
    """The real SDK. Key and base URL come from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL only; the SDK's own
    retries are off so that every retry is ours (counted, logged, bounded)."""

    name = "anthropic"

    def __init__(self, timeout: float = 60.0, http_client=None):
        import anthropic

        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise LLMError("ANTHROPIC_API_KEY is not set: no Anthropic backend (use the cache via replay, or "
                           "set the key and optionally ANTHROPIC_BASE_URL)")
        kwargs = {"max_retries": 0, "timeout": timeout}
        if os.environ.get("ANTHROPIC_BASE_URL"):
            kwargs["base_url"] = os.environ["ANTHROPIC_BASE_URL"]
        if http_client is not None:
            kwargs["http_client"] = http_client
        self._anthropic = anthropic
        self.client = anthropic.Anthropic(**kwargs)

    def send(self, request: LLMRequest) -> LLMResponse:
        a = self._anthropic
        try:
            message = self.client.messages.create(**request.api_params())
        except a.RateLimitError as exc:
            raise TransientError(f"429 rate limited: {exc}", _retry_after(exc), 429) from None
        except a.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code == 408:
                raise TransientError(f"{exc.status_code}: {exc}", _retry_after(exc), exc.status_code) from None
            raise LLMError(f"{exc.status_code}: {exc}") from None
        except (a.APITimeoutError, a.APIConnectionError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        text = "".join(getattr(block, "text", "") for block in message.content)
        usage = message.usage
        return LLMResponse(
            text=text, model=message.model, request_id=getattr(message, "_request_id", None) or message.id,
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cost_usd=cost_usd(request.model, usage.input_tokens, usage.output_tokens),
        )


def _retry_after(exc) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


class ReplayBackend:
    name = "replay"
    sends_requests = False  # a miss is an error, not a request

    def send(self, request: LLMRequest) -> LLMResponse:
        raise CacheMiss(f"replay: no cached response for {request.model} request {request.key[:12]} "
                        f"(template {request.template_version or '-'}, repeat {request.repeat_index})")


class ScriptedBackend:
    """Unit-test fake: answers from a function of the request, optionally failing first."""

    name = "scripted"

    def __init__(self, responder: Callable[[LLMRequest], str], failures: Sequence[Exception] = ()):
        self.responder = responder
        self.failures = list(failures)
        self.sent: list[LLMRequest] = []
        self._lock = threading.Lock()

    def send(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.sent.append(request)
            if self.failures:
                raise self.failures.pop(0)
        text = self.responder(request)
        return LLMResponse(text=text, model=request.model, request_id=f"scripted-{len(self.sent)}",
                           input_tokens=10, output_tokens=5, cost_usd=cost_usd(request.model, 10, 5))


@dataclass
class ClientStats:
    requests_sent: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    log: list[dict] = field(default_factory=list)


class LLMClient:
    def __init__(
        self,
        backend,
        cache: ResponseCache | None = None,
        max_concurrency: int = 8,
        max_retries: int = 6,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 30.0,
        budget_usd: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.backend = backend
        self.cache = cache
        self.semaphore = threading.BoundedSemaphore(max_concurrency)
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.budget_usd = budget_usd
        self.sleep = sleep
        self.stats = ClientStats()
        self._lock = threading.Lock()

    @property
    def backend_name(self) -> str:
        return getattr(self.backend, "name", type(self.backend).__name__)

    def lookup(self, request: LLMRequest) -> LLMResponse | None:
        if self.cache is None:
            return None
        hit = self.cache.get(request.key)
        if hit is None:
            return None
        return LLMResponse(**{**hit, "cached": True})

    def complete(self, request: LLMRequest) -> LLMResponse:
        hit = self.lookup(request)  # before any rate limiting: a fully cached run sends nothing
        if hit is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return hit
        with self._lock:
            if self.budget_usd is not None and self.stats.cost_usd >= self.budget_usd:
                raise BudgetExceeded(f"budget ${self.budget_usd:.2f} spent (${self.stats.cost_usd:.4f}); "
                                     "no new calls scheduled")
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                with self.semaphore:
                    if getattr(self.backend, "sends_requests", True):
                        with self._lock:
                            self.stats.requests_sent += 1
                    response = self.backend.send(request)
            except TransientError as exc:
                if attempt > self.max_retries:
                    with self._lock:
                        self.stats.failures += 1
                    raise LLMError(f"gave up after {attempt} attempts: {exc}") from None
                delay = exc.retry_after if exc.retry_after is not None else min(
                    self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1) * (1 + random.random()))
                with self._lock:
                    self.stats.retries += 1
                    self.stats.log.append({"event": "retry", "status": exc.status, "delay_s": delay,
                                           "attempt": attempt, "key": request.key[:12]})
                self.sleep(delay)
                continue
            except LLMError:
                with self._lock:
                    self.stats.failures += 1
                raise
            response.latency_s = time.perf_counter() - start
            response.attempts = attempt
            with self._lock:
                self.stats.cost_usd += response.cost_usd
                self.stats.input_tokens += response.input_tokens
                self.stats.output_tokens += response.output_tokens
                self.stats.log.append({"event": "response", "request_id": response.request_id,
                                       "model": response.model, "input_tokens": response.input_tokens,
                                       "output_tokens": response.output_tokens, "cost_usd": response.cost_usd,
                                       "attempts": attempt, "key": request.key[:12]})
            if self.cache is not None:
                self.cache.put(request.key, request.key_material(), response.to_cache())
            return response

    def complete_many(self, requests: Sequence[LLMRequest], max_workers: int | None = None) -> list:
        """Results in request order; a failed call is returned as its exception, the rest still complete."""
        def one(r):
            try:
                return self.complete(r)
            except LLMError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=max_workers or 8) as pool:
            return list(pool.map(one, requests))

    def estimate(self, requests: Sequence[LLMRequest], expected_output_tokens: int | None = None,
                 batch: bool = False) -> dict:
        """Dry run: how many calls would be sent (cache misses), tokens and dollars, before spending."""
        misses = [r for r in requests if self.lookup(r) is None]
        tokens_in = sum(estimate_tokens(r.system + "".join(t for _, t in r.messages)) for r in misses)
        tokens_out = sum(expected_output_tokens or r.max_tokens for r in misses)
        dollars = sum(cost_usd(r.model, estimate_tokens(r.system + "".join(t for _, t in r.messages)),
                               expected_output_tokens or r.max_tokens, batch) for r in misses)
        return {"requests": len(requests), "cached": len(requests) - len(misses), "to_send": len(misses),
                "input_tokens_est": tokens_in, "output_tokens_max": tokens_out, "usd_est": dollars}


def make_client(backend: str = "auto", cache_dir: str | None = None, **kwargs) -> LLMClient:
    """`anthropic` (needs ANTHROPIC_API_KEY), `replay` (cache only), or `auto`: anthropic when a key is set,
    replay otherwise."""
    cache = ResponseCache(cache_dir)
    if backend == "auto":
        backend = "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "replay"
    if backend == "anthropic":
        return LLMClient(AnthropicBackend(), cache, **kwargs)
    if backend == "replay":
        return LLMClient(ReplayBackend(), cache, **kwargs)
    raise LLMError(f"unknown LLM backend {backend!r} (anthropic, replay, auto)")
