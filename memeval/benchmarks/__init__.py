"""Every benchmark memeval runs is a package of its own, `memeval/benchmarks/<name>/`, whose `__init__.py` declares
it (`BENCHMARK`); `REGISTERED` below is the one place a benchmark is added. Declarations are light (strings naming
modules, loaded on first use), so `memeval --help` and the shared machinery reach a benchmark only through here."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import import_module

# The one registration line per benchmark: its package name under memeval/benchmarks/, in `memeval --help` order.
REGISTERED = ("locomo", "longmemeval", "graph80", "locomo_plus")


@dataclass(frozen=True)
class RunKind:
    """A kind of run directory: its Task ("module:Class") and the names of its answer and judgment records in
    memeval.records (so counting a run's rows does not import the task; tests check them against the task), or
    "module:Class" for records a benchmark defines itself), the configuration its settings are declared on, the
    judges only its rows feed, and the other commands whose directories hold its rows."""

    task: str
    answer_record: str
    judgment_record: str
    config: str | None = None  # "module:Class" of its configuration, light to import (a notebook's run parameters)
    judges: dict[str, str] = field(default_factory=dict)  # name -> "module:factory": judges of this kind alone
    written_by: tuple[str, ...] = ()  # commands whose directories hold this kind's rows (results, view read them)
    memory_systems: bool = True  # its --systems name memory systems of memeval.memory.registry (else its own)


@dataclass(frozen=True)
class Benchmark:
    """What the shared machinery may know of a benchmark: its command (a module with `register(subparsers)`), the
    run kinds its tasks record (kind -> "module:Class"), and the older spellings of those kinds."""

    name: str
    command: str
    title: str = ""  # how tables and pages name it ("LoCoMo")
    tasks: dict[str, RunKind] = field(default_factory=dict)
    kind_aliases: dict[str, str] = field(default_factory=dict)
    categories: str | None = None  # "module:attr" of its memeval.categories.CategorySet
    answer_keys: str | None = None  # "module:attr" of its answer keys (memeval.answer_keys.AnswerKeys)
    judges: dict[str, str] = field(default_factory=dict)  # name -> "module:factory" of a Judge (scoring/judges.py)
    readers: dict[str, str] = field(default_factory=dict)  # name -> "module:Class" of an LLM Reader (qa/readers.py)
    fetches: str | None = None  # "module:attr" of its data sets (a list of memeval.data.fetch.DataSet)
    natural_source: str | None = None  # "module:attr" of its natural packages (memeval.natural.source.NaturalSource)
    publication: str | None = None  # "module:attr" of its memeval.publication.contribution.Contribution
    conversations: str | None = None  # "module:function": a data path -> its memeval.conversations.Conversation list
    commands: tuple[str, ...] = ()  # further top-level command modules (`register(subparsers)`), after the benchmarks'
    notebooks: dict[str, str] = field(default_factory=dict)  # notebook -> the run kind its run parameters are read as
    configs: dict[str, str] = field(default_factory=dict)  # command -> "module:Class": settings of a non-run command


@cache
def declaration(name: str) -> Benchmark:
    return import_module(f"memeval.benchmarks.{name}").BENCHMARK


def declarations() -> list[Benchmark]:
    return [declaration(name) for name in REGISTERED]


def load(target: str):
    """The object a declaration names as "module:attribute"."""
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)
