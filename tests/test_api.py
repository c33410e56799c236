"""memeval.api, the facade notebooks and users import: every function run for real, against what the modules
behind it produce."""

import json

import pandas as pd
import pytest

from memeval import api
from memeval.errors import InputError
from memeval.records import AnswerRow, JudgmentRow


def test_the_facade_stays_light_and_names_what_it_offers():
    import subprocess
    import sys

    code = ("import sys, memeval.api as a; print(sorted(m for m in sys.modules if m.startswith('memeval'))); "
            "print(a.LocomoRunConfig.__module__, a.SweepConfig.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['memeval', 'memeval.api']", "importing the facade imports no runner"
    assert out[1] == "memeval.benchmarks.locomo.config memeval.memaudit.config"
    for name in api.__all__:
        assert getattr(api, name) is not None
        assert name.startswith(("Locomo", "LongMem", "Study", "Sweep", "Stored")) or f"`{name}(" in api.__doc__, name
    with pytest.raises(AttributeError, match="no_such_thing"):
        api.no_such_thing  # noqa: B018


def test_chosen_models_leaves_the_defaults_out():
    assert api.chosen_models() == {}
    assert api.chosen_models("claude-haiku-4-5", None, "claude-sonnet-4-6") == {"answer": "claude-haiku-4-5",
                                                                               "extract": "claude-sonnet-4-6"}
    assert api.chosen_models(judge="gpt-4o-mini") == {"judge": "gpt-4o-mini"}


def test_run_locomo_then_load_run_reads_the_same_rows(locomo_dir, tmp_path):
    out = tmp_path / "run"
    result = api.run_locomo(out=str(out), conversations="conv-26", questions="prototype",
                            systems=["rag_turns", "no_memory"], progress=False)
    assert result.complete and {name: len(rows) for name, rows in result.answers.items()} == {"rag_turns": 20,
                                                                                             "no_memory": 20}
    stored = api.load_run(out)
    assert stored.kind == "locomo run" and stored.directory == out and stored.complete is not False
    assert stored.manifest["command"] == "locomo run" and stored.systems == ["rag_turns", "no_memory"]
    assert stored.judgments == {}
    for system, rows in result.answers.items():
        assert all(isinstance(r, AnswerRow) for r in stored.answers[system])
        assert [(r.sample_id, r.f1) for r in stored.answers[system]] == [(r.sample_id, r.f1) for r in rows]
    assert sum(r.f1 for r in stored.answers["rag_turns"]) > 0 == sum(r.f1 for r in stored.answers["no_memory"])

    # a config object, with keywords replacing its fields: the same run as the equivalent keywords
    config = api.LocomoRunConfig(out=str(tmp_path / "other"), conversations="conv-26", questions="prototype",
                                 systems=["rag_turns"], progress=False)
    again = api.run_locomo(config, k=3)
    assert again.out == str(tmp_path / "other") and config.k == 10, "the caller's config is not changed"
    assert api.load_run(tmp_path / "other").manifest["config"]["k"] == 3


def test_a_chosen_judge_model_reaches_the_judge_and_load_run_reads_its_judgments(locomo_dir, tmp_path, monkeypatch):
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(responder=lambda body: '{"score": 70, "explanation": "close"}') as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        result = api.run_locomo(out=str(tmp_path / "run"), conversations="conv-26", questions="prototype",
                                systems=["rag_turns"], judge="graded", judge_runs=1, progress=False,
                                models=api.chosen_models(judge="claude-haiku-4-5"))
        models = {body["model"] for body in server.received}
    assert result.complete and models == {"claude-haiku-4-5"}
    stored = api.load_run(tmp_path / "run")
    judged = stored.judgments["graded"]["rag_turns"]
    assert len(judged) == 20 and all(isinstance(j, JudgmentRow) for j in judged)
    assert {j.judge_model for j in judged} == {"claude-haiku-4-5"} and {j.mean for j in judged} == {70.0}


def test_run_longmemeval_then_load_run(tmp_path):
    from memeval.benchmarks.longmemeval.task import LMEAnswerRow
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([_with_turn("q1", "single-session-user", LONG_TURN),
                                _with_turn("q2", "temporal-reasoning", LONG_TURN)]))
    api.run_longmemeval(data=str(data), out=str(tmp_path / "run"), systems=["rag_turns", "no_memory"], progress=False)
    stored = api.load_run(tmp_path / "run")
    assert stored.kind == "longmemeval run" and stored.judgments == {}
    assert {s: [r.question_id for r in rows] for s, rows in stored.answers.items()} == {"rag_turns": ["q1", "q2"],
                                                                                       "no_memory": ["q1", "q2"]}
    assert all(isinstance(r, LMEAnswerRow) for rows in stored.answers.values() for r in rows)


def test_load_run_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(InputError, match="manifest.json: not found"):
        api.load_run(tmp_path)
    summary = api.sweep(api.SweepConfig(kind="small", distribution="base", seeds=1, budgets=[2], methods=["opt"],
                                        n_jobs=1), tmp_path / "sweep", progress=False)
    assert summary["opt_rows"] == 1
    with pytest.raises(InputError, match="load_sweep_rows"):
        api.load_run(tmp_path / "sweep")


def test_sweep_is_run_sweep_and_natural_sweeps_score_union_packages(tmp_path, monkeypatch):
    from memeval.memaudit import sweep as sweep_module
    from memeval.natural.sweep import UnionAwareScorer

    config = api.SweepConfig(kind="small", distribution="base", seeds=3, budgets=[2, 4], methods=["opt", "gvt"],
                             certify="milp", n_jobs=1)
    ours = api.sweep(config, tmp_path / "api", progress=False)
    theirs = sweep_module.run_sweep(config, tmp_path / "direct", progress=False)
    assert ours["opt_certified"] == ours["opt_rows"] == 6
    assert ours["rows"] == theirs["rows"]
    assert (tmp_path / "api" / "raw_results.jsonl").is_file()

    seen = {}

    def recording(config, out, progress=True, scorer=None, restart=False):
        seen[config.kind] = scorer
        return {}

    monkeypatch.setattr(sweep_module, "run_sweep", recording)
    api.sweep(api.SweepConfig(kind="natural", budgets=[30], packages_dir=str(tmp_path)), tmp_path / "n")
    api.sweep(config, tmp_path / "s")
    assert isinstance(seen["natural"], UnionAwareScorer) and seen["small"] is None


def test_run_graph80_makes_a_client_only_when_a_role_calls_a_model_and_checks_it(tmp_path, monkeypatch):
    from memeval.benchmarks.graph80.data import write_corpus

    write_corpus(tmp_path / "graph80", 0)
    summary = api.run_graph80(data=str(tmp_path / "graph80"), out=str(tmp_path / "run"),
                              systems=["memory_graph:hops=1", "no_memory"], repeats=1, progress=False)
    overall = {r["system"]: r["score_mean"] for r in summary["rows"] if r["type"] == "all"}
    assert overall["no_memory"] == 0.0 < overall["memory_graph:hops=1"]
    assert summary["score_kind"] == "gold-answer containment (no judge)"

    # a model that cannot take the reader's protocol temperature is refused before anything is written
    with pytest.raises(InputError, match="claude-opus-4-7"):
        api.run_graph80(data=str(tmp_path / "graph80"), out=str(tmp_path / "refused"), systems=["no_memory"],
                        answerer="claude", repeats=1, progress=False, models={"answer": "claude-opus-4-7"})
    assert not (tmp_path / "refused").exists()

    # the chosen answer model is the one called
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(responder=lambda body: "Berlin") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        config = api.StudyConfig(str(tmp_path / "graph80"), str(tmp_path / "claude"), ["no_memory"],
                                 answerer="claude", repeats=1, progress=False)
        summary = api.run_graph80(config, models=api.chosen_models(answer="claude-haiku-4-5"))
        assert {body["model"] for body in server.received} == {"claude-haiku-4-5"}
    assert not summary["missing"] and summary["failed_rows"] == 0


def test_publish_writes_what_is_stored_and_names_what_is_missing(tmp_path):
    from memeval.artifacts import stored
    from memeval.publication.publish import figures, tables

    root, out = tmp_path / "artifacts", tmp_path / "figures"
    missing = api.publish("fig_budget_sweep", root=root, out=out)
    assert [(r.name, r.status) for r in missing] == [("fig_budget_sweep", "missing")]
    assert "execute notebook 03_memaudit_small" in missing[0].message
    api.sweep(api.SweepConfig(kind="small", distribution="base", seeds=2, budgets=[2, 4], n_jobs=1),
              stored("base_sweep", root), progress=False)
    figure, table = api.publish("fig_budget_sweep", "tab_memaudit_base", root=root, out=out)
    assert figure.status == table.status == "written" and "does not show" in figure.caption
    assert (out / "fig_budget_sweep.png").stat().st_size > 5_000 and (out / "tab_memaudit_base.md").is_file()
    assert table.markdown.startswith("|") or "|" in table.markdown
    with pytest.raises(InputError, match="no such figure or table"):
        api.publish("fig_nothing", root=root, out=out)
    everything = api.publish(root=root, out=out)
    assert [r.name for r in everything] == [*figures(), *tables()]
    assert {r.name for r in everything if r.status == "written"} >= {"fig_budget_sweep", "tab_memaudit_base"}


def test_show_displays_tables_published_results_and_text(tmp_path, monkeypatch):
    import IPython.display

    from memeval.publication.publish import Published
    from memeval.publication.tables import frame_markdown

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    frame = pd.DataFrame({"budget": [2.0, 4.0], "ratio": [0.5, float("nan")]}).set_index("budget")
    api.show(frame)
    assert shown[-1].data == frame_markdown(frame) and "| 2 | 0.500 |" in shown[-1].data and "–" in shown[-1].data
    api.show(frame["ratio"], digits=1)
    assert "| 2 | 0.5 |" in shown[-1].data
    api.show("**bold**")
    assert shown[-1].data == "**bold**"
    png = tmp_path / "fig.png"
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(1, 1))
    fig.savefig(png)
    plt.close(fig)
    shown.clear()
    api.show([Published("fig_x", "written", caption="What it shows.", paths=[str(png), str(tmp_path / "fig.pdf")]),
              Published("tab_y", "missing", "execute notebook 03 first")])
    assert type(shown[0]).__name__ == "Image" and shown[1].data == "*fig_x.* What it shows."
    assert shown[2].data == "**tab_y not written** — execute notebook 03 first" and len(shown) == 3
    api.show(42)
    assert shown[-1] == 42
