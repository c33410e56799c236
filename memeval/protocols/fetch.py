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
    paths = (source.path, *source.also_at)
    return [*(directory / p for p in paths), *(directory / name / p for p in paths), directory / Path(source.path).name]


def _download(source: ProtocolSource, timeout: float) -> bytes | OSError:
    import urllib.request

    try:
        with urllib.request.urlopen(source.url, timeout=timeout) as response:  # noqa: S310 - a pinned https URL
            return response.read()
    except OSError as exc:
        return exc


def fetch_protocols(source: str | Path | None = None, dest: str | Path | None = None,
                    timeout: float = 60.0) -> list[Fetched]:
    """Each pinned protocol from `source` (a folder holding the files, or one file, matched by its checksum), or
    downloaded at its pinned commit when `source` is None."""
    from memeval.safe_json import read_bytes

    found: list[tuple[ProtocolSource, bytes, str]] = []
    missing: list[Fetched] = []
    if source is None:
        got = [(s, _download(s, timeout)) for s in SOURCES.values()]
        failed = [(s, r) for s, r in got if isinstance(r, OSError)]
        if failed:
            raise InputError(failed[0][0].url, "source", f"download failed ({failed[0][1]}) for {len(failed)} of "
                             f"{len(got)} files; download each at its pinned commit yourself ("
                             + ", ".join(s.url for s, _ in failed) + ") into one folder and pass --source FOLDER; "
                             "nothing written")
        found = [(s, data, s.url) for s, data in got]
    elif str(source).startswith(("http://", "https://")):
        raise InputError(source, "source", "protocol files are downloaded from their pinned URLs when --source is "
                         "left out; --source takes a local folder or file")
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
            missing = [Fetched(s.name, None, s.origin) for s in SOURCES.values() if s is not match[0]
                       and not store.load_quietly(s.name, dest)]
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
