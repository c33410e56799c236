"""The embeddings role through the real `openai` SDK: against the contract fake of OpenAI's /v1/embeddings
(tests/fake_openai.py) — float32 vectors cached per text, batches within the API's limits, the API's rejections as
one line, retries, budget, replay — and against a real llama.cpp server's /v1/embeddings (Gemma 3 270M with mean
pooling) when the `local` extra is installed."""

import json
import os
import sqlite3

import numpy as np
import pytest

from memeval.errors import InputError
from memeval.llm import APIRejected, LLMError
from memeval.llm.client import make_client
from memeval.llm.embeddings import MAX_INPUTS, plan_batches, token_bound
from memeval.llm.errors import BudgetExceeded, CacheMiss
from memeval.llm.settings import ModelSettings
from tests.fake_openai import (
    INVALID_INPUT,
    LOCAL_DIMENSIONS,
    TEST_KEY,
    FakeOpenAI,
    bag_of_words,
    rate_limited,
    server_error,
)
from tests.loopback import need_local_server

TEXTS = ["Caroline went to the LGBTQ support group on 7 May.", "Melanie painted a sunrise over the lake.",
         "Caroline went to the LGBTQ support group on 7 May."]


def _inputs(body) -> list[str]:
    return [body["input"]] if isinstance(body["input"], str) else body["input"]


def test_vectors_are_the_apis_float32_and_a_second_client_sends_nothing(fake_openai, tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path))
    vectors = client.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 1536)
    assert np.array_equal(vectors[0], bag_of_words(TEXTS[0], 1536)), "base64 float32 decoded bit for bit"
    assert np.array_equal(vectors[0], vectors[2])
    (body,) = fake_openai.embedded
    assert body == {"model": "text-embedding-3-small", "input": TEXTS[:2], "encoding_format": "base64"}
    tokens = sum(len(t) // 4 for t in TEXTS[:2])  # the fake's count, sent back as usage
    assert client.stats.requests_sent == 1 and client.stats.input_tokens == tokens
    assert client.stats.cost_usd == pytest.approx(tokens * 0.02 / 1e6, rel=1e-12)

    again = make_client("auto", cache_dir=str(tmp_path))
    assert np.array_equal(again.embed(list(reversed(TEXTS))), vectors[::-1])
    assert again.stats.requests_sent == 0 and again.stats.cache_hits == 2 and len(fake_openai.embedded) == 1

    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        rows = db.execute("SELECT dims, length(vector), typeof(vector), request FROM embeddings").fetchall()
    assert sorted(r[:3] for r in rows) == [(1536, 4 * 1536, "blob")] * 2
    stored = [json.loads(r[3]) for r in rows]  # what was asked, never the floats
    assert all(set(m) == {"key_schema", "kind", "provider", "model", "endpoint", "text"} for m in stored)
    assert sorted(m["text"] for m in stored) == sorted(TEXTS[:2])


def test_dimensions_and_the_base_url_are_part_of_the_key(fake_openai, tmp_path, monkeypatch):
    client = make_client("auto", cache_dir=str(tmp_path))
    short = client.embed(TEXTS[:1], dimensions=256)
    assert short.shape == (1, 256) and fake_openai.embedded[-1]["dimensions"] == 256
    client.embed(TEXTS[:1])
    assert len(fake_openai.embedded) == 2, "another length is another embedding"
    with FakeOpenAI() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        make_client("auto", cache_dir=str(tmp_path)).embed(TEXTS[:1])
        assert len(other.embedded) == 1, "another endpoint's vectors are its own"


def test_a_local_server_is_asked_for_floats_under_its_own_model_id(tmp_path, monkeypatch):
    with FakeOpenAI(local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"embed": "nomic-embed-text"}))
        vectors = client.embed(TEXTS[:2])
        (body,) = server.embedded
        assert body["encoding_format"] == "float" and body["model"] == "nomic-embed-text"
        assert np.array_equal(vectors[1], bag_of_words(TEXTS[1], LOCAL_DIMENSIONS))
        assert client.stats.cost_usd == 0.0
        with pytest.raises(InputError, match="--embed-model"):
            make_client("local", cache_dir=str(tmp_path)).embed(TEXTS[:1])  # no model of the server named


def test_batches_stay_within_the_inputs_and_tokens_of_one_request(fake_openai, tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path))
    short = [f"note {i}" for i in range(2500)]
    assert client.embed(short).shape == (2500, 1536)
    assert [len(_inputs(b)) for b in fake_openai.embedded] == [MAX_INPUTS, 2500 - MAX_INPUTS]
    fake_openai.embedded.clear()
    long = [f"{i:05d} " + "word " * 6000 for i in range(45)]  # 30,006 characters each: ≈7,500 tokens
    assert client.embed(long).shape == (45, 1536)
    sent = [_inputs(b) for b in fake_openai.embedded]
    assert [len(s) for s in sent] == [9, 9, 9, 9, 9], "9 × 30,008 bytes fit 300,000; 10 do not"
    assert all(sum(len(t) // 4 for t in s) <= 300_000 for s in sent) and fake_openai.rejected == []


def test_batch_planning_is_greedy_in_order():
    assert plan_batches(["a"] * 5, max_inputs=2) == [[0, 1], [2, 3], [4]]
    assert plan_batches(["ab", "cde", "f"], max_tokens=token_bound("ab") + token_bound("cde")) == [[0, 1], [2]]
    assert plan_batches(["x" * 50, "y"], max_tokens=10) == [[0], [1]], "one too large goes alone: the API judges it"
    assert token_bound("né") == 5, "UTF-8 bytes, not characters"


def _raw_sdk(server, key=TEST_KEY):
    import openai

    return openai.OpenAI(api_key=key, base_url=server.url, max_retries=0)


def test_the_fake_rejects_what_the_api_rejects(fake_openai):
    """Each /v1/embeddings rule of tests/fake_openai.py through the real SDK, with the body it parses."""
    import openai

    sdk = _raw_sdk(fake_openai)
    small = "text-embedding-3-small"
    cases = [
        (openai.BadRequestError, INVALID_INPUT, None, dict(model=small, input="")),
        (openai.BadRequestError, INVALID_INPUT, None, dict(model=small, input=["a", ""])),
        (openai.BadRequestError, INVALID_INPUT, None, dict(model=small, input=[])),
        (openai.BadRequestError, INVALID_INPUT, None, dict(model=small, input=["x"] * 2049)),
        (openai.BadRequestError, "maximum context length is 8192 tokens, however you requested 8193 tokens", None,
         dict(model=small, input=["a" * 4 * 8193])),
        (openai.BadRequestError, "Requested 307500 tokens, max 300000 tokens per request", "max_tokens_per_request",
         dict(model=small, input=["b" * 30_000] * 41)),
        (openai.BadRequestError, "This model does not support specifying dimensions.", None,
         dict(model="text-embedding-ada-002", input="hi", dimensions=256)),
        (openai.BadRequestError, "Unrecognized request argument supplied: truncate", None,
         dict(model=small, input="hi", extra_body={"truncate": True})),
        (openai.NotFoundError, "The model `gpt-4o-mini` does not exist", "model_not_found",
         dict(model="gpt-4o-mini", input="hi")),
    ]
    for error, message, code, kwargs in cases:
        with pytest.raises(error) as caught:
            sdk.embeddings.create(**kwargs)
        assert message in str(caught.value) and caught.value.code == code, kwargs.get("input", "")[:2]
        assert caught.value.request_id.startswith("req_")
    assert [status for status, _ in fake_openai.rejected] == [400] * 8 + [404]
    ok = sdk.embeddings.create(model=small, input=["a" * 4 * 8192], dimensions=8)  # at the limit: accepted
    assert len(ok.data[0].embedding) == 8 and ok.usage.prompt_tokens == 8192


def test_a_rejection_is_one_line_and_stops_the_client(fake_openai, tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path), settings=ModelSettings("auto", models={"embed": "text-embedding-ada-002"}))
    with pytest.raises(APIRejected) as caught:
        client.embed(TEXTS[:1], dimensions=256)
    line = caught.value.one_line()
    assert "\n" not in line and "400 invalid_request_error: This model does not support specifying dimensions." in line
    assert "model text-embedding-ada-002" in line and fake_openai.url in line
    with pytest.raises(APIRejected):
        client.embed(TEXTS[1:2])
    assert len(fake_openai.embedded) == 1, "a deterministic rejection: nothing more is sent"

    too_long = make_client("auto", cache_dir=str(tmp_path))
    with pytest.raises(APIRejected, match="maximum context length is 8192 tokens, however you requested 10000"):
        too_long.embed(["word" * 10_000])
    with pytest.raises(InputError, match="input 1: an empty string"):
        too_long.embed(["fine", ""])


def test_rate_limits_and_outages_are_retried_and_the_budget_stops_sending(fake_openai, tmp_path):
    fake_openai.faults += [rate_limited("0"), server_error(503)]
    client = make_client("auto", cache_dir=str(tmp_path), sleep=lambda s: None)
    assert client.embed(TEXTS[:1]).shape == (1, 1536)
    assert client.stats.retries == 2 and client.stats.requests_sent == 3 and len(fake_openai.embedded) == 3
    broke = make_client("auto", cache_dir=str(tmp_path / "other"), settings=ModelSettings("auto", budget_usd=0.0))
    with pytest.raises(BudgetExceeded):
        broke.embed(TEXTS[:1])
    assert len(fake_openai.embedded) == 3


def test_without_a_key_only_the_cache_answers_and_the_miss_says_what_is_needed(tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path))
    with pytest.raises(CacheMiss, match="OPENAI_API_KEY .*--embed-model"):
        client.embed(TEXTS[:1])
    assert isinstance(CacheMiss("x"), LLMError), "a row error, retried by a rerun"


def test_a_reply_without_one_vector_per_input_is_refused_in_one_line(tmp_path, monkeypatch):
    """What a llama.cpp server without pooling sends (one vector per token), and a short reply."""
    from tests.loopback import JsonHandler, LoopbackServer

    class PerToken(LoopbackServer):
        def __init__(self, per_token: bool):
            outer = self

            class Handler(JsonHandler):
                def do_POST(self):
                    body = self.read_json()
                    vector = [[0.1, 0.2], [0.3, 0.4]] if outer.per_token else [0.1, 0.2]
                    data = [{"object": "embedding", "index": 0, "embedding": vector}]
                    self.send_json({"object": "list", "data": data, "model": body["model"],
                                    "usage": {"prompt_tokens": 2, "total_tokens": 2}})

            self.per_token = per_token
            self.serve(Handler, "/v1")

    for per_token, texts, message in ((True, ["one"], "2 vectors \\(one per token\\), not one: .*pooling"),
                                      (False, ["one", "two"], "1 embeddings for 2 inputs")):
        with PerToken(per_token) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
            client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"embed": "m"}))
            with pytest.raises(APIRejected, match=message) as caught:
                client.embed(texts)
            assert "\n" not in caught.value.one_line() and caught.value.status == 200


# A real server: llama.cpp (llama-cpp-python's server) serving Gemma 3 270M with embeddings on. The model's GGUF sets
# no pooling, so the server would return one vector per token; `--kv_overrides gemma3.pooling_type=int:1` makes it
# mean-pool (llama.cpp's LLAMA_POOLING_TYPE_MEAN), and n_batch = n_ctx keeps llama-cpp-python from cutting each
# input at 512 tokens (its `embed(truncate=True)` keeps the first n_batch tokens). A 270M base model's vectors mean
# little: these tests hold the client to the server's wire, not to retrieval quality.
def _need_server():
    need_local_server("gemma3-270m")


@pytest.fixture(scope="module")
def embedding_server(tmp_path_factory):
    _need_server()
    from memeval.llm.local_server import LocalServer

    # 12,288: Mem0's extraction prompt is ~8,200 Gemma tokens and it asks for up to 2,000 more
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LocalServer(model="gemma3-270m", n_ctx=12288, log=log) as running:
        yield running


def test_the_real_servers_embeddings_are_cached_and_replayed(embedding_server, tmp_path, monkeypatch):
    from memeval.llm.local_models import GEMMA_MODEL as MODEL_ID

    monkeypatch.setenv("OPENAI_BASE_URL", embedding_server.base_url)
    client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"embed": MODEL_ID}))
    vectors = client.embed(TEXTS)
    assert vectors.shape[0] == 3 and vectors.shape[1] > 100 and np.isfinite(vectors).all()
    assert np.array_equal(vectors[0], vectors[2]) and not np.array_equal(vectors[0], vectors[1])
    assert client.stats.requests_sent == 1 and client.stats.input_tokens > 0
    again = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"embed": MODEL_ID}))
    assert np.array_equal(again.embed(TEXTS), vectors) and again.stats.requests_sent == 0


def test_rag_dense_and_mem0_end_to_end_against_the_real_server(embedding_server, locomo_dir, tmp_path):
    """`memeval locomo run --systems rag_dense:chunk_tokens=512:k=2,mem0 --llm local` as typed, then again: the rerun
    sends nothing, and Mem0's own store is audited by `natural union --format mem0`. conv-26 is cut to its first 4
    turns (4 Mem0 adds of ~8,200 prompt tokens, about a minute each on 2 CPU cores); a 270M model's memories mean
    nothing, the point is that every path is real."""
    import subprocess
    import sys

    from memeval.llm.local_models import GEMMA_MODEL as MODEL_ID
    from memeval.records import load_answers
    from tests.small_locomo import small_locomo

    data = small_locomo(tmp_path, locomo_dir, sessions=1, turns=4)
    env = {**os.environ, "OPENAI_BASE_URL": embedding_server.base_url, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("OPENAI_API_KEY", None)
    args = [sys.executable, "-m", "memeval", "locomo", "run", "--data", str(data), "--systems",
            "rag_dense:chunk_tokens=512:k=2,mem0", "--llm", "local", "--extract-model", MODEL_ID, "--embed-model",
            MODEL_ID, "--reader", "extractive", "--no-progress"]
    for out in ("run", "rerun"):
        done = subprocess.run([*args, "--out", str(tmp_path / out)], env=env, capture_output=True, text=True,
                              timeout=1800)
        assert done.returncode == 0, done.stderr[-2000:]
    rows = load_answers(tmp_path / "run" / "answers.jsonl")
    assert rows and all(r.error is None for r in rows)
    assert {r.system for r in rows} == {"rag_dense[chunk_tokens=512,k=2]", "mem0"}
    for out, sent in (("run", None), ("rerun", 0)):
        calls = json.loads((tmp_path / out / "manifest.json").read_text())["invocations"][-1]["llm"]
        assert calls["requests_sent"] == sent if sent is not None else calls["requests_sent"] >= 4 + 2
    store = tmp_path / "run" / "stores" / "mem0.json"
    assert json.loads(store.read_text()) == json.loads((tmp_path / "rerun" / "stores" / "mem0.json").read_text())
    report = (tmp_path / "run" / "report.md").read_text()
    assert "mem0ai library" in report

    from memeval.benchmarks.locomo.natural_build import build_directory

    build_directory(tmp_path / "packages", str(locomo_dir), target=6)
    audit = subprocess.run([sys.executable, "-m", "memeval", "natural", "union", "--packages",
                            str(tmp_path / "packages"), "--store", str(store), "--format", "mem0", "--system", "mem0",
                            "--out", str(tmp_path / "audit")], env=env, capture_output=True, text=True, timeout=900)
    assert audit.returncode == 0, audit.stderr[-2000:]
