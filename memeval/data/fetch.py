"""Download LoCoMo with a checksum; nothing is kept unless the hash matches and the file parses."""

from __future__ import annotations

import hashlib
import urllib.parse
import urllib.request
from pathlib import Path

from memeval.atomic import atomic_open
from memeval.benchmarks.locomo.data import load_locomo_bytes
from memeval.errors import InputError
from memeval.safe_json import load_json_bytes, read_bytes
from memeval.safe_paths import inside

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


def _read_source(source: str, timeout: float, kind: str = "locomo") -> tuple[bytes, str]:
    """The bytes of a URL or local file, no more than the limit of `kind` (a `.zip` name: the zip limit)."""
    from memeval.input_files import read_stream

    parsed = urllib.parse.urlparse(source)
    if parsed.scheme in ("http", "https"):
        name = Path(urllib.parse.unquote(parsed.path)).name or "locomo10.json"
        try:
            with urllib.request.urlopen(source, timeout=timeout) as response:  # noqa: S310 - user-chosen URL
                return read_stream(response, source, "zip" if name.endswith(".zip") else kind, "source"), name
        except OSError as exc:
            raise InputError(source, "source", f"download failed ({exc})") from None
    path = Path(urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else source)  # a local file
    if not path.exists():
        raise InputError(source, "source", "no such file")
    return read_bytes(path, "source", "zip" if path.name.endswith(".zip") else kind), path.name


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
    target = inside(dest, name)  # the name comes from the URL: it must stay a name inside --dest
    load_locomo_bytes(data, name)
    with atomic_open(target, "wb") as fh:
        fh.write(data)
    return target


# The cleaned LongMemEval release, pinned to one dataset revision (the pin several public projects use); only S has
# a known hash, so M and oracle need --sha256 from whoever vouches for their copy.
LONGMEMEVAL_REPO = "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned"
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"
LONGMEMEVAL_FILES = {"s": "longmemeval_s_cleaned.json", "m": "longmemeval_m_cleaned.json",
                     "oracle": "longmemeval_oracle.json"}
LONGMEMEVAL_SHA256 = {"longmemeval_s_cleaned.json": "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"}


def longmemeval_url(variant: str) -> str:
    return f"{LONGMEMEVAL_REPO}/resolve/{LONGMEMEVAL_REVISION}/{LONGMEMEVAL_FILES[variant]}"


def fetch_longmemeval(variant: str, dest: str | Path = "data/longmemeval", source: str | None = None,
                      sha256: str | None = None, timeout: float = 300.0) -> Path:
    """Fetch one LongMemEval variant (default: the pinned revision's URL) into `dest` as its release file name,
    verified by SHA-256 and parsed before anything is written."""
    from memeval.benchmarks.longmemeval.data import parse_instance

    if variant not in LONGMEMEVAL_FILES:
        raise InputError("--variant", variant, f"expected one of {', '.join(LONGMEMEVAL_FILES)}")
    name = LONGMEMEVAL_FILES[variant]
    expected = (sha256 or LONGMEMEVAL_SHA256.get(name) or "").lower()
    if not expected:
        raise InputError(name, "sha256", "no pinned checksum for this variant; pass --sha256 HEX (of a copy you "
                         "trust)")
    data, _ = _read_source(source or longmemeval_url(variant), timeout, "longmemeval")
    got = sha256_bytes(data)
    if got != expected:
        raise InputError(source or longmemeval_url(variant), "sha256",
                         f"checksum mismatch: expected {expected}, got {got}; nothing written")
    doc = load_json_bytes(data, source or name, "json")
    if not isinstance(doc, list) or not doc:
        raise InputError(source or name, "top level", "expected a list of instances")
    from collections import Counter

    seen: set[str] = set()
    for i, row in enumerate(doc):
        qid = parse_instance(row, f"{name}[{i}]", Counter()).question_id
        if qid in seen:  # the loader refuses a repeated id: a file it cannot load is not kept
            raise InputError(source or name, "question_id", f"repeated: {qid}")
        seen.add(qid)
    target = Path(dest) / name
    with atomic_open(target, "wb") as fh:
        fh.write(data)
    return target


# NLTK's English Punkt tables (punkt_tab, the pickle-free format nltk 3.9+ reads), for Mem0-exact BLEU-1. nltk_data
# publishes no hash this project could pin from here, so the checksum is the user's (of a copy they trust).
PUNKT_TAB_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/tokenizers/punkt_tab.zip"
PUNKT_ENGLISH_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")
NLTK_DATA_DIR = "data/nltk"


def fetch_punkt_tables(dest: str | Path = NLTK_DATA_DIR, source: str | None = None, sha256: str | None = None,
                       timeout: float = 120.0) -> Path:
    """Unpack the English Punkt tables of punkt_tab.zip into `dest`/tokenizers/punkt_tab/english/ after the
    SHA-256 matches and nltk has loaded them; nothing is written otherwise."""
    import io
    import shutil
    import tempfile
    import zipfile

    if not sha256:
        raise InputError("punkt_tab.zip", "sha256", "no pinned checksum is known here; pass --sha256 HEX (of a copy "
                         "you trust, e.g. from nltk_data's index)")
    data, _ = _read_source(source or PUNKT_TAB_URL, timeout)
    got = sha256_bytes(data)
    if got != sha256.lower():
        raise InputError(source or PUNKT_TAB_URL, "sha256", f"checksum mismatch: expected {sha256.lower()}, got "
                         f"{got}; nothing written")
    from memeval.benchmarks.locomo.data import check_zip_members, read_zip_member

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(source or "punkt_tab.zip", "zip", "not a zip archive") from None
    names = set(archive.namelist())
    missing = [f for f in PUNKT_ENGLISH_FILES if f"punkt_tab/english/{f}" not in names]
    if missing:
        raise InputError(source or "punkt_tab.zip", "punkt_tab/english", f"missing {', '.join(missing)}")
    members = [f"punkt_tab/english/{name}" for name in PUNKT_ENGLISH_FILES]
    check_zip_members(archive, members, source or "punkt_tab.zip")  # before anything is read or written
    target = Path(dest) / "tokenizers" / "punkt_tab" / "english"
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".english-", dir=target.parent))
    try:
        for name in PUNKT_ENGLISH_FILES:
            (staging / name).write_bytes(read_zip_member(archive, f"punkt_tab/english/{name}",
                                                         source or "punkt_tab.zip"))
        from nltk.tabdata import PunktDecoder

        decoder = PunktDecoder()  # the readers nltk's load_punkt_params uses, on the staged files
        readers = {"collocations.tab": decoder.tab2tups, "sent_starters.txt": decoder.txt2set,
                   "abbrev_types.txt": decoder.txt2set, "ortho_context.tab": decoder.tab2intdict}
        for name, read in readers.items():
            with open(staging / name, encoding="utf-8") as fh:
                read(fh)
    except Exception as exc:  # noqa: BLE001 — any failure to load means the tables are unusable
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(source or "punkt_tab.zip", "punkt_tab/english", f"nltk cannot load the tables ({exc})") \
            from None
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target
