import pytest

from memeval.llm import (
    AnthropicBackend,
    APIRejected,
    BudgetExceeded,
    CacheMiss,
    LLMClient,
    LLMError,
    LLMRequest,
    ReplayBackend,
    ResponseCache,
)
from memeval.llm.settings import ModelSettings
from tests.fake_anthropic import TEST_SECRET, error
from tests.scripted import ScriptedBackend

SECRET = TEST_SECRET


def _request(text="hello", **kw):
    return LLMRequest(model="claude-sonnet-4-6", messages=(("user", text),), system="be brief", max_tokens=77,
                      temperature=0.5, template_version="t1", **kw)


def test_real_sdk_sends_exact_parameters(fake, tmp_path):
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=lambda s: None)
    response = client.complete(_request())
    assert response.text == "echo: hello" and not response.cached and fake.rejected == []
    body = fake.received[0]
    assert body["model"] == "claude-sonnet-4-6" and body["temperature"] == 0.5 and body["max_tokens"] == 77
    assert body["system"] == "be brief" and body["messages"] == [{"role": "user", "content": "hello"}]
    headers = {k.lower(): v for k, v in fake.headers[0].items()}
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert headers["anthropic-version"] == "2023-06-01"  # the version under which Sonnet 4.6 takes temperature
    assert response.request_id == "req_fake_000001" and response.api_version == "2023-06-01"
    assert response.cost_usd == pytest.approx((response.input_tokens * 3 + 20 * 15) / 1e6)


def test_cached_rerun_sends_nothing(fake, tmp_path):
    cache = ResponseCache(tmp_path)
    first = LLMClient(AnthropicBackend(timeout=5), cache)
    first.complete(_request())
    first.complete(_request(repeat_index=1))  # a repeat index is a different request
    assert len(fake.received) == 2
    again = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path))
    out = [again.complete(_request()), again.complete(_request(repeat_index=1))]
    assert len(fake.received) == 2 and all(r.cached for r in out)
    assert again.stats.requests_sent == 0 and again.stats.cache_hits == 2


@pytest.mark.parametrize("fault", [error(500), error(529), error(429, retry_after="2")])
def test_transient_errors_are_retried(fake, tmp_path, fault):
    fake.faults = [fault, fault]
    slept = []
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=slept.append)
    response = client.complete(_request())
    assert response.text == "echo: hello" and response.attempts == 3 and len(fake.received) == 3
    assert client.stats.retries == 2
    if fault[0] == 429:
        assert slept == [2.0, 2.0]  # retry-after honoured


@pytest.mark.parametrize("retry_after", ["3600", "Fri, 01 Jan 2099 00:00:00 GMT", "121"])
def test_a_retry_after_past_the_cap_fails_the_row_at_once(fake, tmp_path, retry_after):
    fake.faults = [error(429, retry_after=retry_after)]
    slept = []
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=slept.append)
    [outcome] = client.complete_many([_request()])
    assert isinstance(outcome, LLMError) and "past the 120 s cap" in str(outcome) and slept == []
    assert len(fake.received) == 1 and client.lookup(_request()) is None
    fake.faults = [error(429, retry_after="120")]
    assert client.complete(_request()).text == "echo: hello" and slept == [120.0], "at the cap it is obeyed"


def test_timeouts_are_retried(fake, tmp_path):
    fake.faults = [("sleep", 1.5)]
    client = LLMClient(AnthropicBackend(timeout=0.5), ResponseCache(tmp_path), sleep=lambda s: None)
    assert client.complete(_request()).attempts == 2


def test_errors_are_not_cached_and_permanent_errors_not_retried(fake, tmp_path):
    fake.faults = [error(400)]
    cache = ResponseCache(tmp_path)
    client = LLMClient(AnthropicBackend(timeout=5), cache, sleep=lambda s: None)
    with pytest.raises(APIRejected) as caught:
        client.complete(_request())
    assert caught.value.status == 400 and caught.value.request_id == "req_fake_000001"
    assert len(fake.received) == 1 and len(cache) == 0
    with pytest.raises(APIRejected):  # a rejected client sends nothing more
        client.complete(_request("other"))
    assert len(fake.received) == 1
    fake.faults = [error(500)] * 3
    limited = LLMClient(AnthropicBackend(timeout=5), cache, max_retries=2, sleep=lambda s: None)
    with pytest.raises(LLMError, match="gave up after 3"):
        limited.complete(_request())
    assert len(cache) == 0


def test_api_key_never_lands_in_cache_or_log(fake, tmp_path):
    cache = ResponseCache(tmp_path)
    client = LLMClient(AnthropicBackend(timeout=5), cache, sleep=lambda s: None)
    fake.faults = [error(429, retry_after="0")]
    client.complete(_request())
    assert SECRET not in cache.all_text()
    assert SECRET not in repr(client.stats.log)
    assert SECRET.encode() not in (tmp_path / "responses.sqlite").read_bytes()


def test_replay_answers_only_from_cache(tmp_path):
    cache = ResponseCache(tmp_path)
    scripted = LLMClient(ScriptedBackend(lambda r: "stored"), cache)
    scripted.complete(_request())
    replay = LLMClient(ReplayBackend(), ResponseCache(tmp_path))
    assert replay.complete(_request()).text == "stored"
    with pytest.raises(CacheMiss, match="no cached response"):
        replay.complete(_request("never seen"))


def test_cache_key_covers_exactly_what_changes_output():
    base = _request()
    assert base.key == _request().key
    for changed in (_request("other"), _request(repeat_index=2),
                    LLMRequest(**{**base.__dict__, "temperature": 0.0}),
                    LLMRequest(**{**base.__dict__, "model": "claude-opus-4-6"}),
                    LLMRequest(**{**base.__dict__, "template_version": "t2"}),
                    LLMRequest(**{**base.__dict__, "max_tokens": 78}),
                    LLMRequest(**{**base.__dict__, "system": "x"})):
        assert changed.key != base.key


def test_budget_stops_new_calls_and_keeps_finished(tmp_path):
    cache = ResponseCache(tmp_path)
    client = LLMClient(ScriptedBackend(lambda r: "x"), cache, ModelSettings(budget_usd=1e-9))
    client.complete(_request("a"))
    with pytest.raises(BudgetExceeded):
        client.complete(_request("b"))
    assert client.complete(_request("a")).cached  # finished work is still served


def test_dry_run_estimate_counts_only_misses(tmp_path):
    cache = ResponseCache(tmp_path)
    client = LLMClient(ScriptedBackend(lambda r: "x"), cache)
    client.complete(_request("a"))
    est = client.estimate([_request("a"), _request("b"), _request("c")])
    assert est.to_send == 2 and est.cached == 1 and est.usd_est > 0


def test_concurrency_is_bounded(tmp_path):
    import threading
    import time

    active, peak = [0], [0]
    lock = threading.Lock()

    def slow(request):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return "x"

    client = LLMClient(ScriptedBackend(slow), None, ModelSettings(max_concurrency=3))
    results = client.complete_many([_request(str(i)) for i in range(20)], max_workers=10)
    assert all(r.text == "x" for r in results) and peak[0] <= 3


def test_identical_requests_in_one_call_are_sent_once(tmp_path):
    backend = ScriptedBackend(lambda r: "x")
    client = LLMClient(backend, ResponseCache(tmp_path))
    out = client.complete_many([_request("a"), _request("b"), _request("a"), _request("a")], max_workers=4)
    assert [r.text for r in out] == ["x"] * 4 and len(backend.sent) == 2
    est = LLMClient(ScriptedBackend(lambda r: "x"), ResponseCache(tmp_path / "other")).estimate(
        [_request("c"), _request("c"), _request("d")])
    assert (est.requests, est.identical, est.to_send) == (3, 1, 2)


def test_a_cap_past_what_the_model_writes_is_refused_before_sending(tmp_path):
    """gpt-4o-mini writes at most 16,384 tokens a reply: a request asking for more is one input error naming the
    model, its cap, the cap asked and who asked, from the send and the estimate alike; nothing reaches the backend.
    At the cap it is sent; a thinking model's reserve counts; a model without a known cap is not checked."""
    from memeval.errors import InputError
    from memeval.llm.bounds import UNCAPPED_TOKENS
    from memeval.llm.profiles import PROFILES, ProfileTable

    sent = ScriptedBackend(lambda r: "x")
    client = LLMClient(ReplayBackend(), ResponseCache(tmp_path), backends={"openai": sent, "local": sent},
                       profile_table=ProfileTable.with_local(["my-model"]))
    ask = LLMRequest(model="gpt-4o-mini", messages=(("user", "q"),), max_tokens=32768, role="answer",
                     max_tokens_from="the evermemos_* readers")
    expected = ("--answer-model: gpt-4o-mini: writes at most 16,384 tokens a reply, but 32,768 are asked for by the "
                "evermemos_* readers; nothing sent")
    for call in (client.complete, lambda r: client.estimate([r]), lambda r: client.complete_many([r, r])):
        with pytest.raises(InputError) as refused:
            call(ask)
        assert str(refused.value).startswith(expected) and "\n" not in str(refused.value)
    assert sent.sent == [] and client.stats.requests_sent == 0
    assert client.complete(LLMRequest(**{**ask.__dict__, "max_tokens": 16384})).text == "x"
    with pytest.raises(InputError, match="gpt-4.1-mini: writes at most 32,768 tokens a reply, but 32,769 are asked "
                                         "for by this request"):
        client.complete(LLMRequest(model="gpt-4.1-mini", messages=(("user", "q"),), max_tokens=32769))
    assert client.complete(LLMRequest(**{**ask.__dict__, "model": "gpt-4.1-mini"})).text == "x"
    assert client.resolve(LLMRequest(**{**ask.__dict__, "model": "my-model", "max_tokens": 10**6})).max_tokens == 10**6
    # the bound of an uncapped reply (memeval/llm/bounds.py) holds what any OpenAI model writes
    assert max(p.max_output_tokens or 0 for p in PROFILES.values() if p.provider == "openai") <= UNCAPPED_TOKENS
    opus = PROFILES["claude-opus-5-5"]  # always thinks: the wire's max_tokens is the answer cap + its reserve
    with pytest.raises(InputError, match=r"writes at most 128,000 tokens a reply, but 128,001 "
                                         rf"\({128_001 - opus.thinking_tokens:,} \+ {opus.thinking_tokens:,} thinking"):
        client.resolve(LLMRequest(model="claude-opus-5-5", messages=(("user", "q"),),
                                  max_tokens=128_001 - opus.thinking_tokens, temperature=None))
    assert client.resolve(LLMRequest(model="claude-opus-5-5", messages=(("user", "q"),), temperature=None,
                                     max_tokens=128_000 - opus.thinking_tokens)).max_tokens_sent == 128_000
