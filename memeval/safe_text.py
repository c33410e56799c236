"""Text from data made safe to print: a manifest, an answer or a file name may hold ESC or BEL, and a terminal
obeys them (OSC 52 writes the clipboard, OSC 0 the title, CSI moves the cursor over what was printed), so every
string that came from data is shown with its control characters as visible escapes (`\\x1b`), never raw."""

from __future__ import annotations

import re

# C0 and C1 controls and DEL (C1's CSI, U+009B, is an escape sequence on its own in some terminals), plus the
# bidirectional overrides and isolates that reorder what is shown (CVE-2021-42574, "Trojan Source").
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = "\n\t"


def _escape(match: re.Match) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def shown(text: object, lines: bool = False) -> str:
    """`text` for a terminal: every control character as a visible escape; with `lines`, newlines and tabs are
    kept (a table or a report printed whole), otherwise it is one line (an error, a listing's cell)."""
    text = str(text)
    if lines:
        return _CONTROL.sub(lambda m: m.group() if m.group() in _LINE_BREAKS else _escape(m), text)
    return _CONTROL.sub(_escape, text)
