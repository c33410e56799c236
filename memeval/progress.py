"""Progress bars for long runs: shown in terminals and in notebooks opened by a person, left out of executed
reports (`memeval reproduce` sets MEMEVAL_PROGRESS=0 for its kernels, where every redraw would become a line of
the saved output; the runner shows its own per-notebook and per-cell progress)."""

from __future__ import annotations

import os


def progress_enabled(requested: bool = True) -> bool:
    return requested and os.environ.get("MEMEVAL_PROGRESS", "1") != "0"


def progress_bar(total: int, desc: str, unit: str, enabled: bool = True):
    """A tqdm bar, or None when disabled or there is nothing to count."""
    if not progress_enabled(enabled) or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, mininterval=1.0)
