"""The MILP's MIP start (memaudit/milp.py, MIP_START): a store made complete is a feasible start, a started solve
certifies the same value as a cold one, and a wrong start — refused, or forced through — never changes it."""

import numpy as np
import pytest
import scipy.sparse as sparse

from memeval.memaudit.generators import DISTRIBUTIONS, generate
from memeval.memaudit.milp import InfeasibleStart, MilpModel, best_start
from memeval.memaudit.objective import is_feasible, objective
from memeval.memaudit.solvers import solve_bnb
from memeval.memaudit.tolerance import HIGHS_FEASIBILITY, values_agree
from memeval.memaudit.writers import run_writer

WRITERS = ("gvt", "greedy", "density_greedy", "density_only", "random")


def _best_writer_store(cp, budget):
    return best_start(cp, budget, [run_writer(w, cp, budget).selected for w in WRITERS])


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_started_and_cold_solves_certify_the_same_value(distribution):
    for seed in (0, 7, 11):
        cp = generate(distribution, seed).compiled
        model = MilpModel(cp)
        for budget in (1, 3, 6, 10, 16):
            cold = model.solve(budget)
            store = _best_writer_store(cp, budget)
            warm = model.solve(budget, start=store)
            exact = solve_bnb(cp, budget)
            assert cold.certified and warm.certified and exact.certified, (distribution, seed, budget)
            assert values_agree(warm.value, cold.value) and values_agree(warm.value, exact.value), \
                (distribution, seed, budget, warm.value, cold.value)
            assert warm.info["start"]["value"] == pytest.approx(objective(cp, store), rel=0, abs=0)
            assert is_feasible(cp, warm.selected, budget)
            assert warm.value >= warm.info["start"]["value"] - 1e-12, "an optimum is never worse than its start"


def _model_matrix(lp):
    a = lp.a_matrix_
    return sparse.csc_matrix((np.array(a.value_), np.array(a.index_), np.array(a.start_)),
                             shape=(lp.num_row_, lp.num_col_))


@pytest.mark.parametrize("distribution, seed, budget", [("base", 3, 8), ("scope_shift", 2, 6),
                                                        ("redundancy_heavy", 5, 12), ("abstention_hard", 1, 9)])
def test_the_start_is_a_feasible_point_of_the_model_highs_solves(distribution, seed, budget):
    cp = generate(distribution, seed).compiled
    model = MilpModel(cp)
    store = _best_writer_store(cp, budget)
    assert store, "the writers found something to store"
    lp, x0, _ = model.highs_problem(budget)
    columns = model.start_columns(store, budget)
    rows = _model_matrix(lp) @ columns
    tol = HIGHS_FEASIBILITY
    assert np.all(rows <= np.array(lp.row_upper_) + tol) and np.all(rows >= np.array(lp.row_lower_) - tol)
    assert np.all(columns >= np.array(lp.col_lower_) - tol) and np.all(columns <= np.array(lp.col_upper_) + tol)
    x = columns[x0:x0 + cp.n_candidates]
    assert np.array_equal(x, np.round(x)) and sorted(np.flatnonzero(x).tolist()) == store
    # its objective (HiGHS minimises -F / scale) is the store's value: y is as large as the constraints allow
    assert -float(np.dot(lp.col_cost_, columns)) * model.scale == pytest.approx(objective(cp, store), rel=1e-12)


def test_a_start_highs_1_16_mishandles_is_discarded_and_the_solve_repeated_cold():
    # highspy 1.16.0 maps this start through presolve to a better point, reports that point's objective (3.2) as
    # optimal and returns the start itself ({22}, F = 1.6); the result must still be the certified 3.2
    cp = generate("temporal_interval", 11).compiled
    model = MilpModel(cp)
    warm = model.solve(2, start=[22])
    assert warm.certified and warm.value == pytest.approx(3.2) and warm.selected == [22, 27]
    outcome = warm.info["start"]["outcome"]
    assert outcome == "used" or outcome.startswith("discarded: HiGHS returned a store of value 1.6"), outcome


def test_a_started_solve_never_certifies_a_store_that_misses_highs_objective():
    """What the check guards: without it, this start would come back certified at 1.6 under highspy 1.16.0."""
    cp = generate("temporal_interval", 11).compiled
    model = MilpModel(cp)
    run = model._run(2, 60.0, model.start_columns([22], 2), None)
    selected = model._selected(run)
    if selected == [22]:  # the HiGHS defect reproduces here: the check must see it
        assert not model._consistent(run, selected)
    else:
        assert model._consistent(run, selected) and objective(cp, selected) == pytest.approx(3.2)


@pytest.mark.parametrize("store, reason", [
    ([0, 1, 2, 3, 4, 5], "exceeds the budget"),
    ([1, 2], "more than 1 candidates of one group"),
    ([3, 3], "appears twice"),
    ([10_000], "outside the allowed set"),
])
def test_an_infeasible_start_is_refused_and_the_value_is_the_cold_one(store, reason):
    cp = generate("base", 4).compiled
    model = MilpModel(cp)
    with pytest.raises(InfeasibleStart, match=reason):
        model.start_columns(store, 6)
    cold, warm = model.solve(6), model.solve(6, start=store)
    assert warm.info["start"]["outcome"].startswith("refused: ") and reason in warm.info["start"]["outcome"]
    assert warm.certified and warm.value == cold.value and warm.selected == cold.selected


def test_a_wrong_start_forced_into_highs_does_not_change_the_certified_value():
    cp = generate("density_trap", 2).compiled
    model = MilpModel(cp)
    for budget in (3, 7, 12):
        cold = model.solve(budget)
        x0, y0, n = model.layout
        everything = np.ones(n)  # every candidate and every unit fully covered: over budget, groups overfull
        forced = model.solve_from(budget, everything)
        assert forced.certified == cold.certified and values_agree(forced.value, cold.value), budget
        assert is_feasible(cp, forced.selected, budget)
        inflated = model.start_columns(_best_writer_store(cp, budget), budget)
        inflated[y0:y0 + len(model.units)] = 1.0  # y above the coverage its x gives
        forced = model.solve_from(budget, inflated)
        assert forced.certified and values_agree(forced.value, cold.value), budget


def test_one_model_serves_budgets_up_and_down_with_starts():
    cp = generate("temporal_interval", 11).compiled
    model = MilpModel(cp)
    previous: list[int] = []
    values = []
    for budget in (1, 2, 1, 2, 5, 3):
        result = model.solve(budget, start=previous if is_feasible(cp, previous, budget) else None)
        assert result.certified
        values.append(result.value)
        previous = result.selected
    assert values == pytest.approx([1.6, 3.2, 1.6, 3.2, solve_bnb(cp, 5).value, solve_bnb(cp, 3).value])
