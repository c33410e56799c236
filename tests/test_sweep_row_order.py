"""A sweep's rows reach every reader in one order, whatever order its workers wrote them in: the seeded bootstrap
resamples rows by position, so two runs of one sweep (joblib returns chunks as they finish) must give the same
intervals to the bit."""

from __future__ import annotations

import json
import random

from memeval.records import SweepRow, read_records, union_method, write_records

STORES = (("rag_turns", "upper"), ("observations", "salience"))


def _rows() -> list[SweepRow]:
    """Union rows of a natural sweep: 9 packages, two stores, two budgets, ratios spread so a resample's mean
    depends on which packages it draws."""
    rows = []
    for n in range(9):
        for budget in (30.0, 60.0):
            for i, (system, pruning) in enumerate(STORES):
                ratio = round(((n * 7 + i * 3) % 10) / 10 + budget / 1000, 4)
                rows.append(SweepRow(
                    package_id=f"locomo-natural-conv-26-q{n:04d}", seed=None, distribution="locomo-natural",
                    budget=budget, max_per_group=1, method=union_method(system, pruning), value=ratio * 2,
                    opt=2.0, ratio=ratio, certified=True, invalidation_units_covered=None, cost=budget / 2,
                    selected=[], runtime_s=0.01, system=system, pruning=pruning, opt_package=1.5,
                    package_ratio=ratio * 4 / 3, exported=4 + n % 3, exported_fitting=n % 2))
    return rows


def _written(directory, rows) -> None:
    from memeval.jsonl import JsonlWriter

    directory.mkdir()
    with JsonlWriter(directory / "raw_results.jsonl") as writer:
        write_records(writer, rows)


def _aggregates(rows) -> str:
    """What notebook 05 and the publication compute from a natural sweep's rows, as text to compare byte for byte."""
    from memeval.publication.figures_memaudit import store_intervals
    from memeval.reports.natural import store_table

    intervals = {"|".join(map(str, k)): [v.estimate, v.low, v.high] for k, v in store_intervals(rows).items()}
    return json.dumps(intervals) + store_table(rows).to_csv()


def test_rows_in_two_write_orders_give_byte_identical_intervals(tmp_path):
    from memeval.memaudit.sweep import load_sweep_rows

    rows = _rows()
    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    _written(tmp_path / "a", rows)
    _written(tmp_path / "b", shuffled)
    first, second = load_sweep_rows(tmp_path / "a"), load_sweep_rows(tmp_path / "b")
    assert first == second
    assert [r.key for r in first] == sorted(r.key for r in rows)
    assert _aggregates(first) == _aggregates(second)
    # read in file order, the same rows give other intervals: what the one sort on load removes
    as_written = [read_records(tmp_path / d / "raw_results.jsonl", SweepRow) for d in ("a", "b")]
    assert _aggregates(as_written[0]) != _aggregates(as_written[1])


def test_a_superseded_row_is_left_out_and_the_order_kept(tmp_path):
    """The latest row per key still wins (a package recomputed after its content changed)."""
    from memeval.records import load_sweep_rows

    rows = _rows()
    newer = rows[0].replace(ratio=0.123, package_sha256="b" * 64)
    _written(tmp_path / "a", [*reversed(rows), newer])
    loaded = load_sweep_rows(tmp_path / "a" / "raw_results.jsonl")
    assert len(loaded) == len(rows) and next(r for r in loaded if r.key == newer.key) == newer
    assert [r.key for r in loaded] == sorted(r.key for r in rows)
