"""Aggregation of per-question scores: category tables, J pooling, clustered bootstrap, paired differences.

Pure functions over typed rows (records read by attribute), no I/O, so every number in a report can be
recomputed from the JSONL it came from. Where the score is chosen at run time a function takes a getter
(`value`, a row's score or None: `F1`, `attrgetter("mean")`, or one computed from the row).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any

import numpy as np

Value = Callable[[Any], float | None]  # a row's score (None: unscored)
F1: Value = attrgetter("f1")


def precomputed(rows: Iterable, score: Value) -> Value:
    """`score` as a getter computed once per row of `rows` (a score that costs a scorer call, read by several
    aggregates); it answers for those row objects only."""
    values = {id(r): score(r) for r in rows}
    return lambda row: values[id(row)]


@dataclass(frozen=True)
class CategoryStats:
    category: int
    mean: float
    count: int
    min: float
    max: float


def by_category(rows: Iterable, value: Value = F1) -> dict[int, CategoryStats]:
    """Mean, count, min and max of `value` per category; rows whose value is None are skipped."""
    groups: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        score = value(row)
        if score is not None:
            groups[int(row.category)].append(float(score))
    return {
        cat: CategoryStats(cat, float(np.mean(v)), len(v), float(min(v)), float(max(v)))
        for cat, v in sorted(groups.items())
    }


def overall_mean(rows: Iterable, value: Value = F1) -> float:
    """Mean over all questions (not the mean of category means)."""
    values = [float(score) for score in map(value, rows) if score is not None]
    return float(np.mean(values)) if values else float("nan")


@dataclass(frozen=True)
class JudgeStats:
    mean: float
    pooled_std: float
    count: int


def pool_judgments(rows: Iterable) -> JudgeStats:
    """Mean of per-question means, and sqrt of the mean per-question variance (rows with `mean` and `std`)."""
    means, variances = [], []
    for row in rows:
        if row.mean is None:
            continue
        means.append(float(row.mean))
        std = row.std
        variances.append(0.0 if std is None or (isinstance(std, float) and math.isnan(std)) else float(std) ** 2)
    if not means:
        return JudgeStats(float("nan"), float("nan"), 0)
    return JudgeStats(float(np.mean(means)), float(math.sqrt(np.mean(variances))), len(means))


def judge_by_category(rows: Iterable) -> tuple[dict[int, JudgeStats], JudgeStats]:
    rows = list(rows)
    groups: dict[int, list] = defaultdict(list)
    for row in rows:
        groups[int(row.category)].append(row)
    return {c: pool_judgments(g) for c, g in sorted(groups.items())}, pool_judgments(rows)


def run_statistics(scores: Sequence[float], min_successes: int = 5) -> dict:
    """Repeated judge runs of one question: drop the -1 failure sentinel, mean and sample std."""
    used = [float(s) for s in scores if s is not None and s >= 0]
    mean = float(np.mean(used)) if used else None
    std = float(np.std(used, ddof=1)) if len(used) > 1 else (0.0 if used else None)
    warning = None
    if len(used) < min_successes:
        warning = f"only {len(used)} of {len(scores)} judge runs succeeded (fewer than {min_successes})"
    return {"mean": mean, "std": std, "run_count": len(used), "scores": list(scores), "warning": warning}


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int
    clusters: int

    @property
    def defined(self) -> bool:
        """Whether there is an interval at all: with fewer than two clusters every resample is the same cluster, so
        `low` and `high` only repeat the estimate; print "n/a (1 conversation)" (or the unit resampled) instead."""
        return self.clusters >= 2


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[str],
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Percentile bootstrap of the pooled mean, resampling whole clusters (conversations) with replacement.

    With LoCoMo's 10 conversations the interval rests on 10 clusters; tables say so. With one cluster there is no
    interval (`Interval.defined` is False; `low` and `high` equal the estimate) and tables print "n/a".
    """
    values = np.asarray(values, dtype=float)
    labels = np.asarray(clusters)
    if values.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, 0)
    names, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=len(names))
    counts = np.bincount(inverse, minlength=len(names)).astype(float)
    return _resampled(values, sums, counts, n_boot, seed, level)


def _resampled(values: np.ndarray, sums: np.ndarray, counts: np.ndarray | None, n_boot: int, seed: int,
               level: float) -> Interval:
    """The percentile interval of the pooled mean over resampled clusters, given each cluster's sum and item
    count (None: one item each, so every resample holds exactly as many items as there are clusters)."""
    picks = _draws(len(sums), n_boot, seed)
    total = sums[picks].sum(axis=1)
    boot = total / (float(len(sums)) if counts is None else counts[picks].sum(axis=1))
    tail = (1 - level) / 2
    low, high = np.quantile(boot, [tail, 1 - tail])
    return Interval(float(values.mean()), float(low), float(high), int(values.size), len(sums))


def bootstrap_mean(values: Sequence[float], n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> Interval:
    """Item-level percentile bootstrap: `cluster_bootstrap` with item i in cluster str(i), computed without the
    labels. The same draws index the clusters in the labels' sorted (string) order and every cluster holds one
    item, so the interval is the same to the bit; a sweep summary takes fifty of these."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, 0)
    sums = values[_label_order(values.size)] + 0.0  # a cluster's sum starts at 0.0: -0.0 sums to 0.0
    return _resampled(values, sums, None, n_boot, seed, level)


@lru_cache(maxsize=4)
def _draws(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The resamples' cluster indices for n clusters: the same for every call with the same (n, n_boot, seed), so
    drawn once (a sweep summary's fifty groups of 500 packages share one draw)."""
    picks = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    picks.flags.writeable = False
    return picks


@lru_cache(maxsize=64)
def _label_order(n: int) -> np.ndarray:
    """Items 0..n-1 in the order np.unique sorts their labels str(i): "0", "1", "10", "100", "11", ..."""
    order = np.array(sorted(range(n), key=str), dtype=np.int64)
    order.flags.writeable = False
    return order


@dataclass(frozen=True)
class PairedDifference:
    system_a: str
    system_b: str
    mean_difference: float
    low: float
    high: float
    n: int
    a_better: int
    b_better: int
    ties: int
    clusters: int = 0  # conversations the interval resampled; fewer than 2: no interval (low = high = estimate)

    @property
    def defined(self) -> bool:
        return self.clusters >= 2


def paired_difference(
    rows_a: Iterable,
    rows_b: Iterable,
    value: Value = F1,
    system_a: str = "a",
    system_b: str = "b",
    n_boot: int = 2000,
    seed: int = 0,
) -> PairedDifference:
    """a minus b on the questions both scored (the intersection of their sample ids; `n` is its size), CI
    clustered by conversation (undefined, `defined` False, when they share questions of one conversation only)."""
    b_by_id = {r.sample_id: score for r in rows_b if (score := value(r)) is not None}
    diffs, clusters = [], []
    for row in rows_a:
        other = b_by_id.get(row.sample_id)
        score = value(row)
        if other is None or score is None:
            continue
        diffs.append(float(score) - float(other))
        clusters.append(row.conversation_id or str(row.sample_id).split(":")[0])
    interval = cluster_bootstrap(diffs, clusters, n_boot=n_boot, seed=seed)
    arr = np.asarray(diffs)
    return PairedDifference(
        system_a,
        system_b,
        interval.estimate,
        interval.low,
        interval.high,
        interval.n,
        int((arr > 0).sum()),
        int((arr < 0).sum()),
        int((arr == 0).sum()),
        interval.clusters,
    )
