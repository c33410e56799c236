"""`memeval data fetch locomo-audit`: the pinned audit files downloaded, or found in local folders and files (the
repository's layout, with or without its `locomo-audit/` folder around it, or loose files matched by SHA-256: the
four fc-baseline files are all `eval_results.json`). Every file found is checked before any is written."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from memeval.benchmarks.locomo.audit import store
from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_FILES, AUDIT_REPO, AuditFile
from memeval.errors import InputError

RAW_BASE = "https://raw.githubusercontent.com"
_BASENAMES = {Path(f.path).name for f in AUDIT_FILES.values()}


@dataclass
class AuditFetch:
    stored: list[tuple[AuditFile, Path, str]] = field(default_factory=list)  # file, where written, where from
    missing: list[AuditFile] = field(default_factory=list)  # neither found now nor stored before


def where_to_get() -> str:
    return (f"github.com/{AUDIT_REPO} at commit {AUDIT_COMMIT} (" + ", ".join(f.path for f in AUDIT_FILES.values())
            + ")")


def _download(file: AuditFile, timeout: float) -> bytes:
    import urllib.request

    url = f"{RAW_BASE}/{AUDIT_REPO}/{AUDIT_COMMIT}/{file.path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - a pinned URL
            return response.read()
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc
        raise InputError(url, "download", f"failed ({' '.join(str(reason).split())}); fetch the files of "
                         f"{where_to_get()} yourself, e.g. `git clone https://github.com/{AUDIT_REPO}`, and pass "
                         "--source FOLDER; nothing written") from None


def _read(path: Path) -> bytes:
    from memeval.safe_json import read_bytes

    return read_bytes(path, "source")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _refuse(path: Path, data: bytes, expected: list[AuditFile]) -> InputError:
    wanted = " or ".join(f"{f.sha256} ({f.origin})" for f in expected)
    return InputError(path, "sha256", f"expected {wanted}, got {_digest(data)}; nothing written")


def _loose(path: Path, found: dict[str, tuple[bytes, str]], strict: bool) -> None:
    """A file matched by its hash; one that matches none is refused when named (or named like an audit file)."""
    from memeval.input_files import limit

    if not strict and (path.suffix != ".json" or path.stat().st_size > limit("file")):
        return
    data = _read(path)
    match = next((f for f in AUDIT_FILES.values() if f.sha256 == _digest(data)), None)
    if match is not None:
        found.setdefault(match.name, (data, str(path)))
    elif path.name in _BASENAMES:
        raise _refuse(path, data, [f for f in AUDIT_FILES.values() if Path(f.path).name == path.name])
    elif strict:
        raise InputError(path, "sha256", f"{_digest(data)}, the hash of none of the {len(AUDIT_FILES)} pinned files "
                         f"of {where_to_get()}")


def _from_folder(folder: Path, found: dict[str, tuple[bytes, str]]) -> None:
    for file in AUDIT_FILES.values():
        for place in (folder / file.path, folder / "locomo-audit" / file.path):
            if place.exists() and not place.is_dir() and file.name not in found:  # a FIFO there is refused
                data = _read(place)
                if _digest(data) != file.sha256:
                    raise _refuse(place, data, [file])
                found[file.name] = (data, str(place))
    for base in (folder, folder / "locomo-audit"):
        if base.is_dir():
            for path in sorted(base.iterdir()):
                if path.is_file():
                    _loose(path, found, strict=False)


def fetch_audit(sources: list[str | Path] | None = None, dest: str | Path | None = None,
                timeout: float = 60.0) -> AuditFetch:
    """The pinned files from `sources` (folders or files), or downloaded at the pinned commit when None; written
    under audit_dir(dest) byte for byte once every one found has its pinned hash."""
    found: dict[str, tuple[bytes, str]] = {}
    if not sources:
        for file in AUDIT_FILES.values():
            data = _download(file, timeout)
            if _digest(data) != file.sha256:
                raise _refuse(Path(file.url), data, [file])
            found[file.name] = (data, file.url)
    else:
        for source in sources:
            if str(source).startswith(("http://", "https://")):
                raise InputError(source, "source", "the audit is downloaded from its pinned URLs when --source is "
                                 "left out; --source takes a local folder or file")
            path = Path(source)
            if path.is_dir():
                _from_folder(path, found)
            elif path.exists():
                _loose(path, found, strict=True)
            else:
                raise InputError(path, "source", "no such file or folder")
        if not found:
            raise InputError(", ".join(str(s) for s in sources), "source", "holds none of the audit's files (looked "
                             f"for the repository layout and for loose files by SHA-256: {where_to_get()})")
    result = AuditFetch()
    for name, (data, where) in found.items():
        file = AUDIT_FILES[name]
        result.stored.append((file, store.write(file, data, dest), where))
    for file in AUDIT_FILES.values():
        if file.name not in found and not _stored_ok(file, dest):
            result.missing.append(file)
    return result


def _stored_ok(file: AuditFile, dest: str | Path | None) -> bool:
    try:
        return store.audit_path(file.name, dest) is not None
    except InputError:
        return False
