"""Every task by the `kind` its run directories record, loaded on first use (importing a benchmark pulls in its data
loaders and systems); what reads a run directory asks here for the records of its files."""

from __future__ import annotations

from importlib import import_module

TASKS = {"locomo run": "memeval.qa.locomo_run:LocomoTask",
         "longmemeval run": "memeval.qa.longmemeval_run:LongMemEvalTask",
         "graph80 run": "memeval.graph80.study:Graph80Task"}
ALIASES = {"memeval locomo run": "locomo run"}  # how the earliest manifests spelled the command


def task_class(kind: str):
    """The Task class of a run kind; KeyError for a kind that is not a task (a sweep, a build)."""
    module, name = TASKS[ALIASES.get(kind, kind)].split(":")
    return getattr(import_module(module), name)
