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


SHARED_ROWS = ("AnswerRow", "JudgmentRow")  # memeval.records: the rows the shared tables and the viewer read


def answer_kinds() -> dict[str, str]:
    """Every spelling of a kind whose directories hold the shared answer and judgment rows (the kind, its older
    spellings, the commands writing the same rows, such as an import) -> the kind, in registration order: what
    `memeval results` and `memeval view` read."""
    out: dict[str, str] = {}
    for benchmark in declarations():
        for kind, run in benchmark.tasks.items():
            if (run.answer_record, run.judgment_record) == SHARED_ROWS:
                out.update(dict.fromkeys((kind, *run.written_by), kind))
                out.update({old: kind for old, new in benchmark.kind_aliases.items() if new == kind})
    return out


def default_answer_kind() -> str:
    """The kind the shared judges and scorers grade AnswerRow rows as when no task says (the first registered kind
    holding the shared rows: its categories name a row's category)."""
    return next(iter(answer_kinds().values()))


def title(kind: str) -> str:
    """How tables name runs of `kind` (its benchmark's title; the kind itself without one)."""
    benchmark = benchmark_of(kind)
    return benchmark.title if benchmark is not None and benchmark.title else kind


def judges(kind: str) -> dict[str, str]:
    """The declared judges a run of `kind` is judged (or re-judged) by: its benchmark's, then its own (name ->
    "module:factory"; the shared graded and binary judge any AnswerRow besides, memeval.scoring.judges)."""
    benchmark = benchmark_of(kind)
    if benchmark is None:
        return {}
    return {**benchmark.judges, **benchmark.tasks[aliases().get(kind, kind)].judges}
