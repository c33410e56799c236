"""The client waits on the providers' rate-limit headers instead of collecting 429s: the limiter's arithmetic
with a clock it is handed, then a fan-out through the real SDK against a fake that holds Anthropic's token buckets
(tests/fake_limits.py) in a compressed minute."""

from datetime import datetime, timedelta, timezone

import pytest

from memeval.llm import LLMClient, LLMRequest, ResponseCache
from memeval.llm.client import AnthropicBackend
from memeval.llm.ratelimit import Bucket, RateLimiter, parse_duration, parse_reset
from memeval.llm.settings import ModelSettings
from tests.fake_limits import TierLimits


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def _headers(limit, remaining, reset_in, wall=0.0):
    reset = datetime.fromtimestamp(wall + reset_in, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    return {f"anthropic-ratelimit-{k}-{p}": v for k in ("requests", "input-tokens", "output-tokens")
            for p, v in (("limit", str(limit[k])), ("remaining", str(remaining[k])), ("reset", reset))}


def test_durations_and_resets_read_as_the_providers_write_them():
    assert parse_duration("6m0s") == 360 and parse_duration("1s") == 1 and parse_duration("120ms") == 0.12
    assert parse_duration("1h2m3s") == 3723 and parse_duration("soon") is None
    assert parse_reset("1970-01-01T00:00:30Z", wall_now=10.0) == 20.0
    assert parse_reset("2m", wall_now=0.0) == 120.0


def test_a_bucket_learns_its_rate_from_the_headers_and_waits_exactly():
    bucket = Bucket()
    assert bucket.wait(10) == 0.0, "nothing is known before the first headers"
    bucket.observe(limit=60, remaining=0, reset_s=60.0, now=0.0)  # empty, full again in 60 s: 1 a second
    assert bucket.rate == 1.0 and bucket.wait(1) == 1.0 and bucket.wait(5) == 5.0
    bucket.refill(3.0)
    assert bucket.level == 3.0 and bucket.wait(5) == 2.0
    assert bucket.wait(500) == 57.0, "a request larger than the bucket waits for a full bucket, not forever"


def test_acquire_waits_for_the_scarcest_bucket_and_settle_gives_back_unused_output():
    clock = Clock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, wall=lambda: 0.0)
    key = ("anthropic", "claude-sonnet-4-6")
    first = limiter.acquire(key, 100, 64)
    limits = {"requests": 60, "input-tokens": 6000, "output-tokens": 600}
    limiter.settle(first, _headers(limits, {"requests": 59, "input-tokens": 5900, "output-tokens": 580}, 2.0),
                   input_used=100, output_used=20)
    for _ in range(9):
        limiter.acquire(key, 100, 64)  # output: 580 - 9 × 64 = 4 left
    start = clock.now
    limiter.acquire(key, 100, 64)
    waited = clock.now - start
    assert waited == pytest.approx(6.0, abs=1.01), "60 output tokens short at 10 a second (600 a minute)"
    assert limiter.stats.waits >= 1


def test_a_fan_out_under_tier_limits_finishes_without_a_single_429(fake, tmp_path):
    fake.limits = TierLimits({"requests": 20, "input-tokens": 100_000, "output-tokens": 100_000}, window_s=2.0)
    client = LLMClient(AnthropicBackend(timeout=10), ResponseCache(tmp_path), max_retries=2)
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"question {i}"),), max_tokens=32,
                           temperature=0.0, template_version="t", role="answer") for i in range(45)]
    started = datetime.now()
    outcomes = client.complete_many(requests)
    elapsed = (datetime.now() - started) / timedelta(seconds=1)
    assert all(not isinstance(o, Exception) for o in outcomes)
    assert fake.limits.limited == 0 and client.stats.retries == 0, "the limiter waited instead of being refused"
    assert fake.limits.admitted == 45 and elapsed >= 2.0, "45 requests at 20 per 2 s cannot take under 2.5 s"
    assert client.limiter.stats.limits[("anthropic", "claude-sonnet-4.x")]["requests"] == 20


def test_without_the_limiter_the_same_fan_out_is_refused(fake, tmp_path):
    """The fake's buckets are real: the same fan-out with the limiter blinded meets 429s (so the test above can
    fail)."""
    fake.limits = TierLimits({"requests": 20, "input-tokens": 100_000, "output-tokens": 100_000}, window_s=2.0)
    client = LLMClient(AnthropicBackend(timeout=10), ResponseCache(tmp_path), max_retries=6)
    client.limiter.settle = lambda *a, **k: None  # never reads a header
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"question {i}"),), max_tokens=32,
                           temperature=0.0, template_version="t", role="answer") for i in range(45)]
    client.complete_many(requests)
    assert fake.limits.limited > 0


def test_a_request_larger_than_the_whole_bucket_fails_at_once_with_why():
    from memeval.llm.ratelimit import ExceedsLimit

    clock = Clock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, wall=lambda: 0.0)
    key = ("anthropic", "claude-sonnet-4-6")
    limits = {"requests": 50, "input-tokens": 30_000, "output-tokens": 8_000}
    limiter.settle(limiter.acquire(key, 10, 10), _headers(limits, limits, 0.0), 10, 10)
    with pytest.raises(ExceedsLimit, match="≈31,000 input tokens exceed the account's whole per-minute limit of "
                                           "30,000"):
        limiter.acquire(key, 31_000, 64)
    assert clock.now == 1000.0, "no time is spent waiting for what can never fit"


def test_after_the_first_call_the_fan_out_is_the_concurrency_asked_for(tmp_path):
    """The first call goes alone; every call queued behind it then fans out (not one at a time), up to
    --max-concurrency in flight."""
    import threading
    import time as clock

    from tests.scripted import ScriptedBackend

    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def slow(request):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        clock.sleep(0.3)
        with lock:
            state["now"] -= 1
        return "ok"

    client = LLMClient(ScriptedBackend(slow), None, ModelSettings(max_concurrency=4))
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"q{i}"),), max_tokens=8, temperature=0.0,
                           template_version="t", role="answer") for i in range(13)]
    start = clock.perf_counter()
    assert all(o.text == "ok" for o in client.complete_many(requests))
    elapsed = clock.perf_counter() - start
    assert state["peak"] == 4, state
    assert elapsed < 2.4, f"{elapsed:.2f} s: 1 probe + 12 in waves of 4 is 1.2 s; one at a time would be 3.9 s"


def test_plan_cuts_keeps_every_piece_and_the_last_with_the_question_under_the_limit():
    from memeval.llm.prefix_pieces import plan_cuts

    prefix = "".join(f"line {i:05d} " + "x" * 90 + "\n" for i in range(1240))  # 124,000 chars ≈ 31,000 tokens
    assert plan_cuts(prefix, 31_000, 100, 50_000) == (), "fits whole: no cut"
    cuts = plan_cuts(prefix, 31_000, 100, 30_000)
    assert cuts is not None and len(cuts) == 1 and prefix[cuts[0] - 1] == "\n", "cut at a line break"
    pieces = [prefix[:cuts[0]], prefix[cuts[0]:]]
    assert all(len(p) / 4 + (100 if i else 0) <= 0.8 * 30_000 for i, p in enumerate(pieces))
    assert plan_cuts(prefix, 31_000, 25_000, 30_000) is None, "the question alone does not fit beside a piece"
    assert plan_cuts(prefix * 4, 124_000, 100, 30_000) is None, "more than 4 breakpoints would be needed"


def test_a_prefix_over_the_input_limit_is_written_in_pieces_and_every_question_answered(fake, tmp_path):
    """A conversation of ≈ 31,000 tokens under a 30,000-token input limit (LoCoMo's conv-41 and conv-43 against
    tier 1): without pieces every question of it fails; with them the first request writes half the prefix, the
    question's request reads it and writes the rest, and the others read it all."""
    fake.limits = TierLimits({"requests": 500, "input-tokens": 30_000, "output-tokens": 100_000}, window_s=2.0)
    seen = []
    fake.responder = lambda body: seen.append(body) or "ok"
    client = LLMClient(AnthropicBackend(timeout=10), ResponseCache(tmp_path), max_retries=4)
    client.sleep = lambda s: None
    small = LLMRequest(model="claude-sonnet-4-6", messages=(("user", "hello"),), max_tokens=8, temperature=0.0,
                       template_version="t", role="answer")
    client.complete(small)  # the account's limits are learned from the first reply's headers
    context = "".join(f"session line {i:05d}: " + "y" * 80 + "\n" for i in range(1240))
    requests = [LLMRequest(model="claude-sonnet-4-6", messages=(("user", context + f"Question {i}?"),),
                           max_tokens=8, temperature=0.0, template_version="t", role="answer",
                           cache_prefix_chars=len(context)) for i in range(6)]
    outcomes = client.complete_many(requests)
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    assert fake.limits.limited == 0 and client.stats.retries == 0
    pieces = [e for e in client.stats.log if e["event"] == "cache-piece"]
    assert len(pieces) == 1 and pieces[0]["cache_creation_input_tokens"] > 0
    bodies = seen[1:]
    assert len(bodies) == 1 + 6
    for body in bodies[1:]:
        blocks = body["messages"][0]["content"]
        assert "".join(b["text"] for b in blocks) == requests[0].messages[0][1][:len(context)] + blocks[-1]["text"]
        assert [bool(b.get("cache_control")) for b in blocks] == [True, True, False], "cut the same way each time"
    reads = [r.cache_read_input_tokens for r in outcomes]
    assert reads[0] > 0 and reads[0] < len(context) // 4, "the first question read the first piece only"
    assert all(r == len(context) // 4 for r in reads[1:]), "the others read the whole prefix"
    assert max(fake.limits.uncached_seen) <= 30_000


def test_without_pieces_the_same_prefix_never_fits(fake, tmp_path):
    """The fake refuses what is over the bucket (so the test above can fail): one request carrying it all."""
    from memeval.llm.ratelimit import ExceedsLimit

    fake.limits = TierLimits({"requests": 500, "input-tokens": 30_000, "output-tokens": 100_000}, window_s=2.0)
    client = LLMClient(AnthropicBackend(timeout=10), ResponseCache(tmp_path), max_retries=2)
    client.sleep = lambda s: None
    client.sender._plan_cuts = lambda request, group: None
    client.complete(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "hello"),), max_tokens=8,
                               temperature=0.0, template_version="t", role="answer"))
    context = "z" * 124_000
    request = LLMRequest(model="claude-sonnet-4-6", messages=(("user", context + "Q?"),), max_tokens=8,
                         temperature=0.0, template_version="t", role="answer", cache_prefix_chars=len(context))
    with pytest.raises(ExceedsLimit):
        client.complete(request)


def test_a_model_family_draws_on_one_pool():
    from memeval.llm.ratelimit import limit_pool

    assert limit_pool("anthropic", "claude-opus-4-6") == limit_pool("anthropic", "claude-opus-4-7")
    assert limit_pool("anthropic", "claude-sonnet-4-6") != limit_pool("anthropic", "claude-opus-4-6")
    assert limit_pool("anthropic", "claude-sonnet-5-5") == ("anthropic", "claude-sonnet-5-5")
    assert limit_pool("openai", "claude-opus-4-6") == ("openai", "claude-opus-4-6")


def test_rows_over_a_whole_minute_are_not_told_to_rerun():
    from types import SimpleNamespace

    from memeval.engine.run import too_large_advice

    rows = [SimpleNamespace(error="ExceedsLimit: this request's ≈40,000 input tokens exceed ..."),
            SimpleNamespace(error="LLMError: gave up after 7 attempts"), SimpleNamespace(error=None)]
    advice = too_large_advice(rows)
    assert advice.startswith("1 answer exceeds the account's whole per-minute token limit in one request")
    assert "cannot send them" in advice and advice.endswith("rerun to retry the other 1 failed")
    assert too_large_advice(rows[1:]) is None


def test_rows_whose_extraction_was_cut_are_told_which_cap_to_raise():
    from types import SimpleNamespace

    from memeval.engine.run import cut_extraction_advice

    rows = [SimpleNamespace(error="ingest failed: UnusableReply: cut at max_tokens from m (request-id -, 12 output "
                                  "tokens of 12); not kept, the next run asks again"), SimpleNamespace(error=None)]
    assert "memory_graph:extract_max_tokens=N" in cut_extraction_advice(rows)
    assert cut_extraction_advice([SimpleNamespace(error="ingest failed: CacheMiss: x")]) is None


def test_the_fake_refuses_a_fifth_cache_breakpoint_as_the_service_does(fake):
    """Prompt-caching docs: up to 4 cache breakpoints a request; the client never cuts a prefix into more."""
    import anthropic

    from memeval.llm.prefix_pieces import MAX_BREAKPOINTS

    blocks = [{"type": "text", "text": f"part {i} " * 50, "cache_control": {"type": "ephemeral"}} for i in range(5)]
    sdk = anthropic.Anthropic(max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        sdk.messages.create(model="claude-sonnet-4-6", max_tokens=8,
                            messages=[{"role": "user", "content": blocks}])
    sdk.messages.create(model="claude-sonnet-4-6", max_tokens=8, messages=[{"role": "user", "content": blocks[:4]}])
    assert MAX_BREAKPOINTS == 4
