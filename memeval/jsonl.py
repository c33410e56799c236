"""Append-only JSONL stores keyed by a stable id: resumable stages survive a kill at any byte."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path


def read_rows(path: str | Path, repair: bool = False) -> list[dict]:
    """Rows of a JSONL file. A reader never writes: a torn last line (a writer killed mid-line, or one still
    writing) is left out in memory only, and a bad line anywhere else is refused as FILE:LINE. Only the writer
    that owns the file (`JsonlWriter`, under its directory's lock) cuts a torn tail away; `repair` is accepted
    for older callers and ignored."""
    path = Path(path)
    if not path.exists():
        return []
    from memeval.input_files import read_input

    rows, _ = _parse(path, read_input(path, "results"))
    return rows


def _parse(path: Path, data: bytes) -> tuple[list[dict], int]:
    """(rows, length of the whole-line prefix): everything up to the last newline must parse."""
    from memeval.errors import InputError

    end = data.rfind(b"\n") + 1  # a final line without its newline is torn: not yet (or never) written whole
    rows = []
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        text = line.strip()
        if not text:
            continue
        try:
            row = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            raise InputError(f"{path}:{number}", "line", f"not valid JSON ({reason}); a corrupt line inside the "
                             "file is never dropped silently: fix or remove it, or move the file aside") from None
        if not isinstance(row, dict):
            raise InputError(f"{path}:{number}", "line", f"expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows, end


def repair_tail(path: str | Path) -> int:
    """Cut a torn last line away (the owner's writer does this when it opens the file); returns the bytes cut."""
    path = Path(path)
    if not path.exists():
        return 0
    from memeval.input_files import read_input

    data = read_input(path, "results")
    _, end = _parse(path, data)
    if end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
    return len(data) - end


def encode_row(row: dict) -> str:
    """One row's line (without its newline): keys sorted, numpy scalars as plain numbers."""
    return json.dumps(row, sort_keys=True, default=_default)


class JsonlWriter:
    """Appends rows and fsyncs per batch, so a finished row is never lost and never half-written."""

    def __init__(self, path: str | Path):
        from memeval.errors import InputError
        from memeval.output_paths import resolve

        self.path = Path(path)
        if resolve(self.path).how != "file":  # the output rule; a resumable file cannot be a stream
            raise InputError(self.path, "results file", "not a regular file: a run appends and resumes only a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(self.path)  # the writer owns the file: a torn tail from a killed run goes before appending
        self._fh = open(self.path, "a", encoding="utf-8")

    def write(self, rows: Iterable[dict]) -> int:
        return self.write_lines(encode_row(row) for row in rows)

    def write_lines(self, lines: Iterable[str]) -> int:
        """Rows already encoded by `encode_row` (a worker process encodes its own)."""
        n = 0
        with _naming(self.path):  # a full disk or a lost mount says which file (a torn tail is cut on resume)
            for line in lines:
                self._fh.write(line + "\n")
                n += 1
            self._fh.flush()
            os.fsync(self._fh.fileno())
        return n

    def close(self) -> None:
        with _naming(self.path):
            self._fh.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def _naming(path: Path):
    """An OSError without a file name (ENOSPC from write, flush or fsync) gets `path`, so the one line the CLI
    prints names the file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _default(obj):
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
