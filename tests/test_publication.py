import json

from memeval.artifacts import stored
from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.publication.contribution import Contribution
from memeval.publication.publish import figures
from tests.rows import answer_row, judgment_row


def test_locomo_figure_adds_a_j_panel_only_when_judgments_exist(locomo_dir, tmp_path):
    run = stored("locomo_run", tmp_path)
    run_locomo(LocomoRunConfig(out=str(run), data=str(locomo_dir), conversations="conv-26", questions="prototype",
                               systems=["rag_turns"], progress=False))
    fig, caption = figures()["fig_locomo"](tmp_path)
    assert len(fig.axes) == 3 and "1 conversation(s), 20 answers" in caption
    overall = fig.axes[1]
    labels = [t.get_text() for t in overall.get_yticklabels()]
    assert labels == ["rag_turns"], "published LLM-reader rows stay in tab_locomo_f1, off the extractive axes"
    def judgment(i, protocol, mean):
        return judgment_row(f"conv-26:q{i:04d}", system="rag_turns", protocol=protocol, scores=[mean], mean=mean,
                            run_count=1)

    rows = ([judgment(0, "graded", 10.0)]  # superseded by the retried row below
            + [judgment(i, "graded", 50.0) for i in range(3)] + [judgment(i, "binary", 100.0) for i in range(3)])
    (run / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fig, _ = figures()["fig_locomo"](tmp_path)
    assert len(fig.axes) == 4
    bars = [b for b in fig.axes[3].patches if b.get_width() > 0]
    assert [round(b.get_width(), 6) for b in bars] == [50.0], "graded only, latest row per question"
    assert "graded judge" in fig.axes[3].get_xlabel()

    from memeval.benchmarks.locomo.publication import locomo_j_table
    from memeval.publication.headline import headline_table

    j_tables = locomo_j_table(tmp_path).markdown
    assert j_tables.index("**binary judge**") < j_tables.index("**graded judge**")
    assert "| rag_turns | binary (ours) | – | – | – | 100.00 ± 0.00 | 100.00 ± 0.00 | 3 |" in j_tables
    assert "| rag_turns | graded (ours) | – | – | – | 50.00 ± 0.00 | 50.00 ± 0.00 | 3 |" in j_tables
    assert "rag_turns 100.00 (binary judge); rag_turns 50.00 (graded judge)" in headline_table(tmp_path).markdown
    # every J carries its judge's leniency, J sits beside the answer length, and one system gets its own MDE
    assert "J (graded judge, ours) — leniency not measured." in j_tables
    assert "| rag_turns | 1–4 | 50.0 | [" in j_tables and "answer words (mean)" in j_tables
    assert "| rag_turns (alone) | 1–4 | 50.0 | – | 3 |" in j_tables


def test_locomo_tables_score_both_f1_modes_and_show_published_j_without_judgments(locomo_dir, tmp_path):
    from memeval.benchmarks.locomo.publication import locomo_f1_table, locomo_j_table
    from memeval.qa.answer_pass import load_answers
    from memeval.scoring.f1 import score_f1

    run = stored("locomo_run", tmp_path)
    run_locomo(LocomoRunConfig(out=str(run), data=str(locomo_dir), conversations="conv-26", questions="prototype",
                               systems=["rag_turns"], progress=False))
    table = locomo_f1_table(tmp_path)
    locomo_part, mem0_part = table.markdown.split("F1 mode: `locomo`")
    rows = [r for r in load_answers(run / "answers.jsonl") if r.category in (1, 2, 3, 4)]
    mem0_mean = sum(score_f1(r.prediction, r.gold, r.category, "mem0") for r in rows) / len(rows)
    assert "| rag_turns |" in mem0_part and f"{100 * mem0_mean:.2f} | {len(rows)} |" in mem0_part
    assert "| Mem0 (published) | 38.72 | 48.93 | 28.64 | 47.65 |" in mem0_part
    assert "| RAG-observations (published) | – | – | – | – | – | – | 41.40 |  |" in locomo_part
    assert "Mem0 (published)" not in locomo_part
    prototype = load_answers(run / "answers.jsonl")  # conv-26's 20 prototype questions hold no category 5
    assert "| rag_turns |" in locomo_part and not any(r.category == 5 for r in prototype)
    assert "**Which differences in F1 are real**" in mem0_part and "| rag_turns (alone) | 1–4 |" in mem0_part
    j = locomo_j_table(tmp_path)
    assert "| rag_turns | – | not measured |" in j.markdown and "| Mem0 (published) |" in j.markdown
    assert "not measured here" in j.caption
    for caption in (table.caption, j.caption):  # a published table says which answer key its numbers stand on
        assert "On LoCoMo's original answer key" in caption and "--key corrected" in caption


def test_tables_report_missing_inputs_and_save_caption_first(tmp_path):
    import pandas as pd
    import pytest

    from memeval.publication import MissingResults
    from memeval.publication.publish import tables
    from memeval.publication.tables import PublishedTable, frame_markdown, save_table

    for name, build in tables().items():
        if name == "tab_headline":
            rows = build(tmp_path).markdown.splitlines()[2:]
            assert len(rows) == 4 and all("execute notebook" in row for row in rows), rows
            continue
        with pytest.raises(MissingResults, match="execute notebook"):
            build(tmp_path)
    frame = pd.DataFrame({"ratio": [0.5234, float("nan")]}, index=pd.Index(["gvt", "random"], name="method"))
    assert frame_markdown(frame).splitlines() == ["| method | ratio |", "|---|---|", "| gvt | 0.523 |",
                                                  "| random | – |"]
    by_budget = pd.DataFrame({30.0: [0.5], 100.0: [1.0]}, index=pd.Index([60.0], name="budget"))
    assert frame_markdown(by_budget).splitlines()[::2] == ["| budget | 30 | 100 |", "| 60 | 0.500 | 1.000 |"]
    paths = save_table(PublishedTable(frame_markdown(frame), frame, "What it does not show."), "tab_x", tmp_path)
    assert [p.name for p in paths] == ["tab_x.md", "tab_x.csv"]
    assert paths[0].read_text().startswith("What it does not show.\n\n| method | ratio |")
    assert pd.read_csv(paths[1], index_col="method")["ratio"].iloc[0] == 0.5234


def test_a_judged_run_whose_every_call_failed_is_not_published(tmp_path):
    from memeval.benchmarks.locomo.publication import locomo_run_dir

    def answer(i, error):
        return answer_row(f"conv-26:q{i:04d}", system="rag_turns", prediction="", f1=None if error else 0.5,
                          error=error)

    judged = stored("locomo_run_claude", tmp_path)
    judged.mkdir(parents=True)
    (judged / "answers.jsonl").write_text("".join(json.dumps(answer(i, "CacheMiss: no key")) + "\n"
                                                  for i in range(3)))
    assert locomo_run_dir(tmp_path) == stored("locomo_run", tmp_path)
    with (judged / "answers.jsonl").open("a") as fh:
        fh.write(json.dumps(answer(1, None)) + "\n")  # one retried answer made it
    assert locomo_run_dir(tmp_path) == judged


def _toy_table(root):
    from memeval.publication.tables import PublishedTable

    return PublishedTable("| toy |\n|---|\n| 1 |", None, "A toy benchmark's table. It does not show anything real.")


def _toy_rows(root):
    return [["toy benchmark, its one number", "1.00", "–", "–", "–"]]


TOY = Contribution(tables={"tab_toy": _toy_table}, headline=(_toy_rows,))  # a toy benchmark's publication.py


def test_a_registered_benchmark_publishes_what_its_declaration_names(tmp_path, monkeypatch):
    """The publication reads each benchmark's contribution from the registry: a new benchmark's table and headline
    row appear without any edit to publication/, and no publication module imports a benchmark."""
    import ast
    from pathlib import Path

    import memeval.benchmarks as registry
    import memeval.publication
    from memeval.publication.headline import headline_table
    from memeval.publication.publish import figures, publish_all, tables

    real = registry.declarations()
    toy = registry.Benchmark(name="toy", command="tests.none", publication="tests.test_publication:TOY")
    monkeypatch.setattr(registry, "declarations", lambda: [*real, toy])
    assert list(tables())[-2:] == ["tab_toy", "tab_headline"] and "fig_locomo" in figures()
    written = {r.name: r for r in publish_all(tmp_path / "artifacts", tmp_path / "out")}
    assert written["tab_toy"].status == "written"
    assert (tmp_path / "out" / "tab_toy.md").read_text().startswith("A toy benchmark's table.")
    assert headline_table(tmp_path).markdown.splitlines()[-1].startswith("| toy benchmark, its one number | 1.00 |")

    names = [n for c in [registry.load(b.publication) for b in real if b.publication]
             for n in [*c.figures, *c.tables]]
    assert len(names) == len(set(names)), "two benchmarks contribute the same name"
    for path in Path(memeval.publication.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom | ast.Import):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(m.startswith("memeval.benchmarks.") for m in modules), (path.name, modules)
