import math
from operator import attrgetter

import numpy as np
import pytest

from memeval.scoring.aggregate import (
    bootstrap_mean,
    by_category,
    cluster_bootstrap,
    judge_by_category,
    overall_mean,
    paired_difference,
    pool_judgments,
    run_statistics,
)
from tests.rows import answer, judgment

ROWS = [
    answer("conv-1:q0000", category=4, f1=0.8),
    answer("conv-1:q0001", category=4, f1=0.6),
    answer("conv-1:q0002", category=4, f1=1.0),
    answer("conv-1:q0003", category=1, f1=0.5),
    answer("conv-1:q0004", category=1, f1=0.7),
]


def test_category_means_and_overall():
    stats = by_category(ROWS)
    assert stats[4].mean == pytest.approx(0.8) and stats[4].count == 3
    assert stats[1].mean == pytest.approx(0.6) and stats[1].count == 2
    assert (stats[4].min, stats[4].max) == (0.6, 1.0)
    assert overall_mean(ROWS) == pytest.approx(0.72)  # over questions, not the 0.7 mean of category means


def test_aggregates_read_the_score_a_getter_gives():
    """A score chosen at run time is a getter: here J's `mean`, and a score computed from the row."""
    rows = [answer("conv-1:q0000", category=4, f1=0.8, evidence_recall=0.5),
            answer("conv-1:q0001", category=4, f1=0.6, evidence_recall=None),
            answer("conv-1:q0002", category=1, f1=None, evidence_recall=1.0)]
    recall = by_category(rows, attrgetter("evidence_recall"))
    assert (recall[4].mean, recall[4].count, recall[1].mean) == (0.5, 1, 1.0)
    assert overall_mean(rows, lambda r: None if r.f1 is None else 1 - r.f1) == pytest.approx(0.3)
    assert math.isnan(overall_mean(rows, lambda r: None))


def test_judge_run_statistics_edges():
    """The judge pass's own numbers are tested through judge_pass (test_judge.py); here the edges it never
    reaches with a working judge: the warning threshold, a single run, and no usable run at all."""
    assert run_statistics([60, 70, 80, 90, 100])["warning"] is None
    assert "4 of 5" in run_statistics([60, 70, 80, 90, -1])["warning"]
    one = run_statistics([100.0], min_successes=1)
    assert (one["mean"], one["std"], one["run_count"], one["warning"]) == (100.0, 0.0, 1, None)
    none = run_statistics([-1, -1], min_successes=1)
    assert (none["mean"], none["std"], none["run_count"]) == (None, None, 0) and "0 of 2" in none["warning"]


def test_pooled_std_is_root_mean_variance():
    rows = [judgment("conv-1:q0000", category=1, mean=60.0, std=3.0),
            judgment("conv-1:q0001", category=1, mean=80.0, std=4.0),
            judgment("conv-1:q0002", category=2, mean=50.0, std=0.0),
            judgment("conv-1:q0003", category=2, mean=None, std=None)]  # no usable run: not pooled
    pooled = pool_judgments(rows)
    assert pooled.mean == pytest.approx(190 / 3)
    assert pooled.pooled_std == pytest.approx(math.sqrt((9 + 16 + 0) / 3))
    per_cat, overall = judge_by_category(rows)
    assert per_cat[1].pooled_std == pytest.approx(math.sqrt(12.5)) and overall.count == 3


def test_cluster_bootstrap_resamples_whole_clusters():
    # two clusters with constant values: every resample mean lies between them, and single-cluster
    # resamples hit the extremes, so the interval spans (nearly) the whole range
    values = [0.0] * 5 + [1.0] * 5
    clusters = ["a"] * 5 + ["b"] * 5
    interval = cluster_bootstrap(values, clusters, n_boot=4000, seed=1)
    assert interval.estimate == pytest.approx(0.5)
    assert interval.low == 0.0 and interval.high == 1.0 and interval.clusters == 2
    # identical clusters: no between-cluster variance, a zero-width interval
    same = cluster_bootstrap([0.2, 0.8] * 4, ["a", "a", "b", "b", "c", "c", "d", "d"], n_boot=500)
    assert same.low == pytest.approx(0.5) and same.high == pytest.approx(0.5)


def test_cluster_bootstrap_is_seeded():
    rng = np.random.default_rng(0)
    values = rng.random(100)
    clusters = [f"c{i % 7}" for i in range(100)]
    assert cluster_bootstrap(values, clusters, seed=3) == cluster_bootstrap(values, clusters, seed=3)


def test_paired_difference_on_shared_questions():
    a = [answer(f"conv-1:q{i}", f1=1.0) for i in range(4)] + [answer("conv-2:q0", f1=0.5)]
    b = [answer(f"conv-1:q{i}", f1=0.5) for i in range(4)]
    diff = paired_difference(a, b, system_a="x", system_b="y")
    assert diff.n == 4 and diff.mean_difference == pytest.approx(0.5)
    assert (diff.a_better, diff.b_better, diff.ties) == (4, 0, 0)
    judged_a = [judgment(f"conv-1:q{i}", mean=100.0) for i in range(3)] + [judgment("conv-1:q3", mean=None)]
    judged_b = [judgment(f"conv-1:q{i}", mean=50.0 * i) for i in range(4)]
    on_mean = paired_difference(judged_a, judged_b, attrgetter("mean"))
    assert (on_mean.n, on_mean.a_better, on_mean.b_better, on_mean.ties) == (3, 2, 0, 1)
    assert on_mean.mean_difference == pytest.approx(50.0)


@pytest.mark.parametrize("n", [1, 2, 9, 10, 11, 101, 500, 1001])
def test_item_bootstrap_is_the_cluster_bootstrap_over_one_item_clusters(n):
    """bootstrap_mean skips the labels; it must give cluster_bootstrap's interval to the bit (sweep summaries
    written before it are compared byte for byte)."""
    rng = np.random.default_rng(n)
    values = np.round(rng.random(n), 3)
    values[::7] = -0.0
    for level in (0.95, 0.9):
        fast = bootstrap_mean(values, n_boot=500, seed=3, level=level)
        labelled = cluster_bootstrap(values, [str(i) for i in range(n)], n_boot=500, seed=3, level=level)
        assert (fast.estimate, fast.low, fast.high, fast.n, fast.clusters) == \
            (labelled.estimate, labelled.low, labelled.high, labelled.n, labelled.clusters)
        assert math.copysign(1, fast.low) == math.copysign(1, labelled.low)
        # and both as the cluster bootstrap was first written: labels sorted, summed, drawn per call
        names, inverse = np.unique(np.array([str(i) for i in range(n)]), return_inverse=True)
        sums = np.bincount(inverse, weights=values, minlength=len(names))
        counts = np.bincount(inverse, minlength=len(names)).astype(float)
        picks = np.random.default_rng(3).integers(0, len(names), size=(500, len(names)))
        boot = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
        low, high = np.quantile(boot, [(1 - level) / 2, 1 - (1 - level) / 2])
        assert (fast.low, fast.high) == (float(low), float(high))
