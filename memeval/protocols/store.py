"""Fetched protocols on disk: data/protocols/<name>.json, the templates with the file, commit and hash they came
from. A stored file whose templates do not hash to the pinned value (edited by hand, even with its recorded hash
recomputed) is refused, so a "published" label stands only on the verified text."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from memeval.errors import InputError
from memeval.protocols.extract import EXTRACTORS, ExtractionError
from memeval.protocols.sources import SOURCES, ProtocolSource

PROTOCOLS_ENV = "MEMEVAL_PROTOCOLS_DIR"
PARAPHRASED = "paraphrased prompts — not the published protocol"
_VERIFIED: dict[tuple, "StoredProtocol"] = {}  # (path, mtime, size) → the protocol that file was checked to hold


def templates_sha256(templates: dict[str, str]) -> str:
    blob = json.dumps(templates, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class StoredProtocol(BaseModel):
    """One protocol's templates and where they came from (the file under data/protocols/)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    repo: str
    commit: str
    path: str
    source_sha256: str
    templates: dict[str, str]
    templates_sha256: str

    @property
    def origin(self) -> str:
        return f"{self.repo}@{self.commit[:12]}:{self.path}"

    @property
    def version(self) -> str:
        """What a judge or reader records as its prompt version: the templates' hash, short."""
        return "published:" + self.templates_sha256[:16]


def protocols_dir(explicit: str | Path | None = None) -> Path:
    """--dest, then MEMEVAL_PROTOCOLS_DIR, then data/protocols/ of the checkout."""
    from memeval.data.paths import data_folder

    return data_folder(explicit, PROTOCOLS_ENV, "protocols")


def build(source: ProtocolSource, data: bytes, where: str) -> StoredProtocol:
    """The stored record of a source file's bytes: the checksum first, then the templates parsed out of it."""
    got = hashlib.sha256(data).hexdigest()
    if got != source.sha256:
        raise InputError(where, "sha256", f"checksum mismatch for {source.origin}: expected {source.sha256}, got "
                         f"{got}; nothing written")
    try:
        text = data.decode("utf-8")
        templates = EXTRACTORS[source.name](text, source.path)
    except (UnicodeDecodeError, ExtractionError) as exc:
        raise InputError(where, "templates", str(exc)) from None
    digest = templates_sha256(templates)
    if source.templates_sha256 and digest != source.templates_sha256:  # the extractor read the file otherwise
        raise InputError(where, "templates", f"extracted templates hash to {digest}, not the pinned "
                         f"{source.templates_sha256}; nothing written")
    return StoredProtocol(name=source.name, repo=source.repo, commit=source.commit, path=source.path,
                          source_sha256=got, templates=templates, templates_sha256=digest)


def write(protocol: StoredProtocol, dest: str | Path | None = None) -> Path:
    from memeval.atomic import write_text_atomic

    target = protocols_dir(dest) / f"{protocol.name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(target, protocol.model_dump_json(indent=2) + "\n")


def load(name: str, directory: str | Path | None = None) -> StoredProtocol | None:
    """The fetched protocol, or None when it was never fetched (the caller then uses its own wording and says
    so). A file that is there but does not check out is an error, never a silent fallback."""
    path = protocols_dir(directory) / f"{name}.json"
    if not path.is_file():
        return None
    stat = path.stat()
    seen = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if seen in _VERIFIED:  # readers ask once per question; the file is read and checked once per version of it
        return _VERIFIED[seen]
    from pydantic import ValidationError

    from memeval.safe_json import read_text

    try:
        protocol = StoredProtocol.model_validate_json(read_text(path, "protocol"))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(path, ".".join(str(p) for p in first["loc"]) or "protocol", first["msg"]) from None
    pinned = SOURCES.get(name)
    if pinned is None or (protocol.repo, protocol.commit, protocol.path, protocol.source_sha256) != \
            (pinned.repo, pinned.commit, pinned.path, pinned.sha256):
        raise InputError(path, "source", f"not the pinned file {pinned.origin if pinned else name}; refetch with "
                         "`memeval data fetch protocols`")
    digest = templates_sha256(protocol.templates)
    if digest != protocol.templates_sha256 or (pinned.templates_sha256 and digest != pinned.templates_sha256):
        raise InputError(path, "templates", "changed since they were fetched (hash differs); refetch with "
                         "`memeval data fetch protocols`")
    _VERIFIED[seen] = protocol
    return protocol


def load_quietly(name: str, directory: str | Path | None = None) -> StoredProtocol | None:
    """`load`, with a stored file that does not check out counted as absent (for listing what is missing)."""
    try:
        return load(name, directory)
    except InputError:
        return None
