"""One client layer for every model call: request records, an on-disk cache, backends, retries, budgets."""

from memeval.llm.cache import ResponseCache
from memeval.llm.client import (
    AnthropicBackend,
    BudgetExceeded,
    CacheMiss,
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    ReplayBackend,
    ScriptedBackend,
    TransientError,
)

__all__ = [
    "AnthropicBackend", "BudgetExceeded", "CacheMiss", "LLMClient", "LLMError", "LLMRequest", "LLMResponse",
    "ReplayBackend", "ResponseCache", "ScriptedBackend", "TransientError",
]
