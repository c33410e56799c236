"""The paper's general objective: per-unit concave saturation h_r (a cap, or piecewise-linear breakpoints). Its
values by hand, validation naming the unit, min(1, z) untouched, and B&B, the MILP and exhaustive enumeration
agreeing on packages whose units saturate differently."""

import dataclasses
import json

import numpy as np
import pytest

from memeval.errors import InputError
from memeval.memaudit.generators import generate
from memeval.memaudit.milp import solve_milp
from memeval.memaudit.objective import objective
from memeval.memaudit.package import package_from_dict
from memeval.memaudit.saturation import Saturation, SaturationError, pieces
from memeval.memaudit.solvers import solve_bnb, solve_exhaustive
from memeval.memaudit.tolerance import values_agree
from memeval.memaudit.writers import run_writer


def test_h_by_hand():
    sat = Saturation.from_specs([{"cap": 2.0}, {"breakpoints": [[0, 0], [1, 0.8], [3, 1.2]]}, None])
    z = np.array([[0.5, 0.5, 0.5], [3.0, 2.0, 3.0], [9.0, 5.0, 0.0]])
    assert np.allclose(sat.h(z), [[0.5, 0.4, 0.5], [2.0, 1.0, 1.0], [2.0, 1.2, 0.0]], rtol=0, atol=1e-12)
    assert sat.h_max.tolist() == [2.0, 1.2, 1.0]
    assert Saturation.from_specs([None, None]) is None, "the default keeps its own exact arithmetic"


@pytest.mark.parametrize("spec, message", [
    ({"breakpoints": [[0, 0], [1, 0.5], [2, 1.5]]}, "not concave"),
    ({"breakpoints": [[0, 0], [1, 1], [2, 0.5]]}, "decreases"),
    ({"breakpoints": [[0.5, 0], [1, 1]]}, "start at \\[0, 0\\]"),
    ({"breakpoints": [[0, 0], [1, 1], [1, 1.2]]}, "increase strictly"),
    ({"cap": 0}, "cap must be a number > 0"),
    ({"cap": 1, "breakpoints": []}, "expected"),
])
def test_a_bad_saturation_is_one_line_naming_the_unit(spec, message):
    with pytest.raises(SaturationError, match=message):
        pieces(spec)
    doc = json.loads(generate("base", 0).to_json())
    doc["units"][1]["saturation"] = spec
    with pytest.raises(InputError, match=f"units\\[{doc['units'][1]['id']}\\].saturation") as err:
        package_from_dict(doc, "pkg.json")
    assert "\n" not in str(err.value)


def _saturated(seed: int, rng: np.random.Generator):
    pkg = generate("base", seed)
    units = []
    for unit in pkg.units:
        kind = rng.integers(3)
        if kind == 0:
            spec = None
        elif kind == 1:
            spec = {"cap": float(rng.choice([0.5, 1.5, 2.0]))}
        else:
            z1, z2 = float(rng.uniform(0.3, 1.0)), float(rng.uniform(1.2, 2.5))
            h1 = float(rng.uniform(0.3, 0.9)) * z1
            slope2 = float(rng.uniform(0.0, h1 / z1))
            spec = {"breakpoints": [[0, 0], [z1, h1], [z2, h1 + slope2 * (z2 - z1)]]}
        units.append(dataclasses.replace(unit, saturation=spec))
    return dataclasses.replace(pkg, units=tuple(units))


def test_the_json_round_trip_keeps_saturation_and_default_packages_are_unchanged():
    pkg = _saturated(3, np.random.default_rng(3))
    again = package_from_dict(json.loads(pkg.to_json()))
    assert again.to_json() == pkg.to_json()
    assert np.array_equal(again.compiled.saturation.slopes, pkg.compiled.saturation.slopes)
    assert '"saturation"' not in generate("base", 3).to_json()


def test_b_and_b_milp_and_enumeration_agree_under_concave_saturation():
    rng = np.random.default_rng(17)
    checked = 0
    for seed in range(12):
        cp = _saturated(seed, rng).compiled
        assert cp.saturation is not None
        for budget in (2.0, 5.0, 9.0):
            exact = solve_exhaustive(cp, budget)
            bnb, milp = solve_bnb(cp, budget), solve_milp(cp, budget)
            assert bnb.certified and milp.certified
            assert values_agree(bnb.value, exact.value) and values_agree(milp.value, exact.value), (seed, budget)
            assert milp.dual_bound >= exact.value - 1e-9
            for writer in ("gvt", "greedy", "density_only", "recency_raw"):
                assert run_writer(writer, cp, budget).value <= exact.value + 1e-9
            checked += 1
    assert checked == 36


def test_caps_change_the_optimum_the_way_they_should():
    pkg = generate("base", 4)
    capped = dataclasses.replace(pkg, units=tuple(dataclasses.replace(u, saturation={"cap": 2.0})
                                                  for u in pkg.units))
    budget = float(pkg.compiled.costs.sum())  # everything fits: every unit reaches min(cap, total coverage)
    everything = list(range(pkg.compiled.n_candidates))
    z = pkg.compiled.coverage.sum(axis=0)
    assert objective(capped.compiled, everything) == pytest.approx(float(np.minimum(2.0, z) @ pkg.compiled.weights))
    assert solve_bnb(capped.compiled, budget).value >= solve_bnb(pkg.compiled, budget).value
