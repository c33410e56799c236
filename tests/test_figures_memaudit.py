"""The MEMAUDIT and graph-study figures and tables, drawn from small real runs (a base sweep, two stress sweeps,
natural packages with their exported stores, a graph80 study, a LoCoMo run) and checked on what `save_figure`
saved: every rule of `figure_rules`, and the facts a reviewer sent back."""

import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from memeval import api
from memeval.artifacts import stored
from memeval.jsonl import read_rows
from memeval.publication import publish
from memeval.publication.figure_rules import problems_in
from memeval.publication.style import save_figure

MEMAUDIT_FIGURES = ("fig_budget_sweep", "fig_validity", "fig_natural_writers", "fig_natural_stores",
                    "fig_graph_study", "fig_ratio_ecdf", "fig_bnb_nodes")
WRITERS = ["opt", "gvt", "greedy", "density_only", "recency_raw", "fact_only", "no_tombstone_opt", "random"]
BASE_BUDGETS = [2, 3, 16]  # 3 is no budget of the paper's: its crosses must stay off it


@pytest.fixture(scope="module")
def root(tmp_path_factory, locomo_dir):
    from memeval.benchmarks.graph80.task import StudyConfig, run_study
    from memeval.benchmarks.locomo.natural_build import build_directory
    from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
    from memeval.cli import main

    root = tmp_path_factory.mktemp("reports")
    api.sweep(api.SweepConfig(kind="small", distribution="base", seeds=6, budgets=BASE_BUDGETS, methods=WRITERS,
                              n_jobs=1), stored("base_sweep", root), progress=False)
    for distribution in ("update_chain", "density_trap"):
        api.sweep(api.SweepConfig(kind="small", distribution=distribution, seeds=3, budgets=[6], methods=WRITERS,
                                  n_jobs=1), stored("stress_sweeps", root) / f"sweep_{distribution}", progress=False)
    packages = stored("natural_packages", root)
    build_directory(packages, str(locomo_dir), target=3)
    api.sweep(api.SweepConfig(kind="natural", budgets=[30.0, 100.0], packages_dir=str(packages), n_jobs=1,
                              methods=["opt", "gvt", "estimated_gvt", "greedy", "recency_raw", "fact_only"]),
              stored("natural_sweep", root), progress=False)
    assert main(["graph80", "generate", "--seed", "0", "--out", str(root / "graph80")]) == 0
    run_study(StudyConfig(str(root / "graph80"), str(stored("graph_study", root)),
                          ["memory_graph:hops=1", "chunks", "no_memory"], repeats=2, progress=False))
    run_locomo(LocomoRunConfig(out=str(stored("locomo_run", root)), data=str(locomo_dir), conversations="conv-26",
                               systems=["rag_turns"], progress=False))
    return root


@pytest.fixture(scope="module")
def saved(root, tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    figures = {}
    for name in MEMAUDIT_FIGURES:
        fig, _ = publish.figures()[name](root)
        save_figure(fig, name, out)
        figures[name] = fig
    yield out, figures
    for fig in figures.values():
        plt.close(fig)


def record(saved, name) -> dict:
    return json.loads((saved[0] / f"{name}.json").read_text())


def series(panel: dict) -> dict[str, dict]:
    return {s["name"]: s for s in panel["series"]}


def test_every_memaudit_figure_keeps_every_rule(saved):
    assert problems_in(saved[0]) == {f"{name}.json": [] for name in MEMAUDIT_FIGURES}


def test_budget_sweep_shows_every_writer_and_the_paper_only_at_budgets_it_ran(saved):
    from memeval.reports.memaudit import PUBLISHED_BASE

    panel = record(saved, "fig_budget_sweep")["panels"][0]
    by = series(panel)
    looks = {name: (s["marker"], s["linestyle"]) for name, s in by.items() if s["kind"] == "line"}
    assert len(set(looks.values())) == len(looks) == len(WRITERS) - 1, "opt (1 by definition) is not drawn"
    assert looks["fact_only"] != looks["no_tombstone_opt"] and looks["greedy"] != looks["gvt"]
    for budget, mine, other in zip(BASE_BUDGETS, by["fact_only"]["x"], by["no_tombstone_opt"]["x"], strict=True):
        assert mine != other and max(abs(np.log2(x / budget)) for x in (mine, other)) < 0.25, "dodged, at its budget"
    paper = by["paper:no_tombstone_opt"]
    assert paper["uncertainty"] == "published" and "paper" in paper["label"] and paper["protocol"] == panel["protocol"]
    assert paper["x"] == [2.0, 16.0] and paper["y"] == [PUBLISHED_BASE["no_tombstone_opt"][b] for b in (2, 16)]
    recency = by["recency_raw"]
    assert recency["y"][0] == 0.0 and recency["marks"][0] == "zero", "recency_raw keeps nothing at B = 2"


def test_ratio_ecdf_names_writers_equal_on_every_package(root, tmp_path):
    from memeval.publication.figures_memaudit import ratio_ecdf
    from memeval.publication.readers import base_sweep_rows

    rows = base_sweep_rows(root)
    fact = {r.package_id: r.ratio for r in rows if r.method == "fact_only" and r.budget == 2}
    assert fact == {r.package_id: r.ratio for r in rows if r.method == "no_tombstone_opt" and r.budget == 2}
    fig, _ = ratio_ecdf(rows, budget=2)
    save_figure(fig, "ecdf", tmp_path)
    plt.close(fig)
    by = series(json.loads((tmp_path / "ecdf.json").read_text())["panels"][0])
    assert by["no_tombstone_opt"]["label"] == "no_tombstone_opt (= fact_only on every package)"
    assert (by["fact_only"]["marker"], by["fact_only"]["linestyle"]) != (by["no_tombstone_opt"]["marker"],
                                                                         by["no_tombstone_opt"]["linestyle"])
    assert all(s["kind"] == "step" and s["uncertainty"] == "distribution" for s in by.values())
    assert by["fact_only"]["y"][-1] == 1.0 and len(by["fact_only"]["y"]) == len(fact) + 1


def test_validity_records_cells_with_intervals_and_draws_a_zero_gap(saved, root):
    from memeval.publication.readers import stress_summaries
    from memeval.reports.memaudit import PUBLISHED_STRESS_NO_TOMBSTONE_B6

    heat, gap = record(saved, "fig_validity")["panels"]
    assert {s["kind"] for s in heat["series"]} == {"cell"} and len(heat["series"]) == len(WRITERS) - 1
    summaries = stress_summaries(root)
    greedy = series(heat)["greedy"]
    assert greedy["x"] == ["density_trap", "update_chain"]
    for distribution, value, low, high in zip(greedy["x"], greedy["y"], greedy["low"], greedy["high"], strict=True):
        row = next(r for r in summaries[distribution]["rows"] if r["method"] == "greedy")
        assert (value, low, high) == (row["mean_ratio"], row["ci_low"], row["ci_high"])
    bars, paper = series(gap)["no_tombstone_opt"], series(gap)["paper:no_tombstone_opt"]
    assert bars["y"][0] == 0.0 and bars["marks"][0] == "zero", "density_trap needs no tombstone: a visible zero"
    assert bars["y"][1] > 0.4 and paper["y"] == [pytest.approx(1 - PUBLISHED_STRESS_NO_TOMBSTONE_B6["update_chain"])]


def test_natural_writers_keeps_the_longmemeval_number_off_the_locomo_panel(saved):
    from memeval.publication.figures_memaudit import PAPER_NATURAL_PROTOCOL
    from memeval.reports.natural import PAPER_NATURAL_ESTIMATED_GVT

    data = record(saved, "fig_natural_writers")
    ours, paper = data["panels"]
    assert not any("LongMemEval" in s["protocol"] or "paper" in s["label"] for s in ours["series"])
    assert {s["kind"] for s in ours["series"]} == {"bar"} and all(s["low"] and s["high"] for s in ours["series"])
    assert paper["protocol"] == PAPER_NATURAL_PROTOCOL and "LongMemEval" in paper["protocol"]
    assert series(paper)["paper:estimated_gvt"]["y"] == list(PAPER_NATURAL_ESTIMATED_GVT.values())
    assert "own panel" in data["caption"]
    recency = series(ours)["recency_raw"]
    assert recency["y"][0] == 0.0 and recency["marks"][0] == "zero"


def test_natural_stores_intervals_are_over_packages_and_upper_is_explained(saved, root):
    from memeval.publication.readers import natural_raw_rows

    data = record(saved, "fig_natural_stores")
    rows = [r for r in natural_raw_rows(root) if r.is_union and r.certified]
    for panel in data["panels"]:
        upper = series(panel)["upper"]
        assert "exact OPT over the store's own memories" in upper["label"]
        system = panel["title"]
        for budget, value, low, high in zip([30.0, 100.0], upper["y"], upper["low"], upper["high"], strict=True):
            ratios = [r.ratio for r in rows if (r.system, r.pruning, r.budget) == (system, "upper", budget)]
            assert len(ratios) == 3 and value == pytest.approx(np.mean(ratios), abs=1e-12) and low <= value <= high
    assert "'upper' is no pruning rule but the exact OPT over the store's own memories" in data["caption"]


def test_graph_study_has_one_label_size_no_nested_parentheses_and_intervals_over_questions(saved, root):
    fig = saved[1]["fig_graph_study"]
    assert fig.axes[0].yaxis.label.get_size() == fig.axes[1].yaxis.label.get_size()
    data = record(saved, "fig_graph_study")
    for panel in data["panels"]:
        for text in (panel["title"], panel["ylabel"], panel["xlabel"]):
            assert not re.search(r"\([^)]*\(", text), text
    score = series(data["panels"][0])
    questions = read_rows(stored("graph_study", root) / "rows.jsonl")
    chunks = [r["score"] for r in questions if r["system"] == "chunks" and r["type"] == "fact"]
    assert len(chunks) == 40 and score["chunks"]["y"][0] == pytest.approx(np.mean(chunks), abs=1e-12)
    assert score["chunks"]["low"][-1] < score["chunks"]["y"][-1] < score["chunks"]["high"][-1]
    assert score["no_memory"]["marks"] == ["zero"] * 5, "no memory answers nothing: five visible zeros"


def test_bnb_nodes_records_each_box(saved, root):
    from memeval.publication.readers import base_sweep_rows

    box = record(saved, "fig_bnb_nodes")["panels"][0]["series"][0]
    assert box["kind"] == "box" and box["x"] == [float(b) for b in BASE_BUDGETS]
    opt = [r for r in base_sweep_rows(root) if r.method == "opt"]
    assert box["y"] == [float(np.median([max(1, r.certificate["opt_nodes"]) for r in opt if r.budget == b]))
                        for b in BASE_BUDGETS]


@pytest.mark.parametrize("estimate, low, high, units, printed", [
    (0.4875, 0.38, 0.60, 80, "0.49 [0.38, 0.60]"),  # width 0.22: two decimals
    (0.6548, 0.6448, 0.6651, 60, "0.655 [0.645, 0.665]"),  # width 0.02: three
    (0.7000000000000001, 0.7, 0.7, 20, "0.700 (all 20 packages equal)"),  # never "0.700 ± 0.000"
    (0.5, 0.5, 0.5, 1, "0.500 n/a (1 package)"),
    (None, None, None, 0, "–"),
])
def test_a_table_prints_an_estimate_at_the_precision_of_its_interval(estimate, low, high, units, printed):
    from memeval.publication.tables import estimate_cell

    assert estimate_cell(estimate, low, high, units) == printed


def test_tables_use_readable_names_one_formatter_and_explain_the_adversarial_column(root):
    from memeval.benchmarks.graph80.publication import graph_study_table
    from memeval.benchmarks.locomo.categories import ADVERSARIAL
    from memeval.benchmarks.locomo.publication import locomo_answers, locomo_f1_table
    from memeval.publication.figures_memaudit import graph_intervals
    from memeval.publication.tables import interval_cell, natural_stores_table

    graph = graph_study_table(root)
    assert "±" not in graph.markdown
    intervals = graph_intervals(read_rows(stored("graph_study", root) / "rows.jsonl"))
    line = next(x for x in graph.markdown.splitlines() if x.startswith("| chunks |"))
    assert line.endswith(f"| {interval_cell(intervals[('chunks', 'all')]['score'], 'question')} |")
    stores = natural_stores_table(root)
    header = stores.markdown.splitlines()[0]
    assert not any(raw in header for raw in ("raw_F", "fitting_budget", "exported |", "union_ratio"))
    assert "F / OPT(package ∪ store) [95% CI]" in header and "upper: exact OPT over the store's own memories" in \
        stores.caption
    table = locomo_f1_table(root)
    rows = [r for r in locomo_answers(stored("locomo_run", root))["rag_turns"] if r.category == ADVERSARIAL]
    abstained = sum(1 for r in rows if r.f1 == 1)
    assert rows and f"rag_turns {abstained} of {len(rows)}" in table.markdown
    assert "**Adversarial (5):** the official LoCoMo scorer gives a category-5 answer 1 only when it contains " \
           "\"not mentioned\"" in table.markdown and "The extractive reader" in table.markdown
