"""Where an OpenAI-compatible provider's requests go: the base URL as given (for the SDK) and as recorded (without
credentials). A module of its own, below the backend, so the server probe (`fit`) and the dry run's routes read
the same URL without importing the backend."""

from __future__ import annotations

import os

from memeval.llm.types import public_url

OPENAI_BASE_URL = "https://api.openai.com/v1"


def base_url_for(provider: str) -> str:
    """The base URL requests of `provider` go to, as given (it may carry credentials: only the SDK sees it)."""
    url = os.environ.get("OPENAI_BASE_URL", "").strip().rstrip("/")
    if provider == "local":
        return url
    return url or OPENAI_BASE_URL


def endpoint_for(provider: str) -> str:
    """The base URL of `provider` as the cache key, the run identity and the manifest record it: without
    credentials (memeval.llm.types.public_url)."""
    url = base_url_for(provider)
    return public_url(url) if url else url
