"""The limit stage: how many calls are on the wire at once (--max-concurrency, and no more than a user's server
works on: GET /props total_slots), the providers' rate-limit buckets (memeval/llm/ratelimit.py), the calls in flight
that a progress bar reports, and the worker pool an interrupt does not wait for. Identical requests are sent once and
a cached prefix is written by one request before the rest read it (`waves`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from memeval.llm.errors import LLMError
from memeval.llm.ratelimit import RateLimiter
from memeval.llm.types import LLMRequest


class Limits:
    def __init__(self, max_concurrency: int, fit, lock, stats, local):
        self.semaphore = threading.BoundedSemaphore(max_concurrency)
        self.max_concurrency = max_concurrency
        self.limiter = RateLimiter()  # waits on the providers' own rate-limit headers (memeval/llm/ratelimit.py)
        self.fit = fit  # a user's server: its slots (memeval/llm/fit.py)
        self._lock = lock
        self.stats = stats
        self._local = local  # per thread: the attempt a call is on (set by the send stage's retries)
        self.cancel = threading.Event()  # set by an interrupt: no new attempt starts, no retry waits on
        self._in_flight: dict[object, tuple[str, int, float]] = {}  # call → (model, attempt, monotonic start)
        self._slot_gates: dict[str, threading.BoundedSemaphore] = {}  # endpoint → its server's slots

    @contextmanager
    def server_slot(self, request: LLMRequest):
        """No more requests on the wire to a user's server than it works on at once (GET /props total_slots):
        past that they would only queue inside the server, each reported in flight for the whole queue's time.
        An interrupt ends the wait for a slot."""
        slots = self.fit.slots(request)
        if slots is None or slots >= self.max_concurrency:
            yield
            return
        with self._lock:
            gate = self._slot_gates.get(request.endpoint)
            if gate is None:
                gate = self._slot_gates[request.endpoint] = threading.BoundedSemaphore(slots)
                self.fit.say(f"the server at {request.endpoint} works on {slots} request{'s' if slots > 1 else ''} "
                             f"at a time (GET /props total_slots): at most {slots} sent at once, not "
                             f"--max-concurrency {self.max_concurrency}")
        while not gate.acquire(timeout=0.2):
            if self.cancel.is_set():
                raise LLMError("interrupted: not sent")
        try:
            yield
        finally:
            gate.release()

    @contextmanager
    def sending(self, model: str):
        """One request on the wire: counted as sent, in flight (`waiting`) until it ends, counted as a reply when
        one came back."""
        call = object()
        with self._lock:
            self.stats.requests_sent += 1
            self._in_flight[call] = (model, getattr(self._local, "attempt", 1), time.monotonic())
        try:
            yield
        finally:
            with self._lock:
                del self._in_flight[call]
        with self._lock:
            self.stats.replies += 1

    def waiting(self) -> tuple[str, int, float, int] | None:
        """The call waiting longest for its reply: (model, attempt, monotonic start, calls in flight), or None; a
        progress bar says what a silent run waits for (memeval/progress.py)."""
        with self._lock:
            if not self._in_flight:
                return None
            model, attempt, start = min(self._in_flight.values(), key=lambda v: v[2])
            return model, attempt, start, len(self._in_flight)

    @contextmanager
    def pool(self, max_workers: int):
        """Worker threads for this client's calls that Ctrl-C (or SIGTERM, memeval/cli.py) does not wait for:
        nothing queued starts, calls waiting to retry give up, no new attempt is sent, and replies still in flight
        are dropped with the process instead of holding it for their read timeouts (minutes on a CPU server)."""
        pool = ThreadPoolExecutor(max_workers=max_workers)
        try:
            yield pool
        except (KeyboardInterrupt, SystemExit):
            self.cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
        pool.shutdown()


def waves(requests: Sequence[LLMRequest], keys: Sequence[str]) -> tuple[list[int], list[int], list[int]]:
    """(owner, first, rest): the index answering each request (identical requests, by resolved key, are sent once,
    so what is sent does not depend on thread timing), then the requests sent first, one alone per cached prefix
    (it writes the prompt cache), and the rest, which fan out and read it."""
    index_of: dict[str, int] = {}
    owner = [index_of.setdefault(key, i) for i, key in enumerate(keys)]
    seen: set = set()
    first, rest = [], []
    for i, r in enumerate(requests):
        if owner[i] != i:
            continue
        group = (r.model, r.role, r.cache_prefix) if r.cache_prefix_chars else None
        if group is not None and group not in seen:
            seen.add(group)
            first.append(i)
        else:
            rest.append(i)
    return owner, first, rest
