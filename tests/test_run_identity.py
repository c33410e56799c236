"""A results directory holds one run: every setting that changes a stored row is its identity, checked before
anything is written; a rerun with another identity is refused in one line (or moved aside with --restart);
runs that lack requested rows exit non-zero with a closing line; one writer at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.records import JudgmentRow, read_records


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _locomo(cli, locomo_dir, out, *extra):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--out", out, "--no-progress",
               *extra)


def test_a_second_judge_model_is_refused_and_nothing_changes(locomo_dir, tmp_path, cli, monkeypatch):
    """The reported bug: the second judge model sent 0 calls, kept the first model's judgments and rewrote the
    manifest to name the second."""
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    out = tmp_path / "run"
    with FakeAnthropic(responder=lambda body: '{"reasoning": "fine", "label": "CORRECT"}') as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        first = _locomo(cli, locomo_dir, out, "--questions", "first:3", "--judge", "binary", "--judge-model",
                        "claude-haiku-4-5")
        assert first.returncode == 0, first.stderr
        judged = read_records(out / "judgments.jsonl", JudgmentRow)
        assert judged and {j.judge_model for j in judged} == {"claude-haiku-4-5"}
        before, sent = _tree(out), len(server.received)
        second = _locomo(cli, locomo_dir, out, "--questions", "first:3", "--judge", "binary", "--judge-model",
                         "claude-sonnet-4-6")
        assert second.returncode == 2 and len(_lines(second.stderr)) == 1
        assert "judges binary.model: 'claude-haiku-4-5' here, 'claude-sonnet-4-6' asked" in second.stderr
        assert "claude-sonnet-4-6" in second.stderr and "--restart" in second.stderr
        assert len(server.received) == sent and _tree(out) == before


def test_another_question_set_is_refused_naming_both_values(locomo_dir, tmp_path, cli):
    out = tmp_path / "run"
    assert _locomo(cli, locomo_dir, out, "--questions", "prototype").returncode == 0
    before = _tree(out)
    refused = _locomo(cli, locomo_dir, out, "--questions", "first:5")
    assert refused.returncode == 2 and len(_lines(refused.stderr)) == 1
    assert "questions: 'prototype' here, '5' asked" in refused.stderr
    assert _tree(out) == before


def test_adding_a_system_is_additive_and_said(locomo_dir, tmp_path, cli):
    out = tmp_path / "run"
    assert _locomo(cli, locomo_dir, out, "--questions", "first:3", "--systems", "rag_turns").returncode == 0
    added = _locomo(cli, locomo_dir, out, "--questions", "first:3", "--systems", "rag_turns,full_context")
    assert added.returncode == 0
    assert "added to this run: systems full_context" in added.stdout
    identity = json.loads((out / "manifest.json").read_text())["identity"]
    assert sorted(identity["additive"]["systems"]) == ["full_context", "rag_turns"]
    # the same system with other parameters is another label: additive too; changing k is not
    refused = _locomo(cli, locomo_dir, out, "--questions", "first:3", "--k", "5")
    assert refused.returncode == 2 and "k: 10 here, 5 asked" in refused.stderr


def test_restart_moves_the_old_run_aside_and_never_deletes_it(locomo_dir, tmp_path, cli):
    out = tmp_path / "run"
    assert _locomo(cli, locomo_dir, out, "--questions", "prototype").returncode == 0
    old = _tree(out)
    assert _locomo(cli, locomo_dir, out, "--questions", "first:2", "--restart").returncode == 0
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.replaced-")]
    assert len(aside) == 1 and _tree(aside[0]) == old
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["identity"]["fixed"]["questions"] == "2" and manifest["complete"] is True


def test_failed_answers_exit_non_zero_with_a_closing_line_last(locomo_dir, tmp_path, monkeypatch):
    """No key and an empty cache: every Claude answer fails. The run finishes, records why, and exits 4 with the
    closing line as the last thing on stderr (a real process, as a script would run it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["MEMEVAL_CACHE_DIR"] = str(tmp_path / "empty-cache")
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                           "--conversations", "conv-26", "--questions", "first:3", "--reader", "claude", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 4, done.stderr
    assert _lines(done.stderr)[-1] == ("memeval: incomplete: 3 of 3 answers failed (CacheMiss); rerun to retry them "
                                       "(CacheMiss: no cached reply and no LLM was called; set ANTHROPIC_API_KEY or "
                                       "OPENAI_API_KEY, or choose --llm)")
    assert "Traceback" not in done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["missing"]["answers"]["failed"] == 3
    report = (out / "report.md").read_text()
    assert "nan" not in report.split() and "| nan |" not in report
    bleu = report[report.index("## BLEU-1"):].splitlines()
    assert any(line.startswith("| rag_turns |") and line.rstrip().endswith("| 0 |") for line in bleu), \
        "a failed answer is never scored (BLEU-1 over 0 answers, not 3 zeros)"
    assert "written to" in done.stdout and "judgments.jsonl" not in done.stdout.splitlines()[-1]


def test_a_run_needs_a_system(locomo_dir, tmp_path, cli):
    for spec in ("", ","):
        refused = _locomo(cli, locomo_dir, tmp_path / "run", "--questions", "first:3", "--systems", spec)
        assert refused.returncode == 2 and "--systems: (none): name at least one memory system" in refused.stderr
    assert not (tmp_path / "run").exists()


def test_missing_judgments_make_a_run_incomplete(locomo_dir, tmp_path, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "empty-cache"))
    result = _locomo(cli, locomo_dir, tmp_path / "run", "--questions", "first:3", "--judge", "binary")
    assert result.returncode == 4
    assert _lines(result.stderr)[-1] == ("memeval: incomplete: 3 of 3 binary judgments are missing (failed, or no "
                                         "LLM configured); rerun to retry them")


def test_longmemeval_runs_have_an_identity_too(tmp_path, cli):
    from tests.test_notebooks import write_small_longmemeval

    data = write_small_longmemeval(tmp_path / "lme.json")
    out = tmp_path / "lme"
    args = ["longmemeval", "run", "--data", data, "--systems", "rag_turns", "--out", out, "--no-progress"]
    assert cli(*args).returncode == 0
    before = _tree(out)
    refused = cli(*args, "--k", "5")
    assert refused.returncode == 2 and "k: 10 here, 5 asked" in refused.stderr and _tree(out) == before
    refused = cli(*args, "--questions", "2")
    assert refused.returncode == 2 and "questions: null here, 2 asked" in refused.stderr
    assert cli(*args[:-3], "--systems", "rag_turns,no_memory", "--out", out, "--no-progress").returncode == 0


def test_graph80_and_natural_builds_refuse_another_configuration(tmp_path, cli):
    corpus = tmp_path / "graph80"
    assert cli("graph80", "generate", "--out", corpus).returncode == 0
    run = ["graph80", "run", "--data", corpus, "--systems", "chunks,no_memory", "--out", tmp_path / "study",
           "--no-progress"]
    assert cli(*run, "--repeats", "1").returncode == 0
    before = _tree(tmp_path / "study")
    refused = cli(*run, "--repeats", "2")
    assert refused.returncode == 2 and "repeats: 1 here, 2 asked" in refused.stderr
    assert _tree(tmp_path / "study") == before
    assert cli(*run, "--repeats", "2", "--restart").returncode == 0
    assert len(list(tmp_path.glob("study.replaced-*"))) == 1


def test_natural_build_refuses_other_settings(locomo_dir, tmp_path, cli):
    out = tmp_path / "packages"
    build = ["natural", "build", "--data", locomo_dir, "--target", "3", "--no-union", "--out", out, "--no-progress"]
    assert cli(*build).returncode == 0
    before = _tree(out)
    refused = cli(*build, "--cost", "bytes")
    assert refused.returncode == 2 and "cost_rule: 'words' here, 'bytes' asked" in refused.stderr
    assert _tree(out) == before
    assert cli(*build).returncode == 0 and _tree(out) == before, "the same settings rebuild byte for byte"


def test_a_second_writer_is_refused_and_a_dead_ones_lock_is_taken_over(tmp_path, cli):
    import socket

    out = tmp_path / "sweep"
    out.mkdir()
    sweep = ["memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "2", "--out", out, "--no-progress"]
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / ".memeval.lock").write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(),
                                                       "command": "memeval memaudit sweep small",
                                                       "started_utc": "2026-12-03T00:00:00+00:00"}))
        refused = cli(*sweep)
        assert refused.returncode == 2 and len(_lines(refused.stderr)) == 1
        assert f"another memeval is writing here (pid {holder.pid}" in refused.stderr
        assert not (out / "raw_results.jsonl").exists()
        listed = json.loads(cli("ls", tmp_path, "--json").stdout) if (out / "manifest.json").exists() else []
        assert all(r["status"] == "running" for r in listed)
    finally:
        holder.kill()
        holder.wait()
    taken = cli(*sweep)
    assert taken.returncode == 0 and f"took over {out / '.memeval.lock'}" in taken.stderr
    assert not (out / ".memeval.lock").exists(), "released when the sweep ends"
    [listed] = json.loads(cli("ls", tmp_path, "--json").stdout)
    assert listed["status"] == "complete" and listed["rows"] == {"raw_results": 2 * 10}


def test_ls_says_complete_incomplete_and_replaced(locomo_dir, tmp_path, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert _locomo(cli, locomo_dir, tmp_path / "a", "--questions", "first:2").returncode == 0
    assert _locomo(cli, locomo_dir, tmp_path / "b", "--questions", "first:2", "--reader", "claude").returncode == 4
    assert _locomo(cli, locomo_dir, tmp_path / "a", "--questions", "first:1", "--restart").returncode == 0
    table = cli("ls", tmp_path)
    assert table.returncode == 0
    status = {Path(r["directory"]).name.split(".replaced-")[0] + (".old" if ".replaced-" in r["directory"] else ""):
              (r["status"], r["rows"]) for r in json.loads(cli("ls", tmp_path, "--json").stdout)}
    assert status == {"a": ("complete", {"answers": 1}), "a.old": ("replaced", {"answers": 2}),
                      "b": ("incomplete", {"answers": 2})}


@pytest.mark.parametrize("values", [{"seeds": 50}, {"budgets": [3, 6]}])
def test_each_notebook_configuration_has_its_own_directory(values, tmp_path):
    from memeval.artifacts import notebook_parameters, paper_configuration, stored_configuration
    from memeval.notebook_config import configuration_dir

    notebook = tmp_path / "03_memaudit_small"
    defaults = notebook_parameters("03_memaudit_small")
    paper = configuration_dir("03_memaudit_small", defaults, notebook)
    other = configuration_dir("03_memaudit_small", {**defaults, **values}, notebook)
    assert paper.name == paper_configuration("03_memaudit_small") and paper.name.startswith("paper-")
    assert other != paper and other.name.startswith(next(iter(values)) + "=")
    # the publication reads the paper's configuration when it exists, else the newest present, and says which
    assert stored_configuration("base_sweep", tmp_path)[1] == "absent"
    (other / "sweep").mkdir()
    directory, which = stored_configuration("base_sweep", tmp_path)
    assert directory == other and which.startswith("not the paper's configuration")
    (paper / "sweep").mkdir()
    directory, which = stored_configuration("base_sweep", tmp_path)
    assert directory == paper and which.startswith("the paper's configuration")
