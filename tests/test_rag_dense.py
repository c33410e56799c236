"""`rag_dense`: chunks of whole turns, cosine top-k over embeddings from the run's `embed` role, evidence recall
counted from the turns a chunk holds — end to end through the CLI against the contract fake of /v1/embeddings
(tests/fake_openai.py, whose bag-of-words vectors make retrieval mean something), its rerun at zero requests, and
the dry run's price of the embedding calls."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from memeval.memory.base import approx_tokens
from memeval.memory.dense import DenseRAG, dense_chunks, embedded_text
from memeval.memory.registry import build_system, parse_system
from memeval.memory.render import turn_text
from memeval.records import load_answers
from tests.fake_openai import FakeOpenAI

MEM0_GRID = [(size, k) for size in (128, 256, 512, 1024, 2048, 4096, 8192) for k in (1, 2)]


@pytest.fixture(scope="module")
def conv26(conversations):
    return next(c for c in conversations if c.sample_id == "conv-26")


@pytest.mark.parametrize("size", [128, 512, 8192])
def test_chunks_are_whole_turns_in_order_within_the_limit(conv26, size):
    chunks = dense_chunks(conv26, size)
    turns = {t.dia_id: t for s in conv26.sessions for t in s.turns}
    assert [i for c in chunks for i in c.source_ids] == list(turns), "every turn once, in order"
    dates = {s.date_time for s in conv26.sessions}
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert [line for line in lines if line not in {f"[{d}]" for d in dates}] == \
            [turn_text(turns[i]) for i in chunk.source_ids], "a chunk is its turns as rag_turns renders them"
        assert sum(map(approx_tokens, lines)) <= size or len(chunk.source_ids) == 1
        assert chunk.time in dates
    total = sum(approx_tokens(turn_text(t)) for t in turns.values())
    assert len(chunks) >= total / size, "no chunk holds more than the limit"
    if size == 8192:
        assert len(chunks) <= 4 and any(len({*c.text.split("\n")} & {f"[{d}]" for d in dates}) > 1
                                        for c in chunks), "large chunks span sessions, each marked by its date"


def test_mem0s_grid_is_expressible_as_typed():
    for size, k in MEM0_GRID:
        config = parse_system(f"rag_dense:chunk_tokens={size}:k={k}")
        assert config.label == f"rag_dense[chunk_tokens={size},k={k}]"
        system = build_system(config)
        assert (system.chunk_tokens, system.fixed_k, system.ranked) == (size, k, False)
    assert build_system(parse_system("rag_dense")).ranked, "without k the run's --k applies, with recall curves"


def test_search_ranks_chunks_by_cosine_and_cites_their_turns(conv26, tmp_path, monkeypatch):
    from memeval.llm.client import make_client
    from memeval.llm.settings import ModelSettings

    with FakeOpenAI(local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        system = DenseRAG(chunk_tokens=256)
        system.client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"embed": "e"}))
        system.ingest(conv26)
        target = system.items[7]
        found = system.search(embedded_text(target), 5)
        assert found[0].source_ids == target.source_ids and found[0].score == pytest.approx(1.0, abs=1e-5)
        assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)
        assert len(server.embedded) == 1, "the chunks in one request; a query equal to a chunk is a cache hit"
        system.search("Which painting did Melanie make?", 2)
        assert server.embedded[-1]["input"] == ["Which painting did Melanie make?"]
        assert system.planned_embeddings(conv26, conv26.qa[:1]) == \
            [[embedded_text(i) for i in system.items], [conv26.qa[0].question]]


def _recall(rows) -> float:
    values = [r.evidence_recall for r in rows if r.evidence_recall is not None]
    return float(np.mean(values))


def test_rag_dense_end_to_end_as_typed_then_from_the_cache(locomo_dir, tmp_path):
    """`memeval locomo run --systems rag_dense:chunk_tokens=128:k=2 --llm local --embed-model X` in a subprocess
    against the fake; the rerun sends nothing; retrieval beats handing the reader the first two chunks."""
    with FakeOpenAI(local=True) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
        env.pop("OPENAI_API_KEY", None)
        args = [sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir), "--conversations",
                "conv-26", "--questions", "first:20", "--systems", "rag_dense:chunk_tokens=128:k=2", "--llm", "local",
                "--embed-model", "nomic-embed-text", "--reader", "extractive"]
        first = subprocess.run([*args, "--out", str(tmp_path / "run")], env=env, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr[-2000:]
        assert len(server.embedded) == 21, "the conversation's chunks in one request, then one per question"
        assert len(server.embedded[0]["input"]) == len(dense_chunks(_conv(locomo_dir), 128))
        again = subprocess.run([*args, "--out", str(tmp_path / "rerun")], env=env, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr[-2000:]
        assert len(server.embedded) == 21, "a rerun sends nothing"
    rows = load_answers(tmp_path / "run" / "answers.jsonl")
    assert len(rows) == 20 and {r.system for r in rows} == {"rag_dense[chunk_tokens=128,k=2]"}
    assert all(r.error is None and r.k == 2 and len(r.retrieved_ids) == 2 for r in rows)
    chunks = dense_chunks(_conv(locomo_dir), 128)
    from memeval.qa.evidence import evidence_recall

    first_two = [c.source_ids for c in chunks[:2]]
    baseline = np.mean([v for r in rows if (v := evidence_recall(r.evidence_ids, first_two)) is not None])
    assert _recall(rows) > baseline + 0.1, (_recall(rows), baseline)
    assert [r.prediction for r in load_answers(tmp_path / "rerun" / "answers.jsonl")] == [r.prediction for r in rows]
    manifests = [json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("run", "rerun")]
    assert [m["invocations"][-1]["llm"]["requests_sent"] for m in manifests] == [21, 0]
    embed = manifests[0]["llm"]["roles"]["embed"]
    assert (embed["model"], embed["provider"], embed["temperature_sent"]) == ("nomic-embed-text", "local", None)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "embeddings from nomic-embed-text (local at" in report and "Mem0's RAG rows cut tiktoken" in report


def _conv(locomo_dir):
    from memeval.benchmarks.locomo.data import load_locomo

    return next(c for c in load_locomo(locomo_dir / "locomo10_v2") if c.sample_id == "conv-26")


def test_the_dry_run_prices_the_embedding_calls_and_sends_nothing(fake_openai, locomo_dir, tmp_path, cli):
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:10", "--systems",
            "rag_dense:chunk_tokens=256:k=2", "--llm", "openai", "--no-progress"]
    planned = json.loads(cli(*args, "--reader", "claude", "--dry-run", "--json", "--out", tmp_path / "run", check=True).stdout)
    assert fake_openai.embedded == [] and fake_openai.received == [], "a dry run sends nothing"
    conv = _conv(locomo_dir)
    texts = [embedded_text(c) for c in dense_chunks(conv, 256)] + [qa.question for qa in conv.qa[:10]]
    stage = planned["embeddings"]
    tokens = sum(len(t) // 4 for t in texts)
    assert (stage["inputs"], stage["to_embed"], stage["to_send"], stage["model"]) == \
        (len(texts), len(set(texts)), 11, "text-embedding-3-small"), "the chunks in one request, each question in one"
    assert stage["input_tokens_est"] == tokens and stage["usd_est"] == pytest.approx(tokens * 0.02 / 1e6)
    assert stage["usd_max"] == pytest.approx(sum(len(t.encode()) + 2 for t in texts) * 0.02 / 1e6)
    assert planned["answers"]["requests"] == 10, "answer prompts built from stand-in chunks, nothing embedded"
    assert planned["usd_est_total"] == pytest.approx(stage["usd_est"] + planned["answers"]["usd_est"])

    cli(*args, "--out", tmp_path / "run", check=True)  # extractive reader: only the embeddings are sent
    assert len(fake_openai.embedded) == 11 and fake_openai.received == []
    done = json.loads(cli(*args, "--dry-run", "--json", "--out", tmp_path / "run", check=True).stdout)
    assert "embeddings" not in done, "every question answered: nothing left to embed"
    cached = json.loads(cli(*args, "--dry-run", "--json", "--out", tmp_path / "new", check=True).stdout)["embeddings"]
    assert (cached["cached"], cached["to_send"], cached["usd_est"]) == (len(set(texts)), 0, 0.0)


def test_without_an_embeddings_model_it_says_what_it_needs(locomo_dir, tmp_path, cli, monkeypatch):
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
            "rag_dense", "--no-progress"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    local = cli(*args, "--llm", "local", "--out", tmp_path / "local")
    assert local.returncode == 2 and local.stderr.count("\n") == 1
    assert "--embed-model: (not given): with --llm local every role used needs its model named" in local.stderr
    assert not (tmp_path / "local" / "answers.jsonl").exists()
    monkeypatch.delenv("OPENAI_BASE_URL")
    keyless = cli(*args, "--out", tmp_path / "keyless")  # auto, no key: like an LLM reader, rows say why
    assert keyless.returncode == 4
    rows = load_answers(tmp_path / "keyless" / "answers.jsonl")
    assert all(r.error and "CacheMiss" in r.error and "OPENAI_API_KEY" in r.error for r in rows)


def test_a_role_refuses_a_model_of_the_other_kind(locomo_dir, tmp_path, cli):
    args = ["locomo", "run", "--data", locomo_dir, "--systems", "rag_dense", "--out", tmp_path / "run"]
    chat = cli(*args, "--embed-model", "gpt-4o-mini")
    assert chat.returncode == 2 and "--embed-model: gpt-4o-mini: not an embeddings model" in chat.stderr
    embed = cli(*args, "--answer-model", "text-embedding-3-small")
    assert embed.returncode == 2 and "an embeddings model, not a chat model" in embed.stderr


def test_another_embeddings_model_is_another_run(locomo_dir, tmp_path, cli, monkeypatch):
    with FakeOpenAI(local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2",
                "--systems", "rag_dense:k=1", "--llm", "local", "--no-progress", "--out", tmp_path / "run"]
        cli(*args, "--embed-model", "a", check=True)
        other = cli(*args, "--embed-model", "b")
    assert other.returncode == 2 and "rag_dense[k=1].embed.model: 'a' here, 'b' asked" in other.stderr
    assert len(server.embedded) == 3, "refused before anything is sent"
