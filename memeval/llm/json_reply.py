"""The JSON a model's reply holds, read by the one rule memeval's own prompts ask for: the reply is one JSON value,
nothing before or after it, or that value inside a ``` fence (the rule Mem0's judge reads its replies by, at the
commit memeval/protocols pins). Never a JSON value picked out of prose: a reply the rule cannot read is unusable,
counted as such by its caller."""

from __future__ import annotations

import json
import re

FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def reply_json(text: str):
    """The JSON value of `text` (the stripped reply, or the inside of its first ``` fence); None when it is not
    JSON."""
    body = text.strip()
    fenced = FENCED.search(body)
    try:
        return json.loads(fenced.group(1) if fenced else body)
    except (ValueError, RecursionError):
        return None
