"""Anthropic's rate limits as the fakes hold them, from platform.claude.com/docs/en/api/rate-limits: requests,
input tokens and output tokens per minute, each a token bucket "continuously replenished up to your maximum
limit"; output tokens estimated from `max_tokens` when a request starts and corrected to the tokens used when it
ends; `cache_read_input_tokens` not counted toward input tokens (cache writes are); a request over a limit gets
429 `rate_limit_error` with `retry-after` (seconds to wait); every reply carries
`anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}` (reset: RFC 3339, when the
bucket is full again). TIER_1 is 50 requests, 30,000 input and 8,000 output tokens a minute: the page's tier-1
row for Claude Opus 4.x and Sonnet 4 (read through its mirror anthropic.mintlify.app/en/api/rate-limits, which
also says "The final adjustment counts input_tokens and cache_creation_input_tokens towards ITPM rate limits,
while cache_read_input_tokens are not"; rate-limits.apis.io lists the same row for Sonnet 4.x and 50,000 / 10,000
for Haiku 4.5). `window_s` may compress the minute for a benchmark; the arithmetic is the same.
"""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime, timezone

TIER_1 = {"requests": 50, "input-tokens": 30_000, "output-tokens": 8_000}


class TierLimits:
    def __init__(self, limits: dict | None = None, window_s: float = 60.0, clock=time.monotonic, wall=time.time):
        self.caps = dict(limits or TIER_1)
        self.window_s, self.clock, self.wall = window_s, clock, wall
        self.level = {k: float(v) for k, v in self.caps.items()}
        self.stamp = clock()
        self.lock = threading.Lock()
        self.admitted = 0
        self.limited = 0  # 429s sent
        self.uncached_seen: list[int] = []  # input tokens each admitted request counted

    def _refill(self) -> float:
        now = self.clock()
        for k, cap in self.caps.items():
            self.level[k] = min(cap, self.level[k] + (now - self.stamp) * cap / self.window_s)
        self.stamp = now
        return now

    def headers(self) -> dict[str, str]:
        out = {}
        for k, cap in self.caps.items():
            full_in = (cap - self.level[k]) * self.window_s / cap
            reset = datetime.fromtimestamp(self.wall() + full_in, tz=timezone.utc).isoformat().replace("+00:00", "Z")
            out.update({f"anthropic-ratelimit-{k}-limit": str(cap),
                        f"anthropic-ratelimit-{k}-remaining": str(max(0, math.floor(self.level[k]))),
                        f"anthropic-ratelimit-{k}-reset": reset})
        return out

    def admit(self, input_tokens: int, max_tokens: int) -> tuple[bool, dict, int]:
        """(admitted, headers, retry-after seconds): a request takes 1 request, its uncached input tokens and its
        `max_tokens` of output up front, or is refused whole."""
        need = {"requests": 1, "input-tokens": input_tokens, "output-tokens": max_tokens}
        with self.lock:
            self._refill()
            short = {k: need[k] - self.level[k] for k in need if need[k] > self.level[k]}
            if short:
                self.limited += 1
                wait = max(v * self.window_s / self.caps[k] for k, v in short.items())
                return False, self.headers(), max(1, math.ceil(wait))
            for k, v in need.items():
                self.level[k] -= v
            self.admitted += 1
            self.uncached_seen.append(input_tokens)
            return True, self.headers(), 0

    def correct(self, reserved_output: int, used_output: int) -> None:
        with self.lock:
            self._refill()
            self.level["output-tokens"] = min(self.caps["output-tokens"],
                                              self.level["output-tokens"] + reserved_output - used_output)
