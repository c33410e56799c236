"""One bad sample never stops a run: a plug-in memory system whose own `ingest` or `search` raises (or calls
sys.exit) gets an error row for the questions it failed, retried on a rerun, and the run goes on; `--fail-fast`
stops at the first failure with one line; a search returning the wrong shape names what it got and what the
protocol expects. Built-in systems' exceptions are programming errors and still propagate."""

import json
import os
import subprocess
import sys

import pytest

from memeval.benchmarks.longmemeval.task import LMEAnswerRow
from memeval.data.paths import project_root
from memeval.errors import EXIT_INCOMPLETE, PluginFailed
from memeval.memory.base import SystemConfig
from memeval.qa.answer_pass import AnswerSettings, answer_conversation
from memeval.records import AnswerRow, read_records
from tests.test_longmemeval_data import instance

# How it fails is read from the environment at call time, so the system's label (and with it the rows' key)
# stays `tests_plugin_module:Factory` from one run to its rerun.
PLUGIN = '''
import os
import sys


class Factory:
    def __init__(self):
        self.turns, self.calls = [], 0

    def _fail(self):
        how = os.environ.get("PLUGIN_HOW", "raise")
        if how == "exit":
            sys.exit(3)
        if how == "interrupt":
            raise KeyboardInterrupt
        raise ValueError("boom\\n(second line)")

    def ingest(self, conversation):
        self.turns = [t for s in conversation.sessions for t in s.turns]
        if os.environ.get("PLUGIN_FAIL_IN") == "ingest":
            self._fail()

    def search(self, question, k):
        at, on = os.environ.get("PLUGIN_FAIL_AT"), os.environ.get("PLUGIN_FAIL_ON")
        self.calls += 1
        if (at is not None and self.calls == int(at) + 1) or (on and on in question):
            if os.environ.get("PLUGIN_HOW") == "strings":
                return [t.text for t in self.turns[:k]]
            self._fail()
        return [{"text": t.text, "score": 1.0 / (i + 1), "source_ids": [t.dia_id]}
                for i, t in enumerate(self.turns[:k])]
'''
SPEC = "tests_plugin_module:Factory"
ONE_LINE_STOP = f"memeval: error: plug-in {SPEC} failed in search on conv-26:q0002: ValueError: boom (second line)"


@pytest.fixture()
def plugin(tmp_path, monkeypatch):
    """The plug-in module in a directory of its own, importable in this process; returns that directory."""
    home = tmp_path / "plugin"
    home.mkdir()
    (home / "tests_plugin_module.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(home))
    for name in ("PLUGIN_FAIL_IN", "PLUGIN_FAIL_AT", "PLUGIN_FAIL_ON", "PLUGIN_HOW"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    sys.modules.pop("tests_plugin_module", None)
    yield home
    sys.modules.pop("tests_plugin_module", None)


def run5(cli, locomo_dir, out, *extra, systems=SPEC):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:5",
               "--systems", systems, "--out", out, "--no-progress", "--json", *extra)


def rows_of(out, system=SPEC) -> dict[str, AnswerRow]:
    """The latest row per question of one system."""
    return {r.sample_id: r for r in read_records(out / "answers.jsonl", AnswerRow) if r.system == system}


def test_a_search_that_raises_is_its_questions_error_row_and_the_run_goes_on(plugin, locomo_dir, tmp_path,
                                                                            monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_AT", "2")
    out = tmp_path / "run"
    result = run5(cli, locomo_dir, out, systems=f"{SPEC},rag_turns")
    assert "Traceback" not in result.stderr
    assert result.returncode == EXIT_INCOMPLETE, result.stderr
    mine = rows_of(out)
    assert len(mine) == 5 and [qid for qid, r in mine.items() if not r.final] == ["conv-26:q0002"]
    failed = mine["conv-26:q0002"]
    assert failed.error == f"plugin: ValueError: boom (second line) (raised by {SPEC} in search)"
    assert failed.f1 is None and failed.prediction == ""
    assert all(r.final and r.recall_curve for qid, r in mine.items() if qid != "conv-26:q0002")
    assert all(r.final for r in rows_of(out, "rag_turns").values()) and len(rows_of(out, "rag_turns")) == 5
    counts = json.loads(result.stdout)["answer_counts"]
    assert counts["errors"] == 1 and counts["plugin_errors"] == 1 and counts["written"] == 10
    assert (out / "report.md").is_file() and (out / "manifest.json").is_file()

    monkeypatch.delenv("PLUGIN_FAIL_AT")  # fixed: the rerun retries the failed question only
    again = run5(cli, locomo_dir, out, systems=f"{SPEC},rag_turns")
    assert again.returncode == 0, again.stderr
    counts = json.loads(again.stdout)["answer_counts"]
    assert counts == {"already_done": 9, "written": 1, "errors": 0, "plugin_errors": 0}
    assert all(r.final for r in rows_of(out).values())


def test_an_ingest_that_raises_fails_every_question_of_its_conversation_and_only_those(plugin, locomo_dir,
                                                                                      tmp_path, monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_IN", "ingest")
    out = tmp_path / "run"
    result = run5(cli, locomo_dir, out, "--conversations", "conv-26,conv-30", systems=f"{SPEC},rag_turns")
    assert result.returncode == EXIT_INCOMPLETE and "Traceback" not in result.stderr, result.stderr
    mine = rows_of(out)
    assert len(mine) == 10 and all(r.error == f"plugin: ValueError: boom (second line) (raised by {SPEC} in ingest)"
                                   for r in mine.values())
    assert {r.conversation_id for r in mine.values()} == {"conv-26", "conv-30"}
    assert all(r.final for r in rows_of(out, "rag_turns").values())
    counts = json.loads(result.stdout)["answer_counts"]
    assert counts["errors"] == counts["plugin_errors"] == 10


def test_a_plugin_calling_sys_exit_is_a_failure_not_a_finished_run(plugin, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_AT", "2")
    monkeypatch.setenv("PLUGIN_HOW", "exit")
    out = tmp_path / "run"
    result = run5(cli, locomo_dir, out)
    assert result.returncode == EXIT_INCOMPLETE, result.stderr
    assert rows_of(out)["conv-26:q0002"].error == f"plugin: SystemExit: 3 (raised by {SPEC} in search)"
    stopped = run5(cli, locomo_dir, tmp_path / "fast", "--fail-fast")
    assert stopped.returncode == 1
    assert stopped.stderr.strip() == f"memeval: error: plug-in {SPEC} failed in search on conv-26:q0002: SystemExit: 3"


def test_fail_fast_stops_at_the_first_failure_with_one_line(plugin, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_AT", "2")
    out = tmp_path / "run"
    result = run5(cli, locomo_dir, out, "--fail-fast")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [ONE_LINE_STOP]
    assert not rows_of(out), "the conversation in progress is not written; a rerun recomputes it"


def test_fail_fast_names_the_conversation_and_its_first_question_when_ingest_fails(plugin, locomo_dir, tmp_path,
                                                                                  monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_IN", "ingest")
    result = run5(cli, locomo_dir, tmp_path / "run", "--fail-fast")
    assert result.returncode == 1 and result.stderr.strip() == (
        f"memeval: error: plug-in {SPEC} failed in ingest on conv-26 (its first question conv-26:q0000): "
        "ValueError: boom (second line)")


def test_a_keyboard_interrupt_inside_a_plugin_still_interrupts(plugin, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_AT", "1")
    monkeypatch.setenv("PLUGIN_HOW", "interrupt")
    result = run5(cli, locomo_dir, tmp_path / "run")
    assert result.returncode == 130 and result.stderr.strip() == "memeval: interrupted"


def test_a_search_returning_strings_names_what_it_got_and_what_is_expected(plugin, locomo_dir, tmp_path,
                                                                          monkeypatch, cli):
    monkeypatch.setenv("PLUGIN_FAIL_AT", "0")
    monkeypatch.setenv("PLUGIN_HOW", "strings")
    result = run5(cli, locomo_dir, tmp_path / "run")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert (f"{SPEC} search for conv-26:q0000: return value: search returned a list of str; expected a list of "
            "memeval.memory.base.MemoryItem (or dicts with text, score, source_ids, time, kind)") in result.stderr
    assert "NoneType" not in result.stderr


def test_a_builtin_systems_exception_is_a_programming_error_and_propagates(conversations, monkeypatch):
    from memeval.memory.lexical import RagTurns

    def broken(self, question, k):
        raise RuntimeError("a bug in a built-in")

    monkeypatch.setattr(RagTurns, "search", broken)
    conversation = conversations[0]
    with pytest.raises(RuntimeError, match="a bug in a built-in"):
        answer_conversation(SystemConfig("rag_turns"), conversation, conversation.qa[:2], AnswerSettings())


def test_the_answer_stage_counts_plugin_errors_among_its_errors(plugin, tmp_path, monkeypatch):
    from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo

    monkeypatch.setenv("PLUGIN_FAIL_AT", "1")

    def run(out: str, fail_fast: bool = False):
        return run_locomo(LocomoRunConfig(out=str(tmp_path / out), conversations="conv-26", questions="first:3",
                                          systems=[SPEC], progress=False, fail_fast=fail_fast))

    assert run("run").answer_counts == {"already_done": 0, "written": 3, "errors": 1, "plugin_errors": 1}
    with pytest.raises(PluginFailed, match="failed in search on conv-26:q0001: ValueError: boom"):
        run("fast", fail_fast=True)


def test_longmemeval_records_a_plugin_failure_and_fail_fast_stops(plugin, tmp_path, monkeypatch, cli):
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user"),
                                instance("q2", "temporal-reasoning", question="What did I eat for lunch?"),
                                instance("q3", "knowledge-update")]))
    monkeypatch.setenv("PLUGIN_FAIL_ON", "lunch")
    out = tmp_path / "lme"
    result = cli("longmemeval", "run", "--data", data, "--systems", f"{SPEC},rag_turns", "--out", out,
                 "--no-progress")
    assert "Traceback" not in result.stderr and result.returncode == EXIT_INCOMPLETE, result.stderr
    rows = {r.key: r for r in read_records(out / "answers.jsonl", LMEAnswerRow)}
    assert len(rows) == 6
    assert rows[(SPEC, "q2")].error == f"plugin: ValueError: boom (second line) (raised by {SPEC} in search)"
    assert rows[(SPEC, "q1")].error is None and rows[(SPEC, "q1")].turn_recall[0] == 1.0
    assert rows[("rag_turns", "q2")].error is None

    stopped = cli("longmemeval", "run", "--data", data, "--systems", SPEC, "--out", tmp_path / "fast",
                  "--no-progress", "--fail-fast")
    assert stopped.returncode == 1 and stopped.stderr.strip().splitlines() == [
        f"memeval: error: plug-in {SPEC} failed in search on q2: ValueError: boom (second line)"]

    monkeypatch.delenv("PLUGIN_FAIL_ON")  # the rerun retries the error row
    cli("longmemeval", "run", "--data", data, "--systems", f"{SPEC},rag_turns", "--out", out, "--no-progress",
        check=True)
    latest = {r.key: r for r in read_records(out / "answers.jsonl", LMEAnswerRow)}
    assert latest[(SPEC, "q2")].error is None and len(read_records(out / "answers.jsonl", LMEAnswerRow)) == 7


def test_through_a_real_process_a_failure_is_recorded_and_fail_fast_is_one_line(plugin, locomo_dir, tmp_path):
    memeval = project_root() / ".venv" / "bin" / "memeval"
    command = [str(memeval)] if memeval.is_file() else [sys.executable, "-m", "memeval"]
    env = {**os.environ, "PYTHONPATH": str(plugin), "PLUGIN_FAIL_AT": "2", "MEMEVAL_CACHE_DIR": str(tmp_path / "c")}
    args = ["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:5",
            "--systems", SPEC, "--no-progress", "--json"]
    stopped = subprocess.run([*command, *args, "--out", str(tmp_path / "fast"), "--fail-fast"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert stopped.returncode == 1 and stopped.stderr.strip().splitlines() == [ONE_LINE_STOP], stopped.stderr
    went_on = subprocess.run([*command, *args, "--out", str(tmp_path / "run")], capture_output=True, text=True,
                             env=env, timeout=300)
    assert went_on.returncode == EXIT_INCOMPLETE and "Traceback" not in went_on.stderr, went_on.stderr
    assert json.loads(went_on.stdout)["answer_counts"]["plugin_errors"] == 1
    assert len(rows_of(tmp_path / "run")) == 5
