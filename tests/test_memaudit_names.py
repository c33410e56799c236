"""The names `memeval --help` lists for MEMAUDIT (memeval/memaudit/names.py, which imports nothing) are the ones
the writers and the generators run: every listed writer solves a package, every listed distribution generates
one, and no other name is accepted."""

import pytest

from memeval.memaudit.generators import _BUILDERS, generate
from memeval.memaudit.names import ALL_WRITERS, DISTRIBUTIONS, EXACT_WRITERS, HEURISTIC_WRITERS
from memeval.memaudit.writers import run_writer


def test_every_listed_writer_runs_and_no_other_name_does():
    cp = generate("base", 0).compiled
    for method in ALL_WRITERS:
        assert run_writer(method, cp, 4).selected is not None, method
    with pytest.raises(ValueError, match="unknown method"):
        run_writer("not_a_writer", cp, 4)
    assert set(EXACT_WRITERS).isdisjoint(HEURISTIC_WRITERS) and ALL_WRITERS == EXACT_WRITERS + HEURISTIC_WRITERS


def test_the_listed_distributions_are_the_generators_in_order():
    assert DISTRIBUTIONS == tuple(_BUILDERS)
    with pytest.raises(ValueError, match="unknown distribution"):
        generate("not_a_distribution", 0)
