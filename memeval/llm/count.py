"""Exact input-token counts for dry runs: the token-counting endpoint under the client's error policy and rate
limiter, cached per prompt hash (so a second dry run sends nothing); only when the client can reach the API, and
only for Anthropic's models (another provider's request is left to the keyless estimate, memeval/llm/tokenizers.py,
and the estimate says which were counted how).

A full LoCoMo dry run counts about 2,000 prompts, so they are counted concurrently: the first alone (a wrong key or
model is refused after one request, as in `LLMClient._send`), then the rest on at most the client's
`max_concurrency` threads, results in request order, each distinct prompt once. Token counting has a
requests-per-minute limit of its own, "separate and independent" from message creation's (Anthropic's token-counting
page, "Pricing and rate limits": 100 RPM at tier 1, 2,000 at tier 2, 4,000 at tier 3, 8,000 at tier 4;
platform.claude.com/docs/en/build-with-claude/token-counting), so each call reserves one request, and no tokens, in
a limiter bucket of its own (COUNT_POOL), which a 429's rate-limit headers teach its size and its `retry-after`
is obeyed by the client's retries.
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.llm.errors import TransientError
from memeval.llm.wire import count_tokens_body

COUNT_POOL = "count_tokens"
# A dry run counts a stage's prompts with a user's server's tokenizer up to this many characters. Measured on this
# 2-core machine (2026-12-06, SmolLM2 on memeval's launcher): one 35k-character prompt in 30 ms (load 1.9); the
# prototype's dry run over rag_turns, full_context and mem0 (548 prompts, 4.6 M tokens counted, Mem0's 428
# extraction prompts the largest stage) in 37 s at load 6, against 9.5 s estimated at load 1. A larger stage
# (Mem0's extraction or full_context's reader prompts over all of LoCoMo) is estimated.
COUNT_BUDGET_CHARS = 24_000_000


def count_key(request) -> str:
    from memeval.llm.types import material_key

    return material_key({"api_version": request.api_version, "body": count_tokens_body(request)})


class TokenCounter:
    """Resolved-request → input tokens by the endpoint (None for a request of another provider). `count_all` is
    what `LLMClient.estimate` calls; calling the counter on one request counts that one."""

    def __init__(self, client):
        self.client = client
        self.backend = client.backend

    def __call__(self, request) -> int | None:
        return self.count_all([request])[0]

    def count_all(self, requests: Sequence) -> list[int | None]:
        resolved = [self.client.resolve(r) for r in requests]
        keys = [count_key(r) if r.provider == "anthropic" else None for r in resolved]
        known: dict[str, int] = {}
        todo: dict[str, object] = {}
        cache = self.client.cache
        for key, request in zip(keys, resolved, strict=True):
            if key is None or key in known or key in todo:
                continue
            hit = None if cache is None else cache.get_count(key)
            if hit is not None:
                known[key] = hit
            else:
                todo[key] = request
        pending = list(todo.items())
        if pending:
            known[pending[0][0]] = self._count(*pending[0])
            rest = pending[1:]
            if rest:
                with self.client.pool(min(self.client.max_concurrency, len(rest))) as pool:
                    for (key, _), tokens in zip(rest, pool.map(lambda item: self._count(*item), rest), strict=True):
                        known[key] = tokens
        return [None if key is None else known[key] for key in keys]

    def _count(self, key: str, request) -> int:
        tokens, _ = self.client.call(lambda: self._send(request), request, "count_tokens")
        if self.client.cache is not None:
            self.client.cache.put_count(key, tokens)
        return tokens

    def _send(self, request) -> int:
        limiter = self.client.limiter
        reservation = limiter.acquire((request.provider, COUNT_POOL), 0, 0)
        try:
            tokens = self.backend.count_tokens(request)
        except TransientError as exc:  # a 429 carries the counting limit's headers
            limiter.settle(reservation, exc.headers, 0, 0)
            raise
        except BaseException:
            limiter.settle(reservation, None, 0, 0)
            raise
        limiter.settle(reservation, None, 0, 0)
        return tokens


class ServerCounter:
    """Resolved-request → input tokens by the tokenizer of the user's server it goes to (memeval/llm/fit.py:
    llama.cpp's /apply-template and /tokenize, vLLM's /tokenize), one prompt at a time (llama-cpp-python's server
    tokenizes one request at a time); None for another request, a server without a tokenizer, or every request of
    a stage whose prompts hold more than COUNT_BUDGET_CHARS characters, which are estimated and `token_count` says
    why."""

    def __init__(self, client):
        self.client = client
        self.skipped: tuple[int, int] | None = None  # (prompts, characters) of the last stage left to the estimate
        self.unreachable: str | None = None  # the last stage's server could not be reached: which, and why

    def __call__(self, request) -> int | None:
        return self.count_all([request])[0]

    def count_all(self, requests: Sequence) -> list[int | None]:
        fit = self.client.fit
        resolved = [self.client.resolve(r) for r in requests]
        mine = [r for r in resolved if fit.applies(r)]
        chars = sum(r.prompt_chars for r in mine)
        self.skipped = (len(mine), chars) if chars > COUNT_BUDGET_CHARS else None
        self.unreachable = None
        if self.skipped:
            return [None] * len(resolved)
        counts = [fit.server_tokens(r) for r in resolved]
        self.unreachable = next(filter(None, (fit.unreachable_line(r) for r in mine)), None)
        return counts

    def token_count(self, misses: int, counts: Sequence[int | None], keyless: list[str]) -> str:
        """How a stage's input tokens were counted, as `CostEstimate.token_count` says it."""
        from memeval.llm.tokenizers import estimate_note

        estimated = f"estimate ({estimate_note(keyless)})"
        if self.skipped:
            prompts, chars = self.skipped
            return (f"{estimated}: {prompts:,} prompts of {chars:,} characters, more than a dry run counts with the "
                    f"server's tokenizer ({COUNT_BUDGET_CHARS:,} characters)")
        counted = misses - len(keyless)
        if not keyless:
            return "exact (the server's tokenizer)" if misses else "exact"
        if not counted:
            return f"{estimated}: {self.unreachable or 'the server offers no tokenizer memeval reads'}"
        return f"exact (the server's tokenizer) for {counted:,} of {misses:,} calls; {estimated} for the rest"


def token_counter(client) -> TokenCounter | ServerCounter | None:
    """The client's counter: the token-counting endpoint's (a key), else a user's server's tokenizer where a role's
    requests go to one (memeval/llm/fit.py), else None."""
    if hasattr(client.backend, "count_tokens"):
        return TokenCounter(client)
    fit = getattr(client, "fit", None)
    if fit is not None and any(fit.checks_role(role) for role in client.models):
        return ServerCounter(client)
    return None
