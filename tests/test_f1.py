import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.scoring.f1 import (
    bleu1,
    locomo_f1,
    locomo_token_f1,
    mem0_f1,
    normalize_locomo,
    normalize_seed,
    score_f1,
    token_f1,
)


@pytest.mark.parametrize(
    "pred, gold, expected",
    [
        ("Paris", "Paris", 1.0),
        ("the big cat sat", "the cat sat", 0.8),
        ("dog", "cat", 0.0),
        ("The Cat!", "the cat", 1.0),
        ("a big dog", "big dog", 1.0),
        ("", "something", 0.0),
        ("", "", 1.0),
        ("the the the", "the", 1.0),  # both normalise to empty
        ("cat cat cat", "cat", 0.5),  # multiset: P = 1/3, R = 1
        ("cat", "cat cat cat", 0.5),
        ("bread and butter", "bread butter", 0.8),  # seed mode keeps "and"
        ("the-end", "end", 1.0),  # articles go before punctuation in seed mode
    ],
)
def test_seed_f1_cases(pred, gold, expected):
    assert token_f1(pred, gold) == pytest.approx(expected, abs=1e-12)


def test_seed_stemming_partial():
    value = token_f1("running quickly", "runs quick")
    assert 0 < value < 1
    assert value == pytest.approx(0.5)


@pytest.mark.parametrize(
    "pred, gold, category, expected",
    [
        ("Paris, London", "London and Paris", 2, 1.0),  # commas and "and" removed
        ("bread and butter", "bread butter", 4, 1.0),
        ("", "", 2, 0.0),  # official: nothing shared is 0, even when both are empty
        ("", "7 May 2023", 2, 0.0),
        ("2022", 2022, 2, 1.0),  # integer answers are stringified
        ("yes", "Likely yes; she mentioned it", 3, 2 / 3),  # category 3 keeps the text before ';'
        ("hiking, painting", "painting, hiking, swimming", 1, 2 / 3),
        ("painting hiking", "painting, hiking", 1, 2 / 3),  # each gold part: F1 vs the whole prediction
        ("", "painting, hiking", 1, 0.0),
        ("Not mentioned in the conversation", None, 5, 1.0),
        ("There is no information available.", "No", 5, 1.0),
        ("No", "No", 5, 0.0),  # category 5 scores abstention only, never the stored answer
        ("1,000 people", "1000 people", 4, 1.0),
        ("the-end", "end", 4, 0.0),  # punctuation goes first, so "theend" is one token
        ("mother-in-law", "mother in law", 4, 0.0),
        ("don't know", "dont know", 4, 1.0),
        ("Caroline\u2019s", "Carolines", 4, 0.0),  # only ASCII punctuation is stripped
        ("cats and dogs", "the cat", 4, 2 / 3),
    ],
)
def test_locomo_official_rules(pred, gold, category, expected):
    assert locomo_f1(pred, gold, category) == pytest.approx(expected, abs=1e-12)


def test_locomo_normalisation_order():
    assert normalize_locomo("The Cat, and THE dog.") == "cat dog"
    assert normalize_seed("The Cat, and THE dog.") == "cat and dog"


def test_locomo_multi_answer_uses_mean_of_best():
    # gold parts: "new york" (best 1.0 vs "New York") and "boston" (best 0.0)
    assert locomo_f1("New York, Chicago", "New York, Boston", 1) == pytest.approx(0.5)


def test_locomo_unknown_category():
    with pytest.raises(ValueError):
        locomo_f1("x", "x", 9)


@pytest.mark.parametrize(
    "pred, gold, expected",
    [
        ("the cats", "a cat", 0.0),  # no stemming, no article removal
        ("The cat.", "the cat", 1.0),
        ("cat cat dog", "cat dog", 1.0),  # sets: duplicates ignored
        ("", "cat", 0.0),
        ("cat", "", 0.0),
        ("red car", "red bike", 0.5),
    ],
)
def test_mem0_f1(pred, gold, expected):
    assert mem0_f1(pred, gold) == pytest.approx(expected)


def test_mem0_mode_skips_category_5():
    assert score_f1("not mentioned", None, 5, "mem0") is None
    assert score_f1("red car", "red bike", 4, "mem0") == pytest.approx(0.5)


def test_bleu1_brevity_penalty_and_exact():
    assert bleu1("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    assert bleu1("the cat sat", "the cat sat on the mat") == pytest.approx(math.exp(1 - 6 / 3))
    assert bleu1("", "cat") == 0.0
    assert bleu1("dog", "cat") < 0.01


words = st.text(alphabet="abcdefghij ,.!-'", max_size=30)


@given(words, words)
def test_seed_symmetric_and_bounded(a, b):
    assert token_f1(a, b) == pytest.approx(token_f1(b, a))
    assert 0.0 <= token_f1(a, b) <= 1.0


@given(words, words)
def test_locomo_bounded_and_symmetric_plain(a, b):
    assert 0.0 <= locomo_token_f1(a, b) <= 1.0
    assert locomo_token_f1(a, b) == pytest.approx(locomo_token_f1(b, a))


@given(words)
def test_normalisation_idempotent(a):
    assert normalize_seed(normalize_seed(a)) == normalize_seed(a)
    assert normalize_locomo(normalize_locomo(a)) == normalize_locomo(a)


@given(words)
def test_self_match(a):
    assert token_f1(a, a) == 1.0
    expected = 1.0 if normalize_locomo(a) else 0.0
    assert locomo_token_f1(a, a) == expected
