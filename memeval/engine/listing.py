"""Every results directory under some roots, as `memeval ls` lists it: its kind, status, commit and commands from
the manifest, and its rows counted as its kind's records count them (the latest row per key, and of those the
answers still failed). It sits beside the engine's registry of run kinds because counting needs the task's
records; the manifest readers it builds on (memeval.invocation) know no benchmark."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from memeval.errors import InputError
from memeval.invocation import commands_of, directory_status, load_manifest, read_light_records
from memeval.rundir import ANSWERS, JUDGMENTS, MANIFEST


def list_results(roots: Iterable[str | Path], problems: list[str] | None = None) -> list[dict]:
    """Every results directory (one holding a manifest.json) under `roots`. A manifest that cannot be read is
    left out of the list and, when `problems` is a list, reported there as "path: why"."""
    out = []
    for root in roots:
        for path in sorted(Path(root).rglob(MANIFEST)):
            try:
                manifest = load_manifest(path)
            except InputError as exc:
                if problems is not None:
                    problems.append(f"{path}: {exc.problem}")
                continue
            except OSError as exc:
                if problems is not None:
                    problems.append(f"{path}: {exc.strerror or exc}")
                continue
            sha = manifest.get("git_sha")
            sha = sha if isinstance(sha, str) and sha else None
            commands = commands_of(manifest)
            rows, failed = latest_row_counts(path.parent, manifest.get("command"))
            out.append({"directory": str(path.parent), "kind": manifest.get("command") or "–",
                        "status": directory_status(path.parent, manifest), "rows": rows, "failed": failed,
                        "commit": sha[:10] + ("-dirty" if sha.endswith("-dirty") else "") if sha else None,
                        "created_utc": manifest.get("created_utc"),
                        "command_line": commands[-1] if commands else None, "commands": commands})
    return out


ROW_FILES = (ANSWERS, JUDGMENTS, "raw_results.jsonl", "rows.jsonl")


def _newlines(handle, block: int = 1 << 22) -> int:
    """Newline-terminated lines, counted a block at a time."""
    n = 0
    while chunk := handle.read(block):
        n += chunk.count(b"\n")
    return n


def latest_row_counts(directory: Path, kind: str | None) -> tuple[dict[str, int], dict[str, int]]:
    """(rows, failed) per results file. A run's files are append-only and a rerun's row supersedes the one it
    retried, so a run counts its latest row per key and, of those, the answers that still carry an error; other
    files (and a run file that cannot be read) count their lines."""
    from memeval import records
    from memeval.benchmarks import load
    from memeval.engine.registry import aliases, run_kinds

    run = run_kinds().get(aliases().get(kind, kind)) if isinstance(kind, str) else None
    names = (run.answer_record, run.judgment_record) if run else None
    records_of = dict(zip((ANSWERS, JUDGMENTS), (load(n) if ":" in n else getattr(records, n) for n in names),
                          strict=True)) if names else {}
    counts, failed = {}, {}
    for name in ROW_FILES:
        path, label = directory / name, name.split(".")[0]
        if not path.is_file():
            continue
        if name in records_of:
            try:
                counts[label], errors = count_latest(path, records_of[name])
            except InputError:
                pass
            else:
                if errors:
                    failed[label] = errors
                continue
        with open(path, "rb") as handle:  # newline-terminated lines: a torn last line is not counted
            counts[label] = _newlines(handle)
    return counts, failed


class _FieldNames:
    """Stands in for a record to learn which fields its `key` reads."""

    def __init__(self):
        self.names: list[str] = []

    def __getattr__(self, name: str) -> str:
        self.names.append(name)
        return name


def key_fields(record: type) -> tuple[str, ...]:
    probe = _FieldNames()
    record.key.fget(probe)
    return tuple(probe.names)


_VALUE = re.compile(rb'"(?:[^"\\]|\\.)*"|[^,}\]\s]+')


def count_latest(path: Path, record: type) -> tuple[int, int]:
    """(rows left when a later row of the same key supersedes an earlier one, how many of them carry an error),
    from each line's key fields and `error` found as JSON tokens in the mapped file, without copying, parsing or
    validating rows: `ls` over a tree of full runs in a fraction of a second. A line lacking a key field (a blank
    line, a file that is not what its manifest says) sends the file to `read_light_records`, which skips blank
    lines and refuses a bad file with one line."""
    import mmap

    from memeval.records import latest

    fields = [(f'"{name}": '.encode(), len(name) + 4) for name in key_fields(record)]
    keys: dict[tuple, bool] = {}
    with open(path, "rb") as handle:
        if not os.fstat(handle.fileno()).st_size:
            return 0, 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            start, stop = 0, data.rfind(b"\n") + 1  # a torn last line is not a row yet
            while start < stop:
                end = data.find(b"\n", start)
                key = []
                for prefix, size in fields:  # written with sorted keys, these are near the end of a long row
                    at = data.rfind(prefix, start, end)
                    token = _VALUE.match(data, at + size, end) if at >= 0 else None
                    if token is None:
                        rows = list(latest(read_light_records(path, record), lambda r: r.key).values())
                        return len(rows), sum(1 for r in rows if getattr(r, "error", None))
                    key.append(token.group())
                at = data.find(b'"error": ', start, end)
                keys[tuple(key)] = at >= 0 and data[at + 9:at + 10] == b'"'
                start = end + 1
    return len(keys), sum(keys.values())
