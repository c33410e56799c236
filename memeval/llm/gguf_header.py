"""The key-value metadata at the head of a GGUF model file, read without loading the model (or llama.cpp): what
`serve-local` needs before it starts a server — the architecture, its trained context, its KV-cache shape, the
chat template. Arrays (the vocabulary) are skipped; only scalars and strings are kept.

Layout (GGUF v2/v3, ggml's docs/gguf.md): magic `GGUF`, uint32 version, uint64 tensor count, uint64 key count,
then per key a string name, a uint32 value type and the value; strings are a uint64 length and UTF-8 bytes, all
little-endian.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from memeval.errors import InputError

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_KEYS = 1 << 16


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path):
        self.fh, self.path = fh, path

    def take(self, size: int) -> bytes:
        data = self.fh.read(size)
        if len(data) != size:
            raise InputError(self.path, "GGUF header", "the file ends inside its metadata")
        return data

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.unpack("<Q")).decode("utf-8", errors="replace")

    def value(self, kind: int):
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            inner, count = self.unpack("<I"), self.unpack("<Q")
            if inner == _STRING:
                for _ in range(count):
                    self.fh.seek(self.unpack("<Q"), 1)
            elif inner in _SCALARS:
                self.fh.seek(count * struct.calcsize(_SCALARS[inner]), 1)
            else:
                for _ in range(count):
                    self.value(inner)
            return None
        raise InputError(self.path, "GGUF header", f"unknown value type {kind}")


def read_metadata(path: str | Path) -> dict:
    """Every scalar and string key of the file's metadata (arrays omitted)."""
    path = Path(path)
    with open(path, "rb") as fh:
        reader = _Reader(fh, path)
        if reader.take(4) != b"GGUF":
            raise InputError(path, "GGUF header", "not a GGUF file (no GGUF magic at its start)")
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise InputError(path, "GGUF header", f"GGUF version {version}; versions 2 and 3 are read")
        reader.unpack("<Q")
        keys = reader.unpack("<Q")
        if keys > _MAX_KEYS:
            raise InputError(path, "GGUF header", f"claims {keys:,} metadata keys")
        metadata = {}
        for _ in range(keys):
            name = reader.string()
            value = reader.value(reader.unpack("<I"))
            if value is not None:
                metadata[name] = value
    return metadata
