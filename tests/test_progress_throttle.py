"""A run held back by its provider's per-minute limits says so on its progress bar: the limiter keeps what each
waiting call waits for, the bar's postfix shows requests a minute, retries and "throttled: waiting for input
tokens", and a CLI run against a fake holding Anthropic's token buckets (tests/fake_limits.py) prints it on
stderr as a person would see it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from types import SimpleNamespace

from memeval.llm.ratelimit import RateLimiter, Waiting
from memeval.llm.settings import ModelSettings
from memeval.progress import CallStatus, ProgressBar, throttled
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic
from tests.fake_limits import TierLimits
from tests.test_rate_limits import Clock, _headers


def test_the_limiter_keeps_what_a_held_call_waits_for_and_forgets_it_once_admitted():
    clock = Clock()
    seen = []

    def sleep(seconds):
        seen.append(limiter.waiting())
        clock.sleep(seconds)

    limiter = RateLimiter(clock=clock, sleep=sleep, wall=lambda: 0.0)
    key = ("anthropic", "claude-sonnet-4.x")
    first = limiter.acquire(key, 100, 10)
    assert limiter.waiting() is None and seen == [], "nothing is known before the headers: nothing waits"
    limits = {"requests": 60, "input-tokens": 600, "output-tokens": 6000}
    limiter.settle(first, _headers(limits, {"requests": 59, "input-tokens": 0, "output-tokens": 5990}, 60.0),
                   input_used=100, output_used=10)
    limiter.acquire(key, 30, 10)  # 600 input tokens a minute: 10 a second, 30 wanted
    assert seen and all(w.key == key and w.kind == "input" for w in seen)
    assert seen[0].until == 1000.0 + 3.0, "when the input bucket holds 30 tokens again"
    assert limiter.waiting() is None
    assert limiter.stats.waits == len(seen), "the limiter's own arithmetic is unchanged"


def test_the_status_says_requests_a_minute_retries_and_what_the_limiter_waits_for():
    clock = Clock()
    stats = SimpleNamespace(replies=0, retries=0)
    held = []
    limiter = SimpleNamespace(clock=clock, waiting=lambda: held[-1] if held else None)
    status = CallStatus(SimpleNamespace(stats=stats, limiter=limiter), clock=clock)
    assert status() == "", "nothing sent, nothing held: nothing to say"
    clock.now += 30
    stats.replies = 20
    assert status() == "40 req/min"
    stats.retries = 2
    held.append(Waiting(("anthropic", "claude-sonnet-4.x"), "input", clock.now + 11.6))
    assert status() == "40 req/min, 2 retried, throttled: waiting for input tokens (claude-sonnet-4.x, ~12 s)"
    clock.now += 90  # a minute later nothing more was sent: the rate is over the last minute, not the whole run
    assert status().startswith("0.0 req/min")
    held.append(Waiting(("openai", "gpt-4o-mini"), "input", float("inf")))
    assert throttled(limiter) == "throttled: waiting for tokens (gpt-4o-mini)", "OpenAI: one budget, no rate yet"


def test_a_bar_shows_the_status_while_no_unit_finishes(monkeypatch, capsys):
    monkeypatch.setenv("MEMEVAL_PROGRESS", "1")
    shown = threading.Event()

    def status():
        shown.set()
        return "throttled: waiting for requests (m, ~3 s)"

    with ProgressBar(5, "answers", "q", status=status, interval_s=0.01):
        assert shown.wait(5)
    assert "throttled: waiting for requests (m, ~3 s)" in capsys.readouterr().err


def test_a_throttled_cli_run_says_so_on_its_bar(locomo_dir, tmp_path):
    with FakeAnthropic(responder=lambda body: "7 May 2023") as fake:
        fake.limits = TierLimits({"requests": 50, "input-tokens": 2_000, "output-tokens": 8_000}, window_s=3.0)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(ANTHROPIC_API_KEY=TEST_SECRET, ANTHROPIC_BASE_URL=fake.url, MEMEVAL_PROGRESS="1",
                   MEMEVAL_CACHE_DIR=str(tmp_path / "cache"))
        done = subprocess.run([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                               "--conversations", "conv-26", "--questions", "first:6", "--systems", "rag_turns",
                               "--reader", "claude", "--llm", "anthropic", "--out", str(tmp_path / "run")],
                              capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert fake.limits.limited == 0, "the limiter waited instead of being refused"
    assert "throttled: waiting for input tokens (claude-" in done.stderr, done.stderr
    assert " req/min" in done.stderr and "6/6" in done.stderr


def test_answers_are_reported_one_by_one_as_they_arrive_not_per_conversation():
    """The bar moves per question: each answer-role reply is reported when it arrives (a slow first one does not
    hold back the others), a repeated question counts for each time it was asked, other roles are not counted."""
    import threading
    import time

    from memeval.llm import LLMClient, LLMRequest
    from tests.scripted import ScriptedBackend

    release = threading.Event()

    def responder(request):
        if "slow" in request.messages[0][1]:
            release.wait(5)
        return "ok"

    client = LLMClient(ScriptedBackend(responder), None, ModelSettings(max_concurrency=4))
    client.complete(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "warm"),), max_tokens=8,
                               temperature=0.0, template_version="t", role="answer"))
    texts = ["slow", "a", "b", "a", "c"]
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", t),), max_tokens=8, temperature=0.0,
                           template_version="t", role="answer") for t in texts]
    requests.append(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "extract"),), max_tokens=8,
                               temperature=0.0, template_version="t", role="extract"))
    seen = []

    def tick(n):
        seen.append(n)
        if sum(seen) == 4:  # "a" (twice), "b", "c" are in while "slow" still waits
            release.set()

    start = time.perf_counter()
    with client.reporting_answers(tick):
        outcomes = client.complete_many(requests)
    assert all(o.text == "ok" for o in outcomes)
    assert sum(seen) == 5 and seen[-1] == 1, "four reported before the slow one, which came last"
    assert 2 in seen, "the repeated question counts twice"
    assert time.perf_counter() - start < 4, "the slow reply was released by the others' reports"


def test_an_interrupt_stops_a_fan_out_at_once_and_sends_nothing_more():
    """Ctrl-C arrives in the thread that waits for the fan-out: queued calls never start and the client sends
    nothing after it, instead of the worker threads running the rest of the conversation."""
    import time

    import pytest

    from memeval.llm import LLMClient, LLMError, LLMRequest
    from tests.scripted import ScriptedBackend

    def responder(request):
        time.sleep(0.2)
        return "ok"

    backend = ScriptedBackend(responder)
    client = LLMClient(backend, None, ModelSettings(max_concurrency=2))
    client.complete(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "warm"),), max_tokens=8,
                               temperature=0.0, template_version="t", role="answer"))
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"q{i}"),), max_tokens=8, temperature=0.0,
                           template_version="t", role="answer") for i in range(40)]

    def interrupt(n):
        raise KeyboardInterrupt

    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), client.reporting_answers(interrupt):
        client.complete_many(requests)
    assert time.perf_counter() - start < 1.5, "40 calls at 0.2 s on 2 workers would take 4 s"
    time.sleep(0.5)
    sent = len(backend.sent)
    assert sent <= 1 + 4, "only the calls already in flight were sent"
    with pytest.raises(LLMError, match="interrupted"):
        client.complete(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "later"),), max_tokens=8,
                                   temperature=0.0, template_version="t", role="answer"))
    assert len(backend.sent) == sent
