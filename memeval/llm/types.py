"""The records every model call is made of: the request (with its cache key) and the response, and the Anthropic
endpoint the key records. Pure data, below the client and every backend, so that a backend builds responses
without importing the client (memeval.llm.client re-exports these names)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

KEY_SCHEMA = 2  # 2: API version and the sampling actually sent are part of the key
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"  # the SDK's own default when ANTHROPIC_BASE_URL is unset


def anthropic_endpoint() -> str:
    """The base URL Anthropic requests go to (ANTHROPIC_BASE_URL, else the SDK's default), as the cache key and the
    manifest record it: without credentials (public_url)."""
    return public_url((os.environ.get("ANTHROPIC_BASE_URL") or "").strip()) or ANTHROPIC_DEFAULT_BASE_URL


def public_url(url: str) -> str:
    """`url` as it may be recorded (manifest, run identity, cache key, error lines): without its user and password
    and with every query value replaced by `<redacted>` (the keys kept: `?token=<redacted>`), no fragment, no trailing
    slash. A base URL that carries a token stays the same endpoint when the token changes: the same run, the same
    cached replies."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a port that is not a number: nothing of it is safe to show but the scheme
        return f"{url.split(':', 1)[0]}://<unparsable>" if "://" in url else "<unparsable>"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    query = "&".join(f"{key}=<redacted>" for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), query, ""))



def material_key(material: dict) -> str:
    """The cache key of anything sent: SHA-256 of its canonical JSON (the same bytes for the same content)."""
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()

@dataclass(frozen=True, kw_only=True)
class LLMRequest:
    # the model: a protocol's request names only its `role` and leaves this empty, and the client routes the role to
    # the run's model (the user's --answer-model etc., else the role's default; memeval/llm/router.py). A request
    # without a role is sent to this model (the doctor's probes); one with both names the model its protocol pins for
    # the role, which a model the user names for the role still replaces (memory_graph:model=). After resolve(), the
    # model sent
    model: str = ""
    messages: tuple[tuple[str, str], ...]  # (role, text)
    system: str = ""
    max_tokens: int | None = 256  # None: no cap sent (a published protocol that sets none); see resolve()
    temperature: float | None = 0.0  # the protocol's; after resolve(), what is sent (None: nothing)
    template_version: str = ""
    repeat_index: int = 0
    provider: str = "anthropic"
    role: str = ""  # answer | judge | extract: picks the run's model for the role; not part of the key
    api_version: str = ""  # set by LLMClient.resolve
    cache_prefix_chars: int = 0  # leading characters of the first user message marked for prompt caching
    output_schema: str = ""  # JSON schema (as JSON text) for structured output, where the model supports it
    # how an OpenAI-compatible provider is asked for `output_schema`: json_schema (Structured Outputs) or json_object
    # (JSON mode). A published protocol pins its own (Mem0's judge: json_object); otherwise resolve() sets the
    # client's --response-format. Keyed only as json_schema, a wire no older key had: json_object was the only form
    # sent before, so those keys are unchanged
    json_format: str = ""
    # a caller that speaks an OpenAI-compatible wire on its own terms (the Mem0 library): `top_p` and
    # `response_format: {"type": ...}` sent as given to openai/local providers, never to Anthropic; keyed only when set
    top_p: float | None = None
    response_format: str = ""
    endpoint: str = ""  # base URL the request goes to (set by resolve; part of the key, see key_material)
    truncation_ok: bool = False  # a protocol that reads a reply cut at its cap (LongMemEval's judge); not in the key
    empty_ok: bool = False  # a protocol whose rule reads an empty reply too (LongMemEval's judge: "no"); not in the key
    # extra cache breakpoints inside the cached prefix (character offsets, ascending), so a prefix larger than the
    # account's per-minute input limit is written in pieces; transport only (the model reads the same characters),
    # not in the key
    cache_splits: tuple[int, ...] = ()
    # thinking, as resolve() sets it from the model's profile (a caller may ask for a `thinking` type; resolve refuses
    # one the model rejects): the `thinking.type` and `output_config.effort` sent ("": none) and the output tokens
    # reserved for thinking above `max_tokens`, which stays the protocol's answer cap (see max_tokens_sent)
    thinking: str = ""
    effort: str = ""
    thinking_tokens: int = 0
    max_tokens_from: str = ""  # who set max_tokens, named when the model cannot write that many; not in the key

    @property
    def max_tokens_sent(self) -> int | None:
        """The wire's `max_tokens`: thinking counts toward it, so it is the answer cap plus the thinking reserved."""
        return None if self.max_tokens is None else self.max_tokens + self.thinking_tokens

    def key_material(self) -> dict:
        material = {
            "key_schema": KEY_SCHEMA, "provider": self.provider, "model": self.model,
            "api_version": self.api_version, "system": self.system,
            "messages": [list(m) for m in self.messages], "max_tokens": self.max_tokens,
            "temperature_sent": self.temperature, "template_version": self.template_version,
            "repeat_index": self.repeat_index, "cache_prefix_chars": self.cache_prefix_chars,
            "output_schema": self.output_schema,
        }
        if self.provider != "anthropic":
            material["endpoint"] = self.endpoint
        elif self.endpoint and self.endpoint != ANTHROPIC_DEFAULT_BASE_URL:
            # another Anthropic endpoint (ANTHROPIC_BASE_URL: a proxy, a gateway, a compatible server) answers under
            # its own keys; the default endpoint's keys stay as they were before endpoints were keyed, so existing
            # caches still hit
            material["endpoint"] = self.endpoint
        if self.json_format == "json_schema":
            material["response_format"] = self.json_format
        if self.top_p is not None or self.response_format:  # only such requests key them: other keys are unchanged
            material["wire"] = {"top_p": self.top_p, "response_format": self.response_format}
        if self.thinking or self.effort or self.thinking_tokens:
            # only a request that sends thinking parameters keys them, so every other request's key is unchanged
            material["thinking"] = {"type": self.thinking, "effort": self.effort,
                                    "max_tokens_sent": self.max_tokens_sent}
        return material

    @property
    def key(self) -> str:
        return material_key(self.key_material())

    @property
    def cache_prefix(self) -> str:
        """The leading text marked for prompt caching ('' when none)."""
        return self.messages[0][1][: self.cache_prefix_chars] if self.cache_prefix_chars else ""

    @property
    def prompt_chars(self) -> int:
        return len(self.system) + sum(len(t) for _, t in self.messages)


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
    stop_reason: str | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    api_version: str = ""
    rate_headers: dict = dataclasses.field(default_factory=dict)  # the reply's rate-limit headers; never cached

    def unusable_reason(self, truncation_ok: bool = False, empty_ok: bool = False) -> str | None:
        """Why this reply is not an answer (None when it is): a refusal, no text (unless the protocol's rule reads
        an empty reply), or text cut at the output cap (unless the protocol reads cut replies). A thinking model
        that spent the cap thinking gives empty text."""
        if self.stop_reason == "refusal":
            return "refusal"
        if not self.text.strip() and not empty_ok:
            return "empty reply" + (" (cut at max_tokens)" if self.stop_reason == "max_tokens" else "")
        if self.stop_reason == "max_tokens" and not truncation_ok:
            return "cut at max_tokens"
        return None

    def to_cache(self) -> dict:
        d = asdict(self)
        d.pop("cached")
        d.pop("rate_headers")
        return d

    @classmethod
    def from_cache(cls, stored: Mapping) -> "LLMResponse":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in stored.items() if k in names}, cached=True)



@dataclass(frozen=True)
class Route:
    """Where a dry run's requests to one provider go (memeval/llm/routes.py): the base URL without credentials ('' when
    replies come from the cache only), what set it or why nothing is sent, each model sent there with its roles."""

    provider: str
    url: str
    via: str
    models: dict[str, list[str]]


def merged(routes: Iterable[Route]) -> list[Route]:
    """One route per provider and URL over several stages' routes, models and roles in first-seen order."""
    out: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    for route in routes:
        models = out.setdefault((route.provider, route.url, route.via), {})
        for model, roles in route.models.items():
            known = models.setdefault(model, [])
            known += [r for r in roles if r not in known]
    return [Route(provider, url, via, models) for (provider, url, via), models in out.items()]


@dataclass(frozen=True)
class CostEstimate:
    """A dry run's price of some requests: how many are still to send (cache misses), their tokens and dollars."""

    requests: int
    identical: int  # requests equal to an earlier one: sent once
    cached: int
    to_send: int
    input_tokens_est: int
    cache_write_tokens_est: int
    cache_read_tokens_est: int
    output_tokens_expected: int  # a typical reply per request (the stage's expectation, within each cap): priced
    output_tokens_max: int  # every request's own output cap (max_tokens and thinking budget): the worst case
    usd_est: float  # at the expected output
    usd_max: float  # at every cap: no run of these requests costs more
    token_count: str  # how input tokens were counted: "exact (token-counting endpoint)" or the 4-character estimate
    routes: tuple[Route, ...] = ()  # where the requests still to send go

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class EmbeddingEstimate:
    """A dry run's price of embedding some texts: each text is one input of a request, many inputs a request
    (memeval/llm/embeddings.py batches them within the API's limits); embeddings have no output tokens."""

    inputs: int  # texts asked for
    identical: int  # texts equal to an earlier one: embedded once
    cached: int  # distinct texts already in the cache
    to_embed: int  # distinct texts still to embed
    to_send: int  # requests those texts go out in
    input_tokens_est: int  # 4 characters a token
    input_tokens_max: int  # UTF-8 bytes (+2 a text): no tokenizer makes more tokens of a text than that
    usd_est: float
    usd_max: float
    token_count: str
    model: str
    routes: tuple[Route, ...] = ()  # where the requests still to send go

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunEstimate:
    """A dry run of a whole run: the estimate of each stage that calls a model, their total and how it was made."""

    stages: dict[str, CostEstimate | EmbeddingEstimate]  # answers, ingest, embeddings, judge
    usd_est_total: float
    note: str

    @property
    def routes(self) -> list[Route]:
        """Where the requests of every stage go, one route per provider and URL."""
        return merged(r for e in self.stages.values() for r in e.routes)

    def as_dict(self) -> dict:
        return {**{name: e.as_dict() for name, e in self.stages.items()}, "usd_est_total": self.usd_est_total,
                "usd_max_total": sum(e.usd_max for e in self.stages.values()),
                "requests_go_to": [asdict(r) for r in self.routes], "note": self.note}
