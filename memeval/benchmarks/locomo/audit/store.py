"""The fetched audit on disk: audit_dir()/<repository path>, each file byte for byte as the pinned commit holds
it. Every read checks the file's SHA-256 (once per version of the file), so a file edited after the fetch is
refused, never silently used."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES, AuditFile
from memeval.errors import InputError

AUDIT_ENV = "MEMEVAL_LOCOMO_AUDIT_DIR"
FETCH_COMMAND = "memeval data fetch locomo-audit"
_VERIFIED: set[tuple[str, int, int]] = set()  # (path, mtime, size) of files whose hash was checked


def audit_dir(explicit: str | Path | None = None) -> Path:
    """--dest, then MEMEVAL_LOCOMO_AUDIT_DIR, then data/locomo-audit/ of the checkout (git-ignored: data/*)."""
    from memeval.data.paths import data_folder

    return data_folder(explicit, AUDIT_ENV, "locomo-audit")


def _file(name: str) -> AuditFile:
    try:
        return AUDIT_FILES[name]
    except KeyError:
        raise InputError("locomo-audit", "file", f"unknown audit file {name!r} (known: "
                         + ", ".join(AUDIT_FILES) + ")") from None


def check(file: AuditFile, data: bytes, where: str | Path) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != file.sha256:
        raise InputError(where, "sha256", f"not {file.origin}: expected {file.sha256}, got {got}; "
                         f"refetch with `{FETCH_COMMAND}`")


def _stored(file: AuditFile, directory: str | Path | None) -> Path | None:
    path = audit_dir(directory) / file.path
    return path if path.is_file() else None


def read_audit_bytes(name: str, directory: str | Path | None = None) -> bytes | None:
    """The stored file's bytes, checked against the pinned hash; None when it was never fetched."""
    from memeval.safe_json import read_bytes

    file = _file(name)
    path = _stored(file, directory)
    if path is None:
        return None
    data = read_bytes(path, "locomo-audit")
    check(file, data, path)
    return data


def audit_path(name: str, directory: str | Path | None = None) -> Path | None:
    """The stored file, SHA-256 verified; None when not fetched; InputError when it is there with another hash."""
    file = _file(name)
    path = _stored(file, directory)
    if path is None:
        return None
    stat = path.stat()
    seen = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if seen not in _VERIFIED:
        read_audit_bytes(name, directory)
        _VERIFIED.add(seen)
    return path


def load_audit_json(name: str, directory: str | Path | None = None) -> Any | None:
    """The stored file parsed (the bytes hashed are the bytes parsed); None when it was never fetched."""
    from memeval.safe_json import load_json_bytes

    data = read_audit_bytes(name, directory)
    return None if data is None else load_json_bytes(data, audit_dir(directory) / AUDIT_FILES[name].path)


def write(file: AuditFile, data: bytes, dest: str | Path | None = None) -> Path:
    from memeval.atomic import atomic_open

    target = audit_dir(dest) / file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(target, "wb") as fh:
        fh.write(data)
    return target
