"""Sweeps on a Dask cluster: the same rows as a local run, and a run resumed across backends. A LocalCluster with
two worker processes stands in for a real cluster (reached through its scheduler address, as `--scheduler` is)."""

import json

import pytest

from memeval.memaudit.sweep import SweepConfig, run_sweep

distributed = pytest.importorskip("distributed")


def _rows(path):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((r["package_id"], r["budget"], r["method"], r["value"], r["certified"], tuple(r["selected"]))
                  for r in rows)


@pytest.fixture(scope="module")
def scheduler():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _config(**kw):
    return SweepConfig(kind="small", budgets=[2.0, 6.0], methods=["opt", "greedy", "density_only", "random"],
                       distribution="base", seeds=12, certify="milp", chunk=3, n_jobs=2, **kw)


def test_a_dask_sweep_gives_the_local_rows_and_resumes_across_backends(scheduler, tmp_path, cli):
    local = run_sweep(_config(), tmp_path / "local", progress=False)
    remote = run_sweep(_config(backend="dask", scheduler=scheduler), tmp_path / "dask", progress=False)
    assert _rows(tmp_path / "dask" / "raw_results.jsonl") == _rows(tmp_path / "local" / "raw_results.jsonl")
    assert remote["rows"] == local["rows"] and remote["opt_certified"] == remote["opt_rows"] == 24

    raw = tmp_path / "local" / "raw_results.jsonl"
    lines = raw.read_text().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["seed"] < 6]
    raw.write_text("".join(kept))  # as if the local run had been killed halfway
    result = cli("memaudit", "sweep", "small", "--n-seeds", "12", "--budgets", "2,6", "--methods",
                 "opt,greedy,density_only,random", "--certify", "milp", "--backend", "dask", "--scheduler", scheduler,
                 "--out", tmp_path / "local", "--no-progress", check=True)
    assert f"({len(lines) - len(kept)} computed, {len(kept)} reused)" in result.stdout
    assert _rows(raw) == _rows(tmp_path / "dask" / "raw_results.jsonl")


def test_a_scheduler_without_the_dask_backend_is_refused_before_anything_is_written(tmp_path, cli):
    result = cli("memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "2", "--scheduler", "tcp://127.0.0.1:1",
                 "--out", tmp_path / "x", "--no-progress")
    assert result.returncode == 2 and "--backend dask" in result.stderr and not (tmp_path / "x").exists()
