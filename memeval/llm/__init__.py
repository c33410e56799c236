"""One client layer for every model call: request records, model profiles, an on-disk cache, backends,
retries, budgets."""

from memeval.llm.cache import ResponseCache
from memeval.llm.client import (
    AnthropicBackend,
    LLMClient,
    LLMRequest,
    LLMResponse,
    ReplayBackend,
)
from memeval.llm.errors import APIRejected, BudgetExceeded, CacheMiss, LLMError, TransientError

__all__ = [
    "APIRejected", "AnthropicBackend", "BudgetExceeded", "CacheMiss", "LLMClient", "LLMError", "LLMRequest",
    "LLMResponse", "ReplayBackend", "ResponseCache", "TransientError",
]
