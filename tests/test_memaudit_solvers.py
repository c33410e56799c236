import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.memaudit.generators import DISTRIBUTIONS, generate
from memeval.memaudit.milp import MilpModel, solve_milp
from memeval.memaudit.objective import is_feasible, objective
from memeval.memaudit.solvers import solve_bnb, solve_exact, solve_exhaustive
from tests.memaudit_helpers import make_package


@st.composite
def small_packages(draw):
    n_units = draw(st.integers(1, 5))
    units = {f"r{j}": draw(st.sampled_from([0.0, 0.35, 1.0, 1.4, 2.25])) for j in range(n_units)}
    groups = []
    for _ in range(draw(st.integers(1, 5))):
        cands = []
        for c in range(draw(st.integers(1, 4))):
            cover = {f"r{j}": draw(st.sampled_from([0.0, 0.1, 0.45, 0.7, 1.0])) for j in range(n_units)}
            cands.append((f"c{c}", draw(st.sampled_from(["raw", "fact", "summary", "tombstone"])),
                          draw(st.sampled_from([0.5, 1, 2, 3, 5])), cover))
        groups.append(cands)
    budget = draw(st.sampled_from([0.0, 1, 2, 3.5, 6, 10]))
    return make_package(groups, units), budget


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_packages(), st.sampled_from([1, 2]))
def test_bnb_equals_exhaustive(case, k):
    pkg, budget = case
    cp = pkg.compiled
    exact = solve_exhaustive(cp, budget, k)
    bnb = solve_bnb(cp, budget, k)
    assert bnb.certified and bnb.status == "optimal"
    assert bnb.value == pytest.approx(exact.value, abs=1e-9)
    assert is_feasible(cp, bnb.selected, budget, k)
    assert objective(cp, bnb.selected) == bnb.value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_packages(), st.sampled_from([1, 2]))
def test_milp_equals_exhaustive(case, k):
    pkg, budget = case
    cp = pkg.compiled
    exact = solve_exhaustive(cp, budget, k)
    milp = solve_milp(cp, budget, k)
    assert milp.certified and milp.gap is not None
    assert milp.value == pytest.approx(exact.value, abs=1e-7)
    assert is_feasible(cp, milp.selected, budget, k)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_both_solvers_agree_on_every_distribution(distribution):
    cp = generate(distribution, 11).compiled
    model = MilpModel(cp)
    for budget in (1, 2, 4, 6, 8, 16):
        both = solve_exact(cp, budget, method="both", milp_model=model)
        assert both.certified, both.info
        assert both.value == pytest.approx(solve_exhaustive(cp, budget).value, abs=1e-9)


def test_relaxed_k2_is_at_least_k1():
    cp = generate("summary_tradeoff", 2).compiled
    for budget in (4, 8):
        assert solve_bnb(cp, budget, 2).value >= solve_bnb(cp, budget, 1).value - 1e-12
    assert solve_bnb(cp, 4, 2).value == pytest.approx(solve_exhaustive(cp, 4, 2).value)


def test_restricted_solve_uses_only_allowed():
    cp = generate("base", 4).compiled
    allowed = np.array([k == "fact" for k in cp.kinds])
    res = solve_bnb(cp, 8, allowed=allowed)
    assert all(cp.kinds[i] == "fact" for i in res.selected)
    assert res.value == pytest.approx(solve_exhaustive(cp, 8, allowed=allowed).value)


def test_state_limit_is_not_certified():
    cp = generate("base", 0, facts=12, updates=6).compiled
    res = solve_bnb(cp, 30, max_states=5)
    assert res.status == "node_limit" and not res.certified
    auto = solve_exact(cp, 30, method="auto", max_states=5)
    assert auto.method == "milp" and auto.certified and auto.value >= res.value - 1e-12


def test_reused_milp_model_is_not_fooled_by_warm_start():
    # with cvxpy's default warm start, HiGHS returned 1.6 ("optimal") here after solving B = 1 first
    cp = generate("temporal_interval", 11).compiled
    model = MilpModel(cp)
    values = [model.solve(b).value for b in (1, 2, 1, 2)]
    assert values == pytest.approx([1.6, 3.2, 1.6, 3.2])


def test_auto_uses_milp_on_large_packages():
    cp = generate("base", 1, facts=20, updates=10).compiled
    res = solve_exact(cp, 20, method="auto")
    assert res.method == "milp" and res.certified
    small = solve_exact(generate("base", 1).compiled, 8, method="auto")
    assert small.method == "bnb" and small.certified


def test_milp_certifies_the_true_optimum_when_weights_are_tiny():
    """HiGHS's default absolute gap (1e-6) let it stop at any store when the whole objective is below 1e-6 and
    still report a zero gap; the MILP now solves on weights scaled to max 1 with a zero absolute gap."""
    from dataclasses import replace

    from memeval.memaudit.generators import generate
    from memeval.memaudit.milp import MilpModel

    for seed in range(12):
        pkg = generate("base", seed)
        tiny = replace(pkg, units=tuple(replace(u, weight=u.weight * 1e-7) for u in pkg.units)).compiled
        for budget in (4, 8):
            exact = solve_bnb(tiny, budget)
            milp = MilpModel(tiny).solve(budget)
            assert exact.certified and milp.certified, (seed, budget, milp.status)
            assert milp.value == pytest.approx(exact.value, rel=1e-9, abs=0), (seed, budget)
            assert milp.dual_bound == pytest.approx(exact.value, rel=1e-6, abs=0)


@st.composite
def tied_packages(draw, max_groups=6, max_candidates=4):
    """Packages built from few distinct weights and coverage values, so equal gains and equal stores are common:
    where the B&B's tie-breaking and its bounds' rounding are tested."""
    n_units = draw(st.integers(1, 6))
    units = {f"r{j}": draw(st.sampled_from([0.35, 1.0, 1.2, 1.4])) for j in range(n_units)}
    groups = []
    for _ in range(draw(st.integers(1, max_groups))):
        cands = []
        for c in range(draw(st.integers(1, max_candidates))):
            cover = {f"r{j}": draw(st.sampled_from([0.0, 0.0, 0.4, 0.5, 0.7, 1.0])) for j in range(n_units)}
            cands.append((f"c{c}", draw(st.sampled_from(["raw", "fact", "summary"])),
                          draw(st.sampled_from([1, 2, 3, 5])), cover))
        groups.append(cands)
    return make_package(groups, units), draw(st.sampled_from([1, 2, 4, 6, 9, 14]))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_packages(), st.sampled_from([1, 1, 2]), st.booleans())
def test_bnb_equals_exhaustive_on_tied_packages(case, k, restrict):
    pkg, budget = case
    cp = pkg.compiled
    if k == 2 and len(cp.groups) > 4:
        k = 1  # the exhaustive reference grows as (subsets per group) ** groups
    allowed = np.array([kind != "summary" for kind in cp.kinds]) if restrict else None
    exact = solve_exhaustive(cp, budget, k, allowed)
    bnb = solve_bnb(cp, budget, k, allowed)
    assert bnb.certified and bnb.status == "optimal"
    assert bnb.value == pytest.approx(exact.value, abs=1e-9)
    assert is_feasible(cp, bnb.selected, budget, k)
    assert allowed is None or all(allowed[i] for i in bnb.selected)


def _frontier_paths(monkeypatch, python: bool):
    """Every level bounded and expanded in plain Python (python=True) or with numpy (False)."""
    from memeval.memaudit import solvers

    monkeypatch.setattr(solvers, "PY_FRONTIER", 10**9 if python else 0)
    monkeypatch.setattr(solvers, "PY_CHILDREN", 10**9 if python else 0)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_the_python_and_numpy_frontiers_search_alike(distribution, monkeypatch):
    """The two representations of the frontier open the same states and prune the same ones: the same store,
    value and node count at every budget, k and restriction."""
    from memeval.memaudit.writers import EXACT_WRITERS, kind_mask

    cases = []
    for seed in range(4):
        cp = generate(distribution, seed).compiled
        cases += [(cp, b, k, kind_mask(cp, m)) for b in (2, 5, 9, 16) for k in (1, 2) for m in EXACT_WRITERS]
    runs = {}
    for python in (True, False):
        _frontier_paths(monkeypatch, python)
        runs[python] = [solve_bnb(cp, b, k, mask) for cp, b, k, mask in cases]
    for a, b in zip(runs[True], runs[False], strict=True):
        assert (a.selected, a.value, a.nodes, a.status) == (b.selected, b.value, b.nodes, b.status)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_packages(max_groups=7, max_candidates=5), st.sampled_from([1, 2]))
def test_greedy_incumbent_breaks_ties_as_the_numpy_rule(case, k):
    """B&B's incumbent sums gains in Python and falls back to numpy only near a tie: the picks are those of the
    numpy rule (every gain a matrix product), tie for tie."""
    from memeval.memaudit import solvers

    pkg, budget = case
    cp = pkg.compiled
    mask = np.ones(cp.n_candidates, dtype=bool)
    tables = solvers._Tables.of(cp)
    fast = solvers._greedy_incumbent(cp, budget, k, None, tables.eligible(None, budget))
    assert fast == solvers._greedy_incumbent_numpy(cp, budget, k, mask)
