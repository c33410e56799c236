"""The third exact solver (memaudit/parts.py): optima by independent parts agree with B&B and with exhaustive
enumeration on every distribution, under concave saturation, with an allowed set and k > 1, through both ways of
combining parts (DP over whole costs, frontier merging for other costs); it refuses rather than guesses when a part
is too large; and `--certify parts` gives a sweep the same rows as `--certify milp`, certificates aside."""

import dataclasses
import json

import numpy as np
import pytest

from memeval.memaudit.generators import DISTRIBUTIONS, generate
from memeval.memaudit.objective import objective, store_cost
from memeval.memaudit.outcomes import SolveStatus
from memeval.memaudit.package import compile_package
from memeval.memaudit.parts import solve_parts
from memeval.memaudit.solvers import solve_bnb, solve_exact, solve_exhaustive
from memeval.memaudit.tolerance import values_agree
from tests.memaudit_helpers import make_package

SHARES = (0.05, 0.2, 0.45, 1.0)


def _check(cp, budget, k=None, allowed=None, reference=None):
    got = solve_parts(cp, budget, k, allowed)
    want = (reference or solve_bnb)(cp, budget, k, allowed)
    assert got.certified and got.status == SolveStatus.OPTIMAL, got.info
    assert values_agree(got.value, want.value), (cp.package_id, budget, got.value, want.value)
    assert values_agree(got.value, objective(cp, got.selected)) and store_cost(cp, got.selected) <= budget + 1e-9
    if allowed is not None:
        assert all(allowed[i] for i in got.selected)
    per_group = np.bincount(cp.group_of[got.selected], minlength=len(cp.groups)) if got.selected else [0]
    assert max(per_group) <= (cp.max_per_group if k is None else k)
    return got


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_parts_agree_with_b_and_b_on_every_distribution(distribution):
    for seed in range(8):
        cp = generate(distribution, seed).compiled
        total = float(cp.costs.sum())
        for share in SHARES:
            _check(cp, share * total)


def test_parts_agree_with_enumeration_with_k_two_and_an_allowed_set():
    rng = np.random.default_rng(5)
    for seed in range(6):
        cp = generate("summary_tradeoff", seed).compiled
        allowed = rng.random(cp.n_candidates) < 0.7
        for budget in (3.0, 8.0, 20.0):
            _check(cp, budget, 2, None, solve_exhaustive)
            _check(cp, budget, 1, allowed, solve_exhaustive)


def test_parts_agree_under_concave_saturation():
    from tests.test_memaudit_saturation import _saturated

    rng = np.random.default_rng(17)
    for seed in range(8):
        cp = _saturated(seed, rng).compiled
        assert cp.saturation is not None
        for budget in (2.0, 5.0, 9.0):
            _check(cp, budget, reference=solve_exhaustive)


def test_costs_off_the_quarter_grid_are_combined_by_merging_frontiers():
    for seed in range(6):
        pkg = generate("base", seed)
        thirds = dataclasses.replace(pkg, candidates=tuple(dataclasses.replace(c, cost=c.cost / 3.0)
                                                            for c in pkg.candidates))
        cp = compile_package(thirds)
        for share in SHARES:
            got = _check(cp, share * float(cp.costs.sum()))
            assert got.info["combine"] == "merge"
    assert solve_parts(generate("base", 0).compiled, 5.0).info["combine"] == "dp"


def test_independent_experiences_are_separate_parts_and_shared_units_join_them():
    pkg = make_package([[("a1", "fact", 2, {"u1": 1.0}), ("a2", "fact", 1, {"u1": 0.5})],
                        [("b1", "fact", 2, {"u1": 1.0, "u2": 1.0})],
                        [("c1", "fact", 3, {"u3": 1.0})],
                        [("d1", "fact", 1, {})]],
                       {"u1": 1.0, "u2": 1.0, "u3": 2.0})
    got = solve_parts(pkg.compiled, 5.0)
    assert got.info["parts"] == 2, "a and b share u1; c stands alone; d covers nothing"
    assert got.value == solve_exhaustive(pkg.compiled, 5.0).value == 4.0


def test_a_part_too_large_is_refused_not_guessed():
    cp = generate("redundancy_heavy", 0).compiled
    got = solve_parts(cp, 10.0, max_part_choices=2)
    assert got.status == SolveStatus.NODE_LIMIT and not got.certified and "refused" in got.info
    assert solve_exact(cp, 10.0, method="parts").certified


def test_certify_parts_gives_the_rows_of_certify_milp(tmp_path, cli):
    outs = {}
    for certify in ("milp", "parts"):
        out = tmp_path / certify
        cli("memaudit", "sweep", "small", "--n-seeds", "6", "--budgets", "2,4,8", "--certify", certify,
            "--no-progress", "--out", out, check=True)
        outs[certify] = [json.loads(line) for line in (out / "raw_results.jsonl").read_text().splitlines()]
    keyed = {c: {(r["package_id"], r["budget"], r["method"]): r for r in rows} for c, rows in outs.items()}
    assert keyed["milp"].keys() == keyed["parts"].keys() and len(keyed["milp"]) == len(outs["milp"]) > 0
    for key, a in keyed["milp"].items():
        b = dict(keyed["parts"][key])
        a = dict(a)
        cert_a, cert_b = a.pop("certificate", None), b.pop("certificate", None)
        a.pop("runtime_s"), b.pop("runtime_s")
        assert a == b
        if a["method"] == "opt":
            assert cert_b["agree"] is True and cert_b["parts_status"] == "optimal" and "milp_value" not in cert_b
            assert values_agree(cert_b["parts_value"], cert_a["milp_value"])


def test_a_row_parts_refuses_is_checked_by_the_milp_not_failed(tmp_path, cli):
    """A part too large to enumerate is a refusal, not a disagreement: under --certify parts that row's OPT is
    checked by the MILP (its certificate says so) and the sweep goes on."""
    out = tmp_path / "uc7"
    run = cli("memaudit", "sweep", "small", "--distribution", "update_chain", "--count", "7", "--n-seeds", "2",
              "--budgets", "1,6", "--methods", "opt,gvt", "--certify", "parts", "--no-progress", "--out", out)
    assert run.returncode == 0, run.stderr
    certificates = {(r["package_id"], r["budget"]): r["certificate"]
                    for r in map(json.loads, (out / "raw_results.jsonl").read_text().splitlines())
                    if r["method"] == "opt"}
    assert len(certificates) == 4 and all(c["agree"] for c in certificates.values())
    checked_by_milp = {key for key, c in certificates.items() if "milp_value" in c}
    assert checked_by_milp and all("parts_value" not in certificates[key] for key in checked_by_milp)
