"""The figure rules, checked on what `save_figure` saved (`name.json`): each rule breaks on a figure drawn to break
it, and the LoCoMo figures drawn from a real offline run keep every rule."""

import json

import matplotlib.pyplot as plt
import pytest

from memeval.artifacts import stored
from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.publication.figure_rules import OVERALL_CATEGORIES, problems_in
from memeval.publication.marks import Panel, finish
from memeval.publication.publish import figures
from memeval.publication.style import save_figure

CAPTION = "Two systems. It does not show anything else."


def saved_problems(fig, tmp_path, name="fig_x") -> list[str]:
    save_figure(fig, name, tmp_path)
    plt.close(fig)
    return problems_in(tmp_path)[f"{name}.json"]


def test_a_clean_figure_passes_and_its_record_holds_values_intervals_and_marks(tmp_path):
    fig, ax = plt.subplots()
    panel = Panel(ax, protocol="ours", categories=OVERALL_CATEGORIES)
    panel.bars("rag_turns", [0, 1, 2], [0.0, None, 3.0], [0.0, None, 2.0], [0.0, None, 4.0], width=0.4,
               interval="bootstrap")
    panel.bars("full_context", [0.4, 1.4, 2.4], [1.0, 2.0, 3.0], [0.5, 1.5, 2.5], [1.5, 2.5, 3.5], width=0.4,
               interval="bootstrap")
    ax.set_ylabel(f"F1 ×100, {OVERALL_CATEGORIES}")
    finish(fig, CAPTION)
    assert saved_problems(fig, tmp_path) == []
    record = json.loads((tmp_path / "fig_x.json").read_text())
    series = record["panels"][0]["series"][0]
    assert series["marks"] == ["zero", "not_run", "value"] and series["y"] == [0.0, None, 3.0]
    assert series["hatch"] != record["panels"][0]["series"][1]["hatch"]
    assert record["caption"] == CAPTION


@pytest.mark.parametrize("breaking, expected", [
    ("foreign_protocol", "another protocol's number goes to its own panel"),
    ("colour_alone", "differ by colour alone"),
    ("no_interval", "an estimate drawn without an interval"),
    ("around_the_layer", "drawn around the marks layer"),
    ("categories_unsaid", "an overall score whose labels do not say"),
    ("value_outside_interval", "outside its interval"),
])
def test_each_rule_breaks_on_a_figure_drawn_to_break_it(tmp_path, breaking, expected):
    fig, ax = plt.subplots()
    panel = Panel(ax, protocol="ours", categories=OVERALL_CATEGORIES if breaking == "categories_unsaid" else None)
    panel.line("gvt", [1, 2], [0.5, 0.6], [0.4, 0.5], [0.6, 0.7], interval="bootstrap")
    if breaking == "foreign_protocol":
        panel.points("paper", [1], [0.9], uncertainty="published", protocol="the paper's LongMemEval packages",
                     label="paper")
    elif breaking == "colour_alone":
        panel.line("gvt", [1, 2], [0.1, 0.2], [0.0, 0.1], [0.2, 0.3], label="gvt again", interval="bootstrap")
    elif breaking == "no_interval":
        panel.line("greedy", [1, 2], [0.3, 0.4])
    elif breaking == "around_the_layer":
        ax.plot([1, 2], [0.2, 0.2], label="drawn by hand")
    elif breaking == "value_outside_interval":
        panel.line("greedy", [1, 2], [0.3, 0.9], [0.2, 0.2], [0.4, 0.4], interval="bootstrap")
    finish(fig, CAPTION)
    found = saved_problems(fig, tmp_path)
    assert any(expected in p for p in found), found


def test_a_caption_must_say_what_the_figure_does_not_show(tmp_path):
    fig, ax = plt.subplots()
    Panel(ax, protocol="ours").line("gvt", [1, 2], [0.5, 0.6], [0.4, 0.5], [0.6, 0.7], interval="bootstrap")
    finish(fig, "Two systems.")
    assert any("does not show" in p for p in saved_problems(fig, tmp_path))


def test_the_locomo_figures_of_a_real_run_keep_every_rule(locomo_dir, tmp_path):
    """The prototype questions of conv-26 hold categories 1, 2 and 4 only: the figure draws those, never an
    empty column claimed as 'categories 1–5', and no published LLM-reader row sits on the extractive reader's axes."""
    root = tmp_path / "reports"
    run_locomo(LocomoRunConfig(out=str(stored("locomo_run", root)), data=str(locomo_dir), conversations="conv-26",
                               questions="prototype", systems=["rag_turns", "full_context", "observations"],
                               progress=False))
    out = tmp_path / "figures"
    for name in ("fig_locomo", "fig_locomo_heatmap", "fig_locomo_pareto", "fig_recall_bands"):
        fig, _ = figures()[name](root)
        save_figure(fig, name, out)
        plt.close(fig)
    assert problems_in(out) == {f"{n}.json": [] for n in ("fig_locomo", "fig_locomo_heatmap",
                                                          "fig_locomo_pareto", "fig_recall_bands")}
    record = json.loads((out / "fig_locomo.json").read_text())
    by_category, overall = record["panels"][0], record["panels"][1]
    assert all(s["x"] == [0.0 + i * 0.8 / 3, 1.0 + i * 0.8 / 3, 2.0 + i * 0.8 / 3]
               for i, s in enumerate(by_category["series"]))
    assert "categories 1–5" not in record["caption"] and "1 multi-hop, 2 temporal, 4 single-hop" in record["caption"]
    assert [s["name"] for s in overall["series"]] == ["rag_turns", "full_context", "observations"]
    assert not any("published" in s["label"] for p in record["panels"] for s in p["series"])
    assert OVERALL_CATEGORIES in overall["xlabel"]
    pareto = json.loads((out / "fig_locomo_pareto.json").read_text())
    assert "no cost axis" in pareto["caption"], "the extractive reader used no model, so nothing is priced"
