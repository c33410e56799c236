"""Progress bars for long runs: shown in terminals and in notebooks opened by a person, left out of executed
reports (`memeval reproduce` sets MEMEVAL_PROGRESS=0 for its kernels, where every redraw would become a line of
the saved output; the runner shows its own per-notebook and per-cell progress).

A bar is a context manager: it is closed when its block ends, also by an exception, so the one-line error the
CLI prints after a failure is the last line on the terminal rather than a bar's redraw.
"""

from __future__ import annotations

import os


def progress_enabled(requested: bool = True) -> bool:
    return requested and os.environ.get("MEMEVAL_PROGRESS", "1") != "0"


class ProgressBar:
    """A tqdm bar, or nothing at all when progress is off or there is nothing to count."""

    def __init__(self, total: int, desc: str, unit: str, enabled: bool = True):
        self._bar = None
        if progress_enabled(enabled) and total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, mininterval=1.0)

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    @property
    def callback(self):
        """`update`, or None when no bar is drawn (for functions that skip the call when there is none)."""
        return self.update if self._bar is not None else None

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(total: int, desc: str, unit: str, enabled: bool = True) -> ProgressBar:
    return ProgressBar(total, desc, unit, enabled)
