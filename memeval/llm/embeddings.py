"""The embeddings role: texts → float32 vectors through the same client as every chat call — its cache, budget,
rate limiter, retries and error policy — sent to OpenAI's embeddings API or any OpenAI-compatible server's
/v1/embeddings (`--llm local`). `LLMClient.embed` is the one entry point, so a system that embeds (rag_dense, and
later Mem0's embedder wrapped as `client.embed([text])[0]`) never makes a call the client does not see.

Each text is cached on its own, keyed by provider, model, endpoint, `dimensions` (when sent) and the text, as a
float32 blob (memeval/llm/cache.py): a rerun, or another system embedding the same text, sends nothing.

The API's limits (the openai SDK 3.63 docstring of `embeddings.create`, the API reference's own words: "The input
must not exceed the max input tokens for the model (8192 tokens for all embedding models), cannot be an empty
string, and any array must be 2048 dimensions or less ... all embedding models enforce a maximum of 300,000 tokens
summed across all inputs in a single request"). Without the model's tokenizer here (tiktoken is not a dependency),
a request's tokens are bounded by its UTF-8 bytes: a BPE token is at least one byte, so a batch under 300,000 bytes
(+2 a text, for a server that adds BOS/EOS) is under 300,000 tokens. The 8,192-token bound on one text cannot be
checked that way (8,192 bytes is ~2,000 tokens): the API judges it, and its 400 stops the run in one line.

`encoding_format`: the SDK sends "base64" when none is given and decodes it to float lists itself
(openai/lib/_parsing/_embeddings.py); it leaves the reply alone when the caller names a format. So the format is
named: "base64" to OpenAI (the exact float32 bytes, a quarter of the JSON), "float" to a local server (the API's
documented default, which every compatible server implements; llama-cpp-python's ignores the field and sends
floats). Either shape of reply is decoded here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from memeval.errors import InputError
from memeval.llm.errors import APIRejected, BudgetExceeded, CacheMiss
from memeval.llm.profiles import EMBED_ROLE, ROLE_FLAGS, check_role_kind
from memeval.llm.ratelimit import limit_pool
from memeval.llm.routes import routes_of
from memeval.llm.tokenizers import estimate_note, estimate_tokens
from memeval.llm.types import EmbeddingEstimate

EMBED_KEY_SCHEMA = 1
MAX_INPUTS = 2048  # inputs per request
MAX_INPUT_TOKENS = 8192  # tokens per input (judged by the API, see the module docstring)
MAX_REQUEST_TOKENS = 300_000  # tokens summed over a request's inputs


def token_bound(text: str) -> int:
    """At least as many as the tokens any tokenizer makes of `text` (bytes, plus BOS and EOS)."""
    return len(text.encode("utf-8")) + 2


def plan_batches(texts: Sequence[str], max_inputs: int = MAX_INPUTS,
                 max_tokens: int = MAX_REQUEST_TOKENS) -> list[list[int]]:
    """Indices of `texts` grouped into requests, in order, each within both limits. A text whose own bound passes
    the request limit goes alone (the API then judges it)."""
    batches: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i, text in enumerate(texts):
        cost = token_bound(text)
        if current and (len(current) >= max_inputs or size + cost > max_tokens):
            batches.append(current)
            current, size = [], 0
        current.append(i)
        size += cost
    if current:
        batches.append(current)
    return batches


def key_material(provider: str, model: str, endpoint: str, dimensions: int | None, text: str) -> dict:
    material = {"key_schema": EMBED_KEY_SCHEMA, "kind": "embedding", "provider": provider, "model": model,
                "endpoint": endpoint, "text": text}
    if dimensions is not None:
        material["dimensions"] = dimensions
    return material


def embedding_key(material: dict) -> str:
    from memeval.llm.types import material_key

    return material_key(material)


@dataclass(frozen=True)
class EmbeddingBatch:
    """One request: what the backend sends, and what the client's error policy logs (`key`, `model`)."""

    model: str
    provider: str
    endpoint: str
    texts: tuple[str, ...]
    dimensions: int | None = None
    role: str = EMBED_ROLE
    api_version: str = ""

    @property
    def key(self) -> str:
        return hashlib.sha256("\x00".join(self.texts).encode("utf-8")).hexdigest()


@dataclass
class EmbeddingReply:
    vectors: np.ndarray  # (len(texts), d) float32, in the order of the batch's texts
    model: str
    request_id: str | None
    input_tokens: int
    rate_headers: dict = field(default_factory=dict)


class UnreadableEmbeddings(ValueError):
    """A reply that holds no usable vectors for the inputs sent (the reason says what is wrong)."""


def decode_vectors(items: Sequence, n: int, dimensions: int | None) -> np.ndarray:
    """The reply's `data` as an (n, d) float32 matrix in input order: each item's `embedding` a list of numbers
    or base64 of little-endian float32, its `index` the input's. One vector per input, all of one length (the
    requested `dimensions` when given), finite. A list of lists is a server returning one vector per token (a
    model served without pooling), which no ranking can use."""
    if len(items) != n:
        raise UnreadableEmbeddings(f"{len(items)} embeddings for {n} inputs")
    rows: list[np.ndarray | None] = [None] * n
    for position, item in enumerate(items):
        index = getattr(item, "index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n or rows[index] is not None:
            raise UnreadableEmbeddings(f"embedding {position} has index {index!r} (inputs 0..{n - 1}, each once)")
        data = getattr(item, "embedding", None)
        if isinstance(data, str):
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                raise UnreadableEmbeddings(f"embedding {index} is a string that is not base64") from None
            if len(raw) % 4:
                raise UnreadableEmbeddings(f"embedding {index} is {len(raw)} bytes, not float32 values")
            vector = np.frombuffer(raw, dtype="<f4")
        elif isinstance(data, list) and data and all(isinstance(v, list) for v in data):
            raise UnreadableEmbeddings(f"embedding {index} is {len(data)} vectors (one per token), not one: the "
                                       "server runs the model without pooling (llama.cpp: --pooling mean; "
                                       "llama-cpp-python: --kv_overrides <arch>.pooling_type=int:1)")
        elif isinstance(data, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data):
            vector = np.asarray(data, dtype=np.float32)
        else:
            raise UnreadableEmbeddings(f"embedding {index} is {type(data).__name__}, not a list of numbers")
        if vector.size == 0 or not np.isfinite(vector).all():
            raise UnreadableEmbeddings(f"embedding {index} is empty or holds a value that is not finite")
        rows[index] = vector
    lengths = {len(v) for v in rows}
    if len(lengths) != 1:
        raise UnreadableEmbeddings(f"vectors of different lengths {sorted(lengths)}")
    if dimensions is not None and lengths != {dimensions}:
        raise UnreadableEmbeddings(f"vectors of length {lengths.pop()}, not the {dimensions} dimensions asked for")
    return np.vstack(rows).astype(np.float32, copy=False)


class Embedder:
    """The client's embeddings role (one per client): resolves the role's model, answers from the cache, sends
    the misses in batches through the client's limiter, semaphore, budget and error policy, caches every reply."""

    def __init__(self, client):
        self.client = client
        self._planning = threading.local()

    @contextmanager
    def planning(self):
        """While in this block (this thread), a text not cached gets a zero vector instead of a request: a dry run
        builds its prompts from it (a system then ranks its items in their own order) and sends nothing. Nothing
        made here is cached."""
        self._planning.on = True
        try:
            yield
        finally:
            self._planning.on = False

    def resolved(self, role: str) -> tuple[str, object, str]:
        """(model, profile, endpoint) of `role` on this client; a chat model named for it is an input error."""
        client = self.client
        model = client.model_for(role)
        profile = client.profile(model, ROLE_FLAGS.get(role, role))
        check_role_kind(role, profile)
        return model, profile, client.endpoint(profile.provider) or ""

    def embed(self, texts: Sequence[str], dimensions: int | None = None, role: str = EMBED_ROLE) -> np.ndarray:
        """(len(texts), d) float32, in order; identical texts are embedded once."""
        client = self.client
        model, profile, endpoint = self.resolved(role)
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text:
                raise InputError("embeddings", f"input {i}", "an empty string (the API rejects it: 400 '$.input' "
                                 "is invalid)" if text == "" else f"not a string ({type(text).__name__})")
        if not texts:
            return np.zeros((0, dimensions or profile.dimensions or 0), dtype=np.float32)
        materials = {}
        keys = []
        for text in texts:
            material = key_material(profile.provider, model, endpoint, dimensions, text)
            key = embedding_key(material)
            materials.setdefault(key, material)
            keys.append(key)
        unique = list(materials)
        found = client.cache.get_vectors(unique) if client.cache is not None else {}
        with client._lock:
            client.stats.cache_hits += len(found)
        missing = [k for k in unique if k not in found]
        if missing:
            if getattr(self._planning, "on", False):
                width = dimensions or profile.dimensions or next((len(v) for v in found.values()), 1)
                found.update((k, np.zeros(width, dtype=np.float32)) for k in missing)
            else:
                found.update(self._fetch(missing, materials, model, profile, endpoint, dimensions, role))
        widths = {len(found[k]) for k in unique}
        if len(widths) != 1:
            raise InputError("embeddings cache", model, f"vectors of lengths {sorted(widths)} under one model and "
                             "endpoint: the server's model changed behind its id; use another cache directory "
                             "(MEMEVAL_CACHE_DIR)")
        return np.vstack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _fetch(self, missing: list[str], materials: dict, model: str, profile, endpoint: str,
               dimensions: int | None, role: str) -> dict[str, np.ndarray]:
        client = self.client
        backend = client.backend_for(profile.provider)
        if not getattr(backend, "sends_requests", True) or not hasattr(backend, "embed"):
            where = ("--llm local --embed-model naming your server's model" if profile.provider != "openai"
                     else "OPENAI_API_KEY (or --llm local --embed-model naming your server's model)")
            with client._lock:
                client.stats.failures += 1
            raise CacheMiss(f"replay: no cached embedding for {len(missing)} of the texts ({model}); embedding "
                            f"needs an embeddings model: set {where}")
        texts = [materials[k]["text"] for k in missing]
        got: dict[str, np.ndarray] = {}
        for indices in plan_batches(texts):
            with client._lock:
                if client.budget_usd is not None and client.stats.cost_usd >= client.budget_usd:
                    raise BudgetExceeded(f"budget ${client.budget_usd:.2f} spent (${client.stats.cost_usd:.4f}); "
                                         "no new calls scheduled")
            batch = EmbeddingBatch(model, profile.provider, endpoint, tuple(texts[i] for i in indices), dimensions,
                                   role)
            reply, attempts = client.call(lambda b=batch: self._send(b, backend), batch, where="/v1/embeddings")
            cost = profile.cost_usd(reply.input_tokens, 0)
            with client._lock:
                s = client.stats
                s.cost_usd += cost
                s.input_tokens += reply.input_tokens
                s.first_request_id.setdefault(role, reply.request_id)
                s.log.append({"event": "embeddings", "request_id": reply.request_id, "model": reply.model,
                              "inputs": len(indices), "input_tokens": reply.input_tokens, "cost_usd": cost,
                              "attempts": attempts, "key": batch.key[:12]})
            rows = [(missing[i], materials[missing[i]], reply.vectors[j]) for j, i in enumerate(indices)]
            if client.cache is not None:
                client.cache.put_vectors(rows)
            got.update((key, vector) for key, _, vector in rows)
        return got

    def _send(self, batch: EmbeddingBatch, backend) -> EmbeddingReply:
        client = self.client
        estimate = sum(estimate_tokens(t, batch.model) for t in batch.texts)
        reservation = client.limiter.acquire(limit_pool(batch.provider, batch.model), estimate, 0)
        with client.semaphore, client.sending(batch.model):
            try:
                reply = backend.embed(batch)
            except BaseException as exc:
                client.limiter.settle(reservation, getattr(exc, "headers", None), 0, 0)
                raise
        client.limiter.settle(reservation, reply.rate_headers, reply.input_tokens, 0)
        return reply

    def estimate(self, calls: Sequence[Sequence[str]], dimensions: int | None = None, role: str = EMBED_ROLE
                 ) -> EmbeddingEstimate:
        """Dry run of `calls` (each the texts of one `embed` call, in the order a run makes them): the texts still
        to embed, the requests they go out in (a text embedded by an earlier call is cached by the time a later
        one asks), their tokens and dollars."""
        model, profile, endpoint = self.resolved(role)
        keyed = [[(embedding_key(key_material(profile.provider, model, endpoint, dimensions, t)), t) for t in call]
                 for call in calls]
        unique = {k: t for call in keyed for k, t in call}
        cache = self.client.cache
        cached = cache.get_vectors(list(unique)) if cache is not None else {}
        seen = set(cached)
        todo: list[str] = []
        requests = 0
        for call in keyed:
            fresh = {k: t for k, t in call if k not in seen}
            seen.update(fresh)
            todo += fresh.values()
            requests += len(plan_batches(list(fresh.values()))) if fresh else 0
        tokens = sum(estimate_tokens(t, model) for t in todo)
        most = sum(token_bound(t) for t in todo)
        inputs = sum(len(call) for call in calls)
        return EmbeddingEstimate(
            inputs=inputs, identical=inputs - len(unique), cached=len(cached), to_embed=len(todo), to_send=requests,
            input_tokens_est=tokens, input_tokens_max=most, usd_est=profile.cost_usd(tokens, 0),
            usd_max=profile.cost_usd(most, 0),
            token_count=f"estimate ({estimate_note([model])}); at most the texts' UTF-8 bytes for usd_max",
            model=model, routes=routes_of(self.client, [(profile.provider, model, role)] if requests else []))


def unreadable(batch: EmbeddingBatch, reason: str, request_id: str | None, hint: str) -> APIRejected:
    """A 2xx reply without usable vectors: the same request would get the same reply, so it stops the client."""
    return APIRejected(200, "invalid_response", f"{reason}; {hint}", request_id, batch.model, "", "/v1/embeddings",
                       batch.endpoint)
