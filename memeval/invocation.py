"""What produced a results directory, as a command a reader can rerun: the process argv when the CLI ran it,
and always the equivalent `memeval ...` command line built from the resolved configuration at run time.

Tables that cite a command print the recorded line (never one rebuilt later from folder names or summaries),
and `memeval ls` lists every manifest under a directory with its commit and command (memeval/engine/listing.py).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, fields
from pathlib import Path

from memeval.rundir import RunDir
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
    return commands_of(load_manifest(path))


def commands_of(manifest: dict) -> list[str]:
    invocations = manifest.get("invocations")
    lines = [i.get("command_line") for i in invocations if isinstance(i, dict)] \
        if isinstance(invocations, list) else []
    lines = lines or [manifest.get("command_line")]
    return list(dict.fromkeys(line for line in lines if isinstance(line, str) and line))


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
        if not meta["setting"].always and (value == default or value == meta["setting"].cli_default):
            continue  # what the command reads without the flag
        target = tail if meta["last"] else head
        if meta["setting"].nargs in ("*", "+") and isinstance(value, (list, tuple)):
            target += [meta["flag"], *(path_text(v) if meta["path"] else _text(v) for v in value)] if value else []
        elif meta["models"]:
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
