"""LoCoMo's data sets for `memeval data`: the released conversations (fetch, stats) and the independent audit of
them (fetch, status). Import-light: `memeval --help` reads the declarations; the work is imported when asked for."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES, AUDIT_LICENCE
from memeval.data.fetch import DataSet, PinnedFile, pinned_only, read_source, store, verify
from memeval.errors import InputError
from memeval.safe_text import shown

LOCOMO_URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
# SHA-256 of the public files, by file name.
KNOWN_SHA256 = {
    "locomo10.json": "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    "locomo10.zip": "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5",
}

LOCOMO = DataSet(
    name="locomo", title="LoCoMo", licence=None,  # the repository states none; read on use, never committed
    files=(PinnedFile("locomo10.json", LOCOMO_URL, KNOWN_SHA256["locomo10.json"]),
           PinnedFile("locomo10.zip", None, KNOWN_SHA256["locomo10.zip"])),
    fetch="memeval.benchmarks.locomo.datasets:fetch_command", dest="data/locomo",
    check="memeval.benchmarks.locomo.datasets:check_locomo",
    stats="memeval.benchmarks.locomo.datasets:stats_command", stats_help="locomo",
)
AUDIT = DataSet(
    name="locomo-audit", title="the LoCoMo audit", licence=AUDIT_LICENCE,
    files=tuple(PinnedFile(f.path, f.url, f.sha256) for f in AUDIT_FILES.values()),
    fetch="memeval.benchmarks.locomo.datasets:fetch_audit_command", dest="data/locomo-audit", companion=True,
    many_sources=True,
    fetch_help="locomo-audit: the independent LoCoMo audit's ten files at a pinned commit (CC BY-NC 4.0), stored "
               "byte for byte under data/locomo-audit/",
    source_help="locomo-audit: folders or files, the flag repeated (repository layout, or loose files matched by "
                "SHA-256)",
    status="memeval.benchmarks.locomo.datasets:audit_status",
    status_help="the LoCoMo audit's (MEMEVAL_LOCOMO_AUDIT_DIR, else data/locomo-audit)",
)
DATA_SETS = (LOCOMO, AUDIT)


def check_locomo(data: bytes, name: str) -> None:
    """A fetched file is kept only if the loader reads it whole."""
    from memeval.benchmarks.locomo.data import load_locomo_bytes

    load_locomo_bytes(data, name)


def fetch_locomo(
    dest: str | Path = "data/locomo",
    source: str | None = None,
    sha256: str | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetch `source` (default: the public locomo10.json) into `dest`, verified by SHA-256."""
    from memeval.safe_paths import inside

    source = source or LOCOMO_URL
    data, name = read_source(source, timeout, "locomo", "locomo10.json")
    expected = (sha256 or LOCOMO.pinned(name) or "").lower()
    if not expected:
        raise InputError(source, "sha256", f"no known checksum for {name!r}; pass --sha256 HEX")
    verify(data, expected, source)
    target = inside(dest, name)  # the name comes from the URL: it must stay a name inside --dest
    check_locomo(data, name)
    return store(data, target)


def fetch_command(args: argparse.Namespace) -> int:
    target = fetch_locomo(args.dest or LOCOMO.dest, source=args.source, sha256=args.sha256)
    print(f"wrote {target} (SHA-256 verified)")
    return 0


def fetch_audit_command(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.audit.fetch import fetch_audit
    from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_REPO
    from memeval.benchmarks.locomo.audit.store import audit_dir

    pinned_only(args.sha256, "the audit's files", "memeval/benchmarks/locomo/audit/sources.py")
    result = fetch_audit(args.source, args.dest)
    for file, path, where in result.stored:
        print(f"{file.name}: wrote {shown(path)} (SHA-256 verified; from {shown(where)})")
    have = len(AUDIT_FILES) - len(result.missing)
    print(f"{have} of {len(AUDIT_FILES)} files of {AUDIT_REPO}@{AUDIT_COMMIT[:12]} stored in "
          f"{shown(audit_dir(args.dest))} ({AUDIT_LICENCE}: read on use, never committed)")
    for file in result.missing:
        print(f"still missing: {file.name} ({file.path})", file=sys.stderr)
    return 0


def audit_status() -> int:
    """Each audit file: stored and verified, missing, or refused (one bad file does not hide the others); how many
    are not usable."""
    from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_REPO
    from memeval.benchmarks.locomo.audit.store import audit_dir, audit_path

    print(f"locomo-audit ({AUDIT_REPO}@{AUDIT_COMMIT[:12]}, {shown(audit_dir())}):")
    missing = 0
    for name, file in AUDIT_FILES.items():
        try:
            state = "stored, SHA-256 verified" if audit_path(name) is not None else "not fetched"
        except InputError as exc:
            state = f"refused: {exc.problem}"
        missing += state != "stored, SHA-256 verified"
        print(f"  {name}: {shown(state)} — {file.path}")
    return missing


def stats_command(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.categories import CATEGORY_NAMES
    from memeval.benchmarks.locomo.data import load_locomo_with_report, stats
    from memeval.data.paths import find_locomo

    path = find_locomo(args.path)
    try:
        conversations, report = load_locomo_with_report(path)
    except InputError as exc:
        if args.path is None or exc.field != "sample_id":
            raise
        raise InputError(exc.source, exc.field, f"{exc.problem} (read as LoCoMo; a LongMemEval file takes "
                         "--dataset longmemeval)") from None
    result = stats(conversations)
    if args.json:
        print(json.dumps({**result, "quirks": dict(sorted(report.quirks.items()))}, sort_keys=False))
        return 0
    print(f"source: {shown(path)} ({report.layout})")
    for key in ("conversations", "questions", "turns", "sessions"):
        print(f"{key}: {result[key]}")
    print("by_category:")
    for cat, count in result["by_category"].items():
        print(f"  {cat} {CATEGORY_NAMES[int(cat)]}: {count}")
    if report.quirks:
        print("quirks (repaired or reported, not fatal):")
        for quirk, count in sorted(report.quirks.items()):
            print(f"  {shown(quirk)}: {count}")
    return 0
