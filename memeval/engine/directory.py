"""The life of a results directory, one for every command that writes one (a QA run, a MEMAUDIT sweep, a LoCoMo
import, a natural build): take its lock before anything is read (a live writer is refused in one line),
`--restart` moves the old contents aside under that lock, the identity is checked ("A here, B asked", a legacy
manifest's identity too) and, for a claimed run, recorded with `complete: false` before the first row, so a run
stopped by an error, Ctrl-C or SIGTERM stays incomplete; the work runs; the manifest is written last, with its
status; the lock is released however the work ended, and directories made only to hold it are removed.

So `--restart`, locks, identities, refusals and exit codes behave the same whatever the command; what differs is
only the work and the manifest's own fields. A folder memeval did not write (a user's notes) is refused before any
of it, `--restart` too: nothing is written beside the user's files, and no folder memeval did not make is moved.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memeval import rundir
from memeval.atomic import write_json_atomic
from memeval.errors import InputError
from memeval.manifest import base_manifest, git_sha, package_versions
from memeval.rundir import LOCK_NAME, MANIFEST, Claim, DirectoryLock, Identity, RunDir, read_manifest

__all__ = ["Directory", "OWN", "provenance", "run_directory", "settle"]

OWN = (MANIFEST, LOCK_NAME)  # what makes a folder memeval's: a claim writes the manifest before any row
UNOWNED = (".gitkeep", ".DS_Store")  # what an otherwise empty folder holds (reports/.gitkeep): nobody's results


@dataclass
class Directory:
    """A directory held by this process: where it is, what the claim found (None when the command records no
    identity up front) and the manifest fields every write of it shares."""

    path: Path
    lock: DirectoryLock
    claim: Claim | None = None
    kind: str | None = None  # the manifest's `command`
    command_line: Sequence[str] | None = None
    config: Mapping | None = None

    @property
    def files(self) -> RunDir:
        return RunDir(self.path)

    def previous_manifest(self) -> dict | None:
        """The manifest the directory held before this run claimed it (read under the lock)."""
        if self.claim is not None:
            return self.claim.previous
        return read_manifest(self.path)

    def new_manifest(self, **fields) -> dict:
        """A manifest's common head (invocation, time, code, platform, packages) with `fields` after it."""
        return base_manifest(**fields)

    def finish(self, missing: Mapping, command_line: Sequence[str] | None = None, config: Mapping | None = None,
               **fields) -> dict:
        """Write the claimed run's manifest, last: its command, command line and configuration (as claimed unless
        given), the run's own `fields`, then the identity it holds, `complete` and what is `missing` (empty:
        complete)."""
        if self.claim is None:
            raise ValueError("finish() is for a claimed run; write_manifest() writes any other")
        line = self.command_line if command_line is None else command_line
        doc = base_manifest(command=self.kind, command_line=line, config=self.config if config is None else config,
                            **fields, identity=self.claim.identity.as_dict(), complete=not missing, missing=missing)
        return self.write_manifest(doc)

    def write_manifest(self, doc: dict) -> dict:
        write_json_atomic(self.files.manifest, doc)
        return doc


def unclaim_if_empty(out: Path) -> None:
    """Undo a fresh claim refused before it wrote anything (an output cap the model cannot write, a thinking type it
    rejects: found when the first request is resolved, after the claim): no manifest and no empty files are left, so
    the corrected command can take the same --out. A directory holding any byte of work is kept: the run resumes
    from it."""
    files = [p for p in out.rglob("*") if p.is_file() and p.name not in (MANIFEST, LOCK_NAME)]
    if any(p.stat().st_size for p in files):
        return
    for path in files:
        path.unlink()
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            return
    (out / MANIFEST).unlink(missing_ok=True)


@contextmanager
def run_directory(out: str | Path, lock_command: str, identity: Identity | None = None, *, kind: str | None = None,
                  command_line: Sequence[str] | None = None, config: Mapping | None = None, restart: bool = False,
                  legacy: Identity | None = None, own: Sequence[str] = OWN) -> Iterator[Directory]:
    """Hold `out` for one command (`lock_command`: how the lock file names its owner). With `identity`, the
    directory is claimed (`rundir.claim`): refused in one line unless it holds the same run or `restart`, then
    its manifest records the identity and `complete: false` (`kind`, `command_line`, `config`: that manifest's
    fields, which `Directory.finish` writes again at the end). Without one, the lock and `restart` only: the work
    checks what the directory holds itself (`settle`) once it knows its identity. `own`: the names (globs) that
    make a folder this command's; any other non-empty folder is refused first (`refuse_foreign`)."""
    out = Path(out)
    refuse_foreign(out, own, restart)
    made = [p for p in (out, *out.parents) if not p.exists()]  # deepest first: what taking the lock creates
    lock = DirectoryLock(out, lock_command)
    held = None
    try:
        held = Directory(out, lock, kind=kind, command_line=command_line, config=config)
        if identity is not None:
            head = base_manifest(command=kind, command_line=command_line, config=config)
            held.claim = rundir.claim(out, identity, head, restart=restart, legacy=legacy, lock=lock)
        else:
            lock.acquire()
            if restart and (moved := rundir.move_aside(out, lock)) is not None:
                print(f"memeval: note: --restart moved the previous contents of {out} to {moved}", file=sys.stderr)
        yield held
    except InputError:  # a refusal, not an interruption: an interrupted run stays, incomplete, for `memeval ls`
        if held is not None and held.claim is not None and held.claim.previous is None:
            unclaim_if_empty(out)
        raise
    finally:
        lock.release()
        for place in made:  # made only to hold the lock: a refused or failed command leaves nothing
            if not place.exists():  # a refused claim removed it already
                continue
            try:
                place.rmdir()
            except OSError:
                break


def refuse_foreign(out: Path, own: Sequence[str] = OWN, restart: bool = False) -> None:
    """`out` is new, empty, or a folder a memeval command of this sort wrote (it holds one of `own`); anything else
    is refused in one line naming what it holds, before the lock is taken, so nothing is written beside the user's
    files and `--restart` never moves a folder memeval did not make."""
    if not out.is_dir():
        if out.exists():
            raise InputError(out, "--out", "is a file, not a folder: choose a new or empty folder")
        return
    names = sorted(p.name for p in out.iterdir() if p.name not in UNOWNED)
    if not names or any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in own):
        return
    shown = ", ".join(names) if len(names) <= 3 else ", ".join(names[:2]) + f", {len(names) - 2} others"
    raise InputError(out, "--out", f"not a memeval results directory (holds {shown}): choose a new or empty folder"
                     + ("; --restart moves only a folder memeval wrote" if restart else ""))


def settle(out: str | Path, identity: Identity, legacy: Identity | None = None) -> Claim:
    """Check a held directory against `identity` once the work knows it (a build hashes its data first): another
    identity is refused in one line naming each differing field, nothing written."""
    return rundir.check(Path(out), identity, legacy)


def provenance() -> dict:
    """The code and packages a command ran with, for a manifest that carries no timestamp (two identical builds
    are identical byte for byte)."""
    return {"git_sha": git_sha(), "package_versions": package_versions()}
