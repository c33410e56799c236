"""LoCoMo-Plus's data set for `memeval data fetch|status` (and `memeval locomo-plus fetch`, the same fetch): its
items and judge prompts at the pinned commit, each checked by SHA-256 before anything is written. The repository has
no licence file, so nothing of it is committed here. Import-light: `memeval --help` reads the declaration."""

from __future__ import annotations

import argparse
from pathlib import Path

from memeval.data.fetch import DataSet, PinnedFile, pinned_only, sha256_file, store, verify
from memeval.errors import InputError
from memeval.safe_text import shown

REPO = "xjtuleeyf/Locomo-Plus"
COMMIT = "059f4e3d38f7f1f96765e8e2cb7de3097551bffb"
RAW = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}"
LICENCE = ("no licence file at the pinned commit (all rights reserved by default): fetched by the user from the "
           "benchmark's repository, checked by SHA-256, never committed to memeval")
DATA_ENV = "MEMEVAL_LOCOMO_PLUS_DIR"
ITEMS_FILE = "locomo_plus.json"
PROMPTS_FILE = "prompt.py"
# the name a file is stored under -> its path in the repository at COMMIT
PATHS = {ITEMS_FILE: "data/locomo_plus.json", PROMPTS_FILE: "evaluation_framework/task_eval/prompt.py"}

LOCOMO_PLUS = DataSet(
    name="locomo-plus", title="LoCoMo-Plus", licence=None,  # no licence file: read on use, never committed
    files=(PinnedFile(ITEMS_FILE, f"{RAW}/{PATHS[ITEMS_FILE]}",
                      "af2fc6e5e0e88735e28d8dd1ef474b718861a73beb21779809e3b9e1a4fe3d23"),
           PinnedFile(PROMPTS_FILE, f"{RAW}/{PATHS[PROMPTS_FILE]}",
                      "e43e3ee7115a30938e727fe0eab16694186c08e3f9619f9d8dd5e603d96fc2b1")),
    fetch="memeval.benchmarks.locomo_plus.datasets:fetch_command", dest="data/locomo_plus",
    fetch_help="locomo-plus: LoCoMo-Plus's items and judge prompts at a pinned commit (no licence file), stored "
               "under data/locomo_plus/ (also `memeval locomo-plus fetch`)",
    source_help="locomo-plus: a mirror of its repository at the pinned commit (a URL or a folder in the "
                "repository's layout)",
    status="memeval.benchmarks.locomo_plus.datasets:status",
    status_help="LoCoMo-Plus's (MEMEVAL_LOCOMO_PLUS_DIR, else data/locomo_plus)",
)
DATA_SETS = (LOCOMO_PLUS,)


def data_dir(explicit: str | Path | None = None) -> Path:
    """--data/--dest, then MEMEVAL_LOCOMO_PLUS_DIR, then data/locomo_plus/ of the checkout; a file names its
    directory."""
    from memeval.data.paths import data_folder

    path = data_folder(explicit, DATA_ENV, "locomo_plus")
    return path.parent if path.is_file() else path


def pinned(name: str) -> PinnedFile:
    return next(f for f in LOCOMO_PLUS.files if f.name == name)


def fetch(dest: str | Path | None = None, source: str | None = None, timeout: float = 120.0) -> list[Path]:
    """Download every pinned file into `dest`; all are checked before any is written, so a mismatch leaves nothing
    behind. `source` replaces raw.githubusercontent.com/<repo>/<commit>: a mirror's URL or a local folder."""
    import urllib.request

    base = None
    if source:
        base = source.rstrip("/") if "://" in source else Path(source).resolve().as_uri()
    got: dict[str, bytes] = {}
    for file in LOCOMO_PLUS.files:
        url = f"{base}/{PATHS[file.name]}" if base else file.url
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (https or a given mirror)
                data = response.read()
        except OSError as exc:
            raise InputError(url, "fetch", f"could not download: {exc}") from None
        verify(data, file.sha256, url)
        got[file.name] = data
    target = data_dir(dest)
    target.mkdir(parents=True, exist_ok=True)
    return [store(data, target / name) for name, data in got.items()]


def fetch_command(args: argparse.Namespace) -> int:
    pinned_only(getattr(args, "sha256", None), "LoCoMo-Plus's files", "memeval/benchmarks/locomo_plus/datasets.py")
    for path in fetch(args.dest, getattr(args, "source", None)):
        print(f"wrote {shown(str(path))} (SHA-256 verified)")
    print(f"note: {LICENCE}")
    return 0


def status() -> int:
    """Each pinned file: stored and verified, not fetched, or not the pinned file; how many are not usable."""
    folder = data_dir()
    print(f"locomo-plus ({REPO}@{COMMIT[:12]}, {shown(str(folder))}):")
    missing = 0
    for file in LOCOMO_PLUS.files:
        path = folder / file.name
        if not path.is_file():
            state = "not fetched"
        else:
            state = "stored, SHA-256 verified" if sha256_file(path) == file.sha256 else "not the pinned file"
        missing += state != "stored, SHA-256 verified"
        print(f"  {file.name}: {state} — {PATHS[file.name]}")
    return missing

