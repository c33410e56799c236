"""A run setting declared once: the configuration field carries its flag, type, default, help, choices, bounds,
metavar and older spellings, and everything else is built from that one declaration — the command's argparse
arguments (`add_config_arguments`), the configuration read back from them (`config_from`), the check a
configuration passes however it was made (`check_settings`: the CLI, `memeval.api`, a notebook's parameters),
and the command line a manifest records (`memeval.invocation.command_from`).

A setting's `type` is an argparse type (a function from the text a user typed to the value, raising
`argparse.ArgumentTypeError`), so a value given in Python is checked by the very function that reads the flag.
Nothing heavy is imported here: `memeval --help` builds every parser.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from memeval.errors import InputError

UNSET = type("Unset", (), {"__repr__": lambda self: "UNSET"})()  # no default (a dataclass reads MISSING so)


@dataclass(frozen=True)
class Setting:
    """How one flag reads and shows a value. `help` may be a function of the default as typed (`--systems` says
    its default), or for a role → model field a mapping role → help; `negated`: the flag turns the field off
    (`--no-progress` sets `progress` False); `cli_default`: what argparse shows and reads when the field itself has
    none (graph80's `--systems`) or the command line's default is not the field's (`memaudit sweep --n-seeds`);
    `rerun`: written into the rerun command line (`--restart` and the progress bars are not; a positional is one
    of the command's words); `always`: written there even at its default. A spelling without a leading `-` is a
    positional argument (`memaudit solve PACKAGE`)."""

    spelling: str
    default: Any = UNSET
    help: str | Callable[[str], str] | Mapping[str, str] | None = None
    choices: tuple | None = None
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()
    switch: bool = False
    negated: bool = False
    cli_default: Any = UNSET
    rerun: bool = True
    dest: str | None = None  # the parsed arguments' attribute, when not the spelling's (`--reader`: answerer)
    nargs: str | None = None  # `?`, `*` or `+`: a list of values after one flag (`reproduce --only 00 03`)
    action: str | None = None  # `append`: the flag may be given again, each value added (`data fetch --source`)
    always: bool = False  # written into the rerun line even at its default (`reproduce` records every directory)

    @property
    def attribute(self) -> str:
        return self.dest or self.spelling.lstrip("-").replace("-", "_")


def flag(setting: str | Setting, default=MISSING, *, factory=None, path: bool = False, last: bool = False,
         systems: bool = False, models: tuple[str, ...] = (), **declared):
    """A configuration field and the flag that sets it. `setting` is the flag's spelling, or a shared `Setting`
    (the LLM options, `--out`, `--restart` ...) whose declaration `declared` may adjust (`help=`, `choices=`).
    `systems`: a list of system specs (joined by `;` when one holds a comma); `models`: the roles of a
    role → model id field, each spelled `--ROLE-model`; `path`: rerun relative to the project root; `last`:
    written after every other flag (`--out`)."""
    setting = replace(setting, **declared) if isinstance(setting, Setting) else Setting(setting, **declared)
    if default is MISSING and factory is None:
        default = MISSING if setting.default is UNSET else setting.default
    meta = {"flag": setting.spelling, "path": path, "last": last, "systems": systems, "models": models,
            "setting": setting}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


def setting_fields(config_class) -> list:
    """The dataclass fields of `config_class` declared with `flag()` and a full declaration, in field order."""
    return [f for f in fields(config_class) if f.metadata.get("setting") is not None]


def _default(f):
    return f.default if f.default is not MISSING else f.default_factory() if f.default_factory is not MISSING \
        else MISSING


def _typed(value) -> str:
    """A default as a user would type it (a systems list as `--systems` takes it)."""
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
        return (";" if any("," in i for i in items) else ",").join(items)
    return str(value)


def add_setting(parser: argparse.ArgumentParser, setting: Setting, default=MISSING,
                roles: Iterable[str] = ()) -> None:
    """The argparse argument(s) of one setting: one per role for a role → model field."""
    if roles:
        helps = setting.help or {}
        for role in roles:
            parser.add_argument(f"--{role}-model", default=None, help=helps.get(role))
        return
    default = setting.cli_default if setting.cli_default is not UNSET else MISSING if default is UNSET else default
    shown = _typed(default) if isinstance(default, (list, tuple)) else default
    text = setting.help(_typed(default)) if callable(setting.help) else setting.help
    options = {"dest": setting.attribute, "help": text}
    if setting.switch or setting.negated:
        options["action"] = "store_true"
    else:
        if setting.action is not None:
            options["action"] = setting.action
        if default is MISSING:
            options["required"] = True
        else:
            options["default"] = shown
        for name in ("nargs", "choices", "type", "metavar"):
            if getattr(setting, name) is not None:
                options[name] = getattr(setting, name)
    if not setting.spelling.startswith("-"):  # a positional: argparse names it by its spelling, always required
        del options["dest"]
        options.pop("required", None)
    parser.add_argument(setting.spelling, *setting.aliases, **options)


def add_config_arguments(parser: argparse.ArgumentParser, config_class, *names: str,
                         adjust: Mapping[str, Mapping[str, Any]] = {}) -> None:
    """The arguments of `config_class`'s settings: those named, in that order (so `--help` reads in the order a
    user scans it), or with no names every setting not added yet, in field order. `adjust`: per field, what only
    the parser being built knows (`data fetch --dataset`'s choices are the data sets registered), as `Setting`
    fields."""
    added = parser.__dict__.setdefault("_config_fields", set())
    declared = {f.name: f for f in setting_fields(config_class)}
    for name in names or [n for n in declared if n not in added]:
        f = declared[name]
        setting = replace(f.metadata["setting"], **adjust.get(name, {}))
        add_setting(parser, setting, _default(f), f.metadata["models"])
        added.add(name)


def config_from(args: argparse.Namespace, config_class, **given):
    """`config_class` from parsed arguments: every setting read from its flag, `given` for the rest."""
    values = {}
    for f in setting_fields(config_class):
        setting, meta = f.metadata["setting"], f.metadata
        if meta["models"]:
            value = {role: model for role in meta["models"] if (model := getattr(args, f"{role}_model", None))}
        else:
            value = getattr(args, setting.attribute)
            if setting.negated:
                value = not value
            elif meta["systems"] and isinstance(value, str):
                value = split_systems(value)
        values[f.name] = value
    return config_class(**{**values, **given})


def split_systems(spec: str) -> list[str]:
    """`a,b` or, when parameters contain commas, `a:x=1,y=2;b`."""
    if ";" in spec:
        return [s.strip() for s in spec.split(";") if s.strip()]
    return [s.strip() for s in spec.split(",") if s.strip()]


def check_settings(config) -> None:
    """Each setting of `config` as its flag would read it — type, bounds and choices, by the flag's own parsing —
    whoever made the configuration; a refused value is one line naming the flag (`InputError`)."""
    for f in setting_fields(config):
        check_value(f.metadata["setting"], getattr(config, f.name), f.metadata, _default(f))


def check_value(setting: Setting, value, meta: Mapping = {}, default=MISSING) -> None:
    spelling = setting.spelling
    if meta.get("models"):
        if not isinstance(value, dict) or not all(isinstance(m, str) and m for m in value.values()):
            raise InputError(spelling, _shown(value), "expected role → model id (text)")
        unknown = sorted(set(value) - set(meta["models"]))
        if unknown:
            raise InputError(f"--{unknown[0]}-model", _shown(value[unknown[0]]),
                             f"this command has no such role; roles: {', '.join(meta['models'])}")
        return
    if value is None and (default is None or setting.cli_default is not UNSET):
        return
    if setting.switch or setting.negated:
        if not isinstance(value, bool):
            raise InputError(spelling, _shown(value), "expected True or False")
        return
    if setting.nargs in ("*", "+") or setting.action == "append":
        if not isinstance(value, (list, tuple)) or setting.nargs == "+" and not value:
            raise InputError(spelling, _shown(value), "expected a list of values" + " (one or more)" *
                             (setting.nargs == "+"))
        for item in value:
            check_value(replace(setting, nargs=None, action=None), item, {k: v for k, v in meta.items()
                                                                           if k != "systems"})
        return
    if meta.get("systems"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
            raise InputError(spelling, _shown(value), "expected a list of system specs (text)")
        return
    if meta.get("path"):
        if not isinstance(value, (str, os.PathLike)):
            raise InputError(spelling, _shown(value), "expected a path")
        return
    if setting.type is not None:
        try:
            parsed = setting.type(_typed(value)) if not isinstance(value, bool) else None
        except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
            raise InputError(spelling, _shown(value), str(exc)) from None
        if isinstance(value, bool) or parsed != value or isinstance(value, str) and not isinstance(parsed, str):
            what = "a number" if parsed is None or isinstance(parsed, str) else f"a {type(parsed).__name__}"
            raise InputError(spelling, _shown(value), f"expected {what}, got {type(value).__name__}")
    elif not isinstance(value, str):
        raise InputError(spelling, _shown(value), f"expected text, not {type(value).__name__}")
    if setting.choices is not None and value not in setting.choices:
        raise InputError(spelling, _shown(value), f"expected one of {', '.join(map(str, setting.choices))}")


def _shown(value, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
