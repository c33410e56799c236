"""Token-overlap scorers: this project's `seed` F1, the official LoCoMo F1, Mem0's F1 and BLEU-1.

`locomo_f1` follows the official LoCoMo `task_eval/evaluation.py` step by step
(commas removed before anything else, "and" treated as an article, the `regex`
module's word boundaries, integer 0 when nothing is shared), so its numbers are
comparable with the LoCoMo paper's.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

import numpy as np
import regex

_PUNCTUATION = frozenset(string.punctuation)
_SEED_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SEED_NON_ALNUM = regex.compile(r"[^\p{L}\p{N}\s]")
_LOCOMO_ARTICLES = regex.compile(r"\b(a|an|the|and)\b")
_ABSTAIN_PHRASES = ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _porter():
    """nltk's Porter stemmer, loaded on the first stem: importing nltk costs seconds (it pulls in scipy)."""
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    return _porter().stem(token)


def _multiset_f1(pred: list[str], gold: list[str]) -> float:
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- seed mode -------------------------------------------------------------------------------------------
def normalize_seed(text: str) -> str:
    text = str(text).lower()
    text = _SEED_ARTICLES.sub(" ", text)
    text = _SEED_NON_ALNUM.sub("", text)
    return " ".join(text.split())


def token_f1(prediction: str, ground_truth: str) -> float:
    """Seed-mode F1: both sides empty after normalisation is a perfect match."""
    pred = [stem(t) for t in normalize_seed(prediction).split()]
    gold = [stem(t) for t in normalize_seed(ground_truth).split()]
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    return _multiset_f1(pred, gold)


# --- locomo mode (official) ------------------------------------------------------------------------------
def normalize_locomo(text: str) -> str:
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _LOCOMO_ARTICLES.sub(" ", text)
    return " ".join(text.split())


def locomo_token_f1(prediction: str, ground_truth: str) -> float:
    pred = [stem(t) for t in normalize_locomo(prediction).split()]
    gold = [stem(t) for t in normalize_locomo(ground_truth).split()]
    return _multiset_f1(pred, gold)


def locomo_multi_answer_f1(prediction: str, ground_truth: str) -> float:
    """Category 1: mean over comma-separated gold parts of the best F1 against any prediction part."""
    predictions = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in ground_truth.split(",")]
    return float(np.mean([max(locomo_token_f1(p, g) for p in predictions) for g in golds]))


def locomo_f1(prediction: str, answer: object, category: int) -> float:
    """The official per-category LoCoMo score (category 5: abstention phrase present)."""
    prediction = "" if prediction is None else str(prediction)
    if category == 5:
        lowered = prediction.lower()
        return 1.0 if any(phrase in lowered for phrase in _ABSTAIN_PHRASES) else 0.0
    gold = "" if answer is None else str(answer)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return locomo_token_f1(prediction, gold)
    if category == 1:
        return locomo_multi_answer_f1(prediction, gold)
    raise ValueError(f"unknown LoCoMo category {category!r}")


# --- mem0 mode -------------------------------------------------------------------------------------------
def _mem0_tokens(text: str) -> set[str]:
    for ch in ".,!?":
        text = text.replace(ch, " ")
    return set(text.lower().split())


def mem0_f1(prediction: str, ground_truth: object) -> float:
    """Set-based F1 as the Mem0 paper computes it: no stemming, no article removal."""
    if not prediction or not ground_truth:  # Mem0's guard: either side falsy (an answer of 0 included)
        return 0.0
    pred = _mem0_tokens(str(prediction).strip())
    gold = _mem0_tokens(str(ground_truth).strip())
    if not pred or not gold:
        return 0.0
    common = len(pred & gold)
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- BLEU-1 ----------------------------------------------------------------------------------------------
PUNKT_RESOURCE = "tokenizers/punkt_tab/english/"
B1_EXACT = "Mem0-exact"
B1_APPROXIMATE = "approximate (no Punkt tables)"


@lru_cache(maxsize=1)
def _word_tokenizer():
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=1)
def _untrained_punkt():
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


@lru_cache(maxsize=1)
def punkt_tables_present() -> bool:
    """English Punkt tables findable by nltk (NLTK_DATA, ~/nltk_data, or `memeval data fetch nltk`)."""
    import nltk

    from memeval.data.paths import project_root

    fetched = str(project_root() / "data" / "nltk")
    if fetched not in nltk.data.path:
        nltk.data.path.append(fetched)
    try:
        nltk.data.find(PUNKT_RESOURCE)
        return True
    except LookupError:
        return False


def bleu1_mode() -> str:
    return B1_EXACT if punkt_tables_present() else B1_APPROXIMATE


def mem0_words(text: str) -> list[str]:
    """nltk.word_tokenize as Mem0's harness calls it (Punkt sentences, then the Treebank-style tokenizer on each)
    when the English tables are present; otherwise the same two steps with an untrained Punkt model, which lacks
    the English abbreviation and sentence-starter lists (so 'dr. smith' splits where English Punkt would not)."""
    if punkt_tables_present():
        import nltk

        return nltk.word_tokenize(text)
    tokenizer = _word_tokenizer()
    return [token for sentence in _untrained_punkt().tokenize(text) for token in tokenizer.tokenize(sentence)]


def bleu1(prediction: str, ground_truth: object) -> float:
    """BLEU-1 as Mem0's evaluation computes it (metrics/utils.py, calculate_metrics → calculate_bleu_scores): 0
    when either side is falsy, both sides str()-stripped and lower-cased, word_tokenize, one reference, weights
    (1, 0, 0, 0), smoothing method1, 0 where nltk raises. Exact only with the English Punkt tables
    (`bleu1_mode()` says which); tables show the mode wherever B1 appears."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if not prediction or not ground_truth:
        return 0.0
    pred = mem0_words(str(prediction).strip().lower())
    gold = mem0_words(str(ground_truth).strip().lower())
    try:
        return float(sentence_bleu([gold], pred, weights=(1, 0, 0, 0),
                                   smoothing_function=SmoothingFunction().method1))
    except Exception:  # noqa: BLE001 — Mem0's harness scores any nltk failure as 0.0
        return 0.0


def score_f1(prediction: str, answer: object, category: int, mode: str = "locomo") -> float | None:
    """One entry point for tables: returns None where a mode does not score a category."""
    if mode == "locomo":
        return locomo_f1(prediction, answer, category)
    if mode == "seed":
        return token_f1(prediction or "", "" if answer is None else str(answer))
    if mode == "mem0":
        return None if category == 5 else mem0_f1(prediction, answer)
    raise ValueError(f"unknown F1 mode {mode!r} (locomo, seed or mem0)")
