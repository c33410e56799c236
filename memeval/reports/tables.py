"""Table helpers every benchmark's report uses: a DataFrame as a report prints it, interval cells, and the note
naming each system's n when systems were measured on different question sets. An interval resampling fewer than
two units prints "n/a (1 conversation)". LoCoMo's tables beside its published baselines are
memeval/benchmarks/locomo/tables.py."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from memeval.records import AnswerRow, JudgmentRow

Rows = Sequence[AnswerRow]
Judgments = Sequence[JudgmentRow]


def readable_frame(frame, labels: Mapping[str, str] | None = None, digits: int | Mapping[str, int] = 3):
    """A DataFrame as a report prints it: column and index names renamed by `labels` (never a raw field name),
    a float column holding only whole numbers as integers (a count that went through a transpose or a mean), other
    floats to `digits` decimals (one number, or per column label after renaming, default 3), missing as "–"."""
    import pandas as pd

    labels = dict(labels or {})
    out = frame.rename(columns=labels)
    if isinstance(out.index, pd.MultiIndex):
        out.index = out.index.set_names([labels.get(n, n) for n in out.index.names])
    else:
        out.index = out.index.rename(labels.get(out.index.name, out.index.name))
    if isinstance(out.columns, pd.Index) and out.columns.name in labels:
        out.columns = out.columns.rename(labels[out.columns.name])

    def places(column) -> int:
        if isinstance(digits, Mapping):
            return digits.get(column, 3)
        return digits

    shown = {}
    for column in out.columns:
        values = out[column]
        if not pd.api.types.is_float_dtype(values):
            shown[column] = values.map(lambda v: "–" if v is None or (isinstance(v, float) and v != v) else v)
            continue
        filled = values.dropna()
        whole = bool(len(filled)) and bool((filled == filled.round()).all())
        n = places(column)
        shown[column] = values.map(lambda v, whole=whole, n=n: "–" if v != v else f"{v:.0f}" if whole else f"{v:.{n}f}")
    return pd.DataFrame(shown, index=out.index, columns=out.columns)


def ci_cell(low: float | None, high: float | None, fmt, units: int | None = None, unit: str = "conversation") -> str:
    """"[low, high]" formatted by `fmt`, or "n/a (1 conversation)" when the bootstrap had fewer than two `unit`s to
    resample (every resample is the same, so the "interval" would only repeat the estimate) or no bounds."""
    if units is not None and units < 2:
        return f"n/a ({units} {unit if units == 1 else unit + 's'})"
    if low is None or high is None or low != low or high != high:
        return "n/a"
    return f"[{fmt(low)}, {fmt(high)}]"


def question_sets(systems: Mapping[str, Rows | Judgments]) -> dict[str, frozenset]:
    """Each system's sample ids (systems without rows left out)."""
    sets = {name: frozenset(r.sample_id for r in rows if r.sample_id is not None)
            for name, rows in systems.items()}
    return {name: ids for name, ids in sets.items() if ids}


def question_set_note(systems: Mapping[str, Rows | Judgments]) -> str | None:
    """A note naming each system's n when the systems were measured on different sets of sample ids (an imported
    system covering part of the questions, runs with other selections); None when the sets are the same."""
    return different_sets_note(question_sets(systems))


def different_sets_note(sets: Mapping[str, frozenset]) -> str | None:
    """The note of `question_set_note`, from each system's set of sample ids."""
    sets = {name: ids for name, ids in sets.items() if ids}
    if len(set(sets.values())) <= 1:
        return None
    common = frozenset.intersection(*sets.values())
    counts = ", ".join(f"{name} n = {len(ids):,}" for name, ids in sets.items())
    return (f"Systems measured on different question sets ({counts}; {len(common):,} in common): each row is over "
            "its own questions, so the rows are not a like-for-like comparison; paired differences use only the "
            "questions in common.")


def present_categories(systems: Mapping[str, Rows]) -> tuple[int, ...]:
    """The categories the systems' questions hold, in id order (a selection such as the prototype's 20 need not
    hold all five)."""
    return tuple(sorted({int(r.category) for rows in systems.values() for r in rows if r.category is not None}))


def runs_per_question(runs: Collection[int]) -> str:
    """The judge runs that ran per question, as the judgments hold them: "1 run per question", "3–10 runs per
    question" (rows without their scores say nothing)."""
    runs = [n for n in runs if n]
    if not runs:
        return "its runs per question not recorded,"
    low, high = min(runs), max(runs)
    return (f"{low} run" if high == low == 1 else f"{low} runs" if low == high else f"{low}–{high} runs") + \
        " per question"
