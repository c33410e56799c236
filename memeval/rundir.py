"""A results directory's identity, claim, lock and status: what makes two runs the same run.

Every setting that changes a stored row is part of a directory's identity, recorded in its manifest (under
`identity`) before the first row is written. A rerun with the same identity resumes; one that only adds to an
additive field (another system, another judge protocol) extends the run and says so; any other difference is
refused with one line naming each field and its two values — unless `restart`, which moves the old directory
aside to `DIR.replaced-<UTC time>` (never deletes it) and starts afresh.

A directory being written holds a lock file (`.memeval.lock`: the owner's pid and command) and, for the whole
run, an OS lock on it (`fcntl.flock`), taken before the directory is checked; a second writer is refused with one
line naming the owner, and a lock no process holds (its owner is gone, whoever has its pid now) is taken over by
the same atomic OS call and said so. `restart` moves a directory only while holding its lock, so a live run is
refused, never moved. `status` reads the manifest and the lock: complete, incomplete or running.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from memeval.errors import InputError

LOCK_NAME = ".memeval.lock"
REPLACED = ".replaced-"


@dataclass(frozen=True)
class Identity:
    """`fixed`: settings that must be equal for rows to belong together. `additive`: named collections
    (name → settings) that a rerun may extend but not change, e.g. systems by label, judges by protocol."""

    kind: str
    fixed: dict = field(default_factory=dict)
    additive: dict[str, dict] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "fixed": _plain(self.fixed), "additive": _plain(self.additive)}

    @classmethod
    def from_dict(cls, doc: Mapping) -> Identity:
        return cls(doc.get("kind", ""), dict(doc.get("fixed") or {}), {k: dict(v or {}) for k, v in
                                                                        (doc.get("additive") or {}).items()})

    def merged(self, other: Identity) -> Identity:
        """The directory after `other` ran in it: `other`'s fixed settings (equal to these wherever both have
        one; an identity recorded before a field existed lacks it) and both invocations' additive entries."""
        additive = {name: {**self.additive.get(name, {}), **other.additive.get(name, {})}
                    for name in sorted({*self.additive, *other.additive})}
        return Identity(other.kind, {**self.fixed, **other.fixed}, additive)

    def digest(self) -> str:
        """A short hash of the whole identity: names a notebook's configuration directory."""
        return identity_hash(self.as_dict())


def identity_hash(doc) -> str:
    text = json.dumps(_plain(doc), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _plain(value):
    """JSON's own view of a value (tuples become lists, keys strings), so a recorded identity compares equal
    to a freshly built one."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def differences(recorded: Identity, wanted: Identity) -> tuple[list[str], list[str]]:
    """(conflicts, additions): each conflict names a field and its two values; additions name what a rerun
    adds to an additive field."""
    conflicts, additions = [], []
    if recorded.kind and recorded.kind != wanted.kind:
        conflicts.append(f"kind: {recorded.kind!r} here, {wanted.kind!r} asked")
    before, now = _plain(recorded.fixed), _plain(wanted.fixed)
    for key in sorted({*before, *now}):
        if key not in before:  # recorded before this field existed: nothing to compare
            continue
        conflicts += _differing(key, before.get(key), now.get(key))
    for name in sorted({*recorded.additive, *wanted.additive}):
        have, want = _plain(recorded.additive.get(name, {})), _plain(wanted.additive.get(name, {}))
        for key in sorted(want):
            if key not in have:
                additions.append(f"{name} {key}")
            else:
                conflicts += _differing(f"{name} {key}", have[key], want[key])
    return conflicts, additions


def _differing(name: str, here, asked) -> list[str]:
    """`name: A here, B asked`, descending into mappings so only the settings that differ are named."""
    if here == asked:
        return []
    if isinstance(here, dict) and isinstance(asked, dict):
        out = []
        for key in sorted({*here, *asked}):
            out += _differing(f"{name}.{key}", here.get(key), asked.get(key))
        return out
    return [f"{name}: {_short(here)} here, {_short(asked)} asked"]


def _short(value, limit: int = 80) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_manifest(out: Path) -> dict | None:
    from memeval.safe_json import load_json_file

    path = out / "manifest.json"
    if not path.is_file():
        return None
    try:
        doc = load_json_file(path, "manifest")
    except InputError as exc:
        raise InputError(path, "manifest", f"{exc.problem}; move the directory aside or rerun with --restart") \
            from None
    if not isinstance(doc, dict):
        raise InputError(path, "manifest", "expected a JSON object; move the directory aside or rerun with "
                         "--restart")
    return doc


def recorded_identity(manifest: Mapping | None) -> Identity | None:
    if not manifest or not isinstance(manifest.get("identity"), Mapping):
        return None
    return Identity.from_dict(manifest["identity"])


def replaced_path(out: Path) -> Path:
    out = Path(os.path.abspath(out))  # `.` has no name to put a suffix on
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    candidate = out.with_name(f"{out.name}{REPLACED}{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = out.with_name(f"{out.name}{REPLACED}{stamp}-{n}")
    return candidate


def move_aside(out: Path, lock: DirectoryLock | None = None) -> Path | None:
    """`--restart`: the old directory renamed beside it, never deleted, and only under its lock — `lock`, which
    the caller holds and gets back on a fresh `out`, or one taken here and released — so a live run is refused,
    never moved."""
    if not out.exists() or not any(out.iterdir()):
        return None
    own = lock is None
    lock = DirectoryLock(out, "memeval --restart") if own else lock
    lock.acquire()
    try:
        target = lock.move_aside()
    finally:
        if own:
            lock.release()
    if not own:
        lock.acquire()
    return target


@dataclass
class Claim:
    """What `claim` found and did: the identity the directory now holds, what this run adds, where an old
    run was moved, the previous manifest (for its invocations)."""

    identity: Identity
    additions: list[str]
    moved_to: Path | None
    previous: dict | None

    def notes(self) -> list[str]:
        out = []
        if self.moved_to is not None:
            out.append(f"--restart: the previous run was moved to {self.moved_to}")
        if self.additions:
            out.append("added to this run: " + ", ".join(self.additions))
        return out


def check(out: Path, wanted: Identity, legacy: Identity | None = None) -> Claim:
    """Compare `wanted` with what `out` holds; another identity is refused in one line naming every field that
    differs (nothing written). `legacy`: the identity an older manifest (written before identities were
    recorded) implies."""
    previous = read_manifest(out)
    recorded = recorded_identity(previous) or legacy
    if recorded is None:
        return Claim(wanted, [], None, previous)
    conflicts, additions = differences(recorded, wanted)
    if conflicts:
        what = recorded.kind or "run"
        raise InputError(out, "identity", f"this directory holds a {what} with other settings (" +
                         "; ".join(conflicts) + "); use another --out, or --restart to move it aside")
    return Claim(recorded.merged(wanted), additions, None, previous)


def claim(out: Path, wanted: Identity, manifest: dict, restart: bool = False, legacy: Identity | None = None,
          lock: DirectoryLock | None = None) -> Claim:
    """Take `lock` first (a live writer is refused; the caller releases it when the run ends), then `check`
    (refusing another identity unless `restart`; `restart` always moves a non-empty directory aside, under that
    lock, and takes it again on the fresh directory), then record the identity in the manifest before any row is
    written, with `complete: false` until the run finishes. A refusal releases the lock and leaves nothing."""
    from memeval.atomic import write_json_atomic

    existed = out.exists()
    if lock is None:
        holder = lock_holder(out)
        if holder is not None and holder.get("pid") != os.getpid():
            refuse_locked(out, holder)
    else:
        lock.acquire()
    try:
        if restart:
            result = Claim(wanted, [], move_aside(out, lock), None)
            if result.moved_to is not None:
                print(f"memeval: note: --restart moved the previous contents of {out} to {result.moved_to}",
                      file=sys.stderr)
        else:
            result = check(out, wanted, legacy)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "manifest.json", {**(result.previous or {}), **manifest,
                                                   "identity": result.identity.as_dict(), "complete": False})
    except BaseException:
        if lock is not None:
            lock.release()
        if not existed:
            try:
                out.rmdir()  # made only to hold the lock
            except OSError:
                pass
        raise
    return result


# ---- the lock ------------------------------------------------------------------------------------------------

LOCK_WAIT_S = 0.5  # how long a writer retries a busy lock: a reader (`memeval ls`) holds its shared one for microseconds


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock(out: Path) -> dict | None:
    try:
        doc = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def _flock(fd: int, exclusive: bool) -> bool:
    """The OS lock on `fd`'s file, without waiting; False when another open file of it holds the lock."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open as `fd` (a releasing owner unlinks it)."""
    try:
        here, held = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _recorded_holder(doc: Mapping | None) -> Mapping | None:
    """Who a lock file names when no process holds its OS lock: nobody, if this version wrote it (the kernel
    drops the OS lock when its owner ends, so a reused pid never looks alive) or its pid is gone; a lock an
    older memeval wrote (no OS lock) whose pid lives, or one written on another machine, still holds."""
    if doc is None:
        return None
    if doc.get("host") != socket.gethostname():
        return doc
    pid = doc.get("pid")
    if doc.get("flock") or isinstance(pid, int) and not _alive(pid):
        return None
    return doc


def lock_holder(out: Path) -> dict | None:
    """The live process holding `out`'s lock, or None (no lock, or its owner is gone)."""
    try:
        fd = os.open(out / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        if not _flock(fd, exclusive=False):
            return read_lock(out) or {}
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    holder = _recorded_holder(read_lock(out))
    return None if holder is None else dict(holder)


def refuse_locked(out: Path, holder: Mapping) -> None:
    raise InputError(out, "lock", f"another memeval is writing here (pid {holder.get('pid', '?')}, "
                     f"{holder.get('command')!r}, since {holder.get('started_utc')}); wait for it or use another "
                     "--out")


class DirectoryLock:
    """One writer per output directory: an OS lock (`fcntl.flock`, exclusive) on `.memeval.lock`, held from the
    claim until the run ends, on a file that names its owner (pid, host, command, start). Taking over the lock
    of a process that is gone is the same atomic OS call, so two takers cannot both win."""

    def __init__(self, out: Path, command: str):
        self.out = Path(out)
        self.command = command
        self.taken_over: dict | None = None
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> DirectoryLock:
        if self._fd is not None:
            return self
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / LOCK_NAME
        for _ in range(20):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not self._wait(fd):
                    refuse_locked(self.out, self._named_holder())
                if not _same_file(fd, path):  # its owner released (unlinked) it between our open and our lock
                    os.close(fd)
                    continue
                previous = _read_fd(fd)
                holder = _recorded_holder(previous)
                if holder is not None and holder.get("pid") != os.getpid():
                    refuse_locked(self.out, holder)
                mine = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                        "started_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "flock": True}
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(mine).encode("utf-8"), 0)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            self.taken_over = previous if previous and previous.get("pid") != os.getpid() else None
            break
        else:
            raise InputError(self.out, "lock", "could not take the directory's lock; try again")
        if self.taken_over is not None:
            from memeval.safe_text import shown

            print(shown(f"memeval: note: took over {path} from a process that is gone (pid "
                        f"{self.taken_over.get('pid')}, {self.taken_over.get('command')!r})"), file=sys.stderr)
        return self

    @staticmethod
    def _wait(fd: int) -> bool:
        deadline = time.monotonic() + LOCK_WAIT_S
        while not _flock(fd, exclusive=True):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def _named_holder(self) -> dict:
        """The live owner's record (it writes it right after taking the OS lock: wait a moment for it)."""
        deadline = time.monotonic() + LOCK_WAIT_S
        while (doc := read_lock(self.out)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return doc or {}

    def move_aside(self) -> Path | None:
        """`--restart` under this held lock: the directory renamed to DIR.replaced-<UTC> (never deleted) with the OS
        lock held throughout, so no other run starts in it meanwhile; the lock is then released (take it again on
        the fresh directory). None when the directory holds nothing but the lock (nothing moved, lock kept)."""
        if not any(p.name != LOCK_NAME for p in self.out.iterdir()):
            return None
        target = replaced_path(self.out)
        self.out.rename(target)
        fd, self._fd = self._fd, None
        try:
            (target / LOCK_NAME).unlink(missing_ok=True)
        finally:
            os.close(fd)
        return target

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            path = self.out / LOCK_NAME
            if _same_file(fd, path):
                path.unlink(missing_ok=True)
        finally:
            os.close(fd)  # the OS lock goes with the last descriptor

    def __enter__(self) -> DirectoryLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _read_fd(fd: int) -> dict | None:
    try:
        doc = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def status(out: Path, manifest: Mapping | None) -> str:
    """complete, running (a live process holds the lock) or incomplete."""
    if lock_holder(out) is not None:
        return "running"
    if manifest and manifest.get("complete") is True:
        return "complete"
    if manifest and manifest.get("complete") is None and "identity" not in manifest:
        return "complete" if manifest.get("rows") or manifest.get("rows_total") else "unknown"
    return "incomplete"


def incomplete_line(missing: Mapping) -> str | None:
    """The closing line of a run that lacks requested rows, e.g. "incomplete: 523 of 1,975 answers failed
    after retries (TransientError (429)); rerun to retry them"; None when nothing is missing."""
    parts = []
    answers = missing.get("answers")
    if answers:
        if answers.get("failed"):
            reasons = ", ".join(f"{k} ×{v}" if len(answers.get("reasons", {})) > 1 else k
                                for k, v in answers.get("reasons", {}).items())
            parts.append(f"{answers['failed']:,} of {answers['requested']:,} answers failed ({reasons})")
        if answers.get("absent"):
            parts.append(f"{answers['absent']:,} of {answers['requested']:,} answers were never written")
    judgments = missing.get("judgments") or []
    if isinstance(judgments, Mapping):  # one judge, as manifests written before each judge was listed hold it
        judgments = [judgments]
    for entry in judgments:
        parts += _judgment_parts(entry)
    rows = missing.get("rows")
    if rows:  # a sweep's rows not written, e.g. an OPT whose exact solve stopped at its time limit
        packages = rows.get("packages", 0)
        parts.append(f"{rows['missing']:,} of {rows['requested']:,} rows ({packages:,} package"
                     f"{'' if packages == 1 else 's'}) not written: {rows['reason']}")
    for name, value in missing.items():
        if name not in ("answers", "judgments", "rows") and value:
            parts.append(f"{name}: {value}")
    if not parts:
        return None
    if answers and answers.get("advice"):  # the task's own remedy, where rerunning alone would not help
        return "incomplete: " + "; ".join(parts) + "; " + answers["advice"]
    hint = ""
    if answers and "CacheMiss" in answers.get("reasons", {}):
        hint = (" (CacheMiss: no cached reply and no LLM was called; set ANTHROPIC_API_KEY or OPENAI_API_KEY, or "
                "choose --llm)")
    elif any(entry.get("unusable") for entry in judgments):
        hint = (" (a judge at temperature 0 may give the same reply again, one that samples may not; --judge-model "
                "picks another)")
    elif answers and "TimedOut" in answers.get("reasons", {}):
        hint = (" (TimedOut: the server sent no reply within the timeout on any of 3 tries; MEMEVAL_LLM_TIMEOUT_S "
                "sets the seconds, docs/llm.md \"Bounds of a call\")")
    elif answers and "InvalidReply" in answers.get("reasons", {}):
        hint = (" (InvalidReply: a reply longer than its request's max_tokens can produce, or usage that is not a "
                "count of tokens — each row's `error` in answers.jsonl says which; nothing of it was kept or priced)")
    elif answers and "UnusableReply" in answers.get("reasons", {}):
        hint = (" (UnusableReply: a refusal, an empty reply or one cut at its output cap — each row's `error` in "
                "answers.jsonl says which; at temperature 0 the same model gives the same reply again)")
    return "incomplete: " + "; ".join(parts) + "; rerun to retry them" + hint


def _judgment_parts(entry: Mapping) -> list[str]:
    """One judge's missing judgments: those with no usable label (by the judge's reason), then the rest."""
    protocol, requested = entry.get("protocol", ""), entry["requested"]
    unusable = entry.get("unusable") or {}
    parts = [f"{n:,} of {requested:,} {protocol} judgments unusable ({reason})" for reason, n in unusable.items()]
    rest = entry["missing"] - sum(unusable.values())
    if rest > 0:
        parts.append(f"{rest:,} of {requested:,} {protocol} judgments are missing (failed, or no LLM configured)")
    return parts


# ---- the files of a run directory -----------------------------------------------------------------------------

ANSWERS = "answers.jsonl"
JUDGMENTS = "judgments.jsonl"
MANIFEST = "manifest.json"
REPORT = "report.md"
STORES = "stores"  # the memory stores library systems wrote (Mem0's get_all), one JSON file a system


@dataclass(frozen=True)
class RunDir:
    """A run directory's files: the only place their names are spelled."""

    path: Path

    def __init__(self, path: str | Path):
        object.__setattr__(self, "path", Path(path))

    @property
    def answers(self) -> Path:
        return self.path / ANSWERS

    @property
    def judgments(self) -> Path:
        return self.path / JUDGMENTS

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST

    @property
    def report(self) -> Path:
        return self.path / REPORT

    def store(self, system_label: str) -> Path:
        """The memory store a library system wrote in this run (Mem0's own `get_all()` per conversation), in the
        shape `natural union --store` reads; the system's label is the file's name."""
        from memeval.safe_paths import inside

        return inside(self.path, f"{STORES}/{system_label}.json")

    def store_ingests(self, system_label: str) -> Path:
        """What the library system did writing that store: one `StoreIngest` record per conversation ingested."""
        from memeval.safe_paths import inside

        return inside(self.path, f"{STORES}/{system_label}.ingest.jsonl")

    def file(self, name: str) -> Path:
        """Another file of the run (a task's own summary), kept inside the directory."""
        from memeval.safe_paths import inside

        return inside(self.path, name)
