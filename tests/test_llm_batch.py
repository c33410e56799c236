import pytest

from memeval.llm import AnthropicBackend, LLMClient, LLMError, LLMRequest, ReplayBackend, ResponseCache
from memeval.llm.batch import BatchUnavailable, api_custom_id, run_batch
from tests.fake_anthropic import TEST_SECRET

SECRET = TEST_SECRET


def _items(n=4):
    return [(f"conv-26:q{i:04d}:rag_turns:r{i % 2}",
             LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"question {i}"),), system="grade",
                        max_tokens=256, temperature=0.5, template_version="g1", repeat_index=i % 2))
            for i in range(n)]


def _client(tmp_path):
    return LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=lambda s: None)


def test_batch_sends_exact_params_and_joins_on_custom_id(fake, tmp_path):
    client = _client(tmp_path)
    results = run_batch(client, _items(), "judge", poll_interval_s=0, sleep=lambda s: None)
    assert {label: r.text for label, r in results.items()} == {
        label: f"echo: {request.messages[0][1]}" for label, request in _items()}
    (batch,) = fake.batches.values()
    sent = {r["custom_id"]: r["params"] for r in batch["requests"]}
    assert set(sent) == {api_custom_id(label) for label, _ in _items()}
    params = sent[api_custom_id(_items()[1][0])]
    assert params["model"] == "claude-sonnet-4-6" and params["temperature"] == 0.5
    assert params["max_tokens"] == 256 and params["system"] == "grade"
    assert params["messages"] == [{"role": "user", "content": "question 1"}]
    assert fake.rejected == [] and batch["version"] == "2023-06-01"
    assert all(r.cost_usd == pytest.approx(0.5 * (r.input_tokens * 3 + 20 * 15) / 1e6) for r in results.values())


def test_batch_results_land_in_the_sync_cache(fake, tmp_path):
    run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0)
    replay = LLMClient(ReplayBackend(), ResponseCache(tmp_path))
    assert replay.complete(_items()[2][1]).text == "echo: question 2"
    again = run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0)
    assert len(fake.batches) == 1 and all(r.cached for r in again.values())


def test_killed_run_resumes_polling_the_saved_batch(fake, tmp_path):
    fake.batch_polls_before_end = 3
    with pytest.raises(LLMError, match="rerun to resume"):
        run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0, timeout_s=0)
    assert len(fake.batches) == 1
    stored = ResponseCache(tmp_path).list_batches("judge")
    assert [batch_id for _, batch_id, _ in stored] == list(fake.batches)
    results = run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0)
    assert len(fake.batches) == 1, "resubmitted instead of resuming"
    assert all(not isinstance(r, Exception) for r in results.values())
    assert ResponseCache(tmp_path).list_batches("judge") == []


def test_errored_results_are_reported_not_cached(fake, tmp_path):
    items = _items()
    fake.batch_errored = {api_custom_id(items[0][0]): "overloaded_error"}
    client = _client(tmp_path)
    results = run_batch(client, items, "judge", poll_interval_s=0)
    assert isinstance(results[items[0][0]], LLMError) and "errored" in str(results[items[0][0]])
    assert ResponseCache(tmp_path).get(client.resolve(items[0][1]).key) is None
    assert ResponseCache(tmp_path).get(client.resolve(items[1][1]).key) is not None
    fake.batch_errored = {}
    retry = run_batch(_client(tmp_path), items, "judge", poll_interval_s=0)
    assert len(fake.batches) == 2 and len(fake.batches["msgbatch_fake_2"]["requests"]) == 1
    assert retry[items[0][0]].text == "echo: question 0"


def test_batch_key_never_stored(fake, tmp_path):
    fake.batch_polls_before_end = 5
    with pytest.raises(LLMError):
        run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0, timeout_s=0)
    run_batch(_client(tmp_path), _items(), "judge", poll_interval_s=0)
    assert SECRET not in ResponseCache(tmp_path).all_text()
    for path in tmp_path.iterdir():  # the database and its WAL
        assert SECRET.encode() not in path.read_bytes(), path.name


def test_replay_backend_cannot_submit(tmp_path):
    client = LLMClient(ReplayBackend(), ResponseCache(tmp_path))
    results = run_batch(client, _items(2), "judge")
    assert all(isinstance(r, BatchUnavailable) for r in results.values())


def test_custom_ids_are_api_valid_and_distinct():
    labels = ["conv-26:q0042:rag_turns:r3", "conv-26:q0042:rag_turns:r4", "x" * 100 + ":a", "x" * 100 + ":b"]
    ids = [api_custom_id(label) for label in labels]
    assert ids[0] == "conv-26_q0042_rag_turns_r3"
    assert len(set(ids)) == 4 and all(len(i) <= 64 for i in ids)
