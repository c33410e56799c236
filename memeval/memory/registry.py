"""Memory systems by name: `name → module:Class`, imported only when a system is built, so naming the
systems costs no import and no module imports its way back here.

Three kinds of name: the built-in systems below; a system another package registers under the entry-point group
`memeval.memory_systems`; and any factory named directly as `module.path:Factory`. A system's parameters are
its factory's keyword arguments; an unknown one is an input error that lists the valid ones, and a plug-in that
cannot be imported or called is one line naming what is wrong (never a traceback from deep inside a run).
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
    "rag_dense": "memeval.memory.dense:DenseRAG",
    "observations": "memeval.memory.lexical:Observations",
    "summaries": "memeval.memory.lexical:Summaries",
    "memory_graph": "memeval.memory.graph_system:MemoryGraphSystem",
    "mem0": "memeval.memory.mem0_system:Mem0System",  # the mem0ai library (optional extra `memeval[mem0]`)
}
# Older spellings still accepted on the command line (`--systems memory_graph:max_hops=1`).
PARAMETER_ALIASES: dict[str, dict[str, str]] = {"memory_graph": {"max_hops": "hops"}}


ENTRY_POINT_GROUP = "memeval.memory_systems"


def registered() -> dict[str, str]:
    """Systems other installed packages register: entry-point name → `module:attr`."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def system_names() -> list[str]:
    return sorted({*BUILTIN, *registered()})


def known(name: str) -> bool:
    return name in BUILTIN or name in registered() or _is_factory_path(name)


# Built-in names whose work is another library's code (mem0ai): its failures are treated as a plug-in's.
LIBRARY_SYSTEMS = frozenset({"mem0"})


def is_plugin(name: str) -> bool:
    """A system whose code is not this package's (an entry point, a named factory, or a built-in wrapping another
    library): its own exceptions in `ingest` or `search` are recorded in the answer rows, where a built-in system's
    are programming errors and propagate."""
    return name not in BUILTIN or name in LIBRARY_SYSTEMS


def _is_factory_path(name: str) -> bool:
    module, sep, attr = name.partition(":")
    return bool(sep and module and attr.isidentifier())


def factory(name: str) -> Callable[..., MemorySystem]:
    target = BUILTIN.get(name) or registered().get(name) or (name if _is_factory_path(name) else None)
    if target is None:
        raise InputError("--systems", name, f"unknown memory system; known: {', '.join(system_names())} (or name "
                         "a factory as module.path:Factory)")
    module, _, attr = target.partition(":")
    try:
        loaded = importlib.import_module(module)
    except ImportError as exc:
        raise InputError("--systems", name, f"cannot import module {module!r}: {' '.join(str(exc).split())} (is its "
                         "package installed?)") from None
    except (Exception, SystemExit) as exc:  # the plug-in's own module raised (or exited) while being imported
        raise InputError("--systems", name, f"importing module {module!r} raised {_one_line(exc)}") from None
    made = getattr(loaded, attr, None)
    if made is None:
        raise InputError("--systems", name, f"module {module!r} has no {attr!r}")
    if not callable(made):
        raise InputError("--systems", name, f"{module}:{attr} is not callable (expected a class or a function "
                         "returning a memory system)")
    return made


def parameters(name: str) -> list[str] | None:
    """The factory's keyword parameters, or None when it takes any (**kwargs)."""
    signature = inspect.signature(factory(name))
    if any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return [p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def resolve(config: SystemConfig) -> SystemConfig:
    """The config with aliases renamed, checked against the factory's parameters."""
    aliases = PARAMETER_ALIASES.get(config.name, {})
    params = {aliases.get(k, k): v for k, v in config.params.items()}
    valid = parameters(config.name)
    unknown = [] if valid is None else sorted(set(params) - set(valid))
    if unknown:
        raise InputError("--systems", config.label, f"unknown parameter {', '.join(unknown)} for {config.name}; "
                         f"valid: {', '.join(valid) or '(none)'}")
    return SystemConfig(config.name, params)


def build_system(config: SystemConfig | str, client=None, **params) -> MemorySystem:
    """Systems that call an LLM (`needs_llm`) or embed (`needs_embeddings`) get the run's client, so their calls
    share its cache and budget."""
    if isinstance(config, str):
        config = SystemConfig(config, params)
    config = resolve(config)
    made = factory(config.name)
    try:
        system = made(**config.params)
    except (ValueError, TypeError) as exc:
        raise InputError("--systems", config.label, " ".join(str(exc).split())) from None
    except (Exception, SystemExit) as exc:
        if not is_plugin(config.name):  # a built-in system's failure is a programming error: its traceback helps
            raise
        raise InputError("--systems", config.label, f"building the system raised {_one_line(exc)}") from None
    if (getattr(system, "needs_llm", False) or getattr(system, "needs_embeddings", False)) and client is not None:
        system.client = client
    return system


def _one_line(exc: BaseException) -> str:
    """`Type: message` on one line, whatever the plug-in's message holds."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def needs_llm(config: SystemConfig) -> bool:
    return bool(getattr(factory(config.name), "needs_llm", False))


def needs_embeddings(config: SystemConfig) -> bool:
    """The system embeds through the run's `embed` role (rag_dense)."""
    return bool(getattr(factory(config.name), "needs_embeddings", False))


def parse_system(spec: str) -> SystemConfig:
    """`--systems` entry → SystemConfig (kept as the name the run code calls; `SystemConfig.parse` does the work)."""
    return SystemConfig.parse(spec)


def check_system(spec: str) -> SystemConfig:
    """A `--systems` entry checked before a run starts, as every benchmark's run checks it: it parses, names a
    known system (or a factory path) and builds with its parameters; one line (InputError) when it does not."""
    try:
        config = parse_system(spec)
    except ValueError as exc:
        raise InputError("--systems", spec, str(exc)) from None
    if not known(config.name):
        raise InputError("--systems", spec, f"unknown system; known: {', '.join(system_names())} (or name a "
                         "factory as module.path:Factory)")
    build_system(config)
    return config
