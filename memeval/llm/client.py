"""Model calls: backends (the real Anthropic SDK, cache-only replay; tests add a scripted one), and a client that
resolves each request against its model profile (model per role, API version, sampling actually sent), looks in
the cache before anything else, then retries transient failures with backoff under a concurrency limit and a
run-level dollar budget. A deterministic rejection stops the client: no further call is sent by it. The request
and response records live in memeval/llm/types.py (re-exported here); each client holds its own profile table
(memeval/llm/profiles.py), so the local models of `--llm local` belong to the client made for it."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field

from memeval.errors import InputError
from memeval.llm import bounds, profiles, tokenizers
from memeval.llm.cache import ResponseCache
from memeval.llm.endpoints import OPENAI_BASE_URL, endpoint_for
from memeval.llm.errors import (
    APIRejected,
    BackendNotConfigured,
    BudgetExceeded,
    CacheMiss,
    InvalidReply,
    LLMError,
    ModelRetired,
    TimedOut,
    TransientError,
    UnusableReply,
    decide,
    rate_limit_headers,
    retry_after_seconds,
    unreached,
)
from memeval.llm.fit import FitCheck
from memeval.llm.openai_backend import OpenAIBackend
from memeval.llm.prefix_pieces import plan_cuts
from memeval.llm.prices import load_prices, require_local
from memeval.llm.profiles import CLOUD, ProfileTable, cost_usd
from memeval.llm.ratelimit import RateLimiter, limit_pool
from memeval.llm.routes import routes_of
from memeval.llm.settings import ModelSettings
from memeval.llm.types import (
    ANTHROPIC_DEFAULT_BASE_URL,
    KEY_SCHEMA,
    CostEstimate,
    LLMRequest,
    LLMResponse,
    anthropic_endpoint,
    public_url,
)
from memeval.llm.wire import RESPONSE_FORMATS, request_body

__all__ = ["APIRejected", "BudgetExceeded", "CacheMiss", "LLMError", "TransientError", "LLMRequest",
           "LLMResponse", "LLMClient", "AnthropicBackend", "ReplayBackend", "make_client",
           "cost_usd", "estimate_tokens", "KEY_SCHEMA", "ANTHROPIC_DEFAULT_BASE_URL", "anthropic_endpoint"]

# A request that sets no output cap (Mem0's judge sets none) still needs one on Anthropic: `max_tokens` is a
# required body parameter of the Messages API (platform.claude.com/docs/en/api/messages, "max_tokens ... required";
# anthropic SDK 2.x `messages.create(max_tokens: int, ...)` has no default). OpenAI's is optional.
ANTHROPIC_REQUIRED_MAX_TOKENS = 1024
# A user's own server (--llm local) may never stop a reply a protocol leaves uncapped (llama.cpp generates to the
# end of its context window without one), so it gets a cap too; such a run is never the published protocol anyway.
LOCAL_UNCAPPED_MAX_TOKENS = 256
UNCAPPED_OUTPUT_ESTIMATE = 256  # dry-run output tokens assumed for an uncapped request
# The longest `retry-after` obeyed: the openai SDK's own bound (openai/_constants.py MAX_RETRY_AFTER_DELAY = 2 * 60,
# SDK 3.60; past it the SDK falls back to its backoff). Past it here the row fails at once (a rerun retries it)
# instead of a run sleeping for an hour, or for a date in 2099.
RETRY_AFTER_CAP_S = 120.0


def estimate_tokens(text: str, model: str | None = None) -> int:
    """A rough token count for dry-run estimates without a key and for the rate limiter: 4 characters a token,
    times `model`'s tokenizer ratio (memeval/llm/tokenizers.py)."""
    return tokenizers.estimate_tokens(text, model)


def _headers(exc) -> Mapping[str, str]:
    try:
        return exc.response.headers
    except AttributeError:
        return {}


def classify_sdk_error(exc, request: LLMRequest, where: str = "messages") -> Exception:
    """An SDK exception → APIRejected (stop), TransientError (retry, or fail now), following errors.decide."""
    import anthropic

    too_large = bounds.too_large(exc)
    if too_large is not None:
        return bounds.invalid_size(request, too_large, where)
    if isinstance(exc, anthropic.APIStatusError):
        headers = _headers(exc)
        verdict = decide(exc.status_code, headers)
        if verdict == "fatal":
            return APIRejected(exc.status_code, exc.type, exc.api_message or str(exc), exc.request_id,
                               request.model, request.api_version, where)
        return TransientError(f"{exc.status_code} {exc.type or 'error'}: {exc.api_message or exc}"
                              f" (request-id {exc.request_id or '-'})", retry_after_seconds(headers),
                              exc.status_code, retry=verdict == "retry", headers=headers)
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return unreached(exc)
    return exc


class AnthropicBackend:
    """The real SDK. Key and base URL come from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL only; the SDK's own
    retries are off so that every retry is ours (counted, logged, bounded). Every call carries the request's
    own `anthropic-version` (SDK 2.x would otherwise send 2026-10-21 for every model), waits at most the provider's
    timeout and reads at most the bytes its `max_tokens` allows (memeval/llm/bounds.py)."""

    name = "anthropic"

    def __init__(self, timeout: float | None = None, http_client=None):
        import anthropic

        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise BackendNotConfigured("ANTHROPIC_API_KEY is not set: no Anthropic backend (use the cache via replay, or "
                           "set the key and optionally ANTHROPIC_BASE_URL)")
        timeout = bounds.http_timeout("anthropic") if timeout is None else timeout
        kwargs = {"max_retries": 0, "timeout": timeout,
                  "http_client": http_client or bounds.capped_http_client(anthropic, timeout)}
        if os.environ.get("ANTHROPIC_BASE_URL"):
            kwargs["base_url"] = os.environ["ANTHROPIC_BASE_URL"]
        self.client = anthropic.Anthropic(**kwargs)

    @staticmethod
    def call_kwargs(request: LLMRequest) -> dict:
        """SDK keyword arguments: typed fields as such; `temperature` (dropped from the SDK 2.x signature)
        in `extra_body` only when it is to be sent; the version header in `extra_headers`."""
        body = request_body(request)
        kwargs = {k: body[k] for k in ("model", "max_tokens", "messages", "system", "output_config", "thinking")
                  if k in body}
        if "temperature" in body:
            kwargs["extra_body"] = {"temperature": body["temperature"]}
        kwargs["extra_headers"] = {"anthropic-version": request.api_version}
        return kwargs

    def send(self, request: LLMRequest) -> LLMResponse:
        try:
            with bounds.reply_bytes(bounds.body_limit(request.max_tokens_sent)):
                raw = self.client.messages.with_raw_response.create(**self.call_kwargs(request))
                message = raw.parse()
        except Exception as exc:  # noqa: BLE001 — classified, never swallowed
            raise self._unreadable(exc, request) or classify_sdk_error(exc, request) from None
        if not _is_message(message):
            raise self._not_a_reply(request, message)
        response = response_from_message(message, request, getattr(message, "_request_id", None)
                                         or raw.headers.get("request-id"))
        response.rate_headers = rate_limit_headers(raw.headers)
        return response

    def count_tokens(self, request: LLMRequest) -> int:
        kwargs = self.call_kwargs(request)
        kwargs.pop("max_tokens", None)
        kwargs.pop("extra_body", None)
        try:
            with bounds.reply_bytes(bounds.COUNT_TOKENS_BODY):
                counted = self.client.messages.count_tokens(**kwargs)
        except Exception as exc:  # noqa: BLE001
            raise self._unreadable(exc, request, "count_tokens") or classify_sdk_error(exc, request, "count_tokens") \
                from None
        tokens = getattr(counted, "input_tokens", None)
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            raise self._not_a_reply(request, counted, "count_tokens")
        return tokens

    # A 2xx reply that is not the API's JSON (a proxy's, gateway's or web server's page where ANTHROPIC_BASE_URL
    # points): the same request would get the same page, so it stops the client like a rejection, in one line.
    def _unreadable(self, exc: Exception, request: LLMRequest, where: str = "messages") -> APIRejected | None:
        import anthropic

        if isinstance(exc, anthropic.APIResponseValidationError):
            return APIRejected(exc.status_code, "invalid_response", f"{exc.message}; {self._hint()}", exc.request_id,
                               request.model, request.api_version, where)
        if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):  # the body claimed JSON and is not
            return APIRejected(200, "invalid_response", f"the reply's body is not JSON ({type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:100]}); {self._hint()}", None, request.model,
                               request.api_version, where)
        return None

    def _not_a_reply(self, request: LLMRequest, reply, where: str = "messages") -> APIRejected:
        shown = " ".join(reply.split())[:80] if isinstance(reply, str) else type(reply).__name__
        what = "a body that is not JSON" if isinstance(reply, str) else "JSON that is not a response"
        return APIRejected(200, "invalid_response", f"the reply is {what} ({shown!r}); {self._hint()}", None,
                           request.model, request.api_version, where)

    def _hint(self) -> str:
        return f"is {public_url(str(self.client.base_url))} an Anthropic Messages endpoint? (ANTHROPIC_BASE_URL)"


def _is_message(message) -> bool:
    """The reply has what a Messages response has: the SDK hands a reply that is not JSON back as its text, and
    builds a JSON reply of another shape without checking it."""
    return isinstance(getattr(message, "content", None), list) and getattr(message, "usage", None) is not None


def response_from_message(message, request: LLMRequest, request_id: str | None, batch: bool = False,
                          table: ProfileTable = CLOUD) -> LLMResponse:
    """The client's response to a Messages reply, priced from `table` (the client's profiles; a batch passes its
    client's). The answer is the `text` blocks only: a `thinking` or `redacted_thinking` block never is, so a reply
    that spent its cap thinking has empty text. Thinking is priced through `output_tokens`, which includes it (the
    SDK's Usage: "the inclusive, authoritative total used for billing"). Usage that is not a count of tokens is an
    InvalidReply, never priced."""
    text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
    usage = message.usage
    counts = [bounds.usage_count(getattr(usage, name, None), f"usage.{name}", request.model, required)
              for name, required in (("input_tokens", True), ("output_tokens", True),
                                     ("cache_creation_input_tokens", False), ("cache_read_input_tokens", False))]
    prompt, output, write, read = counts
    return LLMResponse(
        text=text, model=message.model, request_id=request_id or message.id,
        input_tokens=prompt, output_tokens=output,
        cost_usd=table.cost_usd(request.model, prompt, output, write, read, batch),
        stop_reason=message.stop_reason, cache_creation_input_tokens=write, cache_read_input_tokens=read,
        api_version=request.api_version,
    )


class ReplayBackend:
    name = "replay"
    sends_requests = False  # a miss is an error, not a request

    def send(self, request: LLMRequest) -> LLMResponse:
        raise CacheMiss(f"replay: no cached response for {request.model} request {request.key[:12]} "
                        f"(template {request.template_version or '-'}, repeat {request.repeat_index})")


@dataclass
class ClientStats:
    requests_sent: int = 0
    replies: int = 0  # requests that came back with a reply (the progress bar's rate: memeval/progress.py)
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    first_request_id: dict = field(default_factory=dict)  # role → request id of its first sent call
    unusable: dict = field(default_factory=dict)  # reason → replies that were not answers (never cached)
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
        sampling: str = "protocol",
        models: Mapping[str, str] | None = None,
        backends: Mapping[str, object] | None = None,
        require_named_roles: bool = False,
        endpoints: Mapping[str, str] | None = None,
        profile_table: ProfileTable = CLOUD,
        response_format: str = "json_schema",
        context_tokens: int | None = None,
    ):
        if sampling not in profiles.SAMPLING_MODES:
            raise ValueError(f"sampling must be one of {profiles.SAMPLING_MODES}")
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}")
        # what memeval's own JSON-reading requests ask an OpenAI-compatible provider for (--response-format)
        self.response_format = response_format
        self.backend = backend  # the Anthropic one, and every provider's unless `backends` names its own
        self.backends = dict(backends or {})
        self.require_named_roles = require_named_roles  # --llm local: no default model exists for a role
        # the profiles every request of this client resolves against: the cloud models, plus the models of a local
        # server under --llm local (fixed here; another client in the process never sees them)
        self.profile_table = profile_table
        # base URL per OpenAI-compatible provider, read once: it is part of every such request's cache key
        self.endpoints = dict(endpoints) if endpoints is not None else {p: endpoint_for(p) for p in ("openai", "local")}
        self.anthropic_endpoint = anthropic_endpoint()  # read once, like the backend's; part of non-default keys
        self.cache = cache
        self.semaphore = threading.BoundedSemaphore(max_concurrency)
        self.max_concurrency = max_concurrency
        self.limiter = RateLimiter()  # waits on the providers' own rate-limit headers (memeval/llm/ratelimit.py)
        self._written_prefixes: set[tuple[str, str]] = set()
        self._prefix_cuts: dict[tuple[str, str], tuple[int, ...]] = {}  # a prefix written in pieces: where cut
        self._cutting: dict[tuple[str, str], threading.Lock] = {}
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.budget_usd = budget_usd
        self.sleep = sleep
        self.sampling = sampling
        self.models = {role: model for role, model in (models or {}).items() if model}
        for role, model in self.models.items():
            self.profile(model, profiles.ROLE_FLAGS.get(role, role))
        self.stats = ClientStats()
        self.fatal: APIRejected | None = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cancel = threading.Event()  # set by an interrupt: no new attempt starts, no retry waits on
        self._answered = threading.Event()  # until one call succeeds, calls go one at a time (see _send)
        self._probe = threading.Lock()
        self._embedder = None
        self._in_flight: dict[object, tuple[str, int, float]] = {}  # call → (model, attempt, monotonic start)
        # a user's server: each request checked against its context window before it is sent (memeval/llm/fit.py)
        self.fit = FitCheck(self, context_tokens)
        self._slot_gates: dict[str, threading.BoundedSemaphore] = {}  # endpoint → its server's slots

    @contextmanager
    def _server_slot(self, request: LLMRequest):
        """No more requests on the wire to a user's server than it works on at once (GET /props total_slots):
        past that they would only queue inside the server, each reported in flight for the whole queue's time.
        An interrupt ends the wait for a slot."""
        slots = self.fit.slots(request)
        if slots is None or slots >= self.max_concurrency:
            yield
            return
        with self._lock:
            gate = self._slot_gates.get(request.endpoint)
            if gate is None:
                gate = self._slot_gates[request.endpoint] = threading.BoundedSemaphore(slots)
                self.fit.say(f"the server at {request.endpoint} works on {slots} request{'s' if slots > 1 else ''} "
                             f"at a time (GET /props total_slots): at most {slots} sent at once, not "
                             f"--max-concurrency {self.max_concurrency}")
        while not gate.acquire(timeout=0.2):
            if self._cancel.is_set():
                raise LLMError("interrupted: not sent")
        try:
            yield
        finally:
            gate.release()

    @contextmanager
    def sending(self, model: str):
        """One request on the wire: counted as sent, in flight (`waiting`) until it ends, counted as a reply when
        one came back."""
        call = object()
        with self._lock:
            self.stats.requests_sent += 1
            self._in_flight[call] = (model, getattr(self._local, "attempt", 1), time.monotonic())
        try:
            yield
        finally:
            with self._lock:
                del self._in_flight[call]
        with self._lock:
            self.stats.replies += 1

    def waiting(self) -> tuple[str, int, float, int] | None:
        """The call waiting longest for its reply: (model, attempt, monotonic start, calls in flight), or None; a
        progress bar says what a silent run waits for (memeval/progress.py)."""
        with self._lock:
            if not self._in_flight:
                return None
            model, attempt, start = min(self._in_flight.values(), key=lambda v: v[2])
            return model, attempt, start, len(self._in_flight)

    @property
    def embedder(self):
        """The embeddings role of this client (memeval/llm/embeddings.py), made on first use."""
        with self._lock:
            if self._embedder is None:
                from memeval.llm.embeddings import Embedder

                self._embedder = Embedder(self)
            return self._embedder

    def embed(self, texts: Sequence[str], dimensions: int | None = None, role: str = "embed"):
        """`texts` as an (n, d) float32 matrix from the `embed` role's model: cache first, then batched requests
        under this client's budget, rate limits and error policy (memeval/llm/embeddings.py)."""
        return self.embedder.embed(texts, dimensions, role)

    def estimate_embeddings(self, calls: Sequence[Sequence[str]], dimensions: int | None = None, role: str = "embed"):
        """Dry run of the `embed` calls `calls` (each a list of texts): see memeval/llm/embeddings.py."""
        return self.embedder.estimate(calls, dimensions, role)

    def profile(self, model: str, source: str = "model") -> profiles.ModelProfile:
        """The profile `model` resolves to for this client (an unknown id is an input error naming `source`)."""
        return self.profile_table.profile(model, source)

    def sent_temperature(self, model: str, temperature: float | None) -> float | None:
        """What this client sends as `model`'s temperature, given the protocol's and its sampling mode."""
        return self.profile_table.sent_temperature(model, temperature, self.sampling)

    @property
    def backend_name(self) -> str:
        names = [getattr(b, "name", type(b).__name__) for b in (self.backend, *self.backends.values())]
        live = sorted({n for n in names if n != "replay"})
        return "+".join(live) if live else "replay"

    def backend_for(self, provider: str):
        return self.backends.get(provider, self.backend)

    def endpoint(self, provider: str) -> str | None:
        """The base URL `provider`'s requests go to (None: this client knows no endpoint for it)."""
        return self.anthropic_endpoint if provider == "anthropic" else self.endpoints.get(provider)

    def endpoint_is_default(self, provider: str) -> bool:
        """Whether `provider`'s requests go to its public default (Anthropic's or OpenAI's own API); a local
        server has none."""
        default = {"anthropic": ANTHROPIC_DEFAULT_BASE_URL, "openai": OPENAI_BASE_URL}.get(provider)
        return default is not None and (self.endpoint(provider) or default).rstrip("/") == default

    def model_for(self, role: str, fallback: str | None = None) -> str:
        model = self.models.get(role)
        if model:
            return model
        if self.require_named_roles:
            raise InputError(profiles.ROLE_FLAGS.get(role, role), "(not given)",
                             "with --llm local every role used needs its model named (the server's model id)")
        return fallback or profiles.ROLE_DEFAULTS[role]

    def check_roles(self, temperatures: Mapping[str, float | None]) -> None:
        """Before any call: every role this command will use can honour its protocol temperature."""
        for role, temperature in temperatures.items():
            flag = profiles.ROLE_FLAGS.get(role, role)
            profiles.check_role_kind(role, self.profile(self.model_for(role), flag))
            self.profile_table.check_sampling(self.model_for(role), temperature, self.sampling, flag)

    def resolve(self, request: LLMRequest) -> LLMRequest:
        """The request as it will be sent: the run's model for its role, the profile's API version, the
        temperature actually sent, structured output only where the model supports it (on an OpenAI-compatible
        provider in the form --response-format names, none dropping the schema), and the profile's thinking
        settings: a thinking model keeps the protocol's answer cap and gets its thinking reserve on top (thinking
        counts toward max_tokens). A thinking type the model rejects, and a cap above the most tokens the model writes
        a reply, are refused here, before any call (a dry run's estimate resolves too)."""
        model = self.model_for(request.role, request.model) if request.role else request.model
        source = profiles.ROLE_FLAGS.get(request.role, "model")
        p = self.profile(model, source)
        if p.embedding:
            raise InputError(source, model, "an embeddings model, not a chat model (embeddings: --embed-model)")
        other = p.provider != "anthropic"
        max_tokens = request.max_tokens
        if max_tokens is None and p.provider != "openai":
            max_tokens = ANTHROPIC_REQUIRED_MAX_TOKENS if not other else LOCAL_UNCAPPED_MAX_TOKENS
        thinking = request.thinking or p.thinking_sent
        refusal = p.thinking_refusal(thinking)
        if refusal:
            raise InputError(source, model, refusal)
        reserve = p.thinking_tokens if p.thinks(thinking) else 0
        too_many = p.output_refusal(None if max_tokens is None else max_tokens + reserve, request.max_tokens_from,
                                    reserve)
        if too_many:
            raise InputError(source, model, too_many)
        if not other and (request.top_p is not None or request.response_format):
            raise ValueError(f"{model}: top_p and response_format are OpenAI-compatible wire fields; an Anthropic "
                             "request carries neither")
        temperature = self.sent_temperature(model, request.temperature)
        output_schema, json_format = (request.output_schema if p.structured_outputs else ""), ""
        if output_schema and other:  # a published protocol's own format stays; memeval's own follow the flag
            json_format = request.json_format or self.response_format
            if json_format == "none":
                output_schema, json_format = "", ""
        return dataclasses.replace(
            request, model=model, api_version=p.api_version, provider=p.provider, max_tokens=max_tokens,
            top_p=request.top_p if temperature is not None else None,  # a model that takes no sampling takes neither
            endpoint=self.endpoints.get(p.provider, "") if other else self.anthropic_endpoint,
            cache_prefix_chars=0 if other else request.cache_prefix_chars,  # OpenAI caches prefixes by itself
            temperature=temperature,
            output_schema=output_schema, json_format=json_format,
            thinking=thinking, effort=p.effort, thinking_tokens=p.thinking_tokens if p.thinks(thinking) else 0)

    def lookup(self, request: LLMRequest) -> LLMResponse | None:
        return self._cached(self.resolve(request))

    def _cached(self, resolved: LLMRequest) -> LLMResponse | None:
        """A stored reply, unless it is not an answer (stored by an older version): that one is asked again."""
        if self.cache is None:
            return None
        hit = self.cache.get(resolved.key)
        if hit is None:
            return None
        response = LLMResponse.from_cache(hit)
        if bounds.oversized_text(resolved, response.text) \
                or response.unusable_reason(resolved.truncation_ok, resolved.empty_ok):
            return None
        return response

    def complete(self, request: LLMRequest) -> LLMResponse:
        request = self.resolve(request)
        hit = self._cached(request)  # before any rate limiting: a fully cached run sends nothing
        if hit is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return hit
        with self._lock:
            if self.budget_usd is not None and self.stats.cost_usd >= self.budget_usd:
                raise BudgetExceeded(f"budget ${self.budget_usd:.2f} spent (${self.stats.cost_usd:.4f}); "
                                     "no new calls scheduled")

        profile = self.profile(request.model)
        if profile.retired() and os.environ.get("MEMEVAL_SEND_RETIRED") != "1":
            raise ModelRetired(request.model, profile.retires, profile.successor)
        self._refuse_misfit(request)

        def attempt() -> LLMResponse:
            start = time.perf_counter()
            response = self._send(request)
            response.latency_s = time.perf_counter() - start
            return response

        response, response.attempts = self.call(attempt, request)
        self._account(request, response)
        self.keep(request, response)
        return response

    def misfit(self, request: LLMRequest):
        """DoesNotFit when `request` would be sent and cannot fit its server's context window, else None (a cached
        reply needs no room; an unknown window is not checked). Nothing is sent but the server's token counts."""
        resolved = self.resolve(request)
        return None if self._cached(resolved) is not None else self.fit.misfit(resolved)

    def _refuse_misfit(self, request: LLMRequest) -> None:
        """DoesNotFit, counted as a failure, when the request cannot fit its server's context window."""
        problem = self.fit.misfit(request)
        if problem is None:
            return
        with self._lock:
            self.stats.failures += 1
            self.stats.log.append({"event": "does-not-fit", "needed": problem.needed, "held": problem.held,
                                   "key": request.key[:12]})
        raise problem

    def keep(self, request: LLMRequest, response: LLMResponse) -> None:
        """Cache a reply that is an answer; raise InvalidReply for text longer than the request's cap can produce
        and UnusableReply for a refusal, an empty reply or one cut at the cap (nothing cached: the next run asks
        again). Its tokens were spent and are already accounted."""
        oversized = bounds.oversized_text(request, response.text)
        if oversized is not None:
            with self._lock:
                self.stats.failures += 1
                self.stats.unusable["oversized reply"] = self.stats.unusable.get("oversized reply", 0) + 1
            raise InvalidReply(f"{oversized} from {response.model} (request-id {response.request_id or '-'}, "
                               f"usage: {response.output_tokens} output tokens); not an answer: not kept, the next "
                               "run asks again")
        reason = response.unusable_reason(request.truncation_ok, request.empty_ok)
        if reason is not None:
            with self._lock:
                self.stats.failures += 1
                self.stats.unusable[reason] = self.stats.unusable.get(reason, 0) + 1
            raise UnusableReply(f"{reason} from {response.model} (request-id {response.request_id or '-'}, "
                                f"{response.output_tokens} output tokens of {request.max_tokens_sent}); not kept, the "
                                "next run asks again", reason)
        if self.cache is not None:
            self.cache.put(request.key, request.key_material(), response.to_cache())

    def call(self, fn: Callable, request: LLMRequest, where: str = "messages"):
        """Any API call (messages, token counting, batch create/retrieve/results) under one error policy:
        transient errors retried with backoff (the server's retry headers win), a deterministic rejection
        remembered so that this client sends nothing more, then raised. Returns (result, attempts)."""
        attempt = timeouts = 0
        while True:
            if self.fatal is not None:
                raise self.fatal
            if self._cancel.is_set():
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
                    self._cancel.wait(delay)
                else:
                    self.sleep(delay)
            except LLMError:
                with self._lock:
                    self.stats.failures += 1
                raise

    def _send(self, request: LLMRequest) -> LLMResponse:
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
        backend = self.backend_for(request.provider)
        if not getattr(backend, "sends_requests", True):
            with self.semaphore:
                return backend.send(request)
        return self._send_one(self._in_pieces(request, backend), backend)

    def _send_one(self, request: LLMRequest, backend) -> LLMResponse:
        reservation = self.limiter.acquire(limit_pool(request.provider, request.model), self._input_estimate(request),
                                           request.max_tokens_sent or UNCAPPED_OUTPUT_ESTIMATE)
        with self.semaphore, self._server_slot(request), self.sending(request.model):
            try:
                response = backend.send(request)
            except TransientError as exc:  # a 429 or an outage: nothing was used; its headers still tell
                self.limiter.settle(reservation, exc.headers, 0, 0)
                raise
            except BaseException:
                self.limiter.settle(reservation, None, 0, 0)
                raise
        if request.cache_prefix and (response.cache_creation_input_tokens or response.cache_read_input_tokens):
            text = request.messages[0][1]
            with self._lock:
                self._written_prefixes.update((request.model, text[:cut]) for cut in
                                              (*request.cache_splits, request.cache_prefix_chars))
        self.limiter.settle(reservation, response.rate_headers,
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
        capacity = self.limiter.capacity(limit_pool(request.provider, request.model), "input")
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
            self._account(piece, response)
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

    def _account(self, request: LLMRequest, response: LLMResponse) -> None:
        role = request.role or "other"
        with self._lock:
            s = self.stats
            s.cost_usd += response.cost_usd
            s.input_tokens += response.input_tokens
            s.output_tokens += response.output_tokens
            s.cache_creation_input_tokens += response.cache_creation_input_tokens
            s.cache_read_input_tokens += response.cache_read_input_tokens
            s.first_request_id.setdefault(role, response.request_id)
            s.log.append({"event": "response", "request_id": response.request_id, "model": response.model,
                          "input_tokens": response.input_tokens, "output_tokens": response.output_tokens,
                          "cache_read_input_tokens": response.cache_read_input_tokens,
                          "cost_usd": response.cost_usd, "attempts": response.attempts,
                          "key": request.key[:12]})

    def complete_many(self, requests: Sequence[LLMRequest], max_workers: int | None = None) -> list:
        """Results in request order; a failed call is returned as its LLMError and the rest still complete.
        A deterministic rejection (APIRejected) is raised. Identical requests (LoCoMo repeats some questions)
        are sent once, so what is sent does not depend on thread timing. Requests sharing a cached prefix go
        first one alone per prefix (it writes the prompt cache), then the rest of the group fan out and read it."""
        def one(r):
            try:
                return self.complete(r)
            except LLMError as exc:
                return exc

        index_of: dict[str, int] = {}
        owner = [index_of.setdefault(self.resolve(r).key, i) for i, r in enumerate(requests)]
        seen: set = set()
        first, rest = [], []
        for i, r in enumerate(requests):
            if owner[i] != i:
                continue
            group = (r.model, r.role, r.cache_prefix) if r.cache_prefix_chars else None
            if group is not None and group not in seen:
                seen.add(group)
                first.append(i)
            else:
                rest.append(i)
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
    def pool(self, max_workers: int):
        """Worker threads for this client's calls that Ctrl-C (or SIGTERM, memeval/cli.py) does not wait for:
        nothing queued starts, calls waiting to retry give up, no new attempt is sent, and replies still in flight
        are dropped with the process instead of holding it for their read timeouts (minutes on a CPU server)."""
        pool = ThreadPoolExecutor(max_workers=max_workers)
        try:
            yield pool
        except (KeyboardInterrupt, SystemExit):
            self._cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
        pool.shutdown()

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

    def estimate(self, requests: Sequence[LLMRequest], expected_output_tokens: int | None = None,
                 batch: bool = False, counter: Callable[[LLMRequest], int] | None = None) -> CostEstimate:
        """Dry run: calls still to send (cache misses), tokens and dollars before spending. `counter` gives
        exact input tokens (the token-counting endpoint or a user's server's tokenizer, memeval/llm/count.py; its
        `count_all` counts the misses at once, None for a request it cannot count, and its `token_count`, where it
        has one, says how); otherwise 4 characters a token times the model's tokenizer
        ratio (memeval/llm/tokenizers.py), and `token_count` says which ratios. A cached prefix is priced as one
        cache write per distinct prefix (when it reaches the model's floor) and reads after."""
        resolved = list({r.key: r for r in map(self.resolve, requests)}.values())  # identical ones are sent once
        misses = [r for r in resolved if self._cached(r) is None]
        count_all = getattr(counter, "count_all", None) or (lambda rs: [counter(r) if counter else None for r in rs])
        counts = count_all(misses)
        keyless = [r.model for r, n in zip(misses, counts, strict=True) if n is None]
        tokens_in = tokens_out = tokens_cap = written = read = 0
        dollars = dollars_max = 0.0
        prefixes: set = set()
        for r, exact in zip(misses, counts, strict=True):
            total = exact if exact is not None else estimate_tokens(r.system + "".join(t for _, t in r.messages),
                                                                    r.model)
            # a thinking model may spend its whole thinking reserve too: billed as output (profiles.py); a
            # typical reply is priced, never more than the request's own cap (`--answer-max-tokens`)
            cap = (r.max_tokens or UNCAPPED_OUTPUT_ESTIMATE) + r.thinking_tokens
            out = min(expected_output_tokens + r.thinking_tokens, cap) if expected_output_tokens else cap
            prefix_tokens = 0
            if r.cache_prefix:
                prefix_tokens = min(total, estimate_tokens(r.cache_prefix, r.model) if exact is None
                                    else round(total * r.cache_prefix_chars / r.prompt_chars))
                if prefix_tokens < self.profile(r.model).min_cache_tokens:
                    prefix_tokens = 0
            w = rd = 0
            if prefix_tokens:
                group = (r.model, r.cache_prefix)
                if group in prefixes:
                    rd = prefix_tokens
                else:
                    prefixes.add(group)
                    w = prefix_tokens
            tokens_in += total
            tokens_out += out
            tokens_cap += cap
            written += w
            read += rd
            dollars += self.profile_table.cost_usd(r.model, total - w - rd, out, w, rd, batch)
            dollars_max += self.profile_table.cost_usd(r.model, total - w - rd, cap, w, rd, batch)
        return CostEstimate(requests=len(requests), identical=len(requests) - len(resolved),
                            cached=len(resolved) - len(misses), to_send=len(misses), input_tokens_est=tokens_in,
                            cache_write_tokens_est=written, cache_read_tokens_est=read,
                            output_tokens_expected=tokens_out, output_tokens_max=tokens_cap, usd_est=dollars,
                            usd_max=dollars_max, token_count=(
                                counter.token_count(len(misses), counts, keyless) if hasattr(counter, "token_count")
                                else _token_count(counter is not None, len(misses), keyless)),
                            routes=routes_of(self, ((r.provider, r.model, r.role or "other") for r in misses)))


def _token_count(counted: bool, misses: int, keyless: list[str]) -> str:
    """How an estimate's input tokens were counted: by the endpoint, by characters (with the ratios used), or
    both when the endpoint could count only some requests (another provider's)."""
    estimated = f"estimate ({tokenizers.estimate_note(keyless)})"
    if not counted:
        return estimated
    if not keyless:
        return "exact (token-counting endpoint)"
    return f"exact (token-counting endpoint) for {misses - len(keyless)} of {misses} calls; {estimated} for the rest"


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
    models = {**profiles.role_defaults(backend), **named} if backend == "openai" else named
    return LLMClient(AnthropicBackend() if anthropic_live else ReplayBackend(), cache, backends=backends,
                     models=models, endpoints=endpoints, profile_table=table, require_named_roles=backend == "local",
                     budget_usd=settings.budget_usd, sampling=settings.sampling,
                     max_concurrency=settings.max_concurrency, response_format=settings.response_format,
                     context_tokens=settings.context_tokens, sleep=sleep)
