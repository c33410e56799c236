"""What `memeval data fetch|stats|sample|status` knows of a data set, and the shared ways a fetched file is read and
verified: a benchmark declares its data sets (`Benchmark.fetches`), the shared ones are declared by the command.
Nothing is kept unless the SHA-256 matches and the file checks out."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from memeval.atomic import atomic_open
from memeval.errors import InputError
from memeval.safe_json import read_bytes


@dataclass(frozen=True)
class PinnedFile:
    """One file of a data set as its publisher serves it: where (None: only a local copy is taken), its SHA-256
    (None: no copy could be pinned here, the user passes --sha256 for one they trust) and, for a data set released
    in variants, which variant it is."""

    name: str
    url: str | None
    sha256: str | None
    variant: str | None = None


@dataclass(frozen=True)
class DataSet:
    """Something `memeval data fetch NAME` stores. Hooks are "module:function" strings, loaded only when that
    data set is asked for, so declaring one costs `memeval --help` nothing:
    - fetch(args) -> exit code: fetches and checks (`check`: "module:function(bytes, name)" raising InputError is
      how a fetched file is checked before it is written);
    - stats(args) / sample(args) -> exit code: `data stats --dataset NAME`, `data sample NAME`;
    - status() -> int: prints what is stored and whether it checks out, and returns how many of its files do not
      (`data status` then prints the one line saying which `memeval data fetch NAME` fetches them).
    `companion`: files beside a benchmark's data (an audit of it), listed after the shared data sets. The `*_help`
    texts are this data set's clause in the shared command's help."""

    name: str
    title: str
    licence: str | None  # None: none is stated where the files are published
    files: tuple[PinnedFile, ...]
    fetch: str
    dest: str
    check: str | None = None
    companion: bool = False
    many_sources: bool = False  # --source repeated (folders or files matched by SHA-256)
    fetch_help: str | None = None
    source_help: str | None = None
    variant_help: str | None = None
    stats: str | None = None
    stats_help: str | None = None
    sample: str | None = None
    sample_file: str | None = None
    status: str | None = None
    status_help: str | None = None

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(f.variant for f in self.files if f.variant)

    def pinned(self, name: str) -> str | None:
        """The pinned SHA-256 of the file called `name` (None: not pinned)."""
        return next((f.sha256 for f in self.files if f.name == name), None)


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


def read_source(source: str, timeout: float, kind: str, fallback: str) -> tuple[bytes, str]:
    """The bytes of a URL or local file, no more than the input limit of `kind` (memeval.input_files; a `.zip`
    name: the zip limit), and the file's name (`fallback` for a URL that names none)."""
    import urllib.parse
    import urllib.request

    from memeval.input_files import read_stream

    parsed = urllib.parse.urlparse(source)
    if parsed.scheme in ("http", "https"):
        name = Path(urllib.parse.unquote(parsed.path)).name or fallback
        try:
            with urllib.request.urlopen(source, timeout=timeout) as response:  # noqa: S310 - user-chosen URL
                return read_stream(response, source, "zip" if name.endswith(".zip") else kind, "source"), name
        except OSError as exc:
            raise InputError(source, "source", f"download failed ({exc})") from None
    path = Path(urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else source)  # a local file
    if not path.exists():
        raise InputError(source, "source", "no such file")
    return read_bytes(path, "source", "zip" if path.name.endswith(".zip") else kind), path.name


def verify(data: bytes, expected: str, source: str | Path) -> None:
    """Refuse bytes whose SHA-256 is not `expected`, in one line naming both."""
    got = sha256_bytes(data)
    if got != expected:
        raise InputError(source, "sha256", f"checksum mismatch: expected {expected}, got {got}; nothing written")


def pinned_only(sha256: str | None, files: str, pins: str) -> None:
    """Refuse --sha256 for a data set whose every file is pinned: `files` are pinned in `pins` (a module path), and
    a checksum the user passes could only weaken that."""
    if sha256:
        raise InputError("--sha256", sha256, f"{files} are pinned ({pins}); no other checksum is taken")


def store(data: bytes, target: Path) -> Path:
    """Write checked bytes whole (a reader never sees half a file)."""
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
    data, _ = read_source(source or PUNKT_TAB_URL, timeout, "zip", "punkt_tab.zip")
    verify(data, sha256.lower(), source or PUNKT_TAB_URL)
    from memeval.zip_members import check_zip_members, read_zip_member

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
