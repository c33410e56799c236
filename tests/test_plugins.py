"""Memory systems from outside the package: the example system under examples/, installed and found through its
entry point, or named as module:Factory; and every way a plug-in can be wrong, each one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.records import AnswerRow, read_records

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "memeval-example-system"


@pytest.mark.slow
def test_the_example_system_installs_and_runs_through_locomo_run(locomo_dir, tmp_path):
    import shutil

    target, source = tmp_path / "site", tmp_path / "example"
    shutil.copytree(EXAMPLE, source)  # setuptools builds in the source tree: keep the repository clean
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, capture_output=True)
    assert list(target.glob("memeval_example_system-*.dist-info/entry_points.txt"))
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                           "--conversations", "conv-26", "--questions", "first:8", "--systems", "keyword_memory,rag_turns",
                           "--out", str(out), "--no-progress", "--json"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = read_records(out / "answers.jsonl", AnswerRow)
    mine = [r for r in rows if r.system == "keyword_memory"]
    assert len(mine) == 8 and all(r.final and r.k == 10 and r.recall_curve for r in mine)
    assert any(r.evidence_recall for r in mine), "the example's turns carry their dia_ids, so recall is measured"
    report = (out / "report.md").read_text()
    assert "| keyword_memory |" in report and "| rag_turns |" in report
    listed = subprocess.run([sys.executable, "-c", "from memeval.memory.registry import system_names; "
                             "print(system_names())"], capture_output=True, text=True, env=env, check=True).stdout
    assert "keyword_memory" in listed


BAD_PLUGIN = '''
class Shapeless:
    def __init__(self, mode="ok"):
        self.mode = mode
    def ingest(self, conversation):
        pass
    def search(self, question, k):
        if self.mode == "not_a_list":
            return "D1:1"
        if self.mode == "no_text":
            return [{"score": 1.0, "source_ids": ["D1:1"]}]
        if self.mode == "bad_sources":
            return [{"text": "x", "score": 1.0, "source_ids": "D1:1"}]
        return [{"text": "x", "score": 1.0, "source_ids": ["D1:1"]}]
'''


@pytest.mark.parametrize("spec, message", [
    ("no_such_module_here:Thing", "cannot import module 'no_such_module_here'"),
    ("bad_plugin:Missing", "module 'bad_plugin' has no 'Missing'"),
    ("bad_plugin:BAD_PLUGIN_VALUE", "is not callable"),
    ("bad_plugin:Shapeless:colour=red", "unknown parameter colour for bad_plugin:Shapeless; valid: mode"),
    ("bad_plugin:Shapeless:mode=not_a_list", "search for conv-26:q0000: return value: expected a list"),
    ("bad_plugin:Shapeless:mode=no_text", "search for conv-26:q0000, item 0: text: expected a string"),
    ("bad_plugin:Shapeless:mode=bad_sources", "item 0: source_ids: expected a list of turn ids"),
])
def test_a_bad_plugin_is_one_line(spec, message, locomo_dir, tmp_path, monkeypatch, cli):
    (tmp_path / "bad_plugin.py").write_text(BAD_PLUGIN + "\nBAD_PLUGIN_VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2",
                 "--systems", spec, "--out", tmp_path / "run", "--no-progress")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_plugin_named_by_its_factory_scores_like_a_builtin(locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:5", "--systems",
        "memeval_example:KeywordMemory:min_overlap=2", "--out", tmp_path / "run", "--no-progress", "--json",
        check=True)
    rows = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    assert {r.system for r in rows} == {"memeval_example:KeywordMemory[min_overlap=2]"} and len(rows) == 5
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["systems"][0]["name"] == "memeval_example:KeywordMemory"
