"""The bounds of one model call (memeval/llm/bounds.py), through the real SDKs against the local fakes: replies
larger than their `max_tokens` can produce (on the wire, after decoding, as text), usage that is not a count of
tokens, servers that hold requests past the timeout, what the progress bar says meanwhile, and credentials in base
URLs kept out of everything recorded."""

from __future__ import annotations

import threading

import pytest

from memeval.errors import InputError
from memeval.llm import LLMClient, LLMRequest, ResponseCache, bounds
from memeval.llm.client import AnthropicBackend
from memeval.llm.errors import InvalidReply, TimedOut, TransientError
from memeval.llm.settings import ModelSettings
from memeval.llm.types import LLMResponse, public_url
from tests.scripted import ScriptedBackend

CAP = 77


def _request(text="hello", **kw) -> LLMRequest:
    return LLMRequest(model="claude-sonnet-4-6", messages=(("user", text),), max_tokens=CAP, temperature=0.0,
                      template_version="t1", **kw)


def _client(tmp_path, backend=None, budget_usd: float | None = None) -> LLMClient:
    return LLMClient(backend or AnthropicBackend(timeout=5), ResponseCache(tmp_path),
                     ModelSettings(budget_usd=budget_usd), sleep=lambda s: None)


# ---- replies larger than the request's cap ----------------------------------------------------------------------

def test_a_body_past_the_byte_limit_fails_the_call_unread_and_uncached(fake, tmp_path):
    """The issue's reply: megabytes of text for a 77-token cap, usage saying 20 output tokens."""
    fake.responder = lambda body: "x" * (3 << 20)
    client = _client(tmp_path)
    [outcome] = client.complete_many([_request()])
    assert isinstance(outcome, InvalidReply) and "reply body over" in str(outcome), outcome
    assert f"max_tokens {CAP}" in str(outcome) and len(fake.received) == 1, "not retried"
    assert len(client.cache) == 0 and client.lookup(_request()) is None
    assert client.stats.failures == 1 and client.stats.cost_usd == 0


def test_text_longer_than_the_cap_can_produce_is_not_an_answer(fake, tmp_path):
    limit = bounds.text_limit(CAP)
    fake.responder = lambda body: "y" * (limit + 1)  # under the body limit: read, then refused as text
    client = _client(tmp_path)
    [outcome] = client.complete_many([_request()])
    assert isinstance(outcome, InvalidReply) and f"more than max_tokens {CAP} can produce" in str(outcome)
    assert len(client.cache) == 0 and client.stats.unusable == {"oversized reply": 1}
    fake.responder = lambda body: "y" * limit  # at the bound it is an answer
    assert client.complete(_request("other")).text == "y" * limit and len(client.cache) == 1


def test_a_compressed_body_is_bounded_after_decoding(fake, tmp_path):
    """A gzip body of a few kilobytes that decodes to megabytes is stopped while decoding, not parsed."""
    from tests.fake_anthropic import compressed

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
               "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    fake.faults = [compressed(message, 8 << 20)]
    client = _client(tmp_path)
    [outcome] = client.complete_many([_request()])
    assert isinstance(outcome, InvalidReply) and "reply body over" in str(outcome), outcome
    fake.faults = [compressed(message, 1000)]  # the same body, small once decoded, is read as usual
    assert client.complete(_request()).text == "ok"


def test_an_oversized_reply_in_the_cache_is_asked_again(tmp_path):
    """A reply stored by an older version is never served as an answer."""
    cache = ResponseCache(tmp_path)
    client = _client(tmp_path, ScriptedBackend(lambda r: "fresh"))
    resolved = client.resolve(_request())
    bogus = LLMResponse(text="z" * (bounds.text_limit(CAP) + 1), model="claude-sonnet-4-6", output_tokens=5,
                        stop_reason="end_turn")
    cache.put(resolved.key, resolved.key_material(), bogus.to_cache())
    reply = client.complete(_request())
    assert reply.text == "fresh" and not reply.cached and client.backend.sent


# ---- usage that is not a count ------------------------------------------------------------------------------------

BAD_USAGE = [{"output_tokens": -5}, {"input_tokens": -1_000_000}, {"output_tokens": 1.5}, {"output_tokens": "5"},
             {"input_tokens": True}, {"output_tokens": None}, {"input_tokens": 10**12},
             {"cache_read_input_tokens": -3}, {"cache_creation_input_tokens": "many"}]


@pytest.mark.parametrize("usage", BAD_USAGE, ids=lambda u: ",".join(f"{k}={v!r}" for k, v in u.items()))
def test_anthropic_usage_that_is_not_a_count_fails_the_call_unpriced(usage, fake, tmp_path):
    fake.usage = usage
    client = _client(tmp_path, budget_usd=1.0)
    [outcome] = client.complete_many([_request()])
    name = next(iter(usage))
    assert isinstance(outcome, InvalidReply) and f"usage.{name} is {usage[name]!r}" in str(outcome), outcome
    assert client.stats.cost_usd == 0 and client.stats.output_tokens == 0 and len(client.cache) == 0
    assert len(fake.received) == 1, "not retried"


@pytest.mark.parametrize("usage, needle", [
    ({"completion_tokens": -5}, "usage.completion_tokens is -5"),
    ({"prompt_tokens": -100}, "usage.prompt_tokens is -100"),
    ({"prompt_tokens": 2.5}, "usage.prompt_tokens is 2.5"),
    ({"prompt_tokens_details": {"cached_tokens": -7}}, "cached_tokens is -7"),
    ({"prompt_tokens_details": {"cached_tokens": 10**6}}, "cached_tokens 1,000,000 is more than prompt_tokens"),
])
def test_openai_usage_that_is_not_a_count_fails_the_call_unpriced(usage, needle, fake_openai, tmp_path):
    from memeval.llm.openai_backend import OpenAIBackend

    fake_openai.usage = usage
    client = LLMClient(None, ResponseCache(tmp_path), backends={"openai": OpenAIBackend("openai")},
                       sleep=lambda s: None)
    request = LLMRequest(model="gpt-4o-mini", messages=(("user", "hi"),), max_tokens=10, temperature=0.0)
    [outcome] = client.complete_many([request])
    assert isinstance(outcome, InvalidReply) and needle in str(outcome), outcome
    assert client.stats.cost_usd == 0 and len(client.cache) == 0


def test_a_batch_result_with_negative_usage_is_not_priced(fake, tmp_path):
    from memeval.llm.batch import run_batch

    fake.usage = {"output_tokens": -500_000}
    client = _client(tmp_path)
    outcome = run_batch(client, [("q1", _request())], "judge", poll_interval_s=0, sleep=lambda s: None)["q1"]
    assert isinstance(outcome, InvalidReply) and client.stats.cost_usd == 0 and len(client.cache) == 0


# ---- servers that hold requests --------------------------------------------------------------------------------

def test_the_timeout_is_set_per_provider_and_overridable(monkeypatch):
    monkeypatch.delenv(bounds.TIMEOUT_VARIABLE, raising=False)
    assert bounds.read_timeout_s("local") > bounds.read_timeout_s("anthropic") == bounds.read_timeout_s("openai")
    assert bounds.read_timeout_s("anthropic") < 600, "below the SDKs' own 600 s"
    monkeypatch.setenv(bounds.TIMEOUT_VARIABLE, "2.5")
    timeout = bounds.http_timeout("local")
    assert (timeout.read, timeout.connect) == (2.5, 2.5)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "3601", "1e9"])
def test_a_bad_timeout_variable_is_one_input_error(value, monkeypatch):
    monkeypatch.setenv(bounds.TIMEOUT_VARIABLE, value)
    with pytest.raises(InputError, match=f"environment: {bounds.TIMEOUT_VARIABLE}: '{value}' is not a number"):
        bounds.read_timeout_s("anthropic")


def test_a_held_request_times_out_at_the_variable_and_is_retried(fake, tmp_path, monkeypatch):
    monkeypatch.setenv(bounds.TIMEOUT_VARIABLE, "0.3")
    fake.faults = [("sleep", 1.0)]
    client = _client(tmp_path, AnthropicBackend())
    assert client.complete(_request()).attempts == 2 and len(fake.received) == 2


def test_timeouts_are_retried_a_bounded_number_of_times(fake, tmp_path, monkeypatch):
    monkeypatch.setenv(bounds.TIMEOUT_VARIABLE, "0.2")
    fake.faults = [("sleep", 0.6)] * (bounds.TIMEOUT_RETRIES + 2)
    client = _client(tmp_path, AnthropicBackend())
    [outcome] = client.complete_many([_request()])
    attempts = bounds.TIMEOUT_RETRIES + 1
    assert isinstance(outcome, TimedOut) and f"gave up after {attempts} attempts" in str(outcome), outcome
    assert "APITimeoutError" in str(outcome) and bounds.TIMEOUT_VARIABLE in str(outcome)
    assert len(fake.received) == attempts < client.max_retries + 1


def test_the_bar_names_the_call_it_waits_for(tmp_path):
    from memeval.progress import CallStatus

    release, sent = threading.Event(), threading.Event()

    def held(request):
        sent.set()
        release.wait(30)
        return "late"

    backend = ScriptedBackend(held, failures=[TransientError("529 overloaded_error: injected")])
    client = _client(tmp_path, backend)
    now = [0.0]
    status = CallStatus(client, clock=lambda: now[0])
    worker = threading.Thread(target=client.complete, args=(_request(),))
    worker.start()
    try:
        assert sent.wait(30)
        _, attempt, start, in_flight = client.waiting()
        assert (attempt, in_flight) == (2, 1)
        now[0] = start + 1
        assert status().endswith("1 in flight (claude-sonnet-4-6, attempt 2, 1 s)"), status()
        now[0] = start + 35
        assert status().endswith("1 in flight (claude-sonnet-4-6, attempt 2, 35 s)"), status()
    finally:
        release.set()
        worker.join()
    assert client.waiting() is None and "in flight" not in status()


# ---- credentials in base URLs ----------------------------------------------------------------------------------

URL_SECRET = "URLTOKEN-do-not-store-4242"


@pytest.mark.parametrize("url, shown", [
    (f"http://user:{URL_SECRET}@127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
    (f"https://gw.example/v1?token={URL_SECRET}&region=eu", "https://gw.example/v1?token=<redacted>&region=<redacted>"),
    (f"https://{URL_SECRET}@gw.example", "https://gw.example"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
])
def test_public_url_drops_userinfo_and_query_values(url, shown):
    assert public_url(url) == shown


def test_a_token_in_a_base_url_is_never_recorded_and_does_not_split_the_run(monkeypatch, tmp_path):
    from memeval.llm.client import make_client
    from memeval.llm.manifest import llm_manifest, role_identity

    recorded = []
    for token in (URL_SECRET, URL_SECRET[::-1]):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"https://proxy:{token}@gw.example/anthropic?key={token}")
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://u:{token}@127.0.0.1:9/v1?token={token}")
        seen = ""
        for backend, role in (("auto", "answer"), ("local", "judge")):  # Anthropic's endpoint; a local server's
            client = make_client(backend, cache_dir=str(tmp_path), settings=ModelSettings(backend, models={"judge": "qwen"} if backend == "local"
                                 else {}))
            request = client.resolve(LLMRequest(model="", role=role, messages=(("user", "q"),)))
            seen += repr([llm_manifest(client, {role: 0.0}), role_identity(client, role, 0.0),
                          request.key_material(), request.key])
        assert token not in seen and "?key=<redacted>" in seen and "?token=<redacted>" in seen
        recorded.append(seen)
    assert recorded[0] == recorded[1], "two URLs differing only in the token are one endpoint: one run, one cache"


def test_an_error_line_names_the_endpoint_without_its_credentials(fake, tmp_path, monkeypatch):
    """The SDK's base URL keeps the token (the server may need it); the one line printed does not."""
    from tests.fake_anthropic import not_json

    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{fake.url}?token={URL_SECRET}")
    fake.faults = [not_json()]
    client = _client(tmp_path, AnthropicBackend(timeout=5))
    with pytest.raises(Exception) as caught:
        client.complete(_request())
    assert URL_SECRET not in str(caught.value) and "token=<redacted>" in str(caught.value)
