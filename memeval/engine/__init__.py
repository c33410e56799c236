"""One engine for every benchmark. A benchmark is a `Task` (its samples, how a unit of them is answered, its
judges, its report); `run_task` owns everything else once: the checked client, the run directory's identity,
claim and lock (`run_directory`: sweeps, imports and natural builds hold their directories through it too), resume,
the answer and judge stages, counts, what is missing, the report and the manifest.

A new benchmark is one module: subclass `Task`, give it a `Judge` (or use a registered one), call `run_task`.
`docs/layout.md` shows a complete one in under 60 lines (a test runs it). Names load lazily, so a judge module
can import `Judge` without pulling in the engine's run loop.
"""

from importlib import import_module

_WHERE = {"Judge": "judge", "Task": "task", "Unit": "task", "ModelSettings": "roles", "RunOutcome": "run",
          "RunSettings": "run", "run_task": "run", "JudgeCounts": "judging", "AnswerCounts": "run",
          "Directory": "directory", "run_directory": "directory"}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'memeval.engine' has no attribute {name!r}")
    return getattr(import_module(f"memeval.engine.{_WHERE[name]}"), name)
