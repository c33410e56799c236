"""The protocol every memory system follows, and the plain config a system is built from (memory/registry.py).

A system ingests one conversation and answers `search(question, k)` with ranked items that carry the
dia_ids they came from, so evidence recall is exact for every system, with or without an LLM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memeval.conversations import Conversation


def approx_tokens(text: str) -> int:
    """Four characters a token: a tokenizer-free count, the same for every system (so comparable)."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class MemoryItem:
    text: str
    score: float
    source_ids: tuple[str, ...]
    time: str = ""
    kind: str = "turn"

    @property
    def cost_tokens(self) -> int:
        return approx_tokens(self.text)

    def as_dict(self) -> dict:
        return {"text": self.text, "score": self.score, "source_ids": list(self.source_ids), "time": self.time,
                "kind": self.kind, "cost_tokens": self.cost_tokens}


def as_memory_item(obj: object, where: str) -> MemoryItem:
    """A plug-in's search result as a MemoryItem: a MemoryItem, or any object or mapping with `text` (str),
    `score` (number), `source_ids` (strings) and optional `time` and `kind` (str). Anything else is an input error
    naming the field (`where` says which system, question and item)."""
    from memeval.errors import InputError

    if isinstance(obj, MemoryItem):
        return obj

    def field_of(name: str, default=None):
        value = obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)
        return value

    text, score, sources = field_of("text"), field_of("score"), field_of("source_ids")
    time, kind = field_of("time", ""), field_of("kind", "memory")
    if not isinstance(text, str):
        raise InputError(where, "text", f"expected a string, got {type(text).__name__}")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise InputError(where, "score", f"expected a number, got {type(score).__name__}")
    if isinstance(sources, str) or not isinstance(sources, (list, tuple)) or not all(
            isinstance(s, str) for s in sources):
        raise InputError(where, "source_ids", "expected a list of turn ids (strings), got "
                         f"{type(sources).__name__}")
    if not isinstance(time, str) or not isinstance(kind, str):
        raise InputError(where, "time" if not isinstance(time, str) else "kind", "expected a string")
    return MemoryItem(text, float(score), tuple(sources), time, kind)


SEARCH_RETURNS = (f"a list of {MemoryItem.__module__}.{MemoryItem.__qualname__} (or dicts with text, score, "
                  "source_ids, time, kind)")


def _shape(value: object) -> str:
    """`a list of str`, `a tuple of str and int`, `a str`: what a search gave, in the words of the protocol."""
    if not isinstance(value, (list, tuple)):
        return f"a {type(value).__name__}"
    kinds = list(dict.fromkeys(type(v).__name__ for v in value))
    return f"an empty {type(value).__name__}" if not kinds else f"a {type(value).__name__} of {' and '.join(kinds)}"


def as_memory_items(found: object, where: str) -> list[MemoryItem]:
    """A search's return value as MemoryItems (`where`: which system and question). A value that is not a list,
    or items that are neither MemoryItems, mappings nor objects with a `text` attribute (plain strings, say), are
    an input error naming the type it got and the type the protocol expects; a mapping or object missing a field
    is one naming that field (as_memory_item)."""
    from memeval.errors import InputError

    if not isinstance(found, (list, tuple)):
        raise InputError(where, "return value", f"expected {SEARCH_RETURNS}, got {_shape(found)}")
    if any(not isinstance(item, (MemoryItem, dict)) and not hasattr(item, "text") for item in found):
        raise InputError(where, "return value", f"search returned {_shape(found)}; expected {SEARCH_RETURNS}")
    return [as_memory_item(item, f"{where}, item {i}") for i, item in enumerate(found)]


class MemorySystem(Protocol):
    name: str
    ranked: bool  # False: search returns the whole store in a fixed order (k does not apply)

    def ingest(self, conversation: Conversation) -> None: ...

    def search(self, question: str, k: int) -> list[MemoryItem]: ...

    def export(self) -> list[MemoryItem]: ...


@dataclass(frozen=True)
class SystemConfig:
    """Name plus parameters: everything needed to rebuild the system, so it goes into the manifest verbatim."""

    name: str
    params: dict = field(default_factory=dict)
    spelling: str | None = field(default=None, compare=False)  # as given on the command line, when parsed

    @property
    def label(self) -> str:
        """The name rows carry: the system name, plus its parameters when any are set."""
        if not self.params:
            return self.name
        return self.name + "[" + ",".join(f"{k}={v}" for k, v in sorted(self.params.items())) + "]"

    @property
    def shown(self) -> str:
        """The name a study shows: the spelling the user gave (`memory_graph:hops=1`), else the label."""
        return self.spelling or self.label

    def as_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "label": self.label}

    @classmethod
    def parse(cls, spec: str) -> "SystemConfig":
        """`rag_turns`, `rag_turns:chunk_tokens=256,other=x` or `rag_dense:chunk_tokens=512:k=2` (parameters
        separated by commas or colons, the colon spelling being the one that survives `--systems a,b`; integers
        and floats are converted), or a plug-in named by its factory, `my_pkg.memory:MySystem` or
        `my_pkg.memory:MySystem:k=3`."""
        name, _, rest = spec.strip().partition(":")
        if rest and "=" not in rest.partition(":")[0]:  # a module path, then the factory's name
            factory, _, rest = rest.partition(":")
            name = f"{name}:{factory}"
        params = {}
        for part in filter(None, (p.strip() for p in rest.replace(":", ",").split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"system parameter {part!r} in {spec!r}: expected key=value")
            params[key.strip()] = _parse_value(value.strip())
        return cls(name, params, spelling=spec.strip())


def count_parameter(name: str, value: object, allow_none: bool = False) -> int | None:
    """A system parameter that counts (chunk_tokens, top_k, k): an integer >= 1 (None when `allow_none`). A
    ValueError naming the parameter, which build_system turns into one line: `--systems: SYSTEM: ...`."""
    if value is None and allow_none:
        return None
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"parameter {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)
