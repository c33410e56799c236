"""A client-side rate limiter that reads the provider's own rate-limit headers, so a long run waits for capacity
instead of collecting 429s.

Anthropic limits requests, input tokens and output tokens per minute with token buckets that refill continuously
(platform.claude.com/docs/en/api/rate-limits: "capacity is continuously replenished up to your maximum limit";
headers `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`, reset in RFC 3339;
output tokens are estimated from `max_tokens` when a request starts and corrected when it ends; cache reads do not
count toward input tokens). OpenAI sends `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, reset as a
duration ("6m0s", "1s", "120ms"). Each bucket's refill rate is learned from the headers — (limit − remaining) over
the time to reset — so the limiter follows the server's clock, whatever the window.

Until a provider's headers arrive nothing is known and nothing waits (a run's first call goes alone anyway).
Pure bookkeeping with an injectable clock and sleep; the client calls `acquire` before each attempt and `settle`
after it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from memeval.llm.errors import LLMError

KINDS = ("requests", "input", "output")
ANTHROPIC_HEADERS = {"requests": "requests", "input": "input-tokens", "output": "output-tokens"}
OPENAI_HEADERS = {"requests": "requests", "input": "tokens"}  # OpenAI counts prompt and completion in one budget
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$")


def parse_duration(text: str) -> float | None:
    """OpenAI's reset durations: "6m0s", "1s", "120ms", "1h2m3s" → seconds; None when unreadable."""
    match = _DURATION.match(text.strip())
    if not match or not any(match.groups()):
        return None
    h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
    return h * 3600 + m * 60 + s + ms / 1000


def parse_reset(text: str, wall_now: float) -> float | None:
    """Seconds until a reset given as RFC 3339 (Anthropic) or as a duration (OpenAI); None when unreadable."""
    text = text.strip()
    try:
        return max(0.0, datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - wall_now)
    except ValueError:
        return parse_duration(text)


# Anthropic applies one limit to a model family's combined traffic: "Opus rate limit is a total limit that applies
# to combined traffic across" Opus 4.x, Sonnet 4.x likewise (rate-limits page, as mirrored at
# anthropic.mintlify.app/en/api/rate-limits and listed by rate-limits.apis.io); their headers report the pool.
_POOLS = (("claude-opus-4", "claude-opus-4.x"), ("claude-sonnet-4", "claude-sonnet-4.x"))


def limit_pool(provider: str, model: str) -> tuple[str, str]:
    """The bucket key a request draws from: its provider and model, or the family whose limit it shares."""
    if provider == "anthropic":
        for prefix, pool in _POOLS:
            if model == prefix or model.startswith(prefix + "-"):
                return provider, pool
    return provider, model


class ExceedsLimit(LLMError):
    """One request larger than a whole per-minute bucket: no wait admits it, so the row fails now with why."""


@dataclass
class Bucket:
    """One limit: `capacity` per window, `level` available now, refilled at `rate` per second (learned)."""

    capacity: float | None = None
    level: float = 0.0
    rate: float | None = None
    stamp: float = 0.0

    def refill(self, now: float) -> None:
        if self.capacity is not None and self.rate:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, amount: float) -> float:
        """Seconds until `amount` is available (0 when unknown or available now)."""
        if self.capacity is None:
            return 0.0
        need = min(amount, self.capacity)  # a request larger than the whole bucket waits for a full one
        if self.level >= need:
            return 0.0
        return float("inf") if not self.rate else (need - self.level) / self.rate

    def observe(self, limit: float, remaining: float, reset_s: float | None, now: float) -> None:
        self.refill(now)
        first = self.capacity is None
        self.capacity = limit
        if reset_s and reset_s > 0 and limit > remaining:
            self.rate = (limit - remaining) / reset_s
        elif self.rate is None:
            self.rate = limit / 60.0  # every provider here states its limits per minute
        # the server has not yet seen what is in flight from here, so its `remaining` is an upper bound
        self.level = remaining if first else min(self.level, remaining)


@dataclass
class Reservation:
    key: tuple
    amounts: dict[str, float]


@dataclass
class LimiterStats:
    waits: int = 0
    waited_s: float = 0.0
    observed: int = 0
    limits: dict = field(default_factory=dict)  # key → {kind: capacity}


@dataclass(frozen=True)
class Waiting:
    """A call held back by the limiter, for a progress display to say so: which bucket of which key is empty and
    when (on the limiter's clock) it should hold enough."""

    key: tuple
    kind: str
    until: float


class RateLimiter:
    """Buckets per (provider, model). `acquire` blocks until the request fits every known bucket and takes its
    share (output reserved at `max_tokens`); `settle` returns what was over-reserved and reads the headers."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 wall: Callable[[], float] = time.time, max_wait_s: float = 1.0):
        self.clock, self.sleep, self.wall, self.max_wait_s = clock, sleep, wall, max_wait_s
        self.buckets: dict[tuple, dict[str, Bucket]] = {}
        self.stats = LimiterStats()
        self._lock = threading.Lock()
        self._waiting: dict[int, Waiting] = {}  # thread → what it waits for

    def capacity(self, key: tuple, kind: str) -> float | None:
        """The per-minute limit of one bucket as the provider's headers gave it (None until they have)."""
        with self._lock:
            bucket = self.buckets.get(key, {}).get(kind)
            return None if bucket is None else bucket.capacity

    def _buckets(self, key: tuple) -> dict[str, Bucket]:
        return self.buckets.setdefault(key, {kind: Bucket() for kind in KINDS})

    def acquire(self, key: tuple, input_tokens: int, output_tokens: int) -> Reservation:
        amounts = {"requests": 1.0, "input": float(input_tokens), "output": float(output_tokens)}
        if key[0] == "openai":  # one token budget for prompt and completion
            amounts = {"requests": 1.0, "input": float(input_tokens + output_tokens), "output": 0.0}
        with self._lock:
            buckets = self._buckets(key)
            over = [(k, a, buckets[k].capacity) for k, a in amounts.items()
                    if buckets[k].capacity is not None and a > buckets[k].capacity]
        if over:
            kind, amount, capacity = over[0]
            raise ExceedsLimit(f"this request's ≈{amount:,.0f} {kind} tokens exceed the account's whole per-minute "
                               f"limit of {capacity:,.0f} for {key[1]}: it can never be sent at this tier ("
                               + ("a smaller output cap would fit it)" if kind == "output" else
                                  "a higher tier or a shorter context would fit it)"))
        while True:
            with self._lock:
                now = self.clock()
                buckets = self._buckets(key)
                for b in buckets.values():
                    b.refill(now)
                wait = max(buckets[k].wait(a) for k, a in amounts.items() if a > 0)
                if wait <= 0:
                    for k, a in amounts.items():
                        buckets[k].level -= a
                    self._waiting.pop(threading.get_ident(), None)
                    return Reservation(key, amounts)
                self.stats.waits += 1
                empty = max((buckets[k].wait(a), k) for k, a in amounts.items() if a > 0)[1]
                self._waiting[threading.get_ident()] = Waiting(key, empty, now + wait)
            pause = min(wait, self.max_wait_s)
            self.stats.waited_s += pause
            self.sleep(pause)

    def waiting(self) -> Waiting | None:
        """The longest wait of the calls held back right now (None: none is)."""
        with self._lock:
            return max(self._waiting.values(), key=lambda w: w.until, default=None)

    def settle(self, reservation: Reservation, headers: Mapping[str, str] | None, input_used: int | None = None,
               output_used: int | None = None) -> None:
        """After an attempt: give back what was reserved and not used (a failed attempt used nothing it reserved
        for output), then take the server's view from its headers."""
        with self._lock:
            buckets = self._buckets(reservation.key)
            if output_used is not None and reservation.amounts["output"]:
                buckets["output"].level += reservation.amounts["output"] - output_used
            if input_used is not None:
                reserved = reservation.amounts["input"]
                used = input_used + (output_used or 0) if reservation.key[0] == "openai" else input_used
                buckets["input"].level += reserved - used
            if headers:
                self._observe(reservation.key, headers)

    def _observe(self, key: tuple, headers: Mapping[str, str]) -> None:
        lower = {k.lower(): v for k, v in headers.items()}
        now, wall = self.clock(), self.wall()
        names = OPENAI_HEADERS if key[0] == "openai" else ANTHROPIC_HEADERS
        seen = {}
        for kind, name in names.items():
            if key[0] == "openai":
                limit, remaining, reset = (lower.get(f"x-ratelimit-{part}-{name}") for part in
                                           ("limit", "remaining", "reset"))
            else:
                limit, remaining, reset = (lower.get(f"anthropic-ratelimit-{name}-{part}") for part in
                                           ("limit", "remaining", "reset"))
            try:
                limit_f, remaining_f = float(limit), float(remaining)
            except (TypeError, ValueError):
                continue
            self._buckets(key)[kind].observe(limit_f, remaining_f, parse_reset(reset, wall) if reset else None, now)
            seen[kind] = limit_f
        if seen:
            self.stats.observed += 1
            self.stats.limits[key] = seen
