"""The power of a comparison: how large a difference the questions can show, and whether an observed one is more
than noise.

Pure statistics on per-question scores, clustered by conversation (LoCoMo's questions of one conversation share
its memories, so they are not independent). For per-question scores y_i in conversations g = 1..G with mean ȳ:

    SE(ȳ)² = G / (G − 1) · Σ_g (Σ_{i∈g} (y_i − ȳ))² / n²          (cluster-robust, small-sample factor G/(G−1))
    MDE    = (z_{1−α/2} + z_power) · SE                              (α = 0.05 two-sided, power 0.8: 2.80 · SE)

For a paired comparison y_i is d_i = a_i − b_i on the questions both systems scored; for one system's category
(no pair) y_i is the score itself. A difference is within noise when |d̄| < z_{1−α/2} · SE, i.e. its normal 95%
interval covers 0. With fewer than two conversations there is no clustered SE, and nothing is claimed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.80
WITHIN_NOISE = "within noise"
REAL = "real at α = 0.05"
NO_DIFFERENCE = "no difference (the same on every question)"


def z_value(p: float) -> float:
    """The standard normal quantile at `p`."""
    return NormalDist().inv_cdf(p)


@dataclass(frozen=True)
class Power:
    """A mean (a paired difference, or one system's score) with its clustered SE and minimum detectable
    difference; `se` and `mde` are NaN when fewer than two conversations hold the questions."""

    estimate: float
    se: float
    mde: float
    n: int
    clusters: int
    alpha: float = ALPHA
    unit: str = "conversations"  # what the SE treats as independent: "questions" when one conversation held them

    @property
    def defined(self) -> bool:
        return self.clusters >= 2 and math.isfinite(self.se)

    @property
    def verdict(self) -> str:
        """"within noise", "real at α = 0.05", or why neither can be said."""
        if self.n == 0:
            return "no questions in common"
        if not self.defined:
            return "n/a (1 conversation)"
        if self.se == 0 and self.estimate == 0:
            return NO_DIFFERENCE
        verdict = WITHIN_NOISE if within_noise(self) else REAL
        return verdict + (" (item level)" if self.unit == "questions" else "")


def clustered_se(values: Sequence[float], clusters: Sequence[str]) -> tuple[float, float, int, int]:
    """(mean, cluster-robust SE of the mean, n, G): the formula in the module docstring. SE is NaN when G < 2."""
    if len(values) != len(clusters):
        raise ValueError("values and clusters differ in length")
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), 0, 0
    mean = math.fsum(values) / n
    sums: dict[str, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] = sums.get(cluster, 0.0) + (float(value) - mean)
    g = len(sums)
    if g < 2:
        return mean, float("nan"), n, g
    variance = g / (g - 1) * math.fsum(s * s for s in sums.values()) / (n * n)
    return mean, math.sqrt(variance), n, g


def minimum_detectable(se: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """(z_{1−α/2} + z_power) · SE: the true difference a two-sided test at `alpha` finds with probability `power`."""
    return (z_value(1 - alpha / 2) + z_value(power)) * se


def mean_power(values: Sequence[float], clusters: Sequence[str], alpha: float = ALPHA,
               power: float = POWER) -> Power:
    """One system's score (a category, no pair): the MDE of its mean against a fixed value."""
    mean, se, n, g = clustered_se(values, clusters)
    return Power(mean, se, minimum_detectable(se, alpha, power), n, g, alpha)


def paired_power(differences: Sequence[float], clusters: Sequence[str], alpha: float = ALPHA,
                 power: float = POWER) -> Power:
    """a − b per question (the questions both scored), clustered by conversation."""
    return mean_power(differences, clusters, alpha, power)


def item_level(power: Power, values: Sequence[float]) -> Power:
    """`power` recomputed with each question its own cluster when one conversation held them all (no clustered
    SE exists): it then holds for that conversation's questions, not across conversations, and says so."""
    if power.defined or len(values) < 2:
        return power
    again = mean_power(values, [str(i) for i in range(len(values))], power.alpha)
    return Power(again.estimate, again.se, again.mde, again.n, again.clusters, power.alpha, "questions")


def paired_rows(rows_a: Iterable, rows_b: Iterable, value, alpha: float = ALPHA, power: float = POWER,
                fallback: bool = False) -> Power:
    """`paired_power` of two systems' rows (with `sample_id`, `conversation_id`), paired by sample id as
    `aggregate.paired_difference` pairs them; `value` is a row's score (None: unscored). `fallback`: item level
    (`item_level`) when the questions in common come from one conversation."""
    b_by_id = {r.sample_id: score for r in rows_b if (score := value(r)) is not None}
    diffs, clusters = [], []
    for row in rows_a:
        other, score = b_by_id.get(row.sample_id), value(row)
        if other is None or score is None:
            continue
        diffs.append(float(score) - float(other))
        clusters.append(row.conversation_id or str(row.sample_id).split(":")[0])
    result = paired_power(diffs, clusters, alpha, power)
    return item_level(result, diffs) if fallback else result


def within_noise(pair: Power) -> bool:
    """Whether the observed difference lies inside its 95% interval around zero: |d̄| < z_{1−α/2} · SE."""
    return abs(pair.estimate) < z_value(1 - pair.alpha / 2) * pair.se


def wilson(successes: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (a fraction of 1): better than p ± z·SE for small n and rates
    near 0 or 1. `successes` may be fractional (a mean over judge runs)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = z_value(1 - (1 - level) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def small_category(n: int, rate: float) -> bool:
    """Where a Wilson interval is shown: fewer than 100 questions, or fewer than 5 on either side of the rate."""
    return n < 100 or n * rate < 5 or n * (1 - rate) < 5


def words(text: str | None) -> int:
    """An answer's length in words (whitespace tokens); no answer is 0 words."""
    return len(str(text).split()) if text else 0


def mean_words(texts: Iterable[str | None]) -> float:
    """Mean answer length in words; NaN for no answers."""
    counts = [words(t) for t in texts]
    return math.fsum(counts) / len(counts) if counts else float("nan")
