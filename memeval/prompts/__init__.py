"""Versioned prompt files; a prompt's version is the hash of its text, recorded in every manifest."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PROMPT_DIR = Path(__file__).parent


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    return (PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8")


def prompt_hash(*names: str) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + load_prompt(name).encode() + b"\0")
    return digest.hexdigest()[:16]


def all_prompt_hashes() -> dict[str, str]:
    return {p.stem: prompt_hash(p.stem) for p in sorted(PROMPT_DIR.glob("*.txt"))}


def format_split(name: str, at: str, **values) -> tuple[str, int]:
    """The prompt filled in, and how many leading characters come before field `at` (the part shared by
    every question when the rest of the values are), for prompt caching."""
    template = load_prompt(name)
    head = template[: template.index("{" + at + "}")]
    text = template.format(**values)
    prefix = head.format(**{k: v for k, v in values.items() if k != at})
    if not text.startswith(prefix):
        raise ValueError(f"prompt {name}: the text before {{{at}}} is not a stable prefix")
    return text, len(prefix)


def format_through(name: str, through: str, **values) -> tuple[str, int]:
    """The prompt filled in, and how many leading characters end with field `through`'s value: the prefix two
    templates share when they differ only after that field (one prompt cache for both)."""
    template = load_prompt(name)
    head = template[: template.index("{" + through + "}") + len(through) + 2]
    prefix = head.format(**{k: v for k, v in values.items() if "{" + k + "}" in head})
    text = template.format(**values)
    if not text.startswith(prefix):
        raise ValueError(f"prompt {name}: the text through {{{through}}} is not a stable prefix")
    return text, len(prefix)
