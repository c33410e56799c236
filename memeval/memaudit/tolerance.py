"""Every numerical tolerance of the MEMAUDIT engine, so "equal", "fits" and "certified" mean one thing.

Costs are word or byte counts (multiples of 1/4 at finest), so a budget slack far below 1/4 never changes
which stores fit; gains and values are sums of weights in [0, 1] over at most thousands of units.
"""

from __future__ import annotations

COST_EPS = 1e-9  # a store fits when cost <= budget + COST_EPS
MIN_COST = 1e-6  # the least cost a candidate may declare: far above COST_EPS, so "fits" and gain per cost stay finite
GAIN_EPS = 1e-12  # a marginal gain at or below this is no gain
BOUND_RTOL = 1e-10  # B&B prunes a node when its bound is within this (relative to the total weight) of the incumbent
VALUE_RTOL = 1e-9  # two optima (B&B and MILP, or a row and its certificate) agree within this, relative

# The MILP certificate: HiGHS is asked for a zero absolute and relative gap on an objective scaled to max weight
# 1, with integrality and primal feasibility held to HIGHS_FEASIBILITY; a solution counts as certified optimal
# when HiGHS reports optimal with relative gap <= MILP_CERT_GAP.
MILP_CERT_GAP = 1e-9
HIGHS_FEASIBILITY = 1e-9


def values_agree(a: float, b: float, rtol: float = VALUE_RTOL) -> bool:
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def fits(cost: float, budget: float) -> bool:
    return cost <= budget + COST_EPS
