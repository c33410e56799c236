"""What writing "a file" at a path means, decided once for every file the project writes (`atomic.atomic_open`).

A regular file, or nothing, is replaced whole (temp + rename). A FIFO or character device is a stream: opened for
writing like the shell's `>`, never replaced, so its reader gets the bytes and the node stays. `-`, `/dev/stdout`
and `/dev/stderr` are the process's own streams; `/dev/null` discards. A symlink is followed (hop by hop, the same
rule applied to its target), never replaced. Nothing else under /dev, /proc or /sys is written, by anyone: as root a
rename there replaces a device node. A directory, socket or block device at the path is refused.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import IO

from memeval.errors import InputError

SYSTEM_ROOTS = ("/dev", "/proc", "/sys")
STANDARD_STREAMS = {"-": "stdout", "/dev/stdout": "stdout", "/dev/stderr": "stderr"}
SYSTEM_STREAMS = ("/dev/null",)
MAX_LINKS = 40  # the kernel's own limit on symlinks followed in one lookup (MAXSYMLINKS)


@dataclass(frozen=True)
class Target:
    """`how` is "file" (replace atomically at `path`), "stream" (open `path` for writing) or "stdout"/"stderr"."""

    how: str
    path: str


def file_type(path: str) -> str:
    """"missing", "file", "directory", "fifo", "device" (character), or what else is there."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode):
        return "device"
    return "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "special file"


def _under_system_root(path: str) -> str | None:
    return next((root for root in SYSTEM_ROOTS if path == root or path.startswith(root + "/")), None)


def resolve(path: str | os.PathLike) -> Target:
    """Where and how `path` is written; an InputError naming the path for what is never written."""
    given = os.fspath(path)
    if given in STANDARD_STREAMS:
        return Target(STANDARD_STREAMS[given], given)
    current = os.path.abspath(given)
    for _ in range(MAX_LINKS):
        if current in STANDARD_STREAMS:
            return Target(STANDARD_STREAMS[current], current)
        if current in SYSTEM_STREAMS:
            return Target("stream", current)
        if root := _under_system_root(current):
            via = "" if current == os.path.abspath(given) else f" (it leads to {current})"
            raise InputError(given, "output", f"under {root}{via}, where memeval writes nothing; - or /dev/stdout "
                             "writes to standard output")
        parent = os.path.realpath(os.path.dirname(current))
        here = os.path.join(parent, os.path.basename(current))
        if here != current:  # a directory on the way was a link: check the place it leads to
            current = here
            continue
        if not os.path.islink(current):
            break
        current = os.path.normpath(os.path.join(parent, os.readlink(current)))
    else:
        raise InputError(given, "output", f"more than {MAX_LINKS} symbolic links to follow")
    kind = file_type(current)
    if kind in ("missing", "file"):
        return Target("file", current)
    if kind in ("fifo", "device"):
        return Target("stream", current)
    article = "an" if kind[0] in "aeiou" else "a"
    raise InputError(given, "output", f"is {article} {kind}" + (f" ({current})" if current != given else "") +
                     ": name a file to write")


def open_stream(target: Target, binary: bool) -> IO:
    """The handle a stream target is written through (the process's own for stdout/stderr: not to be closed)."""
    if target.how in ("stdout", "stderr"):
        handle = sys.stdout if target.how == "stdout" else sys.stderr
        if binary:
            handle.flush()
            return handle.buffer
        return handle
    fd = os.open(target.path, os.O_WRONLY | os.O_NOCTTY)  # no O_CREAT, O_TRUNC: the node is written, not made
    return os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8")


def notices(path: str | os.PathLike | None) -> IO:
    """Where a command says what it wrote: stderr when the output itself goes to stdout."""
    if path is not None and STANDARD_STREAMS.get(os.fspath(path)) == "stdout":
        return sys.stderr
    return sys.stdout
