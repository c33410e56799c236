"""Keyless token estimates: 4 characters a token, times the model's tokenizer ratio where Anthropic documents that a
newer tokenizer cuts the same text into more tokens, so a dry run without a key does not under-price those models
by a third, and the rate limiter reserves what the request will really count.

Sources (read 2026-12-04, through the search index: Anthropic's own migration-guide page came back as its
navigation only, so its words are quoted from pages that reproduce them):
- Opus 4.7 and later Opus models: the new tokenizer "may use roughly 1x to 1.35x as many tokens when processing
  text compared to previous models (up to ~35% more, varying by content)" (the Opus 4.7 migration guide,
  "Updated token counting", and the release notes, as quoted by developersdigest.tech/blog/claude-tokenizer-
  change-cost-impact and sol.ava.dev/writings/2026-04-17-opus-4-7-tokenizer.html); the pricing page: "Opus 4.7 and
  later use a new tokenizer ... may use up to 35% more tokens for the same fixed text" (same developersdigest
  page). The top of the range is taken: a budget estimate should not come in low, and counts through the
  token-counting endpoint put real English and code at 1.3-1.47x (claudecodecamp.com, "I measured Claude 4.7's
  new tokenizer"; sol.ava.dev above: English prose 1.45x).
- Sonnet 5: "a new tokenizer that produces roughly 30% more tokens for the same text" (docs.oxen.ai's
  claude-sonnet-5 model page); Anthropic's token-counting page lists Opus 4.7 and later Opus models and Sonnet 5
  as using "a newer tokenizer", "approximately 30 percent more tokens than on earlier models"
  (platform.claude.com/docs/en/build-with-claude/token-counting). Sonnet 5.5 is taken to keep Sonnet 5's
  tokenizer: no page read names its ratio.
Models absent here (Opus 4.6, Sonnet 4.6, Haiku 4.5, OpenAI's, a local server's) count 1.0. With a key the
token-counting endpoint gives exact counts and none of this is used (memeval/llm/count.py).
"""

from __future__ import annotations

from collections.abc import Iterable

CHARS_PER_TOKEN = 4

TOKENIZER_RATIOS: dict[str, float] = {
    "claude-opus-4-7": 1.35,
    "claude-opus-5-5": 1.35,
    "claude-sonnet-5-5": 1.30,
}


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
