"""The MEMAUDIT core is import-light: a sweep worker pays for numpy and memeval's own modules, not for nltk (and
the scipy it drags in), pandas, cvxpy or the LLM stack. Checked in a fresh interpreter, where nothing else has
loaded them first."""

import json
import subprocess
import sys

import pytest

HEAVY = ("nltk", "scipy", "pandas", "sklearn", "cvxpy", "matplotlib", "anthropic", "openai", "httpx", "bm25s",
         "networkx", "joblib", "dask", "tqdm")
CORE = ("package", "objective", "saturation", "outcomes", "solvers", "writers", "generators", "milp", "tolerance")


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys, json\n{statement}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_core_loads_numpy_and_its_own_modules_only():
    loaded = _loaded_after("\n".join(f"import memeval.memaudit.{m}" for m in CORE))
    assert not loaded & {*HEAVY, "pydantic"}, sorted(loaded & {*HEAVY, "pydantic"})
    assert "numpy" in loaded


def test_a_sweep_module_loads_no_scorer_table_or_solver_stack():
    loaded = _loaded_after("import memeval.memaudit.sweep")
    assert not loaded & set(HEAVY) - {"joblib", "tqdm"}, sorted(loaded & set(HEAVY))


@pytest.mark.parametrize("module", ["memeval.scoring", "memeval.scoring.aggregate"])
def test_aggregation_does_not_load_the_stemmer(module):
    assert "nltk" not in _loaded_after(f"import {module}")


def test_a_sweep_worker_scores_small_packages_without_scipy():
    """A sweep worker builds, solves and scores small packages on numpy alone: scipy (≈0.3 s a worker) loads
    only for the MILP or a large package."""
    loaded = _loaded_after(
        "from memeval.memaudit.sweep import PackageSource, SweepConfig, WriterScorer, _chunk_rows\n"
        "config = SweepConfig(kind='small', budgets=[1, 4, 16], distribution='base', certify='parts')\n"
        "_chunk_rows([PackageSource('base', s) for s in range(3)], config, WriterScorer())")
    assert not loaded & {"scipy", "cvxpy", "nltk", "pandas"}, sorted(loaded & {"scipy", "cvxpy", "nltk", "pandas"})


def test_the_milp_loads_cvxpy_on_first_solve_only():
    loaded = _loaded_after(
        "from memeval.memaudit.generators import generate\n"
        "from memeval.memaudit.milp import MilpModel\n"
        "MilpModel(generate('base', 1).compiled).solve(3.0)")
    assert "cvxpy" in loaded
