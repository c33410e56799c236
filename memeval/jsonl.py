"""Append-only JSONL stores keyed by a stable id: resumable stages survive a kill at any byte."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path


def read_rows(path: str | Path, repair: bool = True) -> list[dict]:
    """Rows of a JSONL file; a torn last line (a killed writer) is dropped and, with repair, truncated away."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    rows, good_end = [], 0
    offset = 0
    for line in data.splitlines(keepends=True):
        offset += len(line)
        text = line.strip()
        if not text:
            good_end = offset
            continue
        if not line.endswith(b"\n"):
            break
        try:
            rows.append(json.loads(text))
        except json.JSONDecodeError:
            break
        good_end = offset
    if repair and good_end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return rows


class JsonlWriter:
    """Appends rows and fsyncs per batch, so a finished row is never lost and never half-written."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")

    def write(self, rows: Iterable[dict]) -> int:
        n = 0
        for row in rows:
            self._fh.write(json.dumps(row, sort_keys=True, default=_default) + "\n")
            n += 1
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return n

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _default(obj):
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
