"""Every task by the `kind` its run directories record, from the benchmarks' declarations, loaded on first use
(importing a benchmark pulls in its data loaders and systems); what reads a run directory asks here for the records
of its files."""

from __future__ import annotations

from memeval.benchmarks import declarations, load


def run_kinds() -> dict:
    """Every run kind -> its RunKind (Task and record names)."""
    return {kind: run for benchmark in declarations() for kind, run in benchmark.tasks.items()}


def aliases() -> dict[str, str]:
    """Older spellings of run kinds -> the kind."""
    return {old: kind for benchmark in declarations() for old, kind in benchmark.kind_aliases.items()}


def task_class(kind: str):
    """The Task class of a run kind; KeyError for a kind that is not a task (a sweep, a build)."""
    return load(run_kinds()[aliases().get(kind, kind)].task)


def benchmark_of(kind: str):
    """The declaration (memeval.benchmarks.Benchmark) whose tasks record `kind`, or None."""
    kind = aliases().get(kind, kind)
    return next((b for b in declarations() if kind in b.tasks), None)


def categories(kind: str):
    """The CategorySet of the benchmark that records `kind`; None for a kind without categories."""
    benchmark = benchmark_of(kind)
    return load(benchmark.categories) if benchmark is not None and benchmark.categories else None
