"""Markdown that renders data as text: cells, code spans, lines with markup, tables and their notes. Below every
report, so a benchmark's report and the tables of the publication format with the same rules without importing
each other."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memeval.safe_text import shown


class Markdown(str):
    """Text the code wrote as Markdown (a code span around a recorded command, `base` in a label): a table cell
    keeps its markup. Any other value in a cell is data and shows as itself (`md_text`)."""


_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "\\`"})


def _one_line(text: str) -> str:
    return shown(re.sub(r"\r\n|[\r\n]", " ", text))


def md_text(value: object) -> str:
    """Data as Markdown that renders as the same text: HTML (`<script>`) and entities kept as text, no backtick
    opening a code span, one line, control characters as visible escapes (a report is also read with `cat`)."""
    if isinstance(value, Markdown):
        return _one_line(value)
    return _one_line(str(value)).translate(_HTML)


def code_span(text: object) -> Markdown:
    """`text` (a command recorded from data) as one code span: its fence longer than any backtick run inside, so
    the data can neither close it nor reach Markdown or HTML outside it."""
    text = _one_line(str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markdown(f"{fence}{pad}{text}{pad}{fence}")


_CODE_SPAN = re.compile(r"(`+)(?!`)(.*?)(?<!`)\1(?!`)")


def md_markup(text: object) -> str:
    """A line the code wrote in Markdown with data inside (a note naming a directory, its commit and a
    `code_span` of its command): code spans kept, the rest escaped as `md_text`, so the data renders as text."""
    text, out, at = _one_line(str(text)), [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [text[at:span.start()].translate(_HTML), span.group()]
        at = span.end()
    return "".join([*out, text[at:].translate(_HTML)])


def md_cell(value: object) -> str:
    """One table cell: data escaped by `md_text` (Markdown kept), and its pipes escaped so the row keeps its
    columns (GitHub reads `\\|` as a pipe inside code spans too)."""
    return md_text(value).replace("|", "\\|")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Headers and rows as a Markdown table; every cell goes through `md_cell`, so text from data (questions,
    answers, system and directory names) renders as text whatever it holds."""
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def with_notes(table: str, notes: Sequence[str | None]) -> str:
    """`table` with its notes below it, one Markdown bullet each (data inside escaped by `md_markup`)."""
    notes = [n for n in notes if n]
    return table + ("\n\n" + "\n".join(f"- {md_markup(n)}" for n in notes) if notes else "")
