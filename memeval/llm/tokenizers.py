"""Keyless token estimates: 4 characters a token, times the model's tokenizer ratio where Anthropic documents that a
newer tokenizer cuts the same text into more tokens, so a dry run without a key does not under-price those models
by a third, and the rate limiter reserves what the request will really count. The ratios are model facts and live
with the profiles, with their sources (memeval/llm/profiles.py `TOKENIZER_RATIOS`); models absent there count 1.0.
With a key the token-counting endpoint gives exact counts and none of this is used (memeval/llm/count.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from memeval.llm.profiles import TOKENIZER_RATIOS

CHARS_PER_TOKEN = 4


def tokenizer_ratio(model: str | None) -> float:
    return TOKENIZER_RATIOS.get(model or "", 1.0)


def estimate_tokens(text: str, model: str | None = None) -> int:
    """A rough token count: 4 characters a token, times `model`'s tokenizer ratio (1.0 when unknown or None).
    Integer arithmetic, so a ratio of 1.0 gives exactly `len(text) // 4`."""
    percent = round(tokenizer_ratio(model) * 100)
    return max(1, len(text) * percent // (CHARS_PER_TOKEN * 100))


def estimate_note(models: Iterable[str]) -> str:
    """How a keyless estimate of requests to `models` was made: "4 characters a token", plus each ratio applied
    ("times 1.35 for claude-opus-4-7's tokenizer"), in words: dry runs print JSON, which escapes a "×"."""
    ratios = [f"times {tokenizer_ratio(m):g} for {m}'s tokenizer" for m in sorted(set(models))
              if tokenizer_ratio(m) != 1.0]
    return f"{CHARS_PER_TOKEN} characters a token" + (", " + ", ".join(ratios) if ratios else "")
