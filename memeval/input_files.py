"""Every input file is opened one way: a regular file once symlinks are followed (a FIFO waits for a writer forever,
/dev/zero never ends), no larger than its kind's limit, and read no further than that limit + 1 byte whatever the
file's size says (it may grow while read). One limit per kind of input, each far above the largest real file of
its kind, each raised by an environment variable, MEMEVAL_MAX_<KIND>_MIB (docs/layout.md, "Files and flags").
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from memeval.errors import InputError

MIB = 1 << 20
# kind: (limit in MiB, what it is)
LIMITS = {
    "locomo": (256, "LoCoMo JSON"),  # locomo10.json: 2.7 MiB
    "longmemeval": (4096, "LongMemEval JSON"),  # longmemeval_s: 265 MiB; M runs to gigabytes
    "zip": (256, "zip archive"),  # its members keep their own caps (data/locomo.py)
    "store": (256, "memory store"),
    "package": (256, "MEMAUDIT package"),
    "predictions": (1024, "predictions file"),
    "answers": (1024, "answers file to import"),
    "results": (4096, "results JSONL"),  # answers.jsonl, judgments.jsonl, sweep rows: a run's own files
    "file": (64, "other input (manifests, price tables, verdict CSVs, protocol sources)"),
}


def env_name(kind: str) -> str:
    return f"MEMEVAL_MAX_{kind.upper()}_MIB"


def limit(kind: str) -> int:
    """The byte limit of `kind`: its default, or MEMEVAL_MAX_<KIND>_MIB when set (a positive whole number)."""
    name = env_name(kind)
    text = os.environ.get(name)
    if text is None or text == "":
        return LIMITS[kind][0] * MIB
    try:
        mib = int(text)
    except ValueError:
        mib = 0
    if mib < 1:
        raise InputError(name, "environment", f"expected a whole number of MiB >= 1, got {text[:40]!r}")
    return mib * MIB


def _refuse_size(path: str, kind: str, what: str, size: str) -> InputError:
    cap = limit(kind)
    return InputError(path, what, f"{size} bytes, over the {cap // MIB:,} MiB limit for a {LIMITS[kind][1]} "
                      f"(raise it with {env_name(kind)})")


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_input(path: str | os.PathLike, kind: str, what: str | None = None) -> BinaryIO:
    """A binary handle on the regular file at `path` within `kind`'s limit. Missing or unreadable: the OSError as
    the system gives it; not a regular file, or too large: an InputError naming the file and `what`."""
    what = what or kind
    source = os.fspath(path)
    mode = os.stat(source).st_mode  # before opening: opening a FIFO would wait, a device may act on open
    if not stat.S_ISREG(mode):
        raise InputError(source, what, f"{_kind_of(mode)}, not a regular file: memeval reads only regular files")
    fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)  # the file opened, whatever replaced the name since
        if not stat.S_ISREG(info.st_mode):
            raise InputError(source, what, f"{_kind_of(info.st_mode)}, not a regular file: memeval reads only "
                             "regular files")
        if info.st_size > limit(kind):
            raise _refuse_size(source, kind, what, f"{info.st_size:,}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(path: str | os.PathLike, kind: str, what: str | None = None) -> bytes:
    """The whole file (see `open_input`), read with a bounded read."""
    cap = limit(kind)
    with open_input(path, kind, what) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:  # it grew past the limit while read
        raise _refuse_size(os.fspath(path), kind, what or kind, f"over {cap:,}")
    return data


def read_stream(stream: BinaryIO, source: str, kind: str, what: str | None = None) -> bytes:
    """A download or other stream, read no further than `kind`'s limit + 1 byte."""
    cap = limit(kind)
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise _refuse_size(source, kind, what or kind, f"over {cap:,}")
    return data
