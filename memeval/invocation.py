"""What produced a results directory, as a command a reader can rerun: the process argv when the CLI ran it,
and always the equivalent `memeval ...` command line built from the resolved configuration at run time.

Tables that cite a command print the recorded line (never one rebuilt later from folder names or summaries),
and `memeval ls` lists every manifest under a directory with its commit and command.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, fields
from pathlib import Path

from memeval.rundir import ANSWERS, JUDGMENTS, MANIFEST, RunDir
from memeval.settings import flag  # noqa: F401  (configurations declared before memeval.settings import it here)

_cli_argv: list[str] | None = None


def set_cli_argv(argv: Sequence[str] | None) -> None:
    """Called by `memeval.cli.main` with the arguments it parses (None outside the CLI)."""
    global _cli_argv
    _cli_argv = None if argv is None else ["memeval", *argv]


def invocation(command_line: Sequence[str]) -> dict:
    return {"argv": _cli_argv, "command_line": shlex.join(command_line), "via": "cli" if _cli_argv else "python"}


def path_text(path: str | Path) -> str:
    """A path as a rerunnable argument: relative to the project root when inside it (so recorded commands read
    the same on every clone), else absolute."""
    from memeval.data.paths import project_root

    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(project_root().resolve()))
    except ValueError:
        return str(resolved)


def flag_args(values: dict, defaults: dict, flags: dict[str, str], paths: Iterable[str] = ()) -> list[str]:
    """`--flag value` for each setting that differs from its default, in the order of `flags`."""
    out: list[str] = []
    paths = set(paths)
    for name, spelling in flags.items():
        value = values.get(name)
        if value == defaults.get(name):
            continue
        if name in paths and value is not None:
            out += [spelling, path_text(value)]
        elif isinstance(value, bool):
            out += [spelling] if value else []
        elif isinstance(value, (list, tuple)):
            out += [spelling, ",".join(_text(v) for v in value)]
        elif value is not None:
            out += [spelling, _text(value)]
    return out


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def load_manifest(path: str | Path) -> dict:
    """A results directory's `manifest.json` as a JSON object; a file that is not one (torn, hand-edited, another
    JSON value) is one line naming it and what is wrong, never a traceback."""
    from memeval.errors import InputError
    from memeval.input_files import read_input

    path = Path(path)
    try:
        doc = json.loads(read_input(path, "file", "manifest").decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, "manifest", f"not valid JSON ({exc.msg}, line {exc.lineno}); the directory was not "
                         "written whole: rerun the command that made it, or move it aside") from None
    except UnicodeDecodeError:
        raise InputError(path, "manifest", "not UTF-8 text; rerun the command that made it, or move it aside") \
            from None
    if not isinstance(doc, dict):
        raise InputError(path, "manifest", f"expected a JSON object, got {type(doc).__name__}; rerun the command "
                         "that made it, or move it aside")
    return doc


def recorded_commands(directory: str | Path) -> list[str]:
    """The command lines recorded in a directory's manifest, oldest first, each once."""
    path = RunDir(directory).manifest
    if not path.is_file():
        return []
    return _commands_of(load_manifest(path))


def _commands_of(manifest: dict) -> list[str]:
    invocations = manifest.get("invocations")
    lines = [i.get("command_line") for i in invocations if isinstance(i, dict)] \
        if isinstance(invocations, list) else []
    lines = lines or [manifest.get("command_line")]
    return list(dict.fromkeys(line for line in lines if isinstance(line, str) and line))


def list_results(roots: Iterable[str | Path], problems: list[str] | None = None) -> list[dict]:
    """Every results directory (one holding a manifest.json) under `roots`. A manifest that cannot be read is
    left out of the list and, when `problems` is a list, reported there as "path: why"."""
    from memeval.errors import InputError

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
            commands = _commands_of(manifest)
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
    from memeval.errors import InputError

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


# The two large fields of an answer row, never used by `ls` or `results`: every memory id a system returned for a
# question (list[list[str]], most of a full-context run's bytes) and its evidence recall at each depth
# (list[float]). In valid JSON these byte strings cannot occur inside a string value (their quotes would be
# escaped), so a key's first match is the key and the end's first match after it closes its value.
_LIGHT = ((b'"recall_curve": [', b'], "'), (b'"retrieved_ids": [[', b']], "'))


def read_light_records(path: str | Path, record: type) -> list:
    """`memeval.records.read_records` with `recall_curve` and `retrieved_ids` read as [] (fields `memeval ls` and
    `memeval results` never use, and not checked here): a 24 MB run is read in a fraction of a second instead of
    seconds. Every other field is validated by `record` as usual; a line the cuts do not fit is parsed whole, and
    a line that is not a JSON object sends the file to `read_records`, so a bad file is refused with the same one
    line (FILE:LINE, or file, row and field)."""
    from pydantic import TypeAdapter, ValidationError

    from memeval.errors import InputError
    from memeval.input_files import read_input
    from memeval.records import read_records

    path = Path(path)
    if not path.exists():
        return []
    data = read_input(path, "results")
    rows = []
    for line in data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]:
        for key, end in _LIGHT:
            start = line.find(key)
            if start >= 0 and (stop := line.find(end, start + len(key))) >= 0:
                line = line[:start + key.index(b"[") + 1] + line[stop + end.rindex(b"]"):]
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict):
            return read_records(path, record)
        rows.append(row)
    try:
        return TypeAdapter(list[record]).validate_python(rows)
    except ValidationError as exc:
        error = exc.errors()[0]
        number, *loc = error["loc"]
        raise InputError(f"{path} line {number + 1}", ".".join(map(str, loc)) or record.__name__,
                         error["msg"]) from None


def directory_status(directory: Path, manifest: dict) -> str:
    from memeval.rundir import REPLACED, status

    if REPLACED in directory.name:
        return "replaced"
    return status(directory, manifest)


def command_from(config, words: Sequence[str]) -> list[str]:
    """`words` and then a flag for every declared field that differs from its default (a field without a default
    always), in field order: the command that reruns `config` (`--restart`, the progress bars and a dry run are
    how a command runs, not what it computes, and are left out)."""
    head, tail = list(words), []
    for f in fields(config):
        meta = f.metadata
        if "flag" not in meta or not meta["setting"].rerun:
            continue
        value = getattr(config, f.name)
        default = (f.default if f.default is not MISSING else
                   f.default_factory() if f.default_factory is not MISSING else MISSING)
        if value == default:
            continue
        target = tail if meta["last"] else head
        if meta["models"]:
            target += [arg for role, model in sorted(value.items()) for arg in (f"--{role}-model", model)]
        elif meta["systems"]:
            target += [meta["flag"], (";" if any("," in s for s in value) else ",").join(value)]
        elif meta["path"] and value is not None:
            target += [meta["flag"], path_text(value)]
        else:
            target += flag_args({f.name: value}, {}, {f.name: meta["flag"]})
    return head + tail


def declared_flags(config_class) -> list[str]:
    """The CLI flags a configuration class declares (`--ROLE-model` for its models field)."""
    out = []
    for f in fields(config_class):
        if "flag" in f.metadata and f.metadata["setting"].rerun:
            out += [f"--{role}-model" for role in f.metadata["models"]] or [f.metadata["flag"]]
    return out
