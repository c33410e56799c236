"""An OPT whose exact solve stopped at the MILP's wall-clock limit proves nothing: its rows are not written, the
sweep says it is incomplete (exit 4, closing line, manifest) and a rerun computes exactly those rows, the same rows
a sweep that never hit the limit writes. The limit is forced tiny through MEMEVAL_MILP_TIME_LIMIT, never by loading
the machine."""

import json

import pytest

from memeval.errors import InputError
from memeval.jsonl import read_rows
from memeval.memaudit.generators import generate
from memeval.memaudit.milp import MilpModel
from memeval.memaudit.outcomes import SolveStatus
from memeval.memaudit.sweep import SweepConfig, run_sweep

SWEEP = ["memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "2,4", "--certify", "milp", "--jobs", "1",
         "--no-progress"]
TINY = "1e-9"


def _rows(path):
    """A sweep's rows without their timings (the only field that differs between two solves of one row)."""
    drop = {"runtime_s", "milp_runtime_s", "parts_runtime_s"}
    out = []
    for row in read_rows(path / "raw_results.jsonl"):
        row = {k: v for k, v in row.items() if k not in drop}
        if row.get("certificate"):
            row["certificate"] = {k: v for k, v in row["certificate"].items() if k not in drop}
        out.append(row)
    return sorted(out, key=lambda r: (r["package_id"], r["budget"], r["method"]))


def test_highs_stopping_at_its_time_limit_is_named_so():
    """cvxpy's status map calls a HiGHS time limit `user_limit`, which the sweep read as a disagreement (exit 3)."""
    result = MilpModel(generate("base", 1).compiled).solve(3.0, time_limit=float(TINY))
    assert result.status == SolveStatus.TIME_LIMIT and not result.certified


def test_rows_cut_by_the_time_limit_are_incomplete_and_a_rerun_computes_them(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_MILP_TIME_LIMIT", TINY)
    out = tmp_path / "sweep"
    cut = cli(*SWEEP, "--out", out)
    assert cut.returncode == 4, cut.stderr
    assert cut.stderr.strip().splitlines()[-1] == (
        "memeval: incomplete: 60 of 60 rows (3 packages) not written: their OPT's exact solve stopped at the MILP's "
        "1e-09 s time limit (MEMEVAL_MILP_TIME_LIMIT raises it); rerun to retry them")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["missing"]["rows"]["missing"] == 60
    assert read_rows(out / "raw_results.jsonl") == []
    [listed] = json.loads(cli("ls", tmp_path, "--json").stdout)
    assert listed["status"] == "incomplete"

    monkeypatch.delenv("MEMEVAL_MILP_TIME_LIMIT")
    again = cli(*SWEEP, "--out", out)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
    assert cli(*SWEEP, "--out", tmp_path / "never-cut").returncode == 0
    assert _rows(out) == _rows(tmp_path / "never-cut"), "rows never depend on the limit having been hit"


def test_a_rerun_computes_exactly_the_rows_the_limit_cut(tmp_path, monkeypatch):
    original = MilpModel.solve

    def cut_at_four(self, budget, time_limit=None, start=None, observe=None):
        return original(self, budget, float(TINY) if budget == 4 else time_limit, start, observe)

    config = SweepConfig(kind="small", distribution="base", seeds=3, budgets=[2, 4], certify="milp", n_jobs=1,
                         n_boot=100)
    monkeypatch.setattr(MilpModel, "solve", cut_at_four)
    first = run_sweep(config, tmp_path / "sweep", progress=False)
    assert first.missing["rows"] == {**first.missing["rows"], "missing": 30, "requested": 60, "packages": 3}
    assert {r["budget"] for r in read_rows(tmp_path / "sweep" / "raw_results.jsonl")} == {2.0}
    monkeypatch.setattr(MilpModel, "solve", original)
    again = run_sweep(config, tmp_path / "sweep", progress=False)
    assert again.complete and (again["computed_rows"], again["reused_rows"]) == (30, 30)
    run_sweep(config, tmp_path / "never-cut", progress=False)
    assert _rows(tmp_path / "sweep") == _rows(tmp_path / "never-cut")


@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf", "nan"])
def test_a_bad_time_limit_is_refused_before_anything_is_written(tmp_path, monkeypatch, value):
    monkeypatch.setenv("MEMEVAL_MILP_TIME_LIMIT", value)
    config = SweepConfig(kind="small", distribution="base", seeds=1, budgets=[2], certify="milp", n_jobs=1)
    with pytest.raises(InputError, match="MEMEVAL_MILP_TIME_LIMIT"):
        run_sweep(config, tmp_path / "sweep", progress=False)
    assert not (tmp_path / "sweep").exists()


def test_union_rows_are_not_written_from_an_optimum_cut_by_the_time_limit(conversations, monkeypatch):
    """A natural sweep's union rows too: at load ≈10 some came back uncertified, and a rerun kept them."""
    from memeval.benchmarks.locomo.natural_source import build_natural
    from memeval.natural.union import union_package, union_rows

    pkg = next(e.package for e in build_natural(conversations[:1]) if e.accepted)
    union = union_package(pkg, conversations[0], "rag_turns")
    monkeypatch.setenv("MEMEVAL_MILP_TIME_LIMIT", TINY)
    assert union_rows(union, [30, 100], solver="milp") == []
    monkeypatch.delenv("MEMEVAL_MILP_TIME_LIMIT")
    rows = union_rows(union, [30, 100], solver="milp")
    assert len(rows) == 6 and all(r.certified for r in rows)


def test_a_restricted_optimum_cut_by_the_time_limit_writes_no_row(tmp_path, monkeypatch):
    """fact_only is an exact optimum too (of the package restricted to facts): cut short, it is no row either."""
    original = MilpModel.solve

    def cut_restricted(self, budget, time_limit=None, start=None, observe=None):
        restricted = len(self.index) < len(self.cp.costs)
        return original(self, budget, float(TINY) if restricted else time_limit, start, observe)

    config = SweepConfig(kind="small", distribution="base", seeds=2, budgets=[2, 4], methods=["opt", "fact_only", "gvt"],
                         solver="milp", n_jobs=1, n_boot=100)
    monkeypatch.setattr(MilpModel, "solve", cut_restricted)
    first = run_sweep(config, tmp_path / "sweep", progress=False)
    assert first.missing["rows"]["missing"] == 4
    assert {r["method"] for r in read_rows(tmp_path / "sweep" / "raw_results.jsonl")} == {"opt", "gvt"}
    monkeypatch.setattr(MilpModel, "solve", original)
    assert run_sweep(config, tmp_path / "sweep", progress=False)["computed_rows"] == 4
    run_sweep(config, tmp_path / "never-cut", progress=False)
    assert _rows(tmp_path / "sweep") == _rows(tmp_path / "never-cut")
