"""Notebook parameters are checked as the command line checks the same flags, before a configuration directory
exists; the text papermill passes (`-p budgets "[2, 6]"`) is read where it is unambiguous; each configuration
keeps its own images."""

import json
from pathlib import Path

import pytest

from memeval.artifacts import notebook_figures_dir, notebook_parameters
from memeval.notebook_config import configuration_dir, configuration_for
from memeval.parameters import ParameterError, checked_parameters, known_parameters

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SMALL = "03_memaudit_small"


def test_every_parameters_cell_is_checked_and_its_defaults_pass_unchanged():
    names = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))
    assert len(names) == 10
    for name in names:
        defaults = notebook_parameters(name)
        assert defaults and set(defaults) <= known_parameters(name), (name, set(defaults) - known_parameters(name))
        assert checked_parameters(name, defaults) == defaults, name


@pytest.mark.parametrize("typed", ["[2, 6]", "2,6", " 2, 6 ", "(2, 6)"])
def test_the_text_papermill_passes_reads_as_the_list_it_spells(typed):
    assert checked_parameters(SMALL, {"budgets": typed})["budgets"] == [2, 6]
    assert configuration_for(SMALL, {"budgets": typed}) == configuration_for(SMALL, {"budgets": [2, 6]})


@pytest.mark.parametrize(("name", "value", "said"), [
    ("budgets", "[2, -6]", "budgets: expected a finite number > 0, got '-6'"),
    ("budgets", "two,six", "budgets: expected a finite number > 0, got 'two'"),
    ("budgets", 6, "budgets: expected a list"),
    ("seeds", 0, "seeds: expected an integer"),
    ("seeds", True, "seeds: expected a value"),
    ("certify", "maybe", "certify: 'maybe': expected one of none, milp, parts"),
    ("methods", "opt,oracle", "methods: unknown writer(s) oracle"),
])
def test_a_bad_parameter_is_one_line_and_creates_nothing(tmp_path, name, value, said):
    namespace = {**notebook_parameters(SMALL), name: value}
    with pytest.raises(ParameterError) as refused:
        configuration_dir(SMALL, namespace, tmp_path / "artifacts")
    message = str(refused.value)
    assert message.startswith(f"notebook {SMALL}: ") and said in message and "\n" not in message
    assert not (tmp_path / "artifacts").exists(), "no configuration directory for a refused configuration"


def test_other_notebooks_are_read_through_their_own_flags():
    with pytest.raises(ParameterError, match="answerer: 'gpt': expected one of extractive, claude"):
        checked_parameters("02_full_run", {"answerer": "gpt"})
    with pytest.raises(ParameterError, match="systems: 'rag_turn': unknown memory system"):
        checked_parameters("01_prototype_scoring", {"systems": "rag_turns,rag_turn"})
    with pytest.raises(ParameterError, match="noise_rate: expected a number in"):
        checked_parameters("05_memaudit_natural87", {"noise_rate": 1.5})
    with pytest.raises(ParameterError, match=r"imported_answers\[0\]: expected a record"):
        checked_parameters("02_full_run", {"imported_answers": [{"source": "a.json"}]})
    read = checked_parameters("08_longmemeval", {"questions": "50", "natural_target": 0, "systems": "rag_turns"})
    assert (read["questions"], read["natural_target"], read["systems"]) == (50, 0, ["rag_turns"])
    assert checked_parameters("06_memory_graph_study", {"systems": "memory_graph:hops=1;chunks"})["systems"] == \
        ["memory_graph:hops=1", "chunks"]


def test_the_notebook_sees_the_value_the_text_spells(tmp_path):
    namespace = {**notebook_parameters(SMALL), "budgets": "2,6", "seeds": "50"}
    made = configuration_dir(SMALL, namespace, tmp_path / "artifacts")
    assert (namespace["budgets"], namespace["seeds"]) == ([2, 6], 50)
    assert made.name == configuration_for(SMALL, {"budgets": [2, 6], "seeds": 50})


def test_each_configuration_keeps_its_own_images(tmp_path):
    paper = configuration_for(SMALL, {})
    other = configuration_for(SMALL, {"seeds": 50})
    first = notebook_figures_dir(tmp_path, SMALL, paper)
    second = notebook_figures_dir(tmp_path, SMALL, tmp_path / "artifacts" / other)
    assert first == tmp_path / SMALL / paper and second == tmp_path / SMALL / other and first != second
    assert notebook_figures_dir(tmp_path, "00_data_tour") == tmp_path / "00_data_tour"


@pytest.mark.notebook
def test_papermills_text_runs_the_notebook_and_a_bad_value_stops_it_in_one_line(tmp_path):
    from papermill.exceptions import PapermillExecutionError

    from memeval.notebook_runner import execute_notebook

    base = {"seeds": 3, "jobs": 1, "certify": "none", "artifacts_dir": str(tmp_path / "bad"),
            "figures_dir": str(tmp_path / "figures")}
    with pytest.raises(ParameterError, match="budgets"):  # the runner refuses before a kernel starts
        execute_notebook(NOTEBOOKS / f"{SMALL}.ipynb", tmp_path / "runner.ipynb", {**base, "budgets": "[2, -6]"},
                         progress=False)
    import papermill as pm  # papermill itself, as a user runs it: the notebook's first cell refuses

    with pytest.raises(PapermillExecutionError) as failed:
        pm.execute_notebook(str(NOTEBOOKS / f"{SMALL}.ipynb"), str(tmp_path / "bad.ipynb"),
                            parameters={**base, "budgets": "[2, -6]"}, progress_bar=False, kernel_name="python3")
    assert failed.value.ename == "ParameterError" and "\n" not in failed.value.evalue
    assert "budgets: expected a finite number > 0, got '-6'" in failed.value.evalue
    assert not (tmp_path / "bad").exists() and not (tmp_path / "figures").exists()
    good = {**base, "budgets": "[2, 6]", "artifacts_dir": str(tmp_path / "good")}
    pm.execute_notebook(str(NOTEBOOKS / f"{SMALL}.ipynb"), str(tmp_path / "good.ipynb"), parameters=good,
                        progress_bar=False, kernel_name="python3")
    config = configuration_for(SMALL, {**good, "budgets": [2, 6]})
    metrics = json.loads((tmp_path / "good" / config / "metrics.json").read_text())
    assert metrics["packages"] == 3
    assert (tmp_path / "figures" / SMALL / config / "03_budget_sweep.png").is_file()


def test_the_trust_notebooks_runs_read_as_a_list_of_directories():
    assert checked_parameters("09_trust", {"runs": "runs/a, runs/b"})["runs"] == ["runs/a", "runs/b"]
    assert checked_parameters("09_trust", {"runs": "['runs/a', 'runs/b']"})["runs"] == ["runs/a", "runs/b"]
    assert checked_parameters("09_trust", {"runs": None})["runs"] is None
    with pytest.raises(ParameterError, match="runs: expected a list of directories"):
        checked_parameters("09_trust", {"runs": 5})
    with pytest.raises(ParameterError, match="ambiguous"):
        checked_parameters("09_trust", {"ambiguous": "sometimes"})
