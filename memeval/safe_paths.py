"""Names built from data stay names: ids that become file names are restricted to a safe character set when they
are loaded, and every path a writer builds from data is checked to stay inside its output directory."""

from __future__ import annotations

import os
import re
from pathlib import Path

from memeval.errors import InputError

# Conversation ids, question ids and system names: they become parts of file names and of package ids (where `+`
# joins a base package and a system), so neither `/`, `+`, nor a leading dot.
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Package ids: a base id, `+` and a system name.
PACKAGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,159}(?:\+[A-Za-z0-9][A-Za-z0-9._-]{0,63})?")
ID_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters"
MAX_NAME_BYTES = 255  # one path component, as most file systems allow


def _shown(value: str, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def check_id(value: object, source: str | Path, field: str, pattern: re.Pattern = ID,
             rule: str = ID_RULE) -> str:
    """`value` when it is a string id of the safe set; else an InputError naming the source and field."""
    if not isinstance(value, str):
        raise InputError(source, field, f"expected a string id, got {type(value).__name__}")
    if not pattern.fullmatch(value):
        raise InputError(source, field, f"{_shown(value)} is not a safe id ({rule})")
    return value


def check_package_id(value: object, source: str | Path, field: str = "package_id") -> str:
    return check_id(value, source, field, PACKAGE_ID, "a base id of letters, digits, '.', '_' and '-' (at most "
                    "160 characters), optionally '+' and a system name of the same (at most 64)")


def inside(out: str | Path, name: str) -> Path:
    """`out / name`, checked to stay inside `out`: `name` is relative, without `..`, NUL or over-long parts.
    Every writer that builds a file name from data goes through here before it writes anything."""
    out = Path(out)
    problem = None
    if not isinstance(name, str) or not name:
        problem = "is empty"
    elif "\x00" in name:
        problem = "holds a NUL byte"
    elif name.startswith(("/", "\\")) or Path(name).is_absolute():
        problem = "is an absolute path"
    else:
        parts = name.replace("\\", "/").split("/")
        if any(p in ("", ".", "..") for p in parts):
            problem = "has an empty, '.' or '..' part"
        elif any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
            problem = f"has a part longer than {MAX_NAME_BYTES} bytes"
    target = out / name if problem is None else None
    if target is not None:
        base = os.path.normpath(os.path.abspath(out))
        full = os.path.normpath(os.path.abspath(target))
        if os.path.commonpath([base, full]) != base or full == base:
            problem = "leaves the directory"
    if problem is not None:
        raise InputError(out, "file name", f"{_shown(name)} {problem}: a name built from data must stay inside "
                         "the output directory; nothing written")
    return target
