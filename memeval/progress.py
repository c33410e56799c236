"""Progress bars for long runs: shown in terminals and in notebooks opened by a person, left out of executed
reports (`memeval reproduce` sets MEMEVAL_PROGRESS=0 for its kernels, where every redraw would become a line of
the saved output; the runner shows its own per-notebook and per-cell progress).

A bar is a context manager: it is closed when its block ends, also by an exception, so the one-line error the
CLI prints after a failure is the last line on the terminal rather than a bar's redraw.

A bar over model calls also says how fast replies come back, what is in flight and for how long, and whether the
rate limiter is holding calls back (`CallStatus`): a run waiting for a slow server or for its provider's per-minute
budget otherwise looks exactly like one that hangs.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable

STATUS_INTERVAL_S = 1.0  # the bar is redrawn this often while no unit finishes, so its clock and ages move on
RATE_WINDOW_S = 60.0
BUCKET_NAMES = {"requests": "requests", "input": "input tokens", "output": "output tokens"}


def progress_enabled(requested: bool = True) -> bool:
    return requested and os.environ.get("MEMEVAL_PROGRESS", "1") != "0"


class ProgressBar:
    """A tqdm bar, or nothing at all when progress is off or there is nothing to count. With `status`, a daemon
    thread puts its text after the bar and redraws it every `interval_s`, so the bar stays live (its elapsed time and
    the ages in the status move) while no unit finishes. `done`: units finished by an earlier run (a resumed one's),
    shown on the bar from the start but not in its rate, so a rerun with nothing left to do shows no rate rather than
    every earlier row over a millisecond."""

    def __init__(self, total: int, desc: str, unit: str, enabled: bool = True,
                 status: Callable[[], str] | None = None, interval_s: float = STATUS_INTERVAL_S, done: int = 0):
        self._bar = None
        self._ticker: threading.Thread | None = None
        if progress_enabled(enabled) and total > 0:
            from tqdm import tqdm

            from memeval.safe_text import shown

            # a label may name a run directory or a model from a manifest: its control characters are shown, not obeyed
            self._bar = tqdm(total=total, initial=done, desc=shown(desc), unit=unit, mininterval=1.0)
            if status is not None:
                self._status, self._interval_s = status, interval_s
                self._stop = threading.Event()
                self._ticker = threading.Thread(target=self._tick, name="progress-status", daemon=True)
                self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._show()

    def _show(self) -> None:
        text = self._status()
        if self._bar is not None:
            from memeval.safe_text import shown

            self._bar.set_postfix_str(shown(text))  # redraws the bar, also when the text is unchanged

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    @property
    def callback(self):
        """`update`, or None when no bar is drawn (for functions that skip the call when there is none)."""
        return self.update if self._bar is not None else None

    def close(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
            self._show()  # the closed bar keeps the last rate
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(total: int, desc: str, unit: str, enabled: bool = True,
                 status: Callable[[], str] | None = None, done: int = 0) -> ProgressBar:
    return ProgressBar(total, desc, unit, enabled, status, done=done)


class CallStatus:
    """What a bar over a client's calls says after its count: replies a minute over the last `window_s` (cache hits
    are not replies), the retries so far (a timeout or a 429 resent: a run can send steadily and finish nothing),
    what its rate limiter holds back right now, and the calls in flight with the age of the oldest, from its first
    second: "42 req/min, 3 retried, throttled: waiting for input tokens (claude-sonnet-4.x, ~12 s)",
    "1 in flight (smollm2-135m, 12 s)". No rate is shown before a reply has come back, nor a zero one while calls
    are in flight (a slow call is not a hang); '' when nothing has been sent or held back."""

    def __init__(self, client, window_s: float = RATE_WINDOW_S, clock: Callable[[], float] = time.monotonic):
        self.client, self.window_s, self.clock = client, window_s, clock
        self._replies0 = client.stats.replies
        self._samples: deque[tuple[float, int]] = deque([(clock(), self._replies0)])

    def rate(self) -> float | None:
        """Replies a minute over the window (None: not yet a second of samples, or no reply since the bar began)."""
        now, replies = self.clock(), self.client.stats.replies
        self._samples.append((now, replies))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.window_s:
            self._samples.popleft()
        start, first = self._samples[0]
        if replies == self._replies0 or now - start < 1.0:
            return None
        return (replies - first) / (now - start) * 60.0

    def __call__(self) -> str:
        parts = []
        now = self.clock()
        flying = in_flight(self.client, now)
        rate = self.rate()
        if rate is not None and (rate > 0 or not flying):
            parts.append(f"{rate:.0f} req/min" if rate >= 9.95 else f"{rate:.1f} req/min")  # never "10.0"
        if self.client.stats.retries:
            parts.append(f"{self.client.stats.retries:,} retried")
        held = throttled(self.client.limiter)
        if held:
            parts.append(held)
        if flying:
            parts.append(flying)
        return ", ".join(parts)


def in_flight(client, now: float) -> str:
    """'1 in flight (smollm2-135m, 12 s)', '8 in flight (oldest: claude-sonnet-4-6, attempt 2, 35 s)': the calls of
    `client` waiting for their reply and the age of the one waiting longest (attempt shown from the second), else
    ''. A server that holds requests for minutes (a CPU server over a long prompt) looks like a hung run otherwise."""
    lookup = getattr(client, "waiting", None)
    oldest = lookup() if callable(lookup) else None
    if oldest is None:
        return ""
    model, attempt, start, count = oldest
    again = f", attempt {attempt}" if attempt > 1 else ""
    which = "oldest: " if count > 1 else ""
    return f"{count} in flight ({which}{model}{again}, {max(0.0, now - start):.0f} s)"


def throttled(limiter) -> str:
    """'throttled: waiting for input tokens (model, ~12 s)' while `limiter` holds a call back, else ''."""
    waiting = limiter.waiting()
    if waiting is None:
        return ""
    provider, model = waiting.key[0], waiting.key[-1]
    bucket = "tokens" if provider == "openai" and waiting.kind == "input" else BUCKET_NAMES.get(waiting.kind,
                                                                                              waiting.kind)
    left = waiting.until - limiter.clock()
    when = f", ~{max(1, round(left))} s" if left != float("inf") else ""
    return f"throttled: waiting for {bucket} ({model}{when})"


def call_status(client) -> CallStatus | None:
    """The status a bar over `client`'s calls shows (None: no client, nothing to show)."""
    return None if client is None else CallStatus(client)
