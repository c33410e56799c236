"""A large package is never made dense: the objective, the MILP and every writer work from the sparse coverage
and give the dense path's stores. The size threshold is lowered here so that ordinary packages take the large
path (a real 20,000-candidate package would need ~1.3 GB dense)."""

import numpy as np
import pytest

from memeval.memaudit import package as package_mod
from memeval.memaudit.generators import generate
from memeval.memaudit.solvers import solve_exact
from memeval.memaudit.writers import ALL_WRITERS, EXACT_WRITERS, run_writer

WRITERS = [w for w in ALL_WRITERS if w != "opt"]


@pytest.mark.parametrize("distribution, seed", [("base", 0), ("base", 3), ("update_chain", 1),
                                                ("redundancy_heavy", 2), ("summary_tradeoff", 5)])
def test_the_sparse_path_gives_the_dense_paths_stores_and_never_densifies(distribution, seed, monkeypatch):
    pkg = generate(distribution, seed)
    budgets = (2.0, 6.0, 12.0)
    dense = {(w, b): run_writer(w, generate(distribution, seed).compiled, b) for w in WRITERS for b in budgets}
    monkeypatch.setattr(package_mod, "DENSE_CELLS", 0)
    cp = pkg.compiled
    assert cp.is_large
    for budget in budgets:
        opt = solve_exact(cp, budget, method="milp")
        assert opt.certified
        for writer in WRITERS:
            sparse = run_writer(writer, cp, budget)
            reference = dense[(writer, budget)]
            if writer not in EXACT_WRITERS:  # exact writers may return another store of the same value (ties)
                assert sparse.selected == reference.selected, (writer, budget)
            assert sparse.value == pytest.approx(reference.value, abs=1e-12)
            assert sparse.value <= opt.value + 1e-9
    assert "coverage" not in cp.__dict__, "the dense matrix was made"
    assert np.isfinite(cp.coverage_sparse.data).all()


def test_the_compiled_coverage_is_scipys_canonical_csr_of_the_cells():
    """compile_package builds the CSR arrays with numpy (a sweep worker never imports scipy); they must be what
    scipy's COO-to-CSR conversion gives for the same cells (explicit zeros and a repeated cell included), to the
    dtype, and the dense matrix its toarray()."""
    import dataclasses

    import scipy.sparse as sparse

    from memeval.memaudit.generators import generate

    base = generate("base", 3)
    cells = list(base.coverage)
    cells.append((*cells[0][:2], 0.0))  # a repeated cell (packages built in code): the last value is kept
    cells.insert(0, (*cells[-2][:2], 0.0))  # and an explicit zero listed first
    pkg = dataclasses.replace(base, coverage=tuple(cells))
    cp = pkg.compiled
    rows = {c: i for i, c in enumerate(cp.candidate_ids)}
    units = {u: i for i, u in enumerate(cp.unit_ids)}
    cells = {(rows[c], units[u]): v for c, u, v in pkg.coverage}
    reference = sparse.coo_matrix((list(cells.values()), ([r for r, _ in cells], [u for _, u in cells])),
                                  shape=cp.coverage_csr.shape).tocsr()
    reference.sort_indices()
    for ours, theirs in ((cp.coverage_csr.indptr, reference.indptr), (cp.coverage_csr.indices, reference.indices),
                         (cp.coverage_csr.data, reference.data)):
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    assert 0.0 in cp.coverage_csr.data
    assert np.array_equal(cp.coverage, reference.toarray())
    assert (cp.coverage_sparse != reference).nnz == 0
