"""Memory systems by name: `name → module:Class`, imported only when a system is built, so naming the
systems costs no import and no module imports its way back here.

A system's parameters are its factory's keyword arguments; an unknown one is an input error that lists the
valid ones (never a TypeError from deep inside a run).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from memeval.errors import InputError
from memeval.memory.base import MemorySystem, SystemConfig

BUILTIN: dict[str, str] = {
    "full_context": "memeval.memory.context:FullContext",
    "no_memory": "memeval.memory.context:NoMemory",
    "rag_turns": "memeval.memory.lexical:RagTurns",
    "observations": "memeval.memory.lexical:Observations",
    "summaries": "memeval.memory.lexical:Summaries",
    "memory_graph": "memeval.memory.graph_system:MemoryGraphSystem",
}
# Older spellings still accepted on the command line (`--systems memory_graph:max_hops=1`).
PARAMETER_ALIASES: dict[str, dict[str, str]] = {"memory_graph": {"max_hops": "hops"}}


def system_names() -> list[str]:
    return sorted(BUILTIN)


def factory(name: str) -> Callable[..., MemorySystem]:
    if name not in BUILTIN:
        raise InputError("--systems", name, f"unknown memory system; known: {', '.join(system_names())}")
    module, _, attr = BUILTIN[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def parameters(name: str) -> list[str]:
    return [p.name for p in inspect.signature(factory(name)).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def resolve(config: SystemConfig) -> SystemConfig:
    """The config with aliases renamed, checked against the factory's parameters."""
    aliases = PARAMETER_ALIASES.get(config.name, {})
    params = {aliases.get(k, k): v for k, v in config.params.items()}
    valid = parameters(config.name)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise InputError("--systems", config.label, f"unknown parameter {', '.join(unknown)} for {config.name}; "
                         f"valid: {', '.join(valid) or '(none)'}")
    return SystemConfig(config.name, params)


def build_system(config: SystemConfig | str, client=None, **params) -> MemorySystem:
    """Systems that call an LLM (`needs_llm`) get the run's client, so their calls share its cache and budget."""
    if isinstance(config, str):
        config = SystemConfig(config, params)
    config = resolve(config)
    try:
        system = factory(config.name)(**config.params)
    except (ValueError, TypeError) as exc:
        raise InputError("--systems", config.label, str(exc)) from None
    if getattr(system, "needs_llm", False) and client is not None:
        system.client = client
    return system


def needs_llm(config: SystemConfig) -> bool:
    return bool(getattr(factory(config.name), "needs_llm", False))
