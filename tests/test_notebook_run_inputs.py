"""A notebook's data, conversations and questions are read by its run, not by a flag's type: a misspelled one is
refused in one line naming the parameter before the notebook's configuration directory (or, through the runner, a
kernel and the executed copy) exists."""

from __future__ import annotations

import pytest

from memeval.parameters import ParameterError

BAD = [({"questions": "frist:5"}, "questions", "expected all, prototype, N, sample:N or first:N"),
       ({"conversations": "conv-99"}, "conversations", "unknown conversation id(s) conv-99"),
       ({"data_path": "/nonexistent/locomo10.json"}, "data_path", "does not exist")]


def _namespace(notebook, locomo_dir, tmp_path, **values) -> dict:
    from memeval.artifacts import notebook_parameters

    return {**notebook_parameters(notebook), "data_path": str(locomo_dir), "artifacts_dir": str(tmp_path / "art"),
            **values}


@pytest.mark.parametrize("notebook", ["01_prototype_scoring", "02_full_run", "09_trust"])
@pytest.mark.parametrize(("bad", "name", "said"), BAD)
def test_a_misspelled_run_input_creates_no_configuration_directory(notebook, bad, name, said, locomo_dir, tmp_path):
    from memeval import api

    with pytest.raises(ParameterError) as refused:
        api.notebook(notebook, _namespace(notebook, locomo_dir, tmp_path, **bad))
    line = str(refused.value)
    assert line.startswith(f"notebook {notebook}: {name}: ") and said in line and "\n" not in line
    assert not (tmp_path / "art").exists()


@pytest.mark.parametrize(("bad", "name", "said"), BAD)
def test_the_runner_refuses_it_before_a_kernel_or_the_executed_copy(bad, name, said, locomo_dir, tmp_path):
    from memeval.notebook_runner import execute_notebook
    from tests.test_notebooks import NOTEBOOKS

    given = {"data_path": str(locomo_dir), "artifacts_dir": str(tmp_path / "art"), **bad}
    with pytest.raises(ParameterError, match=f"notebook 02_full_run: {name}: "):
        execute_notebook(NOTEBOOKS / "02_full_run.ipynb", tmp_path / "out" / "02.ipynb", given, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_good_inputs_make_the_directory_as_before(locomo_dir, tmp_path):
    from memeval import api

    namespace = _namespace("02_full_run", locomo_dir, tmp_path, conversations="conv-26,conv-30", questions="first:15")
    run = api.notebook("02_full_run", namespace)
    assert run.artifacts.is_dir() and run.artifacts.parent == tmp_path / "art"
