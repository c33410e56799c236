"""Systems measured on different question sets are named with their n under each table, paired differences use
the questions in common and say how many, and an interval from fewer than two clusters (one conversation, one
package) prints "n/a" under a note naming the method actually used."""

import json

import pytest

from memeval.benchmarks.locomo.report import f1_interval_table, paired_table, run_report
from memeval.benchmarks.locomo.tables import f1_table, j_table, latency_table
from memeval.scoring.aggregate import cluster_bootstrap, paired_difference
from tests.rows import answer, judgment


def _rows(system_questions: int, conversations=("conv-1", "conv-2"), f1=0.5, skip=0):
    """Rows of one system: `system_questions` questions per conversation, the first `skip` of conv-1 left out."""
    return [answer(f"{c}:q{i:04d}", category=1 + i % 4, f1=f1, question="Q?", gold="a", prediction="a",
                   latency_total_s=0.1)
            for c in conversations for i in range(system_questions) if not (c == "conv-1" and i < skip)]


def test_tables_name_each_systems_n_when_the_question_sets_differ():
    same = {"native": _rows(8), "other": _rows(8, f1=0.25)}
    assert "different question sets" not in f1_table(same) + latency_table(same)
    partial = {"native": _rows(8), "imported": _rows(8, f1=0.25, skip=3)}
    for table in (f1_table(partial), f1_table(partial, "mem0"), latency_table(partial),
                  j_table({name: [judgment(r.sample_id, category=r.category, mean=50.0, std=0.0) for r in rows]
                           for name, rows in partial.items()})):
        note = next(line for line in table.splitlines() if "different question sets" in line)
        assert "native n = 16" in note and "imported n = 13" in note and "13 in common" in note


def test_paired_differences_use_the_questions_in_common_and_say_how_many():
    a, b = _rows(8, f1=1.0), _rows(8, f1=0.5, skip=3)
    d = paired_difference(a, b)
    assert (d.n, d.clusters, d.defined) == (13, 2, True)
    table = paired_table({"native": a, "imported": b})
    row = next(line for line in table.splitlines() if line.startswith("| native − imported"))
    assert row.split(" | ")[3] == "13"  # n (in common)
    assert "n (in common)" in table and "intersection of their sample ids" in table
    assert "native n = 16" in table and "imported n = 13" in table


def test_one_conversation_prints_no_interval_and_the_notes_name_the_method_used():
    one = cluster_bootstrap([0.25, 0.25, 0.5], ["conv-1"] * 3)
    assert not one.defined and one.low == one.high  # the "interval" only repeats the estimate
    single = {"a": _rows(4, ("conv-1",), f1=0.75), "b": _rows(4, ("conv-1",), f1=0.5)}
    paired = paired_table(single)
    row = next(line for line in paired.splitlines() if line.startswith("| a − b"))
    assert "n/a (1 conversation)" in row and "[25.00, 25.00]" not in row
    intervals = f1_interval_table(single)
    assert "resampling whole conversations" not in intervals and "item-level" in intervals.split("\n- ")[1]
    assert "n/a (1 question)" in f1_interval_table({"a": _rows(1, ("conv-1",))})
    report = run_report(single)
    assert "n/a (1 conversation)" in report and "[25.00, 25.00]" not in report
    several = f1_interval_table({"a": _rows(4), "b": _rows(4, f1=0.25)})
    assert "resampling whole conversations" in several and "item-level" not in several.split("\n- ", 1)[1]


def test_results_flag_runs_with_other_question_selections(locomo_dir, tmp_path, cli):
    for name, questions in (("four", "first:4"), ("six", "first:6")):
        cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26,conv-30", "--questions", questions,
            "--systems", "rag_turns", "--out", tmp_path / name, "--no-progress", "--json", check=True)
    printed = cli("results", tmp_path / "four", tmp_path / "six", check=True).stdout
    note = next(line for line in printed.splitlines() if "different question sets" in line)
    assert "four · rag_turns n = 8" in note and "six · rag_turns n = 12" in note
    assert "8 in common" in note
    assert "resampling whole conversations" in printed
    alone = cli("results", tmp_path / "four", check=True).stdout
    assert "different question sets" not in alone


def test_a_sweep_over_one_package_prints_no_interval(tmp_path, cli):
    printed = cli("memaudit", "sweep", "small", "--n-seeds", "1", "--budgets", "4", "--methods", "opt,density_only",
                  "--jobs", "1", "--out", tmp_path / "sweep", "--no-progress", check=True).stdout
    row = next(line for line in printed.splitlines() if line.startswith("| density_only |"))
    assert "n/a (1 package)" in row
    assert "fewer than two units to resample" in printed
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    assert all(r["n"] == 1 for r in summary["rows"] if r.get("mean_ratio") is not None)


@pytest.fixture()
def one_package(monkeypatch):
    from memeval.publication import tables
    from memeval.reports.memaudit import PUBLISHED_BASE
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    def summary(methods_budgets):
        return {"packages": 1, "opt_certified": 1, "opt_rows": 1,
                "rows": [{"method": m, "budget": float(b), "distribution": "base", "mean_ratio": 0.5, "ci_low": 0.5,
                          "ci_high": 0.5, "n": 1} for m, b in methods_budgets]}

    base = summary([(m, b) for m, by in PUBLISHED_BASE.items() for b in by])
    natural = summary([("estimated_gvt", b) for b in PAPER_NATURAL_ESTIMATED_GVT])
    monkeypatch.setattr(tables, "base_sweep_summary", lambda root: base)
    monkeypatch.setattr(tables, "natural_summary", lambda root: natural)
    return tables


def test_publication_tables_print_no_interval_for_one_package(one_package, tmp_path):
    base = one_package.memaudit_base_table(tmp_path)
    assert "[0.500, 0.500]" not in base.markdown and "n/a (1 package)" in base.markdown
    assert "n/a where a mean rests on one package" in base.caption
    natural = one_package.natural_writers_table(tmp_path)
    assert "[0.500, 0.500]" not in natural.markdown and "0.500 n/a (1 package)" in natural.markdown
    assert "n/a where a mean rests on one package" in natural.caption
