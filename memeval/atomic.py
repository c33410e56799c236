"""One way to write a file so that a reader never sees it half-written: write beside it, then rename."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", newline: str | None = None) -> Iterator[IO]:
    """Yields a handle on `path.tmp`; on success the file replaces `path`, on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    encoding = None if "b" in mode else "utf-8"
    try:
        with open(tmp, mode, encoding=encoding, newline=newline) as fh:
            yield fh
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None and exc.errno is not None:  # ENOSPC from write or close: name the file
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> Path:
    with atomic_open(path) as fh:
        fh.write(text)
    return Path(path)


def write_json_atomic(path: str | Path, obj: object) -> Path:
    return write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_jsonl_atomic(path: str | Path, rows) -> Path:
    """A whole JSONL file at once (corpora, package sets); append-only stages use `jsonl.JsonlWriter`."""
    return write_text_atomic(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows))
