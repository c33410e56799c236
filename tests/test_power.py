"""memeval.scoring.power against computations written out here: the clustered SE and MDE by hand, Wilson's interval
against its published values, the within-noise verdict both ways, answer length in words."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from memeval.scoring.power import (
    NO_DIFFERENCE,
    REAL,
    WITHIN_NOISE,
    Power,
    clustered_se,
    mean_power,
    mean_words,
    minimum_detectable,
    paired_power,
    paired_rows,
    small_category,
    wilson,
    within_noise,
)

# seven paired differences (a − b) in three conversations
DIFFS = [10.0, 0.0, 20.0, -10.0, 5.0, 15.0, 30.0]
CONVS = ["c1", "c1", "c1", "c2", "c2", "c3", "c3"]


def test_clustered_se_and_mde_match_the_hand_computation():
    mean = 70 / 7  # = 10
    # centred cluster sums: c1 (0 − 10 + 10) = 0; c2 (−20 − 5) = −25; c3 (5 + 20) = 25
    variance = 3 / 2 * (0 ** 2 + 25 ** 2 + 25 ** 2) / 7 ** 2  # G/(G−1) · Σ S_g² / n²
    se = math.sqrt(variance)  # 6.1859...
    got_mean, got_se, n, g = clustered_se(DIFFS, CONVS)
    assert (got_mean, n, g) == (mean, 7, 3)
    assert got_se == pytest.approx(se, rel=1e-12)
    pair = paired_power(DIFFS, CONVS)
    assert pair.mde == pytest.approx((1.959963984540054 + 0.8416212335729143) * se, rel=1e-12)
    assert pair.mde == pytest.approx(17.3303, abs=1e-4)
    # the clustered SE is not the i.i.d. one: same values, one conversation per question, give another number
    iid = paired_power(DIFFS, [str(i) for i in range(7)])
    assert iid.se != pytest.approx(se, rel=1e-3)


def test_one_system_mean_uses_the_same_formula_on_the_scores():
    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    convs = ["a", "a", "b", "b", "c", "c"]
    # mean 0.5; centred sums a 0, b 1, c −1 → SE² = 3/2 · 2 / 36
    one = mean_power(scores, convs)
    assert one.estimate == 0.5 and one.se == pytest.approx(math.sqrt(3 / 2 * 2 / 36), rel=1e-12)
    assert minimum_detectable(one.se) == pytest.approx(one.mde)


def test_one_conversation_has_no_clustered_se():
    p = paired_power([1.0, 2.0], ["x", "x"])
    assert not p.defined and math.isnan(p.se) and p.verdict == "n/a (1 conversation)"
    assert paired_power([], []).verdict == "no questions in common"


def test_within_noise_both_ways():
    se = 2.0  # z · SE = 3.92
    assert within_noise(Power(3.9, se, 5.6, 100, 10)) and Power(3.9, se, 5.6, 100, 10).verdict == WITHIN_NOISE
    assert not within_noise(Power(-3.95, se, 5.6, 100, 10)) and Power(-3.95, se, 5.6, 100, 10).verdict == REAL
    assert paired_power(DIFFS, CONVS).verdict == WITHIN_NOISE  # 10 < 1.96 · 6.186 = 12.12
    shifted = [d + 3 for d in DIFFS]  # mean 13 > 12.12, same SE (the centred sums do not move)
    assert paired_power(shifted, CONVS).verdict == REAL



def test_paired_rows_pair_by_sample_id_and_skip_unscored():
    def row(sample, conversation, f1):
        return SimpleNamespace(sample_id=sample, conversation_id=conversation, f1=f1)

    a = [row("c1:q1", "c1", 0.5), row("c1:q2", "c1", 1.0), row("c2:q1", "c2", 0.0), row("c3:q1", "c3", None)]
    b = [row("c2:q1", "c2", 0.25), row("c1:q1", "c1", 0.25), row("c1:q2", "c1", None), row("c3:q1", "c3", 1.0)]
    p = paired_rows(a, b, lambda r: r.f1)
    assert p.n == 2 and p.clusters == 2 and p.estimate == pytest.approx((0.25 - 0.25) / 2)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (8, 10, 0.490, 0.943),  # Wilson (1927); the usual textbook example
    (0, 10, 0.000, 0.278),
    (10, 10, 0.722, 1.000),
    (50, 100, 0.404, 0.596),
])
def test_wilson_known_values(k, n, low, high):
    got = wilson(k, n)
    assert got[0] == pytest.approx(low, abs=5e-4) and got[1] == pytest.approx(high, abs=5e-4)


def test_small_category_rule():
    assert small_category(96, 0.5) and small_category(1000, 0.001) and small_category(1000, 0.999)
    assert not small_category(100, 0.5)


def test_mean_words():
    assert mean_words(["two words", "  one  ", "three little  words", None]) == pytest.approx(6 / 4)
    assert math.isnan(mean_words([]))


def test_identical_scores_are_no_difference_not_real():
    p = paired_power([0.0, 0.0, 0.0], ["a", "b", "c"])
    assert p.se == 0 and p.verdict == NO_DIFFERENCE
    assert paired_power([2.0, 2.0, 2.0], ["a", "b", "c"]).verdict == REAL  # the same shift everywhere is real


def test_one_conversation_falls_back_to_item_level_and_says_so():
    rows_a = [SimpleNamespace(sample_id=f"x:q{i}", conversation_id="x", f1=v) for i, v in enumerate([1, 1, 1, 0])]
    rows_b = [SimpleNamespace(sample_id=f"x:q{i}", conversation_id="x", f1=0) for i in range(4)]
    assert not paired_rows(rows_a, rows_b, lambda r: r.f1).defined
    p = paired_rows(rows_a, rows_b, lambda r: r.f1, fallback=True)
    # item level: four clusters of one; centred values .25,.25,.25,−.75 → SE² = 4/3 · 0.75 / 16
    assert p.unit == "questions" and p.se == pytest.approx(math.sqrt(4 / 3 * 0.75 / 16), rel=1e-12)
    assert p.verdict.endswith("(item level)")
