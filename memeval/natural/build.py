"""What every `memeval natural build` shares, whichever benchmark's source builds the packages (a benchmark's
`natural_source`): one writer per directory, the identity a rebuild must match, the manifest's provenance, and
the files written last and whole.

Everything is computed before anything is written; the manifest carries no timestamp so that two builds of
the same data with the same code are identical byte for byte.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from memeval.atomic import write_text_atomic
from memeval.engine.directory import provenance as provenance  # the manifest's code and packages, re-exported
from memeval.safe_paths import check_package_id, inside


def dump(obj) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def one_writer(build):
    """A build holds its directory's lock from before `--restart` moves anything until its last file is written,
    as a run does (`engine.directory.run_directory`): a second build, or a `--restart` while this one computes, is
    refused in one line, never moved or interleaved with it; a refused build leaves nothing."""
    @functools.wraps(build)
    def locked(out, *args, restart: bool = False, **kwargs):
        from memeval.engine.directory import run_directory

        with run_directory(out, "memeval natural build", restart=restart) as held:
            return build(held.path, *args, **kwargs)
    return locked


def write_build(out: str | Path, files: dict[str, str], prefixes: tuple[str, ...], union: bool = True) -> None:
    """Write a build's files (names relative to `out`, checked before any is written), removing the package files of
    an earlier build of the same prefixes that this one no longer holds. `union`: the build has a union/ folder."""
    targets = {inside(out, name): text for name, text in files.items()}  # names from data: checked before writing
    out = Path(out)
    (out / "union" if union else out).mkdir(parents=True, exist_ok=True)
    folders = (out, out / "union") if union else (out,)
    for stale in [p for prefix in prefixes for folder in folders for p in folder.glob(f"{prefix}*.json")]:
        if str(stale.relative_to(out)) not in files:
            stale.unlink()
    for target, text in targets.items():
        write_text_atomic(target, text)


def settle_output(out: str | Path, fixed: dict) -> dict:
    """A build directory holds one build: the same settings rebuild it (byte for byte), other settings are refused
    in one line before anything is computed (`--restart` has moved the old build aside by then: `one_writer`).
    Returns the identity recorded in the manifest."""
    from memeval.engine.directory import settle
    from memeval.rundir import Identity, read_manifest

    identity = Identity("natural build", fixed=fixed)
    out = Path(out)
    previous = read_manifest(out) or {}
    legacy = None
    if previous and "identity" not in previous:  # built before identities were recorded
        legacy = Identity("natural build", fixed={k: previous[k] for k in ("cost_rule", "target", "seed",
                                                                          "rule_version") if k in previous})
    settle(out, identity, legacy)
    return identity.as_dict()


def load_packages(directory: str | Path, union: bool = False) -> list:
    """The base natural packages of a build directory (or, with union=True, its union packages), in name order."""
    from memeval.errors import InputError
    from memeval.memaudit.package import load_package
    from memeval.natural.source import package_prefixes

    root = Path(directory) / ("union" if union else "")
    paths = sorted([p for prefix in package_prefixes() for p in root.glob(f"{prefix}*.json")])
    if not paths:
        raise InputError(root, "packages", "no natural package files here; run `memeval natural build` first")
    packages = [load_package(p) for p in paths]
    for path, package in zip(paths, packages, strict=True):  # ids name the files union packages are written to
        check_package_id(package.package_id, path)
    return packages
