"""One client layer for every model call: request records, model profiles, an on-disk cache, backends,
retries, budgets. Names load on first use, so `memeval.llm.profiles` does not import the SDK."""

from importlib import import_module

_WHERE = {
    "ResponseCache": "memeval.llm.cache",
    "AnthropicBackend": "memeval.llm.client", "LLMClient": "memeval.llm.client", "LLMRequest": "memeval.llm.types",
    "LLMResponse": "memeval.llm.types", "ReplayBackend": "memeval.llm.client",
    "APIRejected": "memeval.llm.errors", "BudgetExceeded": "memeval.llm.errors", "CacheMiss": "memeval.llm.errors",
    "LLMError": "memeval.llm.errors", "TransientError": "memeval.llm.errors",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'memeval.llm' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)
