"""A notebook's parameters checked as the command line checks the same flags, before anything is created.

papermill passes `-p budgets "[2, 6]"` as a string and `-y` as YAML, so a parameter can arrive as the Python value
the parameters cell holds or as the text a user typed. A parameter named as a field of the notebook's run
configuration (`k` of `LocomoRunConfig`; `llm` and `answer_model` the LLM options) is read by that field's own
declaration (memeval.settings: type, bounds, choices), the one `memeval.api` checks a configuration with; one of
another command by the declaration of the configuration that command is built from (`seeds` is `SweepConfig`'s
`--n-seeds`, bounds included; notebook 06's `seed` is `graph80 generate --seed`, declared by its benchmark in
`Benchmark.configs`); no parser is built. Text is accepted where it is unambiguous: "[2, 6]" and "2,6" are the
list [2, 6]. A value the flag refuses is one line naming the notebook, the parameter and the flag (`ParameterError`),
raised before the notebook's configuration directory exists.
"""

from __future__ import annotations

import argparse
import ast
import json
import os

from memeval.errors import InputError
from memeval.settings import Setting

SWEEP = "memaudit sweep"
SWEEPS = {"seeds": (SWEEP, "--n-seeds"), "methods": (SWEEP, "--methods"), "certify": (SWEEP, "--certify"),
          "jobs": (SWEEP, "--jobs")}

def notebook_runs() -> dict[str, str]:
    """notebook → the run kind whose configuration's fields its same-named parameters are (and `llm`, `ROLE_model`:
    the LLM options every run takes), checked by those fields' own declarations (memeval.settings); each benchmark
    declares its notebooks (Benchmark.notebooks), and the configuration is the one its run kind names."""
    from memeval.benchmarks import declarations

    return {notebook: kind for b in declarations() for notebook, kind in b.notebooks.items()}

# notebook → parameter → (command, flag) it is read as: by the declaration of the configuration the command is built
# from (command_configs)
FLAGS: dict[str, dict[str, tuple[str, str]]] = {
    "03_memaudit_small": {**SWEEPS, "budgets": (SWEEP, "--budgets")},
    "04_memaudit_validity": {**SWEEPS, "budget": ("memaudit solve", "--budget")},
    "05_memaudit_natural87": {"source": ("natural build", "--source"), "budgets": (SWEEP, "--budgets"),
                              "target": ("natural build", "--target"), "certify": (SWEEP, "--certify"),
                              "jobs": (SWEEP, "--jobs"), "noise_rate": ("natural sensitivity", "--noise-rate"),
                              "noise_seeds": ("natural sensitivity", "--noise-seeds"),
                              "conversation_scope": ("natural build", "--conversations"),
                              "conversation_budgets": (SWEEP, "--budgets")},
    "06_memory_graph_study": {"seed": ("graph80 generate", "--seed")},
    "08_longmemeval": {"natural_target": ("natural build", "--target"), "natural_budgets": (SWEEP, "--budgets")},
    "09_trust": {"ambiguous": ("locomo trust", "--ambiguous")},
}
# Values a parameter takes that its flag has no spelling for: "not set" (None) and 0 for "skip this part".
OFF_VALUES: dict[tuple[str, str], tuple] = {
    ("05_memaudit_natural87", "conversation_scope"): (None,),
    ("08_longmemeval", "natural_target"): (0,),
}
PATHS = frozenset({"data_path", "run_dir", "sweep_dir", "artifacts_dir", "figures_dir", "artifacts_root",
                   "labels_csv", "qa_run_dir", "audit_dir"})
PATH_LISTS = frozenset({"runs"})  # run directories: a list (or papermill's text of one, or comma-separated) or None
FLAGS_ONLY = frozenset({"allow_incomplete", "published"})  # booleans
# Lists of {key: value} records: the other harnesses' answers (02) and stores (05), with the keys each needs.
RECORDS = {"imported_answers": ("source", "format", "system"), "imported_stores": ("store", "format", "system")}


class ParameterError(InputError):
    """A parameter refused: shown in the notebook as its one line, not a traceback through the package."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for how an exception is shown in a cell
        return [f"{type(self).__name__}: {self}"]


def known_parameters(notebook: str) -> frozenset[str]:
    """The parameters this module checks for `notebook` (every name of its parameters cell, tests/test_notebooks.py
    checks)."""
    from memeval.artifacts import notebook_parameters

    settings = frozenset(n for n in notebook_parameters(notebook) if _run_setting(notebook, n)) \
        if notebook in notebook_runs() else frozenset()
    return frozenset(FLAGS.get(notebook, {})) | settings | PATHS | PATH_LISTS | FLAGS_ONLY | frozenset(RECORDS)


def checked_parameters(notebook: str, values: dict) -> dict:
    """`values` (a notebook's parameters: its globals, or papermill's parameters) with every known parameter
    checked and its text read as the committed default's type; raises `ParameterError` naming the first bad one."""
    from memeval.artifacts import notebook_parameters

    defaults = notebook_parameters(notebook)
    out = dict(values)
    for name in defaults:
        if name in values:
            out[name] = _checked(notebook, name, values[name], defaults[name])
    return out


def _checked(notebook: str, name: str, value, default):
    where = f"notebook {notebook}"
    if name in PATHS:
        if value is None or isinstance(value, (str, os.PathLike)):
            return value
        raise ParameterError(where, name, f"expected a path or None, got {_shown(value)}")
    if name in PATH_LISTS:
        return _path_list(where, name, value)
    if name in FLAGS_ONLY:
        if isinstance(value, str) and value in ("True", "False"):
            return value == "True"
        if isinstance(value, bool):
            return value
        raise ParameterError(where, name, f"expected True or False, got {_shown(value)}")
    if name in RECORDS:
        return _records(where, name, value)
    if (value is None and default is None) or (value in OFF_VALUES.get((notebook, name), ())
                                               and not isinstance(value, bool)):
        return value
    command, setting = _reader(notebook, name)
    flag = setting.spelling
    as_value = _read(value, default) if isinstance(value, str) else value
    if isinstance(as_value, bool) or (isinstance(default, list) and not isinstance(as_value, (list, tuple))):
        raise ParameterError(where, name, f"expected {'a list' if isinstance(default, list) else 'a value'} as "
                             f"`{flag}` of `memeval {command}` takes it, got {_shown(value)}")
    text = _text(as_value)
    try:
        parsed = setting.type(text) if setting.type else text
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        raise ParameterError(where, name, f"{exc} (read as `memeval {command} {flag}`)") from None
    if setting.choices is not None and parsed not in setting.choices:
        raise ParameterError(where, name, f"{_shown(value)}: expected one of {', '.join(map(str, setting.choices))} "
                             f"(as `memeval {command} {flag}`)")
    if name == "methods":
        _known_writers(where, as_value)
    if name == "systems" and _names_memory_systems(command):
        _known_systems(where, as_value)
    if isinstance(default, list):
        return list(as_value)
    if isinstance(value, str) and isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        return parsed  # a count or a budget typed as text is the number the flag reads (50, not "50")
    return value


def _path_list(where: str, name: str, value):
    """None, or a list of paths: papermill's text of a list ("['a', 'b']") or comma-separated paths read as one."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip().startswith("[") else value
        except (ValueError, SyntaxError):
            pass
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, os.PathLike)) for v in value):
        return [str(v) for v in value]
    raise ParameterError(where, name, f"expected a list of directories or None, got {_shown(value)}")


def _read(text: str, default):
    """A parameter's text as the value it spells: a Python or JSON literal ("[2, 6]", "50"), else for a list
    parameter its comma- (or, for systems, semicolon-) separated items, each a number where it reads as one;
    text that spells nothing else stays text."""
    stripped = text.strip()
    try:
        literal = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        literal = None
    if isinstance(default, list):
        if isinstance(literal, (list, tuple)):
            return list(literal)
        separator = ";" if ";" in stripped else ","
        return [_number(item.strip()) for item in stripped.split(separator) if item.strip()]
    if isinstance(default, (int, float)) and not isinstance(default, bool) and isinstance(literal, (int, float)):
        return literal
    return text


def _number(item: str):
    try:
        value = ast.literal_eval(item)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return item
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else item


def _text(value) -> str:
    """The value as a user would type it after the flag."""
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
        return (";" if any("," in i for i in items) else ",").join(items)
    return str(value)


def _records(where: str, name: str, value) -> list:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ParameterError(where, name, "expected a list of records as JSON, e.g. "
                                 f'[{{"{RECORDS[name][0]}": "FILE", "format": "mem0", "system": "NAME"}}]') from None
    if not isinstance(value, (list, tuple)):
        raise ParameterError(where, name, f"expected a list of records, got {_shown(value)}")
    for n, record in enumerate(value):
        missing = [k for k in RECORDS[name] if not isinstance(record, dict) or not isinstance(record.get(k), str)]
        if missing:
            raise ParameterError(where, f"{name}[{n}]", f"expected a record with {', '.join(RECORDS[name])} "
                                 f"(text); missing or not text: {', '.join(missing)}")
    return list(value)


def _known_writers(where: str, methods) -> None:
    from memeval.memaudit.names import ALL_WRITERS

    unknown = [m for m in methods if m not in ALL_WRITERS]
    if unknown:
        raise ParameterError(where, "methods", f"unknown writer(s) {', '.join(map(str, unknown))}; known: "
                             f"{', '.join(ALL_WRITERS)}")


def _known_systems(where: str, systems) -> None:
    from memeval.memory.base import SystemConfig
    from memeval.memory.registry import known, system_names

    for spec in systems:
        try:
            name = SystemConfig.parse(str(spec)).name
        except ValueError as exc:
            raise ParameterError(where, "systems", str(exc)) from None
        if not known(name):
            raise ParameterError(where, "systems", f"{name!r}: unknown memory system; known: "
                                 f"{', '.join(system_names())} (or a factory as module.path:Factory)")


# command → the configuration its arguments are built from (memeval.settings), read without the command line: the
# shared commands' here, each benchmark's in its declaration (command_configs)
CONFIGS = {"memaudit sweep": "memeval.memaudit.config:SweepConfig",
           "memaudit solve": "memeval.memaudit.config:SolveConfig",
           "natural build": "memeval.natural.config:BuildConfig",
           "natural sensitivity": "memeval.natural.config:SensitivityConfig"}


def _reader(notebook: str, name: str) -> tuple[str, Setting]:
    """The command and the setting a parameter is read as: a run configuration's field, or another command's flag."""
    if name in FLAGS.get(notebook, {}):
        command, flag = FLAGS[notebook][name]
        return command, _declared(command_configs()[command], flag)
    setting = _run_setting(notebook, name)
    if setting is None:
        raise KeyError(name)
    return notebook_runs()[notebook], setting


def command_configs() -> dict[str, str]:
    """command → "module:Class" of the configuration its settings are declared on: the shared commands' (CONFIGS),
    then each registered benchmark's run kinds (RunKind.config) and other commands (Benchmark.configs)."""
    from memeval.benchmarks import declarations

    declared = {command: target for b in declarations()
                for command, target in [*((k, r.config) for k, r in b.tasks.items() if r.config), *b.configs.items()]}
    return {**CONFIGS, **declared}


def _declared(config: str, flag: str) -> Setting:
    """The setting `config` (module:Class) declares for `flag`."""
    from memeval.benchmarks import load
    from memeval.settings import setting_fields

    return next(f.metadata["setting"] for f in setting_fields(load(config)) if f.metadata["setting"].spelling == flag)


LLM = "--llm"  # the LLM backend, a setting of every run that calls a model


def _run_setting(notebook: str, name: str) -> Setting | None:
    from memeval.benchmarks import load
    from memeval.engine.registry import run_kinds
    from memeval.llm.profiles import EMBED_ROLE, ROLE_DEFAULTS
    from memeval.settings import setting_fields

    config = load(run_kinds()[notebook_runs()[notebook]].config)
    declared = {f.name: f.metadata["setting"] for f in setting_fields(config) if not f.metadata["models"]}
    role = name.removesuffix("_model")
    if name == "llm":  # a run configuration without its own `--llm` (graph80's) takes the one the others declare
        return next((s for s in declared.values() if s.spelling == LLM), None) or next(
            f.metadata["setting"] for kind in run_kinds().values() for f in setting_fields(load(kind.config))
            if f.metadata["setting"].spelling == LLM)
    if name.endswith("_model") and (role in ROLE_DEFAULTS or role == EMBED_ROLE):
        return Setting(f"--{role}-model")
    return declared.get(name)


def _names_memory_systems(command: str) -> bool:
    """Whether a command's --systems are memory systems of the registry (a study's own variants are not)."""
    from memeval.engine.registry import run_kinds

    kind = run_kinds().get(command)
    return kind is None or kind.memory_systems


def _shown(value, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[:limit] + "..."
