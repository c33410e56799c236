import json

import pytest

from memeval.errors import InputError
from memeval.jsonl import read_rows
from memeval.memaudit import sweep as sweep_mod
from memeval.memaudit.generators import generate
from memeval.memaudit.sweep import CertificationError, SweepConfig, run_sweep

METHODS = ["opt", "gvt", "density_only", "no_tombstone_opt", "recency_raw"]


def _config(**kw):
    base = dict(kind="small", distribution="base", seeds=12, budgets=[2, 4], methods=METHODS, n_jobs=1, chunk=4,
                n_boot=200)
    return SweepConfig(**{**base, **kw})


def _keys(rows):
    return sorted((r["package_id"], r["budget"], r["method"]) for r in rows)


def test_outputs_and_fields(tmp_path):
    summary = run_sweep(_config(), tmp_path, progress=False)
    rows = read_rows(tmp_path / "raw_results.jsonl")
    assert len(rows) == 12 * 2 * len(METHODS) and len(set(_keys(rows))) == len(rows)
    for field in ("package_id", "seed", "distribution", "budget", "method", "value", "opt", "ratio", "certified",
                  "invalidation_units_covered", "runtime_s"):
        assert field in rows[0]
    assert all(r["certified"] for r in rows) and summary["opt_certified"] == 24
    row = next(r for r in summary["rows"] if r["method"] == "no_tombstone_opt" and r["budget"] == 2)
    assert set(row) >= {"distribution", "budget", "method", "mean_ratio", "ci_low", "ci_high", "n", "certified",
                        "mean_invalidation_covered"}
    assert row["n"] == 12 and row["ci_low"] <= row["mean_ratio"] <= row["ci_high"]
    opt_row = next(r for r in summary["rows"] if r["method"] == "opt")
    assert opt_row["mean_ratio"] == 1.0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["seeds"] == 12 and "highspy" in manifest["solver_versions"]
    assert "git_sha" in manifest and manifest["package_versions"]["cvxpy"]


def test_resume_reuses_rows_and_survives_a_torn_line(tmp_path):
    run_sweep(_config(), tmp_path, progress=False)
    path = tmp_path / "raw_results.jsonl"
    reference = _keys(read_rows(path))
    again = run_sweep(_config(), tmp_path, progress=False)
    assert again["computed_rows"] == 0
    # simulate a kill mid-write: drop the last 30 rows and leave half a line. A package is recomputed whole
    # when any of its rows is missing, and only its missing rows are written again.
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-30]) + lines[-30][: len(lines[-30]) // 2])
    resumed = run_sweep(_config(), tmp_path, progress=False)
    rows = read_rows(path)
    assert _keys(rows) == reference and resumed["computed_rows"] == 30
    assert len(rows) == len(reference)
    # another configuration (more seeds) is refused: its rows would mix with these
    with pytest.raises(InputError, match=r"identity: this directory holds a memaudit sweep with other settings "
                                         r"\(seeds: 12 here, 14 asked\); use another --out, or --restart to move it aside"):
        run_sweep(_config(seeds=14), tmp_path, progress=False)
    assert _keys(read_rows(path)) == reference
    # --restart moves the old sweep aside, whole, and starts afresh
    restarted = run_sweep(_config(seeds=14), tmp_path, progress=False, restart=True)
    aside = [p for p in tmp_path.parent.iterdir() if p.name.startswith(tmp_path.name + ".replaced-")]
    assert len(aside) == 1 and _keys(read_rows(aside[0] / "raw_results.jsonl")) == reference
    assert restarted["moved_aside"] == str(aside[0]) and restarted["reused_rows"] == 0


def test_parallel_equals_serial(tmp_path):
    a = run_sweep(_config(n_jobs=1), tmp_path / "a", progress=False)
    b = run_sweep(_config(n_jobs=2), tmp_path / "b", progress=False)
    assert a["rows"] == b["rows"]


def _untimed_rows(path):
    """Every row as written, but for its timings (the solvers' runtimes), keyed by (package, budget, method)."""
    out = {}
    for row in read_rows(path):
        row.pop("runtime_s")
        if row.get("certificate"):
            row["certificate"].pop("milp_runtime_s", None)
        out[(row["package_id"], row["budget"], row["method"])] = json.dumps(row, sort_keys=True)
    return out


def test_rows_are_identical_at_any_jobs_and_chunking(tmp_path):
    """Every writer, OPT certified by the MILP: one process and two workers (with tasks of other sizes) write the
    same rows, field for field, but for their timings."""
    from memeval.memaudit.writers import ALL_WRITERS

    kw = dict(methods=list(ALL_WRITERS), seeds=10, budgets=[2, 8, 16], certify="milp")
    run_sweep(_config(n_jobs=1, chunk=25, **kw), tmp_path / "serial", progress=False)
    run_sweep(_config(n_jobs=2, chunk=3, **kw), tmp_path / "parallel", progress=False)
    serial = _untimed_rows(tmp_path / "serial" / "raw_results.jsonl")
    assert len(serial) == 10 * 3 * len(ALL_WRITERS)
    assert _untimed_rows(tmp_path / "parallel" / "raw_results.jsonl") == serial


@pytest.mark.parametrize(("packages", "workers", "cap", "size"),
                         [(500, 2, 25, 25), (100, 2, 25, 13), (12, 2, 4, 2), (3, 8, 25, 1), (0, 2, 25, 1)])
def test_chunks_give_each_worker_several_tasks_up_to_the_cap(packages, workers, cap, size):
    assert sweep_mod.chunk_size(packages, workers, cap) == size


def test_certify_milp_agrees(tmp_path):
    summary = run_sweep(_config(distribution="temporal_interval", seeds=3, budgets=[1, 2, 6], certify="milp"),
                        tmp_path, progress=False)
    assert summary["opt_certified"] == 9
    cert = next(r for r in read_rows(tmp_path / "raw_results.jsonl") if r["method"] == "opt")["certificate"]
    assert cert["milp_status"] == "optimal" and cert["milp_gap"] == 0.0


def test_certification_disagreement_fails_loudly(tmp_path, monkeypatch):
    from memeval.memaudit import milp

    original = milp.MilpModel.solve

    def off_by_a_bit(self, budget, time_limit=60.0):
        res = original(self, budget, time_limit)
        res.value += 0.01
        return res

    monkeypatch.setattr(milp.MilpModel, "solve", off_by_a_bit)
    with pytest.raises(CertificationError, match="MILP"):
        run_sweep(_config(seeds=2, certify="milp"), tmp_path, progress=False)


def test_uncertified_opt_rows_are_excluded(tmp_path, monkeypatch):
    real = sweep_mod.solve_exact

    def limited(cp, budget, k, allowed, solver):
        res = real(cp, budget, k, allowed, solver)
        if budget == 4:
            res.certified, res.status = False, "node_limit"
        return res

    monkeypatch.setattr(sweep_mod, "solve_exact", limited)
    summary = run_sweep(_config(seeds=3), tmp_path, progress=False)
    row = next(r for r in summary["rows"] if r["budget"] == 4 and r["method"] == "gvt")
    assert row["n"] == 0 and row["excluded_uncertified"] == 3 and row["mean_ratio"] is None
    assert summary["opt_certified"] == 3


def test_sweep_natural_over_a_directory(tmp_path, cli):
    pkgs = tmp_path / "pkgs"
    for seed in range(3):
        generate("density_trap", seed).write(pkgs / f"p{seed}.json")
    proc = cli("sweep", "natural", "--packages", pkgs, "--budgets", "3,6", "--methods", "opt,gvt,estimated_gvt",
               "--out", tmp_path / "out", "--quiet", "--jobs", "1")  # the first spellings: alias and --quiet
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["opt_certified"] == 6 and {r["distribution"] for r in summary["rows"]} == {"density_trap"}


def test_solve_cli_json_and_errors(tmp_path, cli):
    path = generate("base", 7).write(tmp_path / "p.json")
    out = cli("solve", str(path), "--budget", "4", "--json", check=True)
    doc = json.loads(out.stdout)
    assert set(doc) >= {"package_id", "budget", "method", "value", "certified", "status", "selected", "cost", "runtime_s"}
    assert doc["certified"] is True and doc["value"] == pytest.approx(7.25)
    milp = json.loads(cli("memaudit", "solve", path, "--budget", "4", "--method", "milp", "--json",
                          check=True).stdout)
    assert milp["value"] == pytest.approx(doc["value"]) and milp["gap"] == 0.0
    bad = cli("solve", str(tmp_path / "missing.json"), "--budget", "4")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "missing.json" in bad.stderr


def test_sweep_directories_written_before_typed_records_resume_unchanged(tmp_path):
    import shutil
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "v1"
    shutil.copytree(fixtures / "sweep_small", tmp_path / "small")
    old = json.loads((fixtures / "sweep_small" / "summary.json").read_text())
    summary = run_sweep(_config(seeds=2, budgets=[4, 8], methods=["opt", "gvt", "greedy"]), tmp_path / "small",
                        progress=False)
    assert (summary["computed_rows"], summary["reused_rows"]) == (0, 12)
    assert summary["rows"] == old["rows"]

    rows = sweep_mod.load_sweep_rows(fixtures / "sweep_natural")
    union = {r.method: (r.system, r.pruning) for r in rows if r.is_union}
    assert union["union:rag_turns:upper"] == ("rag_turns", "upper")
    summary = sweep_mod.summarize(rows, n_boot=200)
    old = json.loads((fixtures / "sweep_natural" / "summary.json").read_text())["rows"]
    assert [{k: v for k, v in r.as_dict().items() if k not in ("system", "pruning")} for r in summary] == old


def test_a_sweep_directory_holds_one_configuration(tmp_path, cli):
    """Reuse with other parameters is refused in one line; a killed first run (rows, manifest not yet complete)
    resumes; refused arguments leave no directory behind."""
    first = cli("memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "2,4", "--methods", "opt,gvt", "--jobs",
                "1", "--out", tmp_path / "s", "--no-progress", check=True)
    assert "12 rows (12 computed, 0 reused)" in first.stdout
    base = {"--n-seeds": "3", "--budgets": "2,4", "--methods": "opt,gvt"}
    for change in ({"--distribution": "update_chain"}, {"--n-seeds": "2"}, {"--budgets": "2"}, {"--methods": "opt"},
                   {"--certify": "milp"}):
        argv = [x for kv in {**base, **change}.items() for x in kv]
        refused = cli("memaudit", "sweep", "small", *argv, "--jobs", "1", "--out", tmp_path / "s", "--no-progress")
        assert refused.returncode == 2 and "use another --out" in refused.stderr, change
        assert len(refused.stderr.strip().splitlines()) == 1
    same = cli("memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "4,2", "--methods", "gvt,opt", "--jobs", "2",
               "--out", tmp_path / "s", "--no-progress", check=True)  # order and worker count are not identity
    assert "12 rows (0 computed, 12 reused)" in same.stdout

    killed = tmp_path / "killed"
    run_sweep(_config(seeds=3, budgets=[2]), killed, progress=False)
    manifest = json.loads((killed / "manifest.json").read_text())
    (killed / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    lines = (killed / "raw_results.jsonl").read_text().splitlines(keepends=True)
    (killed / "raw_results.jsonl").write_text("".join(lines[:4]))
    resumed = run_sweep(_config(seeds=3, budgets=[2]), killed, progress=False)
    assert resumed["computed_rows"] == len(lines) - 4
    assert json.loads((killed / "manifest.json").read_text())["complete"] is True

    missing = cli("memaudit", "sweep", "natural", "--packages", tmp_path / "none", "--budgets", "30",
                  "--out", tmp_path / "never")
    assert missing.returncode == 2 and not (tmp_path / "never").exists()


def test_opt_certificates_say_what_they_prove_and_summaries_count_disagreements(tmp_path):
    from memeval.memaudit.sweep import disagreements
    from memeval.records import SweepRow, read_records

    summary = run_sweep(SweepConfig(kind="small", budgets=[2.0, 8.0], methods=["opt", "greedy"], distribution="base",
                                    seeds=3, certify="milp", n_jobs=1), tmp_path / "s", progress=False)
    assert summary["opt_disagreements"] == 0 and summary["opt_uncertified"] == 0 and summary["opt_certified"] == 6
    rows = [r for r in read_records(tmp_path / "s" / "raw_results.jsonl", SweepRow) if r.method == "opt"]
    for row in rows:
        c = row.certificate
        assert c["opt_solver"] == "bnb" and c["opt_status"] == "optimal" and c["agree"] is True
        assert c["opt_dual_bound"] >= row.value and c["milp_dual_bound"] >= row.value - 1e-9
        assert c["milp_gap"] <= c["tolerances"]["milp_cert_gap"] and c["tolerances"]["value_rtol"] == 1e-9
    bad = rows[0].model_copy(update={"certified": False, "certificate": {**rows[0].certificate, "agree": False}})
    assert disagreements([bad, *rows[1:]]) == 1
