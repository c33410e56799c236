"""Every JSON file a loader reads, read one way: bytes decoded as UTF-8 (a leading byte-order mark skipped, the same
in every loader), then parsed with limits on nesting depth and integer size, so a hostile or broken file is one
`InputError` naming the file, the field and where (byte offset or line), never a traceback or gigabytes of memory.

Files are read through `memeval.input_files` (regular files only, a byte limit per kind of input). Limits: nesting
deeper than MAX_DEPTH (checked by a cheap pre-scan of brackets outside strings, before parsing);
integers longer than MAX_INT_DIGITS digits (no count, cost or category needs more, and beyond ~309 digits they
cannot become floats); a lone surrogate escape (`"\\ud800"`), which parses but is no text and cannot be written
back as UTF-8.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from memeval.errors import InputError

MAX_DEPTH = 100
MAX_INT_DIGITS = 100
BOM = b"\xef\xbb\xbf"

# A string, its closing quote optional: an unterminated one runs to the end, so every scan stays linear.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"?'
_STRINGS = re.compile(_STRING, re.DOTALL)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_TOKENS = re.compile(_STRING + r"|[\[\]{}]|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?", re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_HIGH = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SUSPECT = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"  # a high half, no low after
                      r"|\\(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\)u[dD][c-fC-F][0-9a-fA-F]{2}"  # a low half, no high before
                      r"|\\\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F]")  # a pair after a backslash: which is text?


class _LongInteger(Exception):
    def __init__(self, digits: int):
        self.digits = digits


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    return int(text)


def _at(text: str | bytes, offset: int) -> str:
    """Where `offset` is: "line L, column C", or "column C" in one line (a JSONL row is named FILE:LINE already)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    start = text.rfind(newline, 0, offset) + 1
    if newline not in text:
        return f"column {offset - start + 1}"
    return f"line {text.count(newline, 0, offset) + 1}, column {offset - start + 1}"


def decode_utf8(data: bytes, source: str | Path, what: str = "encoding") -> str:
    """`data` as text: UTF-8 with a leading byte-order mark skipped (`utf-8-sig`); anything else is refused with
    the byte offset of the first bad byte."""
    start = len(BOM) if data.startswith(BOM) else 0
    try:
        return str(memoryview(data)[start:], "utf-8")
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        hint = "; it looks like UTF-16: save it as UTF-8" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InputError(source, what, f"not UTF-8 text: byte 0x{data[offset]:02x} at byte offset {offset} "
                         f"({_at(data, offset)}){hint}") from None


def _max_depth(text: str) -> int:
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    return max(accumulate(1 if c in b"[{" else -1 for c in brackets), default=0)


def _check_depth(text: str, source: str | Path, what: str) -> None:
    # brackets inside strings count too: a cheap upper bound, enough for almost every file
    if text.count("[") + text.count("{") <= MAX_DEPTH or _max_depth(text) <= MAX_DEPTH:
        return
    if _max_depth(_STRINGS.sub("", text)) <= MAX_DEPTH:  # strings skipped: exact
        return
    depth = 0  # only on refusal: find the line
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(source, what, f"nested deeper than {MAX_DEPTH} levels ({_at(text, match.start())}); "
                                 "no data file here needs that")
        elif token in "]}":
            depth -= 1


def _long_integer_at(text: str) -> str | None:
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] in "-0123456789" and not any(c in token for c in ".eE") \
                and len(token) - token.startswith("-") > MAX_INT_DIGITS:
            return _at(text, match.start())
    return None


def _lone_surrogate(text: str) -> int | None:
    """Offset of the first `\\uD800`-`\\uDFFF` escape that is not half of a high-low pair, else None. A regex finds
    the suspects (none in a file whose surrogates all pair up); each is then checked exactly, counting the
    backslashes before it (`\\\\ud800` is a backslash and text, not an escape)."""

    def escape_at(i: int) -> bool:  # an even number of backslashes before i: the backslash at i starts an escape
        n = 0
        while i - n - 1 >= 0 and text[i - n - 1] == "\\":
            n += 1
        return n % 2 == 0

    def lone(i: int) -> bool:
        if not escape_at(i):
            return False
        if _HIGH.match(text, i):
            return not _LOW.match(text, i + 6)
        return not (i >= 6 and _HIGH.match(text, i - 6) and escape_at(i - 6))

    for match in _SUSPECT.finditer(text):
        for i in range(match.start(), match.end()):
            if _SURROGATE_ESCAPE.match(text, i) and lone(i):
                return i
    return None


def parse_json(text: str, source: str | Path, what: str = "json") -> Any:
    """Parsed JSON of `text`, within the limits above; an InputError names `source`, the field `what` and the line."""
    if not text or text.isspace():
        raise InputError(source, what, "empty: no JSON value")
    _check_depth(text, source, what)
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except _LongInteger as exc:
        at = _long_integer_at(text)
        where = f" ({at})" if at else ""
        raise InputError(source, what, f"an integer of {exc.digits} digits{where}; at most {MAX_INT_DIGITS} are "
                         "read") from None
    except json.JSONDecodeError as exc:
        raise InputError(source, what, f"not valid JSON: {exc.msg} ({_at(text, exc.pos)})") from None
    except RecursionError:  # a backstop: the pre-scan refuses deep nesting first
        raise InputError(source, what, f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # e.g. an integer past the interpreter's own digit limit
        raise InputError(source, what, f"not valid JSON ({' '.join(str(exc).split())})") from None
    if "\\u" in text and (offset := _lone_surrogate(text)) is not None:
        raise InputError(source, what, f"a lone surrogate escape {text[offset:offset + 6]} ({_at(text, offset)}) "
                         "is not text")
    return value


def load_json_bytes(data: bytes, source: str | Path, what: str = "json") -> Any:
    return parse_json(decode_utf8(data, source), source, what)


def read_bytes(path: str | Path, what: str | None = None, kind: str = "file") -> bytes:
    """The file's bytes, within the limit of its `kind` (`memeval.input_files`); a missing, unreadable, non-regular
    or oversized file is an InputError naming it."""
    from memeval.input_files import read_input

    try:
        return read_input(path, kind, what or kind)
    except OSError as exc:
        raise InputError(path, what or kind, f"cannot be read ({exc.strerror or type(exc).__name__})") from None


def read_text(path: str | Path, what: str | None = None, kind: str = "file") -> str:
    """The file as text: UTF-8 with a leading byte-order mark skipped, the same for every loader."""
    return decode_utf8(read_bytes(path, what, kind), path)


def load_json_file(path: str | Path, what: str = "json", kind: str = "file") -> Any:
    """Parsed JSON of the file at `path` (see the module docstring); InputError on anything else."""
    return load_json_bytes(read_bytes(path, kind=kind), path, what)
