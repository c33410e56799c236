"""A test's own deadline: code that used to hang (or loop) raises instead, so the hang is a failure, not a stuck run."""

from __future__ import annotations

import signal
from collections.abc import Callable
from contextlib import contextmanager


@contextmanager
def deadline(seconds: int, error: Callable[[str], BaseException] = TimeoutError):
    """Raises `error("still running after N s")` in the main thread once `seconds` have passed inside the block."""
    def expired(signum, frame):
        raise error(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
