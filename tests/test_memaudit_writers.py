import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.memaudit.generators import generate
from memeval.memaudit.objective import is_feasible
from memeval.memaudit.solvers import solve_exhaustive
from memeval.memaudit.writers import (
    ALL_WRITERS,
    estimated_gvt,
    gvt,
    package_ratio,
    run_writer,
)
from tests.memaudit_helpers import make_package
from tests.test_memaudit_solvers import tied_packages


@pytest.mark.parametrize("eta", [0.5, 0.1, 0.01, 0.001])
def test_density_only_can_be_arbitrarily_bad(eta):
    # one experience: a cheap candidate with the better ratio and a tiny gain, and the one worth having
    eps = eta / 4
    pkg = make_package([[("cheap", "fact", eps, {"r_small": 1.0}), ("whole", "raw", 1.0, {"r_big": 1.0})]],
                       {"r_small": 2 * eps, "r_big": 1.0})
    cp = pkg.compiled
    opt = run_writer("opt", cp, 1.0).value
    dens = run_writer("density_only", cp, 1.0)
    assert opt == pytest.approx(1.0)
    assert [cp.candidate_ids[i] for i in dens.selected] == ["e0:cheap"]
    assert package_ratio(dens.value, opt) < eta


def test_gvt_threshold_skips_a_low_density_early_write():
    # lambda = 0 spends the budget on the first group; a positive threshold waits for the second
    pkg = make_package([[("a", "raw", 10, {"r1": 1.0})], [("b", "fact", 1, {"r2": 1.0})]], {"r1": 1.0, "r2": 5.0})
    cp = pkg.compiled
    res = gvt(cp, 10)
    assert [cp.candidate_ids[i] for i in res.selected] == ["e1:b"] and res.info["lambda"] > 0.1
    assert gvt(cp, 10, grid=np.array([0.0])).value == pytest.approx(1.0)
    assert run_writer("density_only", cp, 10).value == pytest.approx(1.0)  # never looks ahead


def test_gvt_inserts_largest_raw_gain_among_admissible():
    pkg = make_package([[("small", "fact", 1, {"r": 0.5}), ("big", "raw", 4, {"r": 1.0, "s": 1.0})]],
                       {"r": 2.0, "s": 1.0})
    cp = pkg.compiled
    assert [cp.candidate_ids[i] for i in gvt(cp, 4, grid=np.array([0.0])).selected] == ["e0:big"]
    # lambda = 0.8: big has density 3/4 < 0.8, so only small is admissible
    assert [cp.candidate_ids[i] for i in gvt(cp, 4, grid=np.array([0.8])).selected] == ["e0:small"]


def test_greedy_and_density_greedy_rules():
    pkg = make_package(
        [[("x", "raw", 3, {"r": 1.0})], [("y", "fact", 1, {"s": 1.0})], [("z", "fact", 1, {"t": 1.0})]],
        {"r": 2.0, "s": 1.0, "t": 1.0},
    )
    cp = pkg.compiled
    greedy = run_writer("greedy", cp, 3)
    dens = run_writer("density_greedy", cp, 3)
    assert [cp.candidate_ids[i] for i in greedy.selected] == ["e0:x"]  # largest gain first
    assert sorted(cp.candidate_ids[i] for i in dens.selected) == ["e1:y", "e2:z"]  # best gain per cost


def test_recency_raw_takes_latest_raw_spans_and_stops():
    pkg = make_package(
        [[("raw", "raw", 2, {"a": 1})], [("raw", "raw", 5, {"b": 1})], [("raw", "raw", 2, {"c": 1}), ("f", "fact", 1, {"c": 1})]],
        {"a": 1, "b": 1, "c": 1},
    )
    cp = pkg.compiled
    assert [cp.candidate_ids[i] for i in run_writer("recency_raw", cp, 8).selected] == ["e1:raw", "e2:raw"]
    # B = 6: e2 fits (2), e1 does not (2 + 5 > 6): stop there, even though e0 would still fit
    assert [cp.candidate_ids[i] for i in run_writer("recency_raw", cp, 6).selected] == ["e2:raw"]


def test_family_restrictions():
    cp = generate("base", 9).compiled
    for method, allowed in [("fact_only", {"fact"}), ("summary_only", {"summary"}),
                            ("no_tombstone_opt", {"raw", "fact", "summary"})]:
        for budget in (2, 4, 8):
            res = run_writer(method, cp, budget)
            assert {cp.kinds[i] for i in res.selected} <= allowed
            mask = np.array([k in allowed for k in cp.kinds])
            assert res.value == pytest.approx(solve_exhaustive(cp, budget, allowed=mask).value)
            assert res.certified


def test_every_writer_returns_a_feasible_store_and_never_beats_opt():
    for seed in range(5):
        for dist in ("base", "density_trap", "abstention_hard"):
            cp = generate(dist, seed).compiled
            for budget in (2, 6):
                opt = run_writer("opt", cp, budget).value
                for method in ALL_WRITERS:
                    res = run_writer(method, cp, budget)
                    assert is_feasible(cp, res.selected, budget), (method, dist, seed)
                    assert res.value <= opt + 1e-9, (method, dist, seed)
                    assert (res.certified is None) == (method not in ("opt", "fact_only", "summary_only", "no_tombstone_opt"))


def test_random_writer_is_seeded():
    cp = generate("base", 2).compiled
    a, b = run_writer("random", cp, 8, seed=1), run_writer("random", cp, 8, seed=1)
    assert a.selected == b.selected
    assert any(run_writer("random", cp, 8, seed=s).selected != a.selected for s in range(2, 8))


def test_estimated_gvt_never_reads_coverage():
    pkg = generate("base", 5)
    cp = pkg.compiled
    import dataclasses

    from memeval.memaudit.package import CoverageCsr

    fields = {f.name: getattr(cp, f.name) for f in dataclasses.fields(cp)}
    blind = type(cp)(**{**fields, "coverage_csr": CoverageCsr.from_dense(np.zeros(cp.coverage.shape))})
    assert not blind.coverage.any()
    assert estimated_gvt(cp, 8).selected == estimated_gvt(blind, 8).selected


def test_ratio_convention():
    assert package_ratio(0.0, 0.0) == 1.0
    assert package_ratio(1.0, 2.0) == 0.5


def _reference_random(cp, budget, k, seed=0):
    """The random writer as a CoverageState walk (how it was written before its plain-Python loop)."""
    import random
    import zlib

    from memeval.memaudit.objective import CoverageState

    rng = random.Random(zlib.crc32(f"{cp.package_id}|{budget}|{seed}".encode()))
    order = list(range(cp.n_candidates))
    rng.shuffle(order)
    state = CoverageState(cp, budget, k)
    for u in order:
        if state.feasible_mask(np.array([u]))[0]:
            state.add(u)
    return sorted(state.selected)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_packages(max_groups=7, max_candidates=5), st.sampled_from([1, 2]))
def test_plain_python_writers_choose_as_the_numpy_rules(case, k):
    """density_only, greedy and density_greedy sum gains in Python (numpy only near a tie), random and
    estimated_gvt walk plain lists: each picks the store its numpy rule picks, tie for tie."""
    from memeval.memaudit import writers

    pkg, budget = case
    cp = pkg.compiled
    fast = {m: run_writer(m, cp, budget, k) for m in ("density_only", "greedy", "density_greedy")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writers, "_fast", lambda cp: False)
        for method, res in fast.items():
            reference = run_writer(method, pkg.compiled, budget, k)
            assert (res.selected, res.value) == (reference.selected, reference.value), method
    assert run_writer("random", cp, budget, k, seed=3).selected == _reference_random(cp, budget, k, seed=3)
    declared = writers.declared_estimator(cp)
    assert estimated_gvt(cp, budget, max_per_group=k).selected == \
        estimated_gvt(cp, budget, estimator=declared, max_per_group=k).selected
