"""Entity normalisation: the same name written differently must be one graph node."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

_SPACE = re.compile(r"\s+")


def base_form(name: str) -> str:
    """NFKC (full-width → half-width), case-folded, whitespace collapsed and trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", str(name))).strip().casefold()


class EntityNormalizer:
    """Base form, then a configurable alias map (keys and values in base form too), applied once."""

    def __init__(self, aliases: Mapping[str, str] | None = None):
        self.aliases = {base_form(k): base_form(v) for k, v in (aliases or {}).items()}

    def __call__(self, name: str) -> str:
        key = base_form(name)
        return self.aliases.get(key, key)
