"""Rule adjudication of coverage for LoCoMo natural packages (pure; versioned by RULE_VERSION).

Content tokens: lower-cased alphanumeric words, scikit-learn's English stop words removed, Porter-stemmed.
Lexical support of a candidate for an evidence turn's answer unit:
- the answer is *literally in the turn* when the gold answer and the turn share a content token; then support
  is the share of the gold answer's content tokens found in the candidate;
- otherwise support is the share of the turn's content tokens the candidate keeps;
- rounded down to a quarter (0, 0.25, 0.5, 0.75, 1).
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from memeval.scoring.f1 import stem

RULE_VERSION = "locomo-natural-rules/1"
SUMMARY_MIN_SIMILARITY = 0.2  # cosine of content-token sets between a turn and its best summary sentence
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def content_tokens(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(str(text).lower()) if w not in ENGLISH_STOP_WORDS)


def quarter_floor(value: float) -> float:
    return math.floor(value * 4 + 1e-9) / 4


def lexical_support(gold: frozenset[str], turn: frozenset[str], candidate: frozenset[str]) -> float:
    if gold and gold & turn:
        return quarter_floor(len(gold & candidate) / len(gold))
    if turn:
        return quarter_floor(len(turn & candidate) / len(turn))
    return 0.0


def set_cosine(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0


def summary_sentences(summary: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(summary or "") if s.strip()]


def best_summary_sentence(turn_text: str, sentences: list[str]) -> str | None:
    """The most similar sentence (ties to the earlier), only if it passes SUMMARY_MIN_SIMILARITY."""
    turn = content_tokens(turn_text)
    best, best_score = None, 0.0
    for sentence in sentences:
        score = set_cosine(turn, content_tokens(sentence))
        if score > best_score + 1e-12:
            best, best_score = sentence, score
    return best if best_score >= SUMMARY_MIN_SIMILARITY else None


_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]


def states_date(text: str, date: datetime | None) -> bool:
    """The text names the day, the month (full or three-letter) and the year of `date`."""
    if date is None:
        return False
    words = set(_WORD.findall(text.lower()))
    month = _MONTHS[date.month - 1]
    return str(date.day) in words and str(date.year) in words and (month in words or month[:3] in words)


def word_cost(text: str) -> float:
    """The paper's default: whitespace word count (at least 1)."""
    return float(max(1, len(text.split())))


def byte_overhead_cost(text: str) -> float:
    """The sensitivity alternative: c(u) = 8 + ceil(bytes(u) / 24)."""
    return float(8 + math.ceil(len(text.encode("utf-8")) / 24))


COST_RULES = {"words": word_cost, "bytes": byte_overhead_cost}
