"""Every judge by the name a command or notebook gives it: the shared ones here, then those each registered benchmark
declares (`Benchmark.judges`, name -> "module:factory", imported only when named). Each is a `memeval.engine.Judge`;
a task takes any of them whose rows it can feed (an AnswerRow for graded and binary, a benchmark's own rows for the
judges it declares)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from memeval.benchmarks import declarations, load


def graded(runs: int | None = None):
    from memeval.scoring.judge import GRADED_RUNS, GradedJudge

    return GradedJudge(GRADED_RUNS if runs is None else runs)


def binary(runs: int | None = None):
    from memeval.scoring.judge import BinaryJudge

    return BinaryJudge(1 if runs is None else runs)


# The natural packages' coverage-label judge is named like a declared one ("module:factory", loaded when named), so
# scoring/ does not depend on natural/, which scores with scoring's stemmer.
SHARED: dict[str, Callable | str] = {"graded": graded, "binary": binary,
                                     "label": "memeval.natural.audit:LabelAdjudicator"}


def declared() -> dict[str, str]:
    """The judges the registered benchmarks bring (each benchmark's, then its run kinds' own), in registration
    order."""
    return {name: target for benchmark in declarations()
            for name, target in [*benchmark.judges.items(),
                                 *(item for run in benchmark.tasks.values() for item in run.judges.items())]}


class Judges(Mapping[str, Callable]):
    """Name -> the judge's factory: the shared ones, then the declared ones."""

    def __getitem__(self, name: str) -> Callable:
        target = SHARED[name] if name in SHARED else declared()[name]
        return load(target) if isinstance(target, str) else target

    def __iter__(self) -> Iterator[str]:
        return iter((*SHARED, *declared()))

    def __len__(self) -> int:
        return len(SHARED) + len(declared())


JUDGES: Mapping[str, Callable] = Judges()
