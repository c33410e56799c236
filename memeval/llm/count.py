"""Exact input-token counts for dry runs: the token-counting endpoint under the client's error policy, cached
per prompt hash (so a second dry run sends nothing); only when the client can reach the API. Without a key the
estimate stays at 4 characters a token and says so."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from memeval.llm.wire import count_tokens_body


def count_key(request) -> str:
    blob = json.dumps({"api_version": request.api_version, "body": count_tokens_body(request)}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def token_counter(client) -> Callable | None:
    """A function resolved-request → input tokens, or None when the backend cannot count (no key)."""
    backend = client.backend
    if not hasattr(backend, "count_tokens"):
        return None

    def count(request) -> int:
        request = client.resolve(request)
        key = count_key(request)
        hit = None if client.cache is None else client.cache.get_count(key)
        if hit is not None:
            return hit
        tokens, _ = client.call(lambda: backend.count_tokens(request), request, "count_tokens")
        if client.cache is not None:
            client.cache.put_count(key, tokens)
        return tokens

    return count
