"""What a user of `--llm local` meets with a model that does not stop by itself (a small base model): every reader
reply cut at the protocol's cap is a failed row with a plain closing line and its remedy, `--answer-max-tokens`
(recorded, part of the identity and of every request); the J note names what is missing under --llm local; and
`memeval ls` counts the latest row per question, so a failure a rerun fixed is gone. The CLI runs as a separate
process against the OpenAI-compatible fake (tests/fake_openai.py) serving as a local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memeval.qa.reader_cap import cut_advice
from memeval.records import load_answers
from tests.fake_openai import FakeOpenAI

MODEL = "tiny-base"
RAMBLE = "and then the model keeps on talking about it " * 40  # ≈ 450 tokens at 4 characters each


@pytest.fixture()
def server():
    with FakeOpenAI(responder=lambda body: RAMBLE, local=True) as fake:
        yield fake


def _memeval(server, tmp_path, *args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(OPENAI_BASE_URL=server.url, MEMEVAL_CACHE_DIR=str(tmp_path / "cache"), MEMEVAL_PROGRESS="0")
    return subprocess.run([sys.executable, "-m", "memeval", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def _run(server, tmp_path, locomo_dir, out, *extra) -> subprocess.CompletedProcess:
    return _memeval(server, tmp_path, "locomo", "run", "--data", locomo_dir, "--conversations", "conv-26",
                    "--questions", "first:3", "--systems", "rag_turns", "--reader", "claude", "--llm", "local",
                    "--answer-model", MODEL, *extra, "--out", out)


def test_replies_cut_at_the_cap_are_no_answers_and_the_closing_line_says_what_to_do(server, tmp_path, locomo_dir):
    done = _run(server, tmp_path, locomo_dir, tmp_path / "cut")
    assert done.returncode == 4, done.stderr
    closing = done.stderr.strip().splitlines()[-1]
    assert closing.startswith("memeval: incomplete: 3 of 3 answers failed (UnusableReply); all 3 reader replies "
                              "were cut at max_tokens=64: the model did not stop by itself"), closing
    assert "--answer-max-tokens" in closing and "instruction-tuned" in closing
    assert "All 3 reader replies were cut at max_tokens=64" in done.stdout, "the report says it too"
    rows = load_answers(tmp_path / "cut" / "answers.jsonl")
    assert [(r.prediction, r.f1) for r in rows] == [("", None)] * 3, "a cut reply is never stored as an answer"
    assert all("cut at max_tokens" in r.error for r in rows)
    assert {b["max_tokens"] for b in server.received} == {64}
    manifest = json.loads((tmp_path / "cut" / "manifest.json").read_text())
    assert manifest["missing"]["answers"]["advice"].startswith("all 3 reader replies were cut")


def test_answer_max_tokens_is_sent_recorded_and_part_of_the_identity(server, tmp_path, locomo_dir):
    done = _run(server, tmp_path, locomo_dir, tmp_path / "long", "--answer-max-tokens", 1000)
    assert done.returncode == 0, done.stderr
    assert {b["max_tokens"] for b in server.received} == {1000}
    rows = load_answers(tmp_path / "long" / "answers.jsonl")
    assert all(r.error is None and r.prediction == RAMBLE.strip() for r in rows)
    manifest = json.loads((tmp_path / "long" / "manifest.json").read_text())
    assert manifest["config"]["answer_max_tokens"] == 1000
    assert "--answer-max-tokens 1000" in manifest["command_line"]
    assert manifest["identity"]["fixed"]["answer_max_tokens"] == 1000
    assert "Reader output cap: 1000 tokens (`--answer-max-tokens`) in place of the reader protocol's 64" in done.stdout

    refused = _run(server, tmp_path, locomo_dir, tmp_path / "long")  # the protocol's cap again: another run
    assert refused.returncode == 2
    assert "answer_max_tokens: 1000 here, 64 asked" in refused.stderr
    sent = len(server.received)
    again = _run(server, tmp_path, locomo_dir, tmp_path / "replay", "--answer-max-tokens", 1000)
    assert again.returncode == 0 and len(server.received) == sent, "the same cap replays from the cache"


def test_answer_max_tokens_is_refused_for_a_reader_that_calls_no_model(server, tmp_path, locomo_dir):
    done = _memeval(server, tmp_path, "locomo", "run", "--data", locomo_dir, "--conversations", "conv-26",
                    "--questions", "first:1", "--answer-max-tokens", 100, "--out", tmp_path / "x")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--answer-max-tokens" in done.stderr and "extractive reader calls no model" in done.stderr
    assert not (tmp_path / "x").exists()


def test_the_no_judge_note_under_llm_local_names_the_judge_model_not_an_api_key(server, tmp_path, locomo_dir):
    done = _run(server, tmp_path, locomo_dir, tmp_path / "run", "--answer-max-tokens", 1000)
    note = next(line for line in done.stdout.splitlines() if "J skipped" in line)
    assert "ANTHROPIC_API_KEY" not in note
    assert "--judge-model" in note and "OPENAI_BASE_URL" in note


def test_ls_counts_the_latest_row_per_question(server, tmp_path, locomo_dir):
    out = tmp_path / "runs" / "a"
    assert _run(server, tmp_path, locomo_dir, out).returncode == 4
    [listed] = json.loads(_memeval(server, tmp_path, "ls", tmp_path / "runs", "--json").stdout)
    assert (listed["status"], listed["rows"], listed["failed"]) == ("incomplete", {"answers": 3}, {"answers": 3})
    assert "3 answers (3 failed)" in _memeval(server, tmp_path, "ls", tmp_path / "runs").stdout

    server.responder = lambda body: "7 May 2023"  # the model now stops by itself: the rerun answers every question
    assert _run(server, tmp_path, locomo_dir, out).returncode == 0
    assert sum(1 for _ in open(out / "answers.jsonl")) == 6, "append-only: the failed rows are still in the file"
    [listed] = json.loads(_memeval(server, tmp_path, "ls", tmp_path / "runs", "--json").stdout)
    assert (listed["status"], listed["rows"], listed["failed"]) == ("complete", {"answers": 3}, {})
    table = _memeval(server, tmp_path, "ls", tmp_path / "runs").stdout
    assert "  3 answers  " in table.splitlines()[1] and "failed" not in table


def test_the_advice_counts_only_cut_replies_and_leaves_other_failures_to_a_rerun():
    cut = "UnusableReply: cut at max_tokens from m (request-id -, 64 output tokens of 64); not kept"
    empty_cut = "UnusableReply: empty reply (cut at max_tokens) from m (request-id -, 64 output tokens of 64)"
    assert cut_advice([None, "TransientError: 503"], 64) is None
    advice = cut_advice([cut, empty_cut, None, "TransientError: gave up after 7 attempts (429)"], 64)
    assert advice.startswith("2 of 4 reader replies were cut at max_tokens=64")
    assert advice.endswith("rerun to retry the other 1 failed answer")
    assert cut_advice(["ingest failed: UnusableReply: cut at max_tokens"], 64) is None, "the extractor's, not the reader's"


def test_longmemeval_reader_takes_the_cap_too(server, tmp_path, cli, monkeypatch):
    from tests.test_longmemeval_data import instance

    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user")]))
    args = ["longmemeval", "run", "--data", data, "--systems", "rag_turns", "--reader", "llm", "--llm", "local",
            "--answer-model", MODEL, "--no-progress"]
    cut = cli(*args, "--out", tmp_path / "cut")
    assert cut.returncode == 4 and "the one reader reply was cut at max_tokens=200" in cut.stderr
    long = cli(*args, "--answer-max-tokens", 1000, "--out", tmp_path / "long")
    assert long.returncode == 0, long.stderr
    assert "Reader output cap: 1000 tokens (`--answer-max-tokens`) in place of the reader protocol's 200" in long.stdout
    assert [b["max_tokens"] for b in server.received] == [200, 1000]
    manifest = json.loads((tmp_path / "long" / "manifest.json").read_text())
    assert manifest["identity"]["fixed"]["answer_max_tokens"] == 1000


def test_a_closing_line_reads_no_http_status_out_of_a_token_count():
    from memeval.engine.run import error_kind

    assert error_kind("ExceedsLimit: this request's ≈25,562 input tokens exceed the limit of 2,000") == "ExceedsLimit"
    assert error_kind("TransientError: gave up after 7 attempts: 429 rate_limit_error") == "TransientError (429)"
    assert error_kind("LLMError: Error code: 529 - overloaded") == "LLMError (529)"


def test_a_local_server_gets_minutes_per_call_and_openai_two(monkeypatch):
    """A CPU server answers one call at a time: at the cloud's 120 s, queued calls time out and are sent again
    while the server still works on them. Both connect within 10 s (memeval/llm/bounds.py)."""
    from memeval.llm.openai_backend import OpenAIBackend

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("MEMEVAL_LLM_TIMEOUT_S", raising=False)
    local, cloud = OpenAIBackend("local").client.timeout, OpenAIBackend("openai").client.timeout
    assert (local.read, local.connect) == (600.0, 10.0)
    assert (cloud.read, cloud.connect) == (120.0, 10.0)
