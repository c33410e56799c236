"""Keyless estimates follow each model's tokenizer (memeval/llm/tokenizers.py), and a keyed dry run counts its prompts
concurrently through the client's rate limiter with the same numbers as one at a time (memeval/llm/count.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from memeval.llm import AnthropicBackend, APIRejected, LLMClient, LLMRequest, ResponseCache
from memeval.llm.client import estimate_tokens as client_estimate_tokens
from memeval.llm.client import make_client
from memeval.llm.count import COUNT_POOL, token_counter
from memeval.llm.errors import TransientError
from memeval.llm.profiles import PROFILES, TOKENIZER_RATIOS
from memeval.llm.ratelimit import limit_pool
from memeval.llm.settings import ModelSettings
from memeval.llm.tokenizers import estimate_tokens
from tests.scripted import ScriptedBackend

TEXT = "x" * 4000  # 1,000 tokens at 4 characters a token


def _request(model="claude-sonnet-4-6", text=TEXT, **kw):
    return LLMRequest(model=model, messages=(("user", text),), max_tokens=kw.pop("max_tokens", 50), **kw)


def test_ratios_are_applied_per_model_and_the_old_import_still_works():
    assert estimate_tokens(TEXT) == estimate_tokens(TEXT, "claude-opus-4-6") == 1000
    assert estimate_tokens(TEXT, "claude-opus-4-7") == 1350
    assert estimate_tokens(TEXT, "claude-sonnet-5-5") == 1300
    assert estimate_tokens(TEXT, "my-local-model") == 1000 and estimate_tokens("", "claude-opus-4-7") == 1
    assert client_estimate_tokens(TEXT, "claude-opus-4-7") == 1350 and client_estimate_tokens("abcdefg") == 1
    assert set(TOKENIZER_RATIOS) <= set(PROFILES), "a ratio for a model id this project cannot call is a typo"


def test_the_keyless_estimate_prices_the_new_tokenizer_and_says_so(tmp_path):
    client = LLMClient(ScriptedBackend(lambda r: "x"), ResponseCache(tmp_path),
                       ModelSettings(sampling="model-default"))
    old = client.estimate([_request("claude-opus-4-6")])
    new = client.estimate([_request("claude-opus-4-7")])
    assert (old.input_tokens_est, new.input_tokens_est) == (1000, 1350)
    assert new.usd_est == pytest.approx(old.usd_est + 350 * 5 / 1e6), "same prices, 35% more input tokens"
    assert old.token_count == "estimate (4 characters a token)"
    assert new.token_count == "estimate (4 characters a token, times 1.35 for claude-opus-4-7's tokenizer)"
    both = client.estimate([_request("claude-opus-4-7"), _request("claude-sonnet-5-5")])
    assert both.input_tokens_est == 2650 and "times 1.3 for claude-sonnet-5-5's tokenizer" in both.token_count


def test_the_rate_limiter_reserves_the_model_specific_estimate(tmp_path):
    client = LLMClient(ScriptedBackend(lambda r: "x"), None, ModelSettings(sampling="model-default"))
    reserved = []
    acquire = client.limiter.acquire
    client.limiter.acquire = lambda key, i, o: reserved.append((key[1], i)) or acquire(key, i, o)
    client.complete(_request("claude-opus-4-6"))
    client.complete(_request("claude-opus-4-7"))
    assert [i for _, i in reserved] == [1000, 1350]


def test_a_keyless_dry_run_names_the_ratio_as_a_process(locomo_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["MEMEVAL_CACHE_DIR"] = str(tmp_path / "cache")
    argv = [sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26",
            "--questions", "prototype", "--systems", "full_context", "--answerer", "claude", "--sampling",
            "model-default", "--dry-run", "--json", "--out", str(tmp_path / "run")]
    runs = {model: subprocess.run([*argv, "--answer-model", model], capture_output=True, text=True, env=env,
                                  timeout=300) for model in ("claude-opus-4-6", "claude-opus-4-7")}
    assert all(p.returncode == 0 for p in runs.values()), [p.stderr for p in runs.values()]
    old, new = (json.loads(runs[m].stdout)["answers"] for m in ("claude-opus-4-6", "claude-opus-4-7"))
    assert new["token_count"] == "estimate (4 characters a token, times 1.35 for claude-opus-4-7's tokenizer)"
    assert old["token_count"] == "estimate (4 characters a token)"
    assert new["input_tokens_est"] == pytest.approx(1.35 * old["input_tokens_est"], rel=1e-3)
    assert not (tmp_path / "run").exists()


class _Tracking:
    """The real SDK backend, with a short pause in each count so that overlapping calls can be seen."""

    def __init__(self, inner):
        self.inner, self.active, self.peak, self._lock = inner, 0, 0, threading.Lock()

    def count_tokens(self, request):
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(0.02)
            return self.inner.count_tokens(request)
        finally:
            with self._lock:
                self.active -= 1


def _prompts(n=24):
    return [_request(text="word " * (7 * i + 3)) for i in range(n)]


def test_keyed_counts_are_concurrent_bounded_in_order_and_equal_to_sequential(fake):
    requests = _prompts()
    one_at_a_time = token_counter(LLMClient(AnthropicBackend(timeout=5), None))
    sequential = [one_at_a_time(r) for r in requests]
    assert len(set(sequential)) == len(requests) and len(fake.count_requests) == len(requests)

    backend = _Tracking(AnthropicBackend(timeout=5))
    client = LLMClient(backend, None, ModelSettings(max_concurrency=4))
    reservations = []
    acquire = client.limiter.acquire
    client.limiter.acquire = lambda key, i, o: reservations.append((key, i, o)) or acquire(key, i, o)
    assert token_counter(client).count_all(requests) == sequential
    assert 1 < backend.peak <= 4, "counted concurrently, never past --max-concurrency"
    assert len(fake.count_requests) == 2 * len(requests) and fake.rejected == []
    assert reservations == [(("anthropic", COUNT_POOL), 0, 0)] * len(requests), \
        "each count takes one request of the counting limit's own bucket, no tokens"
    estimate = client.estimate(requests, counter=token_counter(client))
    assert estimate.input_tokens_est == sum(sequential) and estimate.token_count == "exact (token-counting endpoint)"


def test_each_distinct_prompt_is_counted_once_and_cached(fake, tmp_path):
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), ModelSettings(max_concurrency=4))
    twins = [_request(text="same prompt " * 50, max_tokens=m) for m in (10, 20, 30)]  # one count body
    counts = token_counter(client).count_all([*twins, *_prompts(6)])
    assert counts[0] == counts[1] == counts[2] and len(fake.count_requests) == 7
    again = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), ModelSettings(max_concurrency=4))
    assert token_counter(again).count_all([*twins, *_prompts(6)]) == counts and len(fake.count_requests) == 7


def test_a_wrong_key_is_refused_after_one_count(fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    client = LLMClient(AnthropicBackend(timeout=5), None, ModelSettings(max_concurrency=8))
    with pytest.raises(APIRejected, match="count_tokens"):
        token_counter(client).count_all(_prompts(12))
    assert len(fake.count_requests) == 1, "the first count goes alone, like the first message"


def test_another_providers_requests_are_not_sent_to_anthropics_counter(fake, tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path))
    requests = [_request(), _request("gpt-4o-mini", temperature=0.0)]
    estimate = client.estimate(requests, counter=token_counter(client))
    assert [b["model"] for b in fake.count_requests] == ["claude-sonnet-4-6"] and fake.rejected == []
    assert estimate.token_count == ("exact (token-counting endpoint) for 1 of 2 calls; "
                                    "estimate (4 characters a token) for the rest")


def test_a_429_from_the_counter_teaches_its_own_bucket():
    class Counting(ScriptedBackend):
        def __init__(self):
            super().__init__(lambda r: "x")
            self.counts = 0

        def count_tokens(self, request):
            self.counts += 1
            if self.counts == 1:
                raise TransientError("429 rate_limit_error", 0.0, 429, headers={
                    "anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "0",
                    "anthropic-ratelimit-requests-reset": "2000-01-01T00:00:00Z"})
            return 42

    client = LLMClient(Counting(), None, sleep=lambda s: None)
    assert token_counter(client).count_all([_request()]) == [42] and client.stats.retries == 1
    assert client.limiter.capacity(("anthropic", COUNT_POOL), "requests") == 100
    assert client.limiter.capacity(limit_pool("anthropic", "claude-sonnet-4-6"), "requests") is None, \
        "message creation's limits are separate and untouched"
