"""`mem0`: the mem0ai library run as a memory system, its every call through memeval's client. Driven here by the
real openai SDK against the contract fake (tests/fake_openai.py), whose chat replies play Mem0's extractor: each
user message of the new messages becomes one memory, in the JSON shape Mem0's prompt asks for. The real llama.cpp
server drives the same path in tests/test_embeddings.py."""

import json
import os
import subprocess
import sys

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.llm.client import make_client
from memeval.llm.errors import APIRejected, LLMError
from memeval.llm.settings import ModelSettings
from memeval.memory.mem0_system import SOURCE_KEY, Mem0System, add_calls
from tests.fake_openai import TEST_KEY, FakeOpenAI
from tests.small_locomo import small_locomo

MODELS = {"extract": "gpt-4o-mini", "embed": "text-embedding-3-small", "answer": "gpt-4o-mini"}


def mem0_extractor(body: dict) -> str:
    """Mem0's extraction reply for the fake: one memory per `user:` line under "## New Messages"."""
    user = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
    if "## New Messages" not in user:
        return "ok"
    new = user.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
    lines = [line.split(": ", 1)[1] for line in new.strip().splitlines() if line.startswith("user: ")]
    return json.dumps({"memory": [{"text": text} for text in lines]})


@pytest.fixture()
def extractor(monkeypatch):
    with FakeOpenAI(responder=mem0_extractor) as server:
        monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


def test_add_calls_follow_mem0s_harness(tmp_path, locomo_dir):
    conversation = load_locomo(small_locomo(tmp_path, locomo_dir))[0]
    calls = add_calls(conversation)
    turns = conversation.sessions[0].turns
    assert len(calls) == 2 * ((len(turns) + 1) // 2)
    a, b = conversation.speaker_a, conversation.speaker_b
    first_a = next(c for c in calls if c.user_id == f"{a}_conv-26")
    first_b = next(c for c in calls if c.user_id == f"{b}_conv-26")
    assert first_a.turn_ids == first_b.turn_ids == (turns[0].dia_id, turns[1].dia_id)
    assert first_a.messages[0] == ("user" if turns[0].speaker == a else "assistant", f"{turns[0].speaker}: "
                                   f"{turns[0].text}")
    assert [r for r, _ in first_a.messages] == ["assistant" if r == "user" else "user" for r, _ in first_b.messages]
    assert {c.date_time for c in calls} == {conversation.sessions[0].date_time}


def test_every_call_goes_through_the_client_with_mem0s_own_request(extractor, tmp_path, locomo_dir):
    conversation = load_locomo(small_locomo(tmp_path, locomo_dir))[0]
    client = make_client("openai", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("openai", models=MODELS))
    system = Mem0System()
    system.client = client
    system.ingest(conversation)
    calls = add_calls(conversation)
    assert len(extractor.received) == len(calls), "one extraction call per add"
    assert client.stats.requests_sent == len(extractor.received) + len(extractor.embedded)
    for body in extractor.received:
        system_prompt = body["messages"][0]
        assert system_prompt["role"] == "system" and "ADD" in system_prompt["content"] and len(
            system_prompt["content"]) > 20_000, "Mem0's own extraction prompt"
        assert body["response_format"] == {"type": "json_object"}
        assert body["temperature"] == 0.1 and body["top_p"] == 0.1 and body["model"] == "gpt-4o-mini"
        user = body["messages"][1]["content"]
        assert "## Observation Date\n2023-05-08" in user and "## Current Date\n2023-05-08" in user, \
            "Mem0's clock reads the session's date"
    assert extractor.rejected == []
    store = system.native_store()
    own = sum(1 for c in calls for r, _ in c.messages if r == "user")
    assert len(store) == own, "one memory per own message, as the fake extractor wrote"
    known = {t.dia_id for t in conversation.sessions[0].turns}
    for memory in store:
        assert set(memory["metadata"][SOURCE_KEY]) <= known and memory["metadata"]["timestamp"] == \
            conversation.sessions[0].date_time and memory["created_at"].startswith("2023-05-08")
    found = system.search("What did Caroline go to?", 10)
    assert found and {m.kind for m in found} == {"mem0"} and len(found) <= 20
    assert all(m.source_ids and set(m.source_ids) <= known for m in found)

    again = Mem0System()
    again.client = make_client("openai", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("openai", models=MODELS))
    sent = len(extractor.received) + len(extractor.embedded)
    again.ingest(conversation)
    assert len(extractor.received) + len(extractor.embedded) == sent, "a rerun replays from the cache"
    assert again.client.stats.requests_sent == 0
    assert again.native_store() == store, "the same store, ids and dates included"


def test_a_failed_call_is_the_clients_error_not_mem0s_wrapper(tmp_path, monkeypatch, locomo_dir):
    from tests.fake_openai import quota_exhausted

    conversation = load_locomo(small_locomo(tmp_path, locomo_dir))[0]
    with FakeOpenAI(responder=mem0_extractor) as server:
        monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        server.chat_faults = [quota_exhausted()] * 5
        system = Mem0System()
        system.client = make_client("openai", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("openai", models=MODELS))
        with pytest.raises(APIRejected) as caught:
            system.ingest(conversation)
    assert type(caught.value).__module__.startswith("memeval.") and "quota" in str(caught.value)
    assert server.received and server.embedded, "the fault met Mem0's extraction call, inside Mem0"


def test_without_a_key_nothing_is_sent_and_the_miss_names_what_is_needed(tmp_path, monkeypatch, locomo_dir):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    conversation = load_locomo(small_locomo(tmp_path, locomo_dir))[0]
    system = Mem0System()
    system.client = make_client("replay", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("replay", models=MODELS))
    with pytest.raises(LLMError):
        system.ingest(conversation)


def test_replies_mem0_cannot_read_leave_no_memory_and_the_record_says_why(tmp_path, locomo_dir, monkeypatch):
    conversation = load_locomo(small_locomo(tmp_path, locomo_dir))[0]
    with FakeOpenAI(responder=lambda body: "Sure! Caroline likes painting.") as server:
        monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        system = Mem0System()
        system.client = make_client("openai", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("openai", models=MODELS))
        system.ingest(conversation)
        record = system.ingest_record("mem0", system.native_store())
    assert system.native_store() == [] and record.memories == 0 and record.add_calls == len(add_calls(conversation))
    parse_errors = sum(n for message, n in record.library_log.items() if "parsing extraction response" in message)
    assert parse_errors == record.add_calls, record.library_log


def test_parameters_are_checked_before_anything_runs():
    for bad in ({"top_k": 0}, {"threshold": 1.5}, {"batch": -1}):
        with pytest.raises(ValueError):
            Mem0System(**bad)


def _run(args, env, out):
    return subprocess.run([sys.executable, "-m", "memeval", "locomo", "run", *args, "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=900)


def test_locomo_run_with_mem0_and_dense_rag_then_audit_mem0s_own_store(extractor, tmp_path, locomo_dir):
    """As typed: `locomo run --systems rag_dense:chunk_tokens=512:k=2,mem0`, its rerun at zero requests, and
    `natural union --store <run>/stores/mem0.json --format mem0` on the store Mem0 wrote."""
    data = small_locomo(tmp_path, locomo_dir)
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    args = ["--data", str(data), "--systems", "rag_dense:chunk_tokens=512:k=2,mem0", "--reader", "extractive",
            "--llm", "openai", "--extract-model", "gpt-4o-mini", "--embed-model", "text-embedding-3-small"]
    first = _run(args, env, tmp_path / "run")
    assert first.returncode == 0, first.stderr[-3000:]
    store = json.loads((tmp_path / "run" / "stores" / "mem0.json").read_text())
    assert list(store) == ["conv-26"] and store["conv-26"] and all("memory" in m for m in store["conv-26"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["invocations"][-1]["llm"]["requests_sent"] > 0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "mem0ai library 2.2.1" in report and "stores/mem0.json" in report
    memories = len(store["conv-26"])
    assert f"Mem0 made {len(add_calls(load_locomo(data)[0]))} add calls over 1 conversation(s) and kept {memories} " \
           "memories" in report
    sent = len(extractor.received) + len(extractor.embedded)

    second = _run(args, env, tmp_path / "rerun")
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((tmp_path / "rerun" / "manifest.json").read_text())["invocations"][-1]["llm"][
        "requests_sent"] == 0
    assert len(extractor.received) + len(extractor.embedded) == sent
    assert json.loads((tmp_path / "rerun" / "stores" / "mem0.json").read_text()) == store

    from memeval.benchmarks.locomo.natural_build import build_directory

    build_directory(tmp_path / "packages", str(locomo_dir), target=6)
    audit = subprocess.run([sys.executable, "-m", "memeval", "natural", "union", "--packages",
                            str(tmp_path / "packages"), "--store", str(tmp_path / "run" / "stores" / "mem0.json"),
                            "--format", "mem0", "--system", "mem0", "--out", str(tmp_path / "audit")],
                           env=env, capture_output=True, text=True, timeout=900)
    assert audit.returncode == 0, audit.stderr[-3000:]


def test_dry_run_prices_mem0s_calls_and_sends_nothing(extractor, tmp_path, locomo_dir, cli):
    result = cli("locomo", "run", "--data", str(locomo_dir), "--systems", "mem0", "--reader", "claude",
                 "--extract-model", "gpt-4o-mini", "--answer-model", "gpt-4o-mini", "--dry-run", "--json", "--out",
                 str(tmp_path / "dry"))
    assert result.returncode == 0, result.stderr
    estimate = json.loads(result.stdout)
    conversations = load_locomo(locomo_dir)
    calls = sum(len(add_calls(c)) for c in conversations)
    assert estimate["ingest"]["requests"] == calls == 6022
    assert estimate["ingest"]["input_tokens_est"] > calls * 8000, "Mem0's ~33,600-character prompt every call"
    assert estimate["embeddings"]["inputs"] > calls and estimate["usd_est_total"] > 0
    assert "Mem0" in estimate["note"]
    assert extractor.received == [] and extractor.embedded == [] and not (tmp_path / "dry").exists()
