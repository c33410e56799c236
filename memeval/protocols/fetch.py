"""`memeval data fetch protocols`: the pinned source files read (downloaded, or from --source), checked, parsed
and stored. Every file is checked before any is written, so a mismatch leaves data/protocols/ as it was."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from memeval.errors import InputError
from memeval.protocols import store
from memeval.protocols.sources import SOURCES, ProtocolSource


@dataclass(frozen=True)
class Fetched:
    name: str
    path: Path | None  # the stored file; None when the source file was not found
    origin: str
    looked_in: tuple[str, ...] = ()


def candidates(source: ProtocolSource, directory: Path) -> list[Path]:
    """Where a copy of the file may sit in a folder the user names: the repository layout (with or without the
    repository's folder around it), or the file alone."""
    name = source.repo.split("/")[1]
    return [directory / source.path, directory / name / source.path, directory / Path(source.path).name]


def _download(source: ProtocolSource, timeout: float) -> bytes:
    import urllib.request

    try:
        with urllib.request.urlopen(source.url, timeout=timeout) as response:  # noqa: S310 - a pinned https URL
            return response.read()
    except OSError as exc:
        raise InputError(source.url, "source", f"download failed ({exc}); download the file at commit "
                         f"{source.commit} yourself and pass it with --source FILE_OR_DIR") from None


def fetch_protocols(source: str | Path | None = None, dest: str | Path | None = None,
                    timeout: float = 60.0) -> list[Fetched]:
    """Each pinned protocol from `source` (a folder holding the files, or one file, matched by its checksum), or
    downloaded at its pinned commit when `source` is None."""
    from memeval.safe_json import read_bytes

    found: list[tuple[ProtocolSource, bytes, str]] = []
    missing: list[Fetched] = []
    if source is None:
        found = [(s, _download(s, timeout), s.url) for s in SOURCES.values()]
    else:
        path = Path(source)
        if path.is_file():
            data = read_bytes(path, "source")
            digest = hashlib.sha256(data).hexdigest()
            match = [s for s in SOURCES.values() if s.sha256 == digest] or \
                [s for s in SOURCES.values() if Path(s.path).name == path.name]
            if not match:
                raise InputError(path, "source", "is none of the pinned files (" + ", ".join(
                    f"{s.origin}" for s in SOURCES.values()) + ")")
            found = [(match[0], data, str(path))]
        elif path.is_dir():
            for s in SOURCES.values():
                places = candidates(s, path)
                hit = next((p for p in places if p.is_file()), None)
                if hit is None:
                    missing.append(Fetched(s.name, None, s.origin, tuple(str(p) for p in places)))
                else:
                    found.append((s, read_bytes(hit, "source"), str(hit)))
        else:
            raise InputError(path, "source", "no such file or folder")
    built = [store.build(s, data, where) for s, data, where in found]
    written = [Fetched(p.name, store.write(p, dest), p.origin) for p in built]
    return written + missing
