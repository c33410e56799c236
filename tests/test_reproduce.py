"""`memeval reproduce`: executes notebooks in name order, renders both HTML variants, writes a manifest, and
stops with a one-line error naming the failed notebook (its executed copy kept)."""

import json
import os

import nbformat
import pytest

from memeval.cli import main


def _notebook(path, source):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("value = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


@pytest.mark.notebook
def test_reproduce_renders_html_with_and_without_code_and_writes_a_manifest(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _notebook(notebooks / "01_second.ipynb", "secret_marker_in_code = 7\nprint('printed', value * 6)")
    _notebook(notebooks / "00_first.ipynb", "from memeval.artifacts import artifacts_dir\n"
                                            "print('artifacts in', artifacts_dir('00_first'))")
    (notebooks / "scratch.ipynb").write_text("not a numbered notebook, not executed")
    out = tmp_path / "reports"
    before = os.environ.get("MEMEVAL_ARTIFACTS")
    assert main(["reproduce", "--notebooks", str(notebooks), "--out", str(out),
                 "--figures", str(tmp_path / "figures")]) == 0
    printed = capsys.readouterr().out
    assert printed.index("[1/2] 00_first.ipynb") < printed.index("[2/2] 01_second.ipynb")
    full = (out / "01_second.html").read_text()
    bare = (out / "01_second.no-input.html").read_text()
    assert "secret_marker_in_code" in full and "printed 6" in full
    assert "secret_marker_in_code" not in bare and "printed 6" in bare
    manifest = json.loads((out / "reproduce_manifest.json").read_text())
    assert [n["notebook"] for n in manifest["notebooks"]] == ["00_first.ipynb", "01_second.ipynb"]
    assert manifest["judged"] is False and manifest["git_sha"]
    assert not (out / "scratch.ipynb").exists()
    assert f"artifacts in {out / 'artifacts' / '00_first'}" in (out / "00_first.ipynb").read_text()
    report = (out / "00_first.html").read_text()
    assert "artifacts in artifacts/00_first" in report and str(tmp_path) not in report, "a report's paths are relative"
    assert (out / "artifacts" / "00_first").is_dir() and os.environ.get("MEMEVAL_ARTIFACTS") == before, \
        "reproduce restores the environment it changed for its kernels"


@pytest.mark.notebook
def test_reproduce_names_the_failed_notebook_and_keeps_its_executed_copy(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _notebook(notebooks / "00_breaks.ipynb", "raise ValueError('bad parameter')")
    _notebook(notebooks / "01_never.ipynb", "print('should not run')")
    out = tmp_path / "reports"
    assert main(["reproduce", "--notebooks", str(notebooks), "--out", str(out),
                 "--figures", str(tmp_path / "figures")]) == 1
    err = capsys.readouterr().err
    assert "00_breaks.ipynb failed (ValueError in cell" in err and str(out / "00_breaks.ipynb") in err
    assert "bad parameter" in (out / "00_breaks.html").read_text()
    assert not (out / "01_never.ipynb").exists() and not (out / "reproduce_manifest.json").exists()


@pytest.mark.notebook
def test_reproduce_quick_runs_a_notebook_on_small_parameters(tmp_path, capsys):
    out = tmp_path / "reports"
    assert main(["reproduce", "--only", "03", "--quick", "--out", str(out), "--figures", str(tmp_path / "figures"),
                 "--no-progress"]) == 0
    from memeval.notebook_config import configuration_for
    from memeval.notebook_runner import QUICK_PARAMETERS

    config = configuration_for("03_memaudit_small", QUICK_PARAMETERS["03_memaudit_small"])
    metrics = json.loads((out / "artifacts" / "03_memaudit_small" / config / "metrics.json").read_text())
    assert metrics["packages"] == 6 and metrics["opt_rows"] == 6 * 3
    manifest = json.loads((out / "reproduce_manifest.json").read_text())
    assert manifest["quick"] is True and manifest["command_line"].endswith("--only 03 --quick")
    # figures/ holds only the publication set; a notebook's own images go beside the reports, per configuration
    assert (out / "figures" / "03_memaudit_small" / config / "03_budget_sweep.png").is_file()
    assert not (tmp_path / "figures").exists() or not list((tmp_path / "figures").glob("03_*"))


def test_an_only_prefix_no_notebook_has_is_refused_before_anything_is_made(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _notebook(notebooks / "01_first.ipynb", "x = 1")
    out = tmp_path / "reports"
    assert main(["reproduce", "--notebooks", str(notebooks), "--only", "01", "99", "--out", str(out),
                 "--figures", str(tmp_path / "figures"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--only" in err[0] and "99" in err[0] and "01_first" in err[0]
    assert not out.exists()
