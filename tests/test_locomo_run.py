import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memeval.benchmarks.locomo.task import PROTOTYPE_NOTE, LocomoRunConfig, estimate_run, run_locomo
from memeval.cli import main
from memeval.jsonl import read_rows
from memeval.qa.selection import prototype_questions, select_questions
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, error

SECRET = TEST_SECRET
VOLATILE = ("latency_search_s", "latency_total_s")
ANSWER_FIELDS = {"sample_id", "conversation_id", "category", "question", "gold", "prediction", "system", "f1",
                 "evidence_recall", "retrieved_ids", "latency_search_s", "latency_total_s", "context_tokens",
                 "error"}


def _stable(rows):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in VOLATILE}, sort_keys=True) for r in rows)


def test_prototype_is_the_first_10_temporal_8_single_hop_2_multi_hop(conversations):
    conv26 = next(c for c in conversations if c.sample_id == "conv-26")
    chosen = prototype_questions(conv26)
    assert Counter(q.category for q in chosen) == {2: 10, 4: 8, 1: 2}
    assert [q.index for q in chosen] == sorted(q.index for q in chosen)
    for category, n in ((2, 10), (4, 8), (1, 2)):
        first = [q for q in conv26.qa if q.category == category][:n]
        assert [q.sample_id for q in chosen if q.category == category] == [q.sample_id for q in first]
    assert len(select_questions(conv26, "7")) == 7


@pytest.mark.parametrize("conversations", ["conv-26,conv-30", "conv-30", "all"])
def test_prototype_with_another_conversation_is_refused_and_nothing_is_written(locomo_dir, tmp_path, cli,
                                                                               conversations):
    """`prototype` is notebook 01's 20 questions of conv-26 (its --help, docs/locomo.md): with any other
    conversation it once answered 20 of each under a report saying "20 questions, 1 conversation"."""
    out = tmp_path / "run"
    refused = cli("locomo", "run", "--data", locomo_dir, "--conversations", conversations, "--questions", "prototype",
                  "--out", out, "--no-progress")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "--conversations conv-26" in refused.stderr
    assert not out.exists()


def test_offline_prototype_run_writes_every_stage(locomo_dir, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions",
                 "prototype", "--systems", "rag_turns,full_context", "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert PROTOTYPE_NOTE in printed and "J skipped" in printed
    rows = read_rows(out / "answers.jsonl")
    assert len(rows) == 40 and {r["system"] for r in rows} == {"rag_turns", "full_context"}
    assert ANSWER_FIELDS <= set(rows[0])
    assert all(r["error"] is None and 0 <= r["f1"] <= 1 for r in rows)
    full = [r for r in rows if r["system"] == "full_context"]
    assert all(r["evidence_recall"] == 1.0 for r in full)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["answerer"] == "extractive" and manifest["data"]["sha256"]
    assert manifest["prompt_hashes"] and manifest["rows"]["answers"] == 40
    report = (out / "report.md").read_text()
    assert "Evidence recall" in report and "extractive (no LLM)" in report
    assert main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions",
                 "prototype", "--systems", "rag_turns,full_context", "--out", str(out), "--no-progress"]) == 0
    assert len(read_rows(out / "answers.jsonl")) == 40, "a rerun must not duplicate rows"


def test_bad_arguments_fail_with_the_field_named(locomo_dir, tmp_path, capsys):
    out = tmp_path / "bad"
    assert main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-999", "--out", str(out)]) == 2
    assert "--conversations" in capsys.readouterr().err
    assert main(["locomo", "run", "--data", str(locomo_dir), "--systems", "rag_turns,bogus", "--out", str(out)]) == 2
    assert "bogus" in capsys.readouterr().err
    assert not (out / "answers.jsonl").exists()


def test_run_directory_refuses_a_different_answerer(locomo_dir, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:3",
            "--out", str(out), "--no-progress"]
    assert main(args) == 0
    assert main([*args, "--answerer", "claude"]) == 2
    assert "reader: 'extractive' here, 'claude' asked" in capsys.readouterr().err


def test_torn_last_line_is_repaired_and_the_row_recomputed(locomo_dir, tmp_path):
    config = dict(out=str(tmp_path / "a"), data=str(locomo_dir), conversations="conv-26,conv-30", questions="first:5",
                  systems=["rag_turns"], progress=False)
    run_locomo(LocomoRunConfig(**config))
    reference = read_rows(tmp_path / "a" / "answers.jsonl")
    path = tmp_path / "a" / "answers.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # a killed writer: the last row is cut mid-way
    run_locomo(LocomoRunConfig(**config))
    assert _stable(read_rows(path)) == _stable(reference)


@pytest.mark.slow
def test_sigkill_at_any_point_then_resume_gives_the_uninterrupted_rows(locomo_dir, tmp_path):
    base = [sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir), "--conversations",
            "conv-26,conv-30,conv-41", "--systems", "full_context,rag_turns,observations", "--no-progress", "--json"]
    subprocess.run([*base, "--out", str(tmp_path / "clean")], check=True, capture_output=True)
    reference = _stable(read_rows(tmp_path / "clean" / "answers.jsonl"))
    killed_mid_run = 0
    for attempt, wait_rows in enumerate((1, 800, 2500)):
        out = tmp_path / f"killed{attempt}"
        proc = subprocess.Popen([*base, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = out / "answers.jsonl"
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= wait_rows:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed_mid_run += 1
        proc.wait()
        subprocess.run([*base, "--out", str(out)], check=True, capture_output=True)
        rows = read_rows(path)
        assert len(rows) == len(reference), "duplicates or losses after resume"
        assert _stable(rows) == reference
    assert killed_mid_run >= 2, "the run finished before it could be killed; the test did not test"


@pytest.fixture()
def fake(monkeypatch, tmp_path):
    def responder(body):
        text = body["messages"][0]["content"]
        if "Answer:" in text:
            return "7 May 2023"
        if "CORRECT" in text:
            return '{"label": "CORRECT"}'
        return '{"score": 80, "explanation": "close"}'

    with FakeAnthropic(responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def _no_secret_anywhere(*roots):
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


def test_claude_run_survives_injected_faults_and_reruns_from_cache(fake, locomo_dir, tmp_path, monkeypatch):
    import memeval.llm.client as client_module

    monkeypatch.setattr(client_module.time, "sleep", lambda s: None)
    fake.faults = [error(429, "0"), error(500), error(529), error(429), error(503)]
    out = tmp_path / "run"
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions",
                 "prototype", "--systems", "rag_turns", "--answerer", "claude", "--judge", "graded",
                 "--judge-runs", "3", "--out", str(out), "--no-progress", "--json"])
    assert code == 0
    answers = read_rows(out / "answers.jsonl")
    judgments = read_rows(out / "judgments.jsonl")
    assert len(answers) == 20 and all(r["error"] is None and r["prediction"] == "7 May 2023" for r in answers)
    assert len(judgments) == 20 and all(j["mean"] == 80.0 and j["run_count"] == 3 for j in judgments)
    answer_requests = [b for b in fake.received if "Answer:" in b["messages"][0]["content"]]
    assert {b["model"] for b in answer_requests} == {"claude-opus-4-6"}
    assert all(b["temperature"] == 0.0 and b["max_tokens"] == 64 for b in answer_requests)
    judge_requests = [b for b in fake.received if b.get("system")]
    assert {(b["model"], b["temperature"], b["max_tokens"]) for b in judge_requests} == {
        ("claude-sonnet-4-6", 0.5, 256)}
    sent = len(fake.received)
    estimate_config = LocomoRunConfig(out=str(tmp_path / "fresh"), data=str(locomo_dir), conversations="conv-26",
                                      questions="prototype", systems=["rag_turns", "observations"],
                                      answerer="claude", judge="graded", judge_runs=3)
    estimate = estimate_run(estimate_config)
    assert (estimate.stages["answers"].requests, estimate.stages["answers"].to_send) == (40, 20)
    assert (estimate.stages["judge"].requests, estimate.stages["judge"].to_send) == (120, 120)
    assert estimate.usd_est_total > 0 and not (tmp_path / "fresh").exists()
    assert len(fake.received) == sent, "a dry run sends nothing"
    rerun = tmp_path / "rerun"
    assert main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions",
                 "prototype", "--systems", "rag_turns", "--answerer", "claude", "--judge", "graded",
                 "--judge-runs", "3", "--out", str(rerun), "--no-progress", "--json"]) == 0
    assert len(fake.received) == sent, "a fully cached run must send nothing"
    assert _stable(read_rows(rerun / "answers.jsonl")) == _stable(answers)
    _no_secret_anywhere(out, rerun, tmp_path / "cache")


def test_batch_judging_through_the_batches_api(fake, locomo_dir, tmp_path):
    out = tmp_path / "run"
    config = LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26", questions="prototype",
                             systems=["rag_turns"], judge="binary", judge_mode="batch", poll_interval_s=0,
                             progress=False)
    result = run_locomo(config)
    assert len(fake.batches) == 1 and len(next(iter(fake.batches.values()))["requests"]) == 20
    judgments = read_rows(out / "judgments.jsonl")
    assert len(judgments) == 20 and all(j["protocol"] == "binary" and j["mean"] == 100.0 for j in judgments)
    assert "Judge accounting (binary)" in result.report
    run_locomo(config)
    assert len(fake.batches) == 1 and len(read_rows(out / "judgments.jsonl")) == 20
    _no_secret_anywhere(out, tmp_path / "cache")


def test_judge_without_llm_says_so_and_writes_no_fake_scores(locomo_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    result = run_locomo(LocomoRunConfig(out=str(tmp_path / "run"), data=str(locomo_dir), conversations="conv-26",
                                        questions="first:4", systems=["rag_turns"], judge="graded", progress=False))
    assert result.judge_counts["skipped_no_llm"] == 4
    assert read_rows(tmp_path / "run" / "judgments.jsonl") == []
    assert any(n.startswith("judge graded incomplete") for n in result.notes), result.notes


def test_a_run_directory_written_before_typed_records_still_loads_and_resumes(locomo_dir, tmp_path):
    import shutil

    from memeval.qa.answer_pass import load_answers
    from memeval.records import load_judgments

    fixture = Path(__file__).parent / "fixtures" / "v1" / "run"
    answers, judgments = load_answers(fixture / "answers.jsonl"), load_judgments(fixture / "judgments.jsonl")
    assert len(answers) == 6 and {a.system for a in answers} == {"rag_turns", "full_context"}
    assert sorted({(j.protocol, j.mean) for j in judgments}) == [("binary", 100.0), ("graded", 70.0)]
    run = tmp_path / "run"
    shutil.copytree(fixture, run)
    result = run_locomo(LocomoRunConfig(out=str(run), data=str(locomo_dir), conversations="conv-26", questions="first:3",
                                        systems=["rag_turns", "full_context"], progress=False))
    assert result.answer_counts == {"already_done": 6, "written": 0, "errors": 0, "plugin_errors": 0}
    identity = json.loads((run / "manifest.json").read_text())["identity"]  # the old manifest had none: now whole
    assert identity["fixed"]["question_set"].startswith("3 questions") and identity["fixed"]["reader"] == "extractive"
    assert "J against published baselines (graded judge)" in result.report
    assert "J against published baselines (binary judge)" in result.report
