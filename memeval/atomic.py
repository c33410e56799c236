"""One way to write a file so that a reader never sees it half-written: write beside it, then rename. What is at
the path decides how (`output_paths`): a FIFO, character device or `-` is written as a stream, once the content is
whole; a symlink's target is written; /dev, /proc, /sys and directories are refused."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from memeval.output_paths import Target, open_stream, resolve


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", newline: str | None = None) -> Iterator[IO]:
    """Yields a handle; on success the content replaces the file at `path` (or is written to the stream there), on
    error nothing is written."""
    target = resolve(path)
    if target.how != "file":
        yield from _stream(target, mode, newline)
        return
    path = Path(target.path)
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


def _stream(target: Target, mode: str, newline: str | None) -> Iterator[IO]:
    """The content gathered in memory and written only when whole, so an error leaves the stream untouched."""
    binary = "b" in mode
    buffer: IO = io.BytesIO() if binary else io.StringIO(newline=newline)
    yield buffer
    handle = open_stream(target, binary)
    try:
        handle.write(buffer.getvalue())
        handle.flush()
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, target.path) from exc
        raise
    finally:
        if target.how == "stream":
            handle.close()


def write_text_atomic(path: str | Path, text: str) -> Path:
    with atomic_open(path) as fh:
        fh.write(text)
    return Path(path)


def write_json_atomic(path: str | Path, obj: object) -> Path:
    return write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_jsonl_atomic(path: str | Path, rows) -> Path:
    """A whole JSONL file at once (corpora, package sets); append-only stages use `jsonl.JsonlWriter`."""
    return write_text_atomic(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows))
