"""Download LoCoMo with a checksum; nothing is kept unless the hash matches and the file parses."""

from __future__ import annotations

import hashlib
import urllib.parse
import urllib.request
from pathlib import Path

from memeval.atomic import atomic_open
from memeval.data.locomo import load_locomo_bytes
from memeval.errors import InputError

LOCOMO_URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
# SHA-256 of the public files, by file name.
KNOWN_SHA256 = {
    "locomo10.json": "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    "locomo10.zip": "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5",
}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def data_hashes(path: str | Path) -> dict[str, str]:
    """SHA-256 of a data file, or of every file in a data directory (for run manifests)."""
    path = Path(path)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path) if path.is_dir() else p.name): sha256_file(p) for p in files}


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_source(source: str, timeout: float) -> tuple[bytes, str]:
    parsed = urllib.parse.urlparse(source)
    if parsed.scheme in ("http", "https", "file"):
        name = Path(urllib.parse.unquote(parsed.path)).name or "locomo10.json"
        try:
            with urllib.request.urlopen(source, timeout=timeout) as response:  # noqa: S310 - user-chosen URL
                return response.read(), name
        except OSError as exc:
            raise InputError(source, "source", f"download failed ({exc})") from None
    path = Path(source)
    if not path.is_file():
        raise InputError(source, "source", "no such file")
    return path.read_bytes(), path.name


def fetch_locomo(
    dest: str | Path = "data/locomo",
    source: str | None = None,
    sha256: str | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetch `source` (default: the public locomo10.json) into `dest`, verified by SHA-256."""
    source = source or LOCOMO_URL
    data, name = _read_source(source, timeout)
    expected = (sha256 or KNOWN_SHA256.get(name) or "").lower()
    if not expected:
        raise InputError(source, "sha256", f"no known checksum for {name!r}; pass --sha256 HEX")
    got = sha256_bytes(data)
    if got != expected:
        raise InputError(source, "sha256", f"checksum mismatch: expected {expected}, got {got}; nothing written")
    load_locomo_bytes(data, name)
    target = Path(dest) / name
    with atomic_open(target, "wb") as fh:
        fh.write(data)
    return target
