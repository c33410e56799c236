"""Zip archives read without trusting them: members are checked by their declared sizes before anything is read
(a zip bomb never reaches memory), and read no further than those sizes. Shared by every loader and fetch that
opens a zip (LoCoMo's release, nltk's Punkt tables)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from memeval.errors import InputError

# LoCoMo's largest file is under 3 MB and JSON deflates about 5:1.
MAX_MEMBER_BYTES = 64 << 20
MAX_ZIP_BYTES = 256 << 20  # all the members one load reads
MAX_RATIO = 100  # uncompressed : compressed, for members over RATIO_FLOOR
RATIO_FLOOR = 1 << 20


def check_zip_members(archive: zipfile.ZipFile, names: list[str], source: str | Path) -> None:
    """Refuse, before any is read, members whose declared size or compression ratio is out of bounds (a zip bomb:
    a small archive that inflates to gigabytes), in one line naming the member."""
    total = 0
    for name in names:
        info = archive.getinfo(name)
        where = f"{source}!{name}"
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(where, "zip member", f"declares {info.file_size:,} bytes uncompressed; at most "
                             f"{MAX_MEMBER_BYTES:,} are read")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise InputError(where, "zip member", f"compresses {info.file_size:,} bytes into "
                             f"{info.compress_size:,} (over {MAX_RATIO}:1): refused as a zip bomb")
        total += info.file_size
        if total > MAX_ZIP_BYTES:
            raise InputError(source, "zip", f"the members read hold over {MAX_ZIP_BYTES:,} bytes uncompressed")


def read_zip_member(archive: zipfile.ZipFile, name: str, source: str | Path) -> bytes:
    """A member checked by `check_zip_members`, read no further than its declared size."""
    where = f"{source}!{name}"
    info = archive.getinfo(name)
    try:
        with archive.open(info) as member:
            data = member.read(info.file_size + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError,
            ValueError) as exc:
        raise InputError(where, "zip member", f"cannot be read ({' '.join(str(exc).split()) or type(exc).__name__})") \
            from None
    if len(data) > info.file_size:
        raise InputError(where, "zip member", "holds more than its declared size")
    return data
