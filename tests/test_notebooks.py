"""Notebooks: committed without outputs, and each executes with small parameters (papermill)."""

import json
from pathlib import Path

import pytest

from memeval.artifacts import stored
from memeval.notebook_runner import QUICK_PARAMETERS, execute_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

# Small parameters per notebook; each notebook writes metrics.json into artifacts_dir.
SMALL_PARAMETERS = {"00_data_tour": {}, **QUICK_PARAMETERS, "07_publication": {}}
LME_SMALL = "lme_small.json"  # written into each workspace in the published format (the data is not reachable)


def write_small_longmemeval(path: Path) -> Path:
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    path.write_text(json.dumps([_with_turn("q1", "single-session-user", LONG_TURN),
                                _with_turn("q2", "temporal-reasoning", LONG_TURN),
                                _with_turn("q3_abs", "multi-session", LONG_TURN, evidence=False)]))
    return path


def configured(name: str, artifacts: Path, params: dict) -> Path:
    """Where a notebook executed with `params` keeps its results: its own configuration directory (notebooks
    00 and 07 have none)."""
    from memeval.artifacts import UNCONFIGURED
    from memeval.notebook_config import configuration_for

    return artifacts if name in UNCONFIGURED else artifacts / configuration_for(name, params)


def notebook_parameters(name: str, root: Path) -> dict:
    params = {**SMALL_PARAMETERS[name], "artifacts_dir": str(root / "artifacts" / name),
              "figures_dir": str(root / "figures")}
    if name == "07_publication":
        params["artifacts_root"] = str(root / "artifacts")
    if name == "08_longmemeval":
        params.update(data_path=str(write_small_longmemeval(root / LME_SMALL)), natural_budgets=[5, 20])
    return params


def figures_of(name: str, root: Path) -> Path:
    """Where notebook `name`, executed with its test parameters, saves its own images: a directory per notebook
    and configuration (notebook 00 has no configuration)."""
    from memeval.artifacts import UNCONFIGURED
    from memeval.notebook_config import configuration_for

    base = root / "figures" / name
    return base if name in UNCONFIGURED else base / configuration_for(name, notebook_parameters(name, root))


def test_committed_notebooks_have_no_outputs():
    offenders = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
                offenders.append(path.name)
                break
    assert not offenders, f"strip outputs from {offenders} (memeval.notebook_runner.strip_outputs)"


def test_every_notebook_has_small_parameters_and_a_parameters_cell():
    names = {p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb")}
    assert names, "no notebooks found"
    assert names == set(SMALL_PARAMETERS), "add small parameters for every notebook"
    for name in names:
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"]), name


@pytest.fixture(scope="session")
def workspace(tmp_path_factory) -> Path:
    """One reports-like tree for the session: artifacts/<notebook>/ and figures/, so the publication notebook
    reads what the others wrote, as under `make reproduce`. The LongMemEval run a user with the data would have is
    made first, from a small file in the published format, so the publication sees the same inputs whatever order
    the notebooks run in."""
    from memeval.benchmarks.longmemeval.task import LongMemEvalConfig, run_longmemeval

    root = tmp_path_factory.mktemp("notebooks")
    run_longmemeval(LongMemEvalConfig(str(write_small_longmemeval(root / LME_SMALL)),
                                      str(stored("longmemeval_run", root / "artifacts")),
                                      ["rag_turns", "full_context", "no_memory"], progress=False))
    return root


_executed: set[str] = set()


def _run(name: str, root: Path) -> dict:
    params = notebook_parameters(name, root)
    if name not in _executed:
        execute_notebook(NOTEBOOKS / f"{name}.ipynb", root / f"{name}.ipynb", params, progress=False)
        _executed.add(name)
    return json.loads((configured(name, root / "artifacts" / name, params) / "metrics.json").read_text())


@pytest.mark.notebook
def test_data_tour_notebook(workspace):
    metrics = _run("00_data_tour", workspace)
    assert metrics["questions"] == 1986
    assert metrics["by_category"] == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
    assert (figures_of("00_data_tour", workspace) / "00_data_tour.png").stat().st_size > 10_000


@pytest.mark.notebook
def test_prototype_scoring_notebook(workspace):
    metrics = _run("01_prototype_scoring", workspace)
    assert metrics["questions"] == {"rag_turns": 20, "no_memory": 20}
    assert metrics["mean_f1"]["no_memory"] == 0.0 < metrics["mean_f1"]["rag_turns"]
    assert metrics["judged"] == {}
    assert any("prototype only (20 questions, 1 conversation)" in n for n in metrics["notes"])
    assert any("J skipped" in n for n in metrics["notes"])
    assert (figures_of("01_prototype_scoring", workspace) / "01_prototype_locomo.png").stat().st_size > 10_000


@pytest.mark.notebook
def test_full_run_notebook(workspace):
    metrics = _run("02_full_run", workspace)
    assert metrics["questions"] == {"rag_turns": 30, "observations": 30, "full_context": 30}
    assert set(metrics["recall_at_k"]) == {"rag_turns", "observations"}
    for curve in metrics["recall_at_k"].values():
        assert len(curve) == 50 and all(a <= b for a, b in zip(curve, curve[1:], strict=False))
        assert 0 < curve[0] <= curve[-1] <= 1
    assert metrics["judged"] == {} and any("J skipped" in n for n in metrics["notes"])
    for ext in ("png", "pdf"):
        assert (figures_of("02_full_run", workspace) / f"02_locomo.{ext}").stat().st_size > 10_000
    run = configured("02_full_run", workspace / "artifacts" / "02_full_run", notebook_parameters("02_full_run", workspace))
    assert (run / "run" / "view.html").stat().st_size > 10_000


@pytest.mark.notebook
def test_memaudit_natural87_notebook(workspace):
    metrics = _run("05_memaudit_natural87", workspace)
    assert metrics["manifest"]["accepted"] == 5 and metrics["manifest"]["rule_version"]
    assert metrics["opt_certified"] == metrics["opt_rows"] == 10
    assert metrics["union_certified"] == metrics["union_rows"] == 5 * 3 * 3 * 2
    assert metrics["writer_mean_ratio"]["opt@30"] == 1.0
    assert metrics["bridge_pairs"] == 5 * 3 * 3 * 2 and metrics["audit"] is None
    for name in ("05_bridge", "05_natural_writers", "05_natural_stores"):
        assert (figures_of("05_memaudit_natural87", workspace) / f"{name}.png").stat().st_size > 10_000
    config = configured("05_memaudit_natural87", workspace / "artifacts" / "05_memaudit_natural87",
                        notebook_parameters("05_memaudit_natural87", workspace))
    assert (config / "audit_frame.csv").stat().st_size > 0
    conversation = metrics["conversation_scope"]
    assert conversation["packages"] == 1 and conversation["candidates_max"] > 900
    assert conversation["opt_certified"] == conversation["opt_rows"] == 2 and conversation["opt_disagreements"] == 0
    assert conversation["writer_mean_ratio"]["opt@500"] == 1.0


@pytest.mark.notebook
def test_memory_graph_study_notebook(workspace):
    metrics = _run("06_memory_graph_study", workspace)
    assert metrics["corpus"]["questions"] == 80
    assert metrics["n_by_type"] == {"all": 80, "fact": 20, "preference": 20, "relation": 20, "multi-hop": 20}
    assert metrics["overall"]["no_memory"] == 0.0 < metrics["overall"]["memory_graph:hops=1"]
    assert metrics["path_recall"]["memory_graph:hops=1"] > metrics["path_recall"]["no_memory"]
    assert metrics["score_kind"] == "gold-answer containment (no judge)"
    for name in ("06_profile_graph", "06_graph_study"):
        assert (figures_of("06_memory_graph_study", workspace) / f"{name}.png").stat().st_size > 10_000


@pytest.mark.notebook
def test_memaudit_small_notebook(workspace):
    metrics = _run("03_memaudit_small", workspace)
    assert metrics["packages"] == 6 and metrics["opt_certified"] == metrics["opt_rows"] == 18
    assert metrics["certification_matches"] == metrics["certification_rows"] == 18
    assert metrics["ratios"]["opt@4"] == 1.0
    assert 0 < metrics["ratios"]["no_tombstone_opt@2"] < 1
    assert (figures_of("03_memaudit_small", workspace) / "03_budget_sweep.png").stat().st_size > 10_000


@pytest.mark.notebook
def test_memaudit_validity_notebook(workspace):
    metrics = _run("04_memaudit_validity", workspace)
    assert metrics["no_tombstone_opt"]["update_chain"] == pytest.approx(0.5126, abs=1e-3)
    assert metrics["no_tombstone_opt"]["temporal_interval"] == pytest.approx(0.700, abs=1e-3)
    assert all(metrics["opt_certified"][d] == 3 for d in metrics["opt_certified"])
    assert (figures_of("04_memaudit_validity", workspace) / "04_validity.png").stat().st_size > 10_000


@pytest.mark.notebook
def test_publication_notebook(workspace):
    for name in ("02_full_run", "03_memaudit_small", "04_memaudit_validity", "05_memaudit_natural87",
                 "06_memory_graph_study"):
        _run(name, workspace)
    metrics = _run("07_publication", workspace)
    assert metrics["missing"] == {}, metrics["missing"]
    assert set(metrics["figures"]) == {"fig_budget_sweep", "fig_validity", "fig_natural_writers",
                                       "fig_natural_stores", "fig_bridge", "fig_locomo", "fig_graph_study",
                                       "fig_ratio_ecdf", "fig_bnb_nodes", "fig_locomo_heatmap", "fig_locomo_pareto",
                                       "fig_recall_bands"}
    for name in metrics["figures"]:
        for ext in ("pdf", "png"):
            assert (workspace / "figures" / f"{name}.{ext}").stat().st_size > 5_000
        assert "does not show" in metrics["captions"][name], name
    from memeval.publication.figure_rules import problems_in

    checked = problems_in(workspace / "figures")  # every figure's saved record, notebooks 02-06's included
    for name in ("02_full_run", "03_memaudit_small", "04_memaudit_validity", "05_memaudit_natural87",
                 "06_memory_graph_study"):
        checked.update(problems_in(figures_of(name, workspace)))
    assert {f"{name}.json" for name in metrics["figures"]} <= set(checked), "a figure drawn around the marks layer"
    assert {name: found for name, found in checked.items() if found} == {}
    executed = json.loads((workspace / "07_publication.ipynb").read_text())
    images = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) == len(metrics["figures"]), "every figure must be shown in the notebook and its HTML"
    assert set(metrics["tables"]) == {"tab_memaudit_base", "tab_memaudit_stress", "tab_natural_writers",
                                      "tab_natural_stores", "tab_locomo_f1", "tab_locomo_j", "tab_evidence_recall",
                                      "tab_graph_study", "tab_longmemeval", "tab_headline"}
    j = (workspace / "figures" / "tab_locomo_j.md").read_text()
    assert "| rag_turns | – | not measured |" in j and "| Mem0 (published) |" in j, "offline: published J, ours not"
    for name in metrics["tables"]:
        text = (workspace / "figures" / f"{name}.md").read_text()
        assert text.startswith(metrics["captions"][name]) and "does not show" in text, name
    # notebooks 02-06 draw with the publication's own figure functions: from the same results, the same image
    for notebook_figure, published in (("02_locomo", "fig_locomo"), ("03_budget_sweep", "fig_budget_sweep"),
                                       ("04_validity", "fig_validity"), ("05_natural_writers", "fig_natural_writers"),
                                       ("05_natural_stores", "fig_natural_stores"), ("05_bridge", "fig_bridge"),
                                       ("06_graph_study", "fig_graph_study")):
        notebook = next(n for n in SMALL_PARAMETERS if n[:3] == notebook_figure[:3])
        mine = (figures_of(notebook, workspace) / f"{notebook_figure}.png").read_bytes()
        assert mine == (workspace / "figures" / f"{published}.png").read_bytes(), notebook_figure

    import pandas as pd

    stress = pd.read_csv(workspace / "figures" / "tab_memaudit_stress.csv", index_col="distribution")
    validity = _run("04_memaudit_validity", workspace)
    for dist, value in validity["no_tombstone_opt"].items():
        assert stress.loc[dist, "no_tombstone_opt"] == pytest.approx(value, abs=5e-4), dist
    assert stress.loc["update_chain", "paper_no_tombstone_opt"] == 0.513
    base = pd.read_csv(workspace / "figures" / "tab_memaudit_base.csv")
    small = _run("03_memaudit_small", workspace)
    ours = base[(base["method"] == "no_tombstone_opt") & (base["budget"].astype(str) == "2")]["ours"].astype(float).item()
    assert ours == pytest.approx(small["ratios"]["no_tombstone_opt@2"], abs=5e-4)
    headline = (workspace / "figures" / "tab_headline.md").read_text()
    assert "execute notebook" not in headline
    memaudit_row = next(line for line in headline.splitlines() if "no_tombstone_opt / OPT at B = 2, 4, 8, 16" in line)
    cells = [c.strip() for c in memaudit_row.strip("|").split("|")]
    assert cells[1] == f"{small['ratios']['no_tombstone_opt@2']:.3f}, {small['ratios']['no_tombstone_opt@4']:.3f}, –, " \
                       f"{small['ratios']['no_tombstone_opt@16']:.3f}"
    assert cells[2] == "0.523, 0.654, 0.689, 0.815" and len(cells[4].removesuffix("-dirty")) == 10
    assert "| LoCoMo J (categories 1–4) | not measured: no judge ran" in headline


@pytest.mark.notebook
def test_judged_configuration_without_key_or_cache_says_so_and_scores_nothing(tmp_path, monkeypatch):
    """MEMEVAL_REPRODUCE_JUDGED=1 with an empty cache: the notebooks stop with the run's closing line; with
    allow_incomplete they finish, say at the top that the run is incomplete, and never count a failed answer as a
    zero."""
    from papermill.exceptions import PapermillExecutionError

    from memeval.notebook_runner import JUDGED_PARAMETERS

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "empty-cache"))
    small = {"01_prototype_scoring": {"systems": ["rag_turns"]},
             "06_memory_graph_study": {"systems": ["chunks", "no_memory"], "repeats": 1}}
    metrics = {}
    for name, params in small.items():
        artifacts = tmp_path / "artifacts" / name
        params = {**JUDGED_PARAMETERS[name], **params, "artifacts_dir": str(artifacts),
                  "figures_dir": str(tmp_path / "figures")}
        with pytest.raises(PapermillExecutionError, match="incomplete: "):
            execute_notebook(NOTEBOOKS / f"{name}.ipynb", tmp_path / f"{name}.stopped.ipynb", params, progress=False)
        execute_notebook(NOTEBOOKS / f"{name}.ipynb", tmp_path / f"{name}.ipynb", {**params, "allow_incomplete": True},
                         progress=False)
        metrics[name] = json.loads((configured(name, artifacts, params) / "metrics.json").read_text())
        assert "**incomplete: " in (tmp_path / f"{name}.ipynb").read_text()
    prototype = metrics["01_prototype_scoring"]
    assert prototype["mean_f1"] == {"rag_turns": None} and prototype["answer_counts"]["errors"] == 20
    assert any("20 answers failed" in n for n in prototype["notes"])
    assert metrics["06_memory_graph_study"]["overall"] == {"chunks": None, "no_memory": None}
    shown = (tmp_path / "06_memory_graph_study.ipynb").read_text()
    assert "answers or judgments failed" in shown


@pytest.mark.notebook
def test_publication_builders_call_no_solver_and_no_llm(workspace, monkeypatch):
    """The publication layer reads stored results only: every builder still works with solvers and LLM calls
    made to fail."""
    import cvxpy

    import memeval.llm.client as llm_client
    import memeval.memaudit.solvers as solvers
    import memeval.memaudit.writers as writers
    from memeval.publication.publish import figures, tables

    for name in ("02_full_run", "03_memaudit_small", "04_memaudit_validity", "05_memaudit_natural87",
                 "06_memory_graph_study"):
        _run(name, workspace)

    def forbidden(*args, **kwargs):
        raise AssertionError("the publication layer called a solver or an LLM")

    for owner, attribute in ((cvxpy.Problem, "solve"), (solvers, "solve_bnb"), (solvers, "solve_exact"), (writers, "solve_exact"),
                             (writers, "run_writer"), (llm_client.LLMClient, "complete"),
                             (llm_client.LLMClient, "complete_many")):
        monkeypatch.setattr(owner, attribute, forbidden)
    for build in figures().values():
        build(workspace / "artifacts")
    for build in tables().values():
        build(workspace / "artifacts")


@pytest.mark.notebook
def test_publish_command_writes_what_the_notebook_writes(workspace, tmp_path, capsys):
    from memeval.cli import main

    notebook_metrics = _run("07_publication", workspace)
    out = tmp_path / "figures"
    assert main(["publish", "--artifacts", str(workspace / "artifacts"), "--figures", str(out), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert set(metrics["figures"]) == set(notebook_metrics["figures"])
    assert set(metrics["tables"]) == set(notebook_metrics["tables"])
    assert metrics["missing"] == {}
    for name in metrics["tables"]:
        for suffix in (".md", ".csv"):
            mine, theirs = out / f"{name}{suffix}", workspace / "figures" / f"{name}{suffix}"
            assert mine.exists() == theirs.exists(), (name, suffix)
            if mine.exists():
                assert mine.read_bytes() == theirs.read_bytes(), (name, suffix)
    assert {p.name for p in out.glob("fig_*")} == {f"{n}.{e}" for n in metrics["figures"] for e in ("pdf", "png", "json")}


@pytest.mark.notebook
def test_every_executed_notebook_shows_its_figures(tmp_path, monkeypatch):
    """Figures must be in the executed notebooks (and so in their HTML), not only in figures/ — even when the
    user's environment forces a non-inline matplotlib backend. Every notebook is executed here, under Agg (the
    other tests' executions ran under the inline backend and are not reused)."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for name in sorted(SMALL_PARAMETERS):
        params = notebook_parameters(name, tmp_path)
        execute_notebook(NOTEBOOKS / f"{name}.ipynb", tmp_path / f"{name}.ipynb", params, progress=False)
    for name in sorted(SMALL_PARAMETERS):
        executed = json.loads((tmp_path / f"{name}.ipynb").read_text())
        images = sum(1 for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
                     if "image/png" in o.get("data", {}))
        assert images >= 1, f"{name} shows no figure"
        stderr = "".join("".join(o.get("text", "")) for c in executed["cells"] if c["cell_type"] == "code"
                         for o in c.get("outputs", []) if o.get("name") == "stderr")
        assert "/s]" not in stderr and "IProgress" not in stderr, f"{name} saved progress-bar redraws"
        code = [c for c in executed["cells"] if c["cell_type"] == "code"]
        last = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in code[-1].get("outputs", []))
        assert last.startswith("**What this notebook measured"), f"{name} must end with its summary table"
        shown = "".join("".join(o.get("data", {}).get(kind, "")) for c in code for o in c.get("outputs", [])
                        for kind in ("text/markdown", "text/html"))
        assert "NaN" not in shown and ">nan<" not in shown, f"{name} shows NaN where '–' belongs"


def test_publication_reports_missing_inputs(tmp_path):
    from memeval.publication import MissingResults
    from memeval.publication.publish import figures

    for build in figures().values():
        with pytest.raises(MissingResults, match="execute notebook"):
            build(tmp_path)


def test_judged_configuration_names_real_parameters():
    from memeval.notebook_runner import JUDGED_PARAMETERS

    for name, params in JUDGED_PARAMETERS.items():
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
        cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
        source = "".join(cell["source"])
        for key in params:
            assert f"\n{key} = " in "\n" + source, (name, key)


@pytest.mark.notebook
def test_judged_configuration_end_to_end_with_a_key_then_from_the_shared_cache(tmp_path, monkeypatch):
    """Notebook 02 with the judged parameters against a loopback Anthropic server, then again with no key from
    the shared cache (sending nothing); the publication tables then carry J, and the key is in no file."""
    from memeval.benchmarks.locomo.publication import locomo_j_table
    from memeval.notebook_runner import JUDGED_PARAMETERS
    from memeval.publication.headline import headline_table
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    def responder(body):
        return "7 May 2023" if "Answer:" in body["messages"][0]["content"] else '{"score": 80, "explanation": "ok"}'

    params = {**JUDGED_PARAMETERS["02_full_run"], "conversations": "conv-26", "questions": "first:3",
              "systems": ["rag_turns"], "judge_runs": 2}
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "shared-cache"))
    with FakeAnthropic(responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        keyed = tmp_path / "keyed"
        execute_notebook(NOTEBOOKS / "02_full_run.ipynb", keyed / "02_full_run.ipynb",
                         {**params, "artifacts_dir": str(keyed / "artifacts" / "02_full_run"),
                          "figures_dir": str(keyed / "figures")}, progress=False)
        sent = len(server.received)
        assert sent == 3 + 3 * 2
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        replayed = tmp_path / "replayed"
        execute_notebook(NOTEBOOKS / "02_full_run.ipynb", replayed / "02_full_run.ipynb",
                         {**params, "artifacts_dir": str(replayed / "artifacts" / "02_full_run"),
                          "figures_dir": str(replayed / "figures")}, progress=False)
        assert len(server.received) == sent, "the shared cache must answer everything"
    for root in (keyed, replayed):
        config = configured("02_full_run", root / "artifacts" / "02_full_run", params)
        metrics = json.loads((config / "metrics.json").read_text())
        assert metrics["judged"] == {"rag_turns": 3}
        assert metrics["run_dir"] == str(config / "run")
        j_table = locomo_j_table(root / "artifacts").markdown
        assert "| rag_turns | claude-sonnet-4-6, graded (ours) | – | 80.00 ± 0.00 | 80.00 ± 0.00 | – | 80.00 ± 0.00 | 3 |" \
            in j_table
        headline = headline_table(root / "artifacts").markdown
        command = ("`memeval locomo run --conversations conv-26 --questions first:3 --reader claude "
                   f"--judge graded --judge-runs 2 --out {config / 'run'}` "
                   "(notebook 02)")
        assert "| LoCoMo J (categories 1–4) | rag_turns 80.00 (graded judge) | Mem0 66.88" in headline
        assert "3 questions, claude reader" in headline and command in headline
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TEST_SECRET.encode() not in path.read_bytes(), path


@pytest.mark.notebook
def test_a_notebook_rerun_with_other_parameters_shows_only_its_own_configuration(tmp_path):
    """Notebook 03 rerun into the same artifacts with other parameters: each configuration keeps its own
    directory, so the second run neither mixes its rows with the first's nor deletes them."""
    artifacts = tmp_path / "artifacts" / "03_memaudit_small"
    configs = {}
    for seeds, budgets in ((6, [2, 4, 16]), (3, [3, 6])):
        params = {**SMALL_PARAMETERS["03_memaudit_small"], "seeds": seeds, "budgets": budgets,
                  "artifacts_dir": str(artifacts), "figures_dir": str(tmp_path / "figures")}
        execute_notebook(NOTEBOOKS / "03_memaudit_small.ipynb", tmp_path / f"03_{seeds}.ipynb", params,
                         progress=False)
        configs[seeds] = configured("03_memaudit_small", artifacts, params)
    assert configs[6] != configs[3] and configs[3].name.startswith("seeds=3,budgets=3+6-")
    for seeds, budgets in ((6, 3), (3, 2)):
        metrics = json.loads((configs[seeds] / "metrics.json").read_text())
        assert metrics["packages"] == seeds and metrics["opt_rows"] == seeds * budgets
        manifest = json.loads((configs[seeds] / "sweep" / "manifest.json").read_text())
        assert manifest["config"]["seeds"] == seeds and manifest["complete"] is True


@pytest.mark.notebook
def test_imported_answers_and_stores_appear_in_notebooks_02_and_05(locomo_dir, tmp_path):
    """An outside harness's answers (here: LoCoMo's gold answers, a perfect reader) and an outside store (here:
    LoCoMo's observations in Mem0's get_all shape) go through notebooks 02 and 05 beside the built-in systems."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.memory.render import observation_items

    conversations = load_locomo(locomo_dir)
    answers = tmp_path / "perfect.jsonl"
    answers.write_text("".join(json.dumps({"question": qa.question, "prediction": str(qa.answer),
                                           "conversation_id": c.sample_id}) + "\n"
                               for c in conversations[:2] for qa in c.qa if qa.category in (1, 2, 3, 4)))
    params = {**SMALL_PARAMETERS["02_full_run"], "artifacts_dir": str(tmp_path / "a02"),
              "figures_dir": str(tmp_path / "figures"),
              "imported_answers": [{"source": str(answers), "format": "jsonl", "system": "perfect"}]}
    execute_notebook(NOTEBOOKS / "02_full_run.ipynb", tmp_path / "02.ipynb", params, progress=False)
    metrics = json.loads((configured("02_full_run", tmp_path / "a02", params) / "metrics.json").read_text())
    assert metrics["questions"]["perfect"] == 30 and metrics["f1_overall_1_4"]["perfect"] > 0.9
    store = tmp_path / "store.json"
    store.write_text(json.dumps({c.sample_id: [{"memory": i.text, "created_at": i.time, "metadata": {}}
                                               for i in observation_items(c)] for c in conversations}))
    params = {**SMALL_PARAMETERS["05_memaudit_natural87"], "artifacts_dir": str(tmp_path / "a05"),
              "figures_dir": str(tmp_path / "figures"),
              "imported_stores": [{"store": str(store), "format": "mem0", "system": "mem0"}]}
    execute_notebook(NOTEBOOKS / "05_memaudit_natural87.ipynb", tmp_path / "05.ipynb", params, progress=False)
    metrics = json.loads((configured("05_memaudit_natural87", tmp_path / "a05", params) / "metrics.json").read_text())
    assert metrics["union_rows"] == 5 * 4 * 3 * 2, "three built-in stores and the imported one"
    executed = (tmp_path / "05.ipynb").read_text()
    assert "mem0 @ B=" in executed or "| mem0 |" in executed


@pytest.mark.notebook
def test_longmemeval_notebook_says_the_data_is_missing_and_computes_nothing(tmp_path):
    artifacts = tmp_path / "artifacts"
    params = {"data_path": "/nonexistent/longmemeval_s_cleaned.json", "artifacts_dir": str(artifacts),
              "figures_dir": str(tmp_path / "figures")}
    execute_notebook(NOTEBOOKS / "08_longmemeval.ipynb", tmp_path / "out.ipynb", params, progress=False)
    config = configured("08_longmemeval", artifacts, params)
    metrics = json.loads((config / "metrics.json").read_text())
    assert metrics == {"data_present": False, "data_path": "/nonexistent/longmemeval_s_cleaned.json"}
    assert "LongMemEval data not found" in (tmp_path / "out.ipynb").read_text()
    assert [p.name for p in artifacts.iterdir()] == [config.name]
    assert sorted(p.name for p in config.iterdir()) == ["metrics.json"]


@pytest.mark.notebook
def test_longmemeval_notebook_runs_on_a_file_in_the_published_format(tmp_path):
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([_with_turn("q1", "single-session-user", LONG_TURN),
                                _with_turn("q2", "temporal-reasoning", LONG_TURN),
                                _with_turn("q3_abs", "multi-session", LONG_TURN, evidence=False)]))
    artifacts = tmp_path / "artifacts"
    params = {"data_path": str(data), "natural_budgets": [5, 20], "artifacts_dir": str(artifacts),
              "figures_dir": str(tmp_path / "figures")}  # never the user's reports/figures
    execute_notebook(NOTEBOOKS / "08_longmemeval.ipynb", tmp_path / "out.ipynb", params, progress=False)
    config = configured("08_longmemeval", artifacts, params)
    metrics = json.loads((config / "metrics.json").read_text())
    assert metrics["instances"] == 3 and metrics["answers"] == 9 and metrics["judgments"] == 0
    assert metrics["natural"]["accepted"] == 2 and metrics["natural"]["opt_certified"] == metrics["natural"]["opt_rows"]
    assert "not measured" in (config / "run" / "report.md").read_text()
    assert (tmp_path / "figures" / "08_longmemeval" / config.name / "08_longmemeval_recall.png").is_file()


@pytest.mark.notebook
def test_natural_notebook_takes_longmemeval_as_its_source(tmp_path):
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([_with_turn("q1", "single-session-user", LONG_TURN),
                                _with_turn("q2", "temporal-reasoning", LONG_TURN)]))
    artifacts = tmp_path / "artifacts"
    params = {"source": "longmemeval", "data_path": str(data), "target": 5, "budgets": [5, 20], "noise_seeds": 1,
              "jobs": 1, "artifacts_dir": str(artifacts), "figures_dir": str(tmp_path)}
    execute_notebook(NOTEBOOKS / "05_memaudit_natural87.ipynb", tmp_path / "out.ipynb", params, progress=False)
    metrics = json.loads((configured("05_memaudit_natural87", artifacts, params) / "metrics.json").read_text())
    assert metrics["source"] == "LongMemEval-Natural, rule-adjudicated"
    assert metrics["manifest"]["accepted"] == 2 and metrics["opt_certified"] == metrics["opt_rows"] > 0
    assert metrics["bridge_rows"] == 0 and "fact_only@5" not in metrics["writer_mean_ratio"]
    assert "Source of every number below: LongMemEval-Natural" in (tmp_path / "out.ipynb").read_text()


MODEL_PARAMETERS = ("answer_model", "judge_model", "extract_model")


def test_llm_notebooks_take_a_model_per_role_and_pass_it_on():
    """Notebooks 01, 02 and 06 have answer_model, judge_model, extract_model (None: the project's defaults) and
    llm in their parameters cell, and hand them to the run through api.chosen_models; 08 has the two roles a
    LongMemEval run calls."""
    from memeval.artifacts import ADDED_PARAMETERS, notebook_parameters

    for name in ("01_prototype_scoring", "02_full_run", "06_memory_graph_study"):
        params = notebook_parameters(name)
        assert {p: params[p] for p in (*MODEL_PARAMETERS, "llm")} == {**dict.fromkeys(MODEL_PARAMETERS), "llm": "auto"}
        assert ADDED_PARAMETERS[name] == {p: params[p] for p in ADDED_PARAMETERS[name]}, name
        source = (NOTEBOOKS / f"{name}.ipynb").read_text()
        assert "api.chosen_models(answer_model, judge_model, extract_model)" in source, name
        assert "llm_backend=llm" in source or "llm=llm" in source, name
    params = notebook_parameters("08_longmemeval")
    assert params["answer_model"] is None and params["judge_model"] is None and params["llm"] == "auto"
    assert "api.chosen_models(answer=answer_model, judge=judge_model)" in (NOTEBOOKS / "08_longmemeval.ipynb").read_text()


def test_model_parameters_left_at_their_default_rename_no_configuration_directory():
    """The names stored results already live under (the committed defaults, the judged and quick parameters) are
    the ones from before the model parameters existed; a model chosen is a configuration of its own, named."""
    from memeval.artifacts import paper_configuration
    from memeval.notebook_config import configuration_for
    from memeval.notebook_runner import JUDGED_PARAMETERS

    assert paper_configuration("01_prototype_scoring") == "paper-926df9f90c"
    assert paper_configuration("02_full_run") == "paper-54a37ce4d5"
    assert paper_configuration("02_full_run", {"answerer": "claude", "judge": "graded"}) \
        == "answerer=claude,judge=graded-fa060ac986"
    assert paper_configuration("06_memory_graph_study") == "paper-1f1ed85d49"
    assert configuration_for("01_prototype_scoring", QUICK_PARAMETERS["01_prototype_scoring"]) \
        == "systems=rag_turns+no_memory-266306309d"
    assert configuration_for("06_memory_graph_study", JUDGED_PARAMETERS["06_memory_graph_study"]) \
        == "answerer=claude,judge=three_dim-b1c46743f4"
    assert configuration_for("08_longmemeval", {}) == "paper-952c1936d9"
    for name in ("01_prototype_scoring", "02_full_run", "06_memory_graph_study"):
        default = configuration_for(name, {})
        assert configuration_for(name, {**dict.fromkeys(MODEL_PARAMETERS), "llm": "auto"}) == default
        chosen = {configuration_for(name, {parameter: "claude-haiku-4-5"}) for parameter in MODEL_PARAMETERS}
        assert len(chosen) == 3 and default not in chosen
        assert configuration_for(name, {"judge_model": "claude-haiku-4-5"}).startswith("judge_model=claude-haiku-4-5-")
        assert configuration_for(name, {"llm": "openai"}).startswith("llm=openai-")


def test_natural_metrics_is_what_notebook_05_assembled_by_hand(tmp_path):
    """metrics.json of notebook 05, now built by memeval.reports.natural: byte for byte the dict the notebook
    wrote by hand (the expression below is the notebook's, kept as it was)."""
    import pandas as pd

    from memeval.atomic import write_json_atomic
    from memeval.reports import natural as report

    manifest = {"source": "LoCoMo-Natural-87, rule-adjudicated", "examined": 120, "accepted": 87, "rejected": 33,
                "rejected_by_reason": {"gold not in evidence": 30, "no evidence": 3}, "accepted_by_category": {"4": 80},
                "accepted_by_type": {"single-hop": 87}, "rule_version": "lexical-v3", "sizes": {"ignored": 1}}
    rows = [{"method": m, "budget": b, "mean_ratio": r} for m, b, r in (("opt", 30.0, 1.0), ("gvt", 30.0, 0.912),
                                                                         ("gvt", 100.0, None))]
    summary = {"opt_certified": 2, "opt_rows": 2, "union_certified": 4, "union_rows": 5, "opt_disagreements": 0,
               "rows": rows}
    noise = {"runs": [{"seed": s, "by_budget": {30: {"mean_abs_ratio_change": 0.01 * s, "kendall_tau": 0.9 - s / 10},
                                                100: {"mean_abs_ratio_change": 0.02, "kendall_tau": 0.8}}}
                      for s in range(3)]}
    pairs, bridge = [{"q": 1}, {"q": 2}, {"q": 3}], [{"rho": 0.2}]
    audit = {"kappa": 0.71, "cells": 40, "raw_agreement": 0.9}
    sizes = pd.DataFrame({"candidates": [982, 1840], "units": [30, 40]}, index=["conv-26", "conv-30"])
    conversation_summary = {**summary, "opt_disagreements": 1}

    conversation_metrics = {
        "packages": len(sizes), "candidates_max": int(sizes["candidates"].max()),
        "opt_certified": conversation_summary["opt_certified"], "opt_rows": conversation_summary["opt_rows"],
        "opt_disagreements": conversation_summary["opt_disagreements"],
        "writer_mean_ratio": {f"{r['method']}@{r['budget']:g}": r["mean_ratio"] for r in conversation_summary["rows"]},
    }
    assert report.conversation_scope_metrics(sizes, conversation_summary) == conversation_metrics
    for audit_, scope in ((audit, conversation_metrics), (None, None)):
        by_hand = {
            "source": manifest["source"],
            "manifest": {k: manifest[k] for k in ("examined", "accepted", "rejected", "rejected_by_reason",
                                                  "accepted_by_category", "accepted_by_type", "rule_version")
                         if k in manifest},
            "opt_certified": summary["opt_certified"], "opt_rows": summary["opt_rows"],
            "union_certified": summary["union_certified"], "union_rows": summary["union_rows"],
            "writer_mean_ratio": {f"{r['method']}@{r['budget']:g}": r["mean_ratio"] for r in summary["rows"]},
            "bridge_rows": len(bridge), "bridge_pairs": len(pairs),
            "noise": {str(b): s for b, s in report.noise_table(noise).to_dict(orient="index").items()},
            "audit": None if audit_ is None else {"kappa": audit_["kappa"], "cells": audit_["cells"]},
            "conversation_scope": scope,
        }
        built = report.natural_metrics(manifest, summary, pairs, bridge, noise, audit_, scope)
        assert list(built) == list(by_hand)
        assert write_json_atomic(tmp_path / "ours.json", built).read_bytes() \
            == write_json_atomic(tmp_path / "by_hand.json", by_hand).read_bytes()


@pytest.mark.notebook
def test_a_chosen_answer_model_is_the_one_called_and_names_its_own_configuration(tmp_path, monkeypatch):
    """Notebook 01 with the Claude reader and answer_model set: every answer comes from that model, and the
    results go to a configuration directory of their own, named by it."""
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    params = {"systems": ["rag_turns"], "answerer": "claude", "answer_model": "claude-haiku-4-5",
              "artifacts_dir": str(tmp_path / "artifacts"), "figures_dir": str(tmp_path / "figures")}
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(responder=lambda body: "7 May 2023") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        execute_notebook(NOTEBOOKS / "01_prototype_scoring.ipynb", tmp_path / "01.ipynb", params, progress=False)
        models = [body["model"] for body in server.received]
    assert len(models) == 20 and set(models) == {"claude-haiku-4-5"}
    config = configured("01_prototype_scoring", tmp_path / "artifacts", params)
    assert config.name.startswith("systems=rag_turns,answerer=claude,answer_model=claude-haiku")  # cut at 60 characters
    assert [p.name for p in (tmp_path / "artifacts").iterdir()] == [config.name]
    metrics = json.loads((config / "metrics.json").read_text())
    assert metrics["questions"] == {"rag_turns": 20} and metrics["answer_counts"]["errors"] == 0
    manifest = json.loads((config / "run" / "manifest.json").read_text())
    assert manifest["llm"]["roles"]["answer"]["model"] == "claude-haiku-4-5"

def test_report_helpers_align_by_content_and_print_no_absolute_path(tmp_path):
    from memeval.notebook_runner import aligned_tables
    from memeval.reports.summary import metrics_summary, relative_paths, with_x100

    table = aligned_tables("| System | F1 ×100 | 95% CI | note |\n|---|---|---|---|\n"
                           "| rag_turns | 7.7 | [6.9, 8.5] | ok |\n| b | – | n/a (1 conversation) | 2 |")
    assert table.splitlines()[1] == "|:---|---:|---:|:---|"
    report = tmp_path / "reports"
    shown = relative_paths(f"see {report}/figures/a.png, {report}/artifacts and {report}x", report)
    head, _, other = shown.partition(" and ")
    assert head == "see figures/a.png, artifacts", shown
    assert other.endswith("/reportsx") and other != "x", "a sibling that only starts with the reports dir's name"
    metrics = with_x100({"run_dir": str(report / "artifacts" / "run"), "mean_f1": {"a": 0.0364, "b": 0.0}},
                        ("mean_f1",))
    assert metrics["mean_f1"] == {"a": 0.0364, "b": 0.0} and metrics["mean_f1_x100"] == {"a": 3.64, "b": 0.0}
    shown = metrics_summary(metrics)
    assert "| mean_f1_x100 · a | 3.6 |" in shown and "| mean_f1_x100 · b | 0.0 |" in shown
    assert "| mean_f1 ·" not in shown and str(tmp_path) not in shown


def test_readable_frame_prints_counts_as_integers_and_names_columns():
    import pandas as pd

    from memeval.reports.tables import readable_frame

    frame = pd.DataFrame({"candidates": [1132.0, 982.0], "total_cost": [0.1234, None]},
                         index=pd.Index(["conv-26", "conv-30"], name="conversation"))
    shown = readable_frame(frame, {"total_cost": "cost"}, {"cost": 2})
    assert list(shown.columns) == ["candidates", "cost"] and shown.index.name == "conversation"
    assert shown["candidates"].tolist() == ["1132", "982"] and shown["cost"].tolist() == ["0.12", "–"]


@pytest.mark.notebook
def test_rendered_reports_are_clean(workspace):
    """What a reader gets: no absolute path, no number to six decimals, no raw field name as a header, numbers
    right-aligned, and every figure a notebook saves shown in its HTML."""
    import re

    from memeval.notebook_runner import render_html

    for name in ("00_data_tour", "01_prototype_scoring", "02_full_run", "05_memaudit_natural87",
                 "06_memory_graph_study"):
        _run(name, workspace)
        html = render_html(workspace / f"{name}.ipynb", no_input=True).read_text()
        assert str(workspace) not in html and str(NOTEBOOKS.parent) not in html, name
        assert not re.search(r"\b\d+\.\d{6}\b", html), name
        assert not re.search(r"<th[^>]*>(exported|fitting_budget|raw_F|turns_per_session|path_recall|f1)</th>", html)
        assert 'style="text-align:right"' in html, name
        executed = json.loads((workspace / f"{name}.ipynb").read_text())
        saved = sum("".join(o.get("text", "")).count("figure:") for c in executed["cells"] if c["cell_type"] == "code"
                    for o in c["outputs"] if o.get("output_type") == "stream")
        shown = sum(1 for c in executed["cells"] if c["cell_type"] == "code" for o in c["outputs"]
                    if "image/png" in o.get("data", {}))
        assert saved and shown >= saved, f"{name}: {saved} figures saved, {shown} shown"


@pytest.mark.notebook
def test_trust_notebook_without_the_audit_says_so_and_still_weighs_the_differences(tmp_path, monkeypatch):
    """Notebook 09 with no audit fetched: one plain line saying so, the runs on the original key only, the MDE of
    the adjacent pair, and its figures; no published run imported."""
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "no-audit"))
    params = notebook_parameters("09_trust", tmp_path)
    execute_notebook(NOTEBOOKS / "09_trust.ipynb", tmp_path / "09.ipynb", params, progress=False)
    artifacts = configured("09_trust", tmp_path / "artifacts" / "09_trust", params)
    metrics = json.loads((artifacts / "metrics.json").read_text())
    assert metrics["audit_fetched"] is False and metrics["keys"] == "original" and metrics["systems"] == 2
    assert metrics["figures"] == 2 and metrics["figure_problems"] == 0
    assert not (artifacts / "trust" / "published").exists()
    shown = "".join("".join(o.get("data", {}).get("text/markdown", "")) for c in
                    json.loads((tmp_path / "09.ipynb").read_text())["cells"] if c["cell_type"] == "code"
                    for o in c.get("outputs", []))
    assert "**The LoCoMo audit is not fetched**" in shown and "memeval data fetch locomo-audit" in shown
    assert "Which differences are real" in shown and "rag_turns − full_context" in shown


def test_notebooks_are_reports_over_the_api_only():
    """Issue 43: a notebook is its parameters cell, calls into memeval.api and display. It imports no other memeval
    module, its first cell after the parameters is `api.notebook(<its name>, globals())` (parameters checked,
    configuration directory made), and it saves a figure only through that run's `save_figure`."""
    import re

    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        code = ["".join(c["source"]) for c in cells]
        imported = {m for source in code for m in re.findall(r"^\s*(?:from|import)\s+(memeval[\w.]*)", source, re.M)}
        names = {n for source in code for n in re.findall(r"^\s*from\s+memeval\s+import\s+(\w+)", source, re.M)}
        assert imported == {"memeval"} and names == {"api"}, (path.name, imported, names)
        assert "parameters" in cells[0]["metadata"].get("tags", []), path.name
        assert f'run = api.notebook("{path.stem}", globals())' in code[1], path.name
        body = "\n".join(code)
        assert "savefig" not in body and not re.search(r"(?<!run\.)save_figure\(", body), path.name


def test_a_notebook_saves_a_figure_once_per_configuration_as_the_publication_saves_it(tmp_path, monkeypatch, capsys):
    """`Notebook.save_figure`: the PDF and PNG (and the panels' record) that `publication.style.save_figure` writes,
    byte for byte, in reports/figures/<notebook>/<configuration>/, a directory per configuration; the paths printed
    relative, the caption shown."""
    import re

    import matplotlib

    matplotlib.use("Agg")
    import IPython.display
    import matplotlib.pyplot as plt

    from memeval import api
    from memeval.artifacts import notebook_parameters as defaults
    from memeval.notebook_config import configuration_for
    from memeval.publication.style import save_figure

    displayed = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: displayed.append(obj))
    monkeypatch.setenv("MEMEVAL_ARTIFACTS", str(tmp_path / "reports" / "artifacts"))
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2])

    def contents(paths):  # a PDF's creation time aside
        return {p.name: re.sub(rb"/CreationDate \(D:\d+[^)]*\)", b"", p.read_bytes()) for p in paths}

    reference = contents(save_figure(fig, "03_budget_sweep", tmp_path / "reference"))
    saved = {}
    for seeds in (500, 50):
        run = api.notebook("03_memaudit_small", {**defaults("03_memaudit_small"), "seeds": seeds})
        assert run.save_figure(fig, "03_budget_sweep", "a caption") is None  # a cell ending with it shows no repr
        expected = tmp_path / "reports" / "figures" / "03_memaudit_small" / configuration_for("03_memaudit_small",
                                                                                            {"seeds": seeds})
        assert run.figure_dir() == expected
        saved[seeds] = sorted(expected.iterdir())
        assert contents(saved[seeds]) == reference
    plt.close(fig)
    assert saved[500][0].parent != saved[50][0].parent
    shown = capsys.readouterr().out
    assert "figure: figures/03_memaudit_small/paper-" in shown and "03_budget_sweep.png" in shown
    assert str(tmp_path) not in shown and [d.data for d in displayed] == ["*a caption*"] * 2


def test_natural_packages_refuse_a_source_in_one_line_and_build_nothing(tmp_path):
    from memeval import api
    from memeval.errors import InputError

    for source, said in (("longmemeval", "data_path: source='longmemeval' needs data_path"),
                         ("lme", "source: 'lme': expected locomo or longmemeval")):
        with pytest.raises(InputError, match=said) as refused:
            api.natural_packages(source, tmp_path / "packages")
        assert "\n" not in str(refused.value)
    assert not (tmp_path / "packages").exists()
