"""Every judge by the name a command or notebook gives it. Each is a `memeval.engine.Judge`; a task takes any of
them whose rows it can feed (a LoCoMo answer row for graded and binary, a LongMemEval row for longmemeval, a
graph80 row for three_dim)."""

from __future__ import annotations

from collections.abc import Callable


def graded(runs: int | None = None):
    from memeval.scoring.judge import GRADED_RUNS, GradedJudge

    return GradedJudge(GRADED_RUNS if runs is None else runs)


def binary(runs: int | None = None):
    from memeval.scoring.judge import BinaryJudge

    return BinaryJudge(1 if runs is None else runs)


def evermemos(runs: int | None = None):
    from memeval.benchmarks.locomo.evermemos_judge import RUNS, EverMemOSJudge

    return EverMemOSJudge(RUNS if runs is None else runs)


def longmemeval():
    from memeval.benchmarks.longmemeval.judge import LongMemEvalJudge

    return LongMemEvalJudge()


def three_dim(questions):
    from memeval.benchmarks.graph80.judge import ThreeDimJudge

    return ThreeDimJudge(questions)


def label(packages):
    from memeval.natural.audit import LabelAdjudicator

    return LabelAdjudicator(packages)


JUDGES: dict[str, Callable] = {"graded": graded, "binary": binary, "evermemos": evermemos, "longmemeval": longmemeval,
                               "three_dim": three_dim, "label": label}
