import copy
import json

import numpy as np
import pytest

from memeval.errors import InputError
from memeval.memaudit.generators import generate
from memeval.memaudit.objective import CoverageState, invalidation_covered, marginal_gains, objective
from memeval.memaudit.package import load_package, package_from_dict
from tests.memaudit_helpers import make_package

GOOD = generate("base", 3).to_json_dict()


def _mutate(fn):
    doc = copy.deepcopy(GOOD)
    fn(doc)
    return doc


@pytest.mark.parametrize(
    "mutation, field, offender",
    [
        (lambda d: d["coverage"].append({"candidate": "nope", "unit": "fact:0", "value": 0.5}), "coverage[41].candidate", "nope"),
        (lambda d: d["coverage"].append({"candidate": "fact_0:raw", "unit": "ghost", "value": 0.5}), "coverage[41].unit", "ghost"),
        (lambda d: d["coverage"][0].update(value=1.5), "coverage[0].value", "1.5"),
        (lambda d: d["coverage"][0].update(value=-0.1), "coverage[0].value", "-0.1"),
        (lambda d: d["candidates"][1].update(id="fact_0:raw"), "candidates", "fact_0:raw"),
        (lambda d: d["units"][1].update(id="fact:0"), "units", "fact:0"),
        (lambda d: d["candidates"][2].update(cost=0), "candidates[fact_0:summary].cost", "0"),
        (lambda d: d["candidates"][2].update(cost=-1), "candidates[fact_0:summary].cost", "-1"),
        (lambda d: d["units"][0].update(weight=-1.0), "units[fact:0].weight", "-1.0"),
        (lambda d: d["candidates"][0].update(experience="e99"), "candidates[fact_0:raw].experience", "e99"),
        (lambda d: d.update(schema="memaudit.package/v0"), "schema", "v0"),
        (lambda d: d.pop("units"), "units", "missing"),
        (lambda d: d["experiences"].append(dict(d["experiences"][0])), "experiences", "fact_0"),
    ],
)
def test_invalid_packages_name_package_field_and_id(mutation, field, offender):
    with pytest.raises(InputError) as err:
        package_from_dict(_mutate(mutation), "pkg.json")
    message = str(err.value)
    assert "small-base-s0003" in message and field in message and offender in message


def test_round_trip_is_byte_identical(tmp_path):
    pkg = generate("density_trap", 5)
    path = pkg.write(tmp_path / "p.json")
    again = load_package(path)
    assert again == pkg and again.to_json() == pkg.to_json()


def test_validate_cli(tmp_path, cli):
    good = generate("base", 1).write(tmp_path / "good.json")
    ok = cli("validate", str(good))
    assert ok.returncode == 0 and "valid small-base-s0001" in ok.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_mutate(lambda d: d["coverage"][0].update(value=2))))
    proc = cli("validate", str(bad))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "coverage[0].value" in proc.stderr


def test_objective_clips_and_gains_shrink():
    pkg = make_package(
        [[("a", "fact", 1, {"r": 0.6, "s": 1.0})], [("b", "fact", 1, {"r": 0.6})], [("c", "raw", 2, {"r": 1.0})]],
        {"r": 2.0, "s": 0.5},
    )
    cp = pkg.compiled
    a, b, c = cp.index(["e0:a", "e1:b", "e2:c"])
    assert objective(cp, [a]) == pytest.approx(2 * 0.6 + 0.5)
    assert objective(cp, [a, b]) == pytest.approx(2 * 1.0 + 0.5)  # 1.2 clipped to 1
    assert objective(cp, [a, b, c]) == pytest.approx(2.5)
    state = CoverageState(cp, budget=10)
    before = state.gains(np.array([b, c]))
    state.add(a)
    after = state.gains(np.array([b, c]))
    assert np.all(after <= before + 1e-12)
    assert after == pytest.approx([2 * 0.4, 2 * 0.4])
    assert marginal_gains(cp, np.zeros(2))[c] == pytest.approx(2.0)


def test_invalidation_coverage_is_mean_clipped():
    pkg = make_package([[("t", "tombstone", 1, {"inv": 0.5})], [("u", "update", 1, {"inv2": 1.0})]],
                       {"inv": 1.0, "inv2": 1.0}, invalidation=("inv", "inv2"))
    cp = pkg.compiled
    assert invalidation_covered(cp, cp.index(["e0:t"])) == pytest.approx(0.25)
    assert invalidation_covered(cp, cp.index(["e0:t", "e1:u"])) == pytest.approx(0.75)
    assert invalidation_covered(generate("density_trap", 0).compiled, []) is None


def test_solve_without_a_budget_names_the_file_and_a_scale_and_the_help_says_when_there_is_a_default(tmp_path, cli):
    """Generated and natural packages never carry a budget: --budget's help once promised "the package's own" as a
    default, and the refusal named no file and no scale to pick a value in."""
    pkg = generate("base", 7)
    assert pkg.budget is None
    path = pkg.write(tmp_path / "base-7.json")
    refused = cli("memaudit", "solve", path)
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    total = sum(c.cost for c in pkg.candidates)
    assert str(path) in line and ": budget: " in line and "pass --budget" in line and f"{total:g} in all" in line
    own = tmp_path / "own.json"
    own.write_text(json.dumps({**pkg.to_json_dict(), "budget": 4}))
    assert json.loads(cli("memaudit", "solve", own, "--json", check=True).stdout)["budget"] == 4
    shown = " ".join(cli("memaudit", "solve", "--help").stdout.split())
    assert "default: the package's own budget, if it sets one" in shown
