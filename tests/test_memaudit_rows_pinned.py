"""The rows a sweep writes are pinned: every speed-up of the solvers, writers or the sweep itself must write the
same rows, byte for byte but for timings. `fixtures/sweep_row_digests.json` holds, per package, a SHA-256 of its
untimed rows from a small sweep of every distribution (6 seeds, budgets 1-16, the default writers, OPT checked by
parts), written by the code at 0c636e4, before the sweep was profiled down to its floor (issue 28)."""

import hashlib
import json
from pathlib import Path

import pytest

from memeval.memaudit.generators import DISTRIBUTIONS
from memeval.memaudit.sweep import SweepConfig, run_sweep

PINNED = json.loads((Path(__file__).parent / "fixtures" / "sweep_row_digests.json").read_text())


def untimed_digests(raw_results: Path) -> dict[str, str]:
    by_package: dict[str, list[str]] = {}
    for line in raw_results.read_text().splitlines():
        row = json.loads(line)
        row.pop("runtime_s", None)
        if row.get("certificate"):
            row["certificate"].pop("parts_runtime_s", None)
        by_package.setdefault(row["package_id"], []).append(json.dumps(row, sort_keys=True))
    return {pid: hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest() for pid, rows in by_package.items()}


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_sweep_rows_are_those_the_code_wrote_before_it_was_tuned(distribution, tmp_path):
    config = SweepConfig(kind="small", budgets=[1, 2, 4, 8, 16], distribution=distribution, seeds=6, n_jobs=1,
                         certify="parts")
    run_sweep(config, tmp_path / "sweep", progress=False)
    got = untimed_digests(tmp_path / "sweep" / "raw_results.jsonl")
    want = {pid: digest for pid, digest in PINNED.items() if pid.startswith(f"small-{distribution}-")}
    assert len(want) == 6
    assert got == want, sorted(pid for pid in want if got.get(pid) != want[pid])
