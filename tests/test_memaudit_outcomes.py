"""The typed MEMAUDIT results (memaudit/outcomes.py) write exactly the JSON the free dicts and strings did: statuses
as strings, certificates with the same keys per kind of check, summaries as the same document; and the solver
modules import each other's results from below, not from each other."""

import json
import subprocess
import sys

import pytest

from memeval.memaudit.generators import generate
from memeval.memaudit.milp import MilpModel
from memeval.memaudit.outcomes import Certificate, SolveResult, SolveStatus, SummaryRow, SweepSummary
from memeval.memaudit.solvers import solve_exact
from memeval.memaudit.sweep import SweepConfig, certificate_tolerances, run_sweep


def test_a_status_is_its_string_everywhere():
    assert json.dumps({"status": SolveStatus.OPTIMAL_GAP_NONZERO}) == '{"status": "optimal_gap_nonzero"}'
    assert f"status {SolveStatus.NODE_LIMIT}" == "status node_limit" and str(SolveStatus.ERROR) == "error"
    assert SolveStatus.DISAGREEMENT == "disagreement" and SolveStatus("optimal") is SolveStatus.OPTIMAL
    later = SolveStatus("a_status_cvxpy_adds_later")  # kept as the solver spells it, never refused
    assert later == "a_status_cvxpy_adds_later" and json.dumps(later) == '"a_status_cvxpy_adds_later"'
    assert SolveResult("bnb", 1.0, [], 0.0, "node_limit", False, 0.0).status is SolveStatus.NODE_LIMIT


def test_solvers_and_writers_report_typed_statuses():
    cp = generate("base", 3).compiled
    for method in ("bnb", "milp", "both"):
        result = solve_exact(cp, 4, None, None, method)
        assert result.status is SolveStatus.OPTIMAL and result.certified, method
    large = generate("base", 0, facts=12, updates=6).compiled
    assert solve_exact(large, 30, None, None, "bnb", max_states=5).status is SolveStatus.NODE_LIMIT
    both = solve_exact(cp, 4, None, None, "both")
    assert both.info["milp"]["status"] is SolveStatus.OPTIMAL


def test_certificates_write_the_keys_each_check_wrote():
    cp = generate("base", 5).compiled
    tolerances = certificate_tolerances()
    bnb = solve_exact(cp, 4, None, None, "bnb")
    plain = Certificate.of(bnb, tolerances).as_dict()
    assert plain == {"opt_solver": "bnb", "opt_status": "optimal", "opt_nodes": bnb.nodes, "opt_gap": bnb.gap,
                     "opt_dual_bound": bnb.dual_bound, "tolerances": tolerances}
    both = solve_exact(cp, 4, None, None, "both")
    assert Certificate.of(both, tolerances).as_dict() == {
        "opt_solver": "bnb+milp", "opt_status": "optimal", "opt_nodes": both.nodes, "opt_gap": both.gap,
        "opt_dual_bound": both.dual_bound, "tolerances": tolerances, "agree": True}
    milp = MilpModel(cp, 1).solve(4)
    checked = Certificate.of(bnb, tolerances).checked_by(milp, True).as_dict()
    assert checked == {**plain, "milp_value": milp.value, "milp_status": "optimal", "milp_gap": milp.gap,
                       "milp_dual_bound": milp.dual_bound, "milp_nodes": milp.nodes, "milp_runtime_s": milp.runtime_s,
                       "agree": True}
    for doc in (plain, checked, {"opt_nodes": 3, "opt_solver": "bnb", "opt_status": "optimal"}):  # older rows: 3 keys
        assert Certificate.from_dict(json.loads(json.dumps(doc))).as_dict() == doc
    assert not Certificate.from_dict(checked).disagrees
    assert Certificate.from_dict({**checked, "agree": False}).disagrees
    assert Certificate.from_dict({**plain, "opt_status": "disagreement"}).disagrees


def test_the_summary_is_typed_and_reads_and_writes_as_the_document_it_was(tmp_path):
    config = SweepConfig(kind="small", distribution="base", seeds=2, budgets=[2.0, 6.0], methods=["opt", "gvt"],
                         n_jobs=1, n_boot=200)
    summary = run_sweep(config, tmp_path / "s", progress=False)
    written = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert isinstance(summary, SweepSummary) and all(isinstance(r, SummaryRow) for r in summary.rows)
    assert summary == written and dict(summary) == written and summary.as_dict() == written
    assert summary["opt_certified"] == summary.opt_certified == 4 and summary.get("moved_aside") is None
    assert summary["rows"][0] == summary.rows[0].as_dict() and sorted(summary) == sorted(written)
    assert SweepSummary.from_dict(written).as_dict() == written
    text = (tmp_path / "s" / "summary.json").read_text()
    assert text == json.dumps(SweepSummary.from_dict(written).as_dict(), indent=2, sort_keys=True) + "\n"
    moved = run_sweep(config, tmp_path / "s", progress=False, restart=True)
    assert moved["moved_aside"] == moved.moved_aside and "moved_aside" not in moved.as_dict()
    union = SummaryRow("natural", 30.0, "union:mem0:upper", 1.0, 1.0, 1.0, 1, 1, 0, None, 2.0, "mem0", "upper")
    assert list(union.as_dict())[:5] == ["distribution", "budget", "method", "system", "pruning"]
    assert "system" not in SummaryRow.from_dict(written["rows"][0]).as_dict()


@pytest.mark.parametrize("module, not_imported", [("memeval.memaudit.milp", "memeval.memaudit.solvers"),
                                                  ("memeval.llm.openai_backend", "memeval.llm.client")])
def test_the_lower_module_of_a_former_cycle_does_not_import_the_upper_one(module, not_imported):
    code = f"import sys, {module}; print({not_imported!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
