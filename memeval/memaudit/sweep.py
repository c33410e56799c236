"""Budget sweeps over generated or on-disk packages: per-row results (append-only, resumable), a summary
with bootstrap CIs over packages, and a manifest. Parallel through joblib (processes, one solver thread
each), so `joblib.parallel_config(backend="dask"|"ray")` moves a sweep past one machine unchanged."""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from collections import defaultdict
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from memeval import records
from memeval.atomic import write_json_atomic
from memeval.engine.directory import Directory, run_directory
from memeval.errors import InputError
from memeval.jsonl import JsonlWriter, encode_row
from memeval.memaudit.config import BACKENDS, DEFAULT_SMALL_METHODS, SweepConfig  # noqa: F401  (importable from here, as before)
from memeval.memaudit.generators import GENERATOR_VERSION, generate
from memeval.memaudit.milp import MilpModel, solver_versions, time_limit_s
from memeval.memaudit.objective import invalidation_covered
from memeval.memaudit.outcomes import Certificate, SolveStatus, SummaryRow, SweepSummary
from memeval.memaudit.package import Package, load_package
from memeval.memaudit.solvers import solve_exact
from memeval.memaudit.tolerance import values_agree
from memeval.memaudit.writers import ALL_WRITERS, gvt_budgets, package_ratio, run_writer
from memeval.progress import progress_bar
from memeval.records import PackageId, SweepRow, latest, read_records
from memeval.rundir import MANIFEST, RunDir
from memeval.scoring.aggregate import bootstrap_mean


class CertificationError(RuntimeError):
    """B&B and MILP disagree on an optimum: the oracle cannot be trusted, so the sweep stops."""


@dataclass(frozen=True)
class PackageSource:
    """How a worker obtains a package: generated from (distribution, seed, counts) or read from a file."""

    distribution: str | None = None
    seed: int | None = None
    facts: int = 3
    updates: int = 2
    count: int | None = None
    path: str | None = None

    def load(self) -> Package:
        if self.path:
            return load_package(self.path)
        return generate(self.distribution, self.seed, self.facts, self.updates, self.count)


class PackageScorer(Protocol):
    """Scores one package of a sweep: which (method, k) rows it owes, and those rows; and checks, before anything
    is written, that a directory of package files may be swept."""

    def planned(self, pkg: Package, config: SweepConfig) -> tuple[list[str], int]: ...

    def rows(self, pkg: Package, source: PackageSource, config: SweepConfig) -> list[SweepRow]: ...

    def check_directory(self, root: Path) -> None: ...


def content_hash(pkg: Package) -> str:
    """SHA-256 of a package's canonical content (`Package.to_json`): the same package gives the same hash whatever
    its file's layout; any change to what a row is computed from gives another."""
    return hashlib.sha256(pkg.to_json().encode("utf-8")).hexdigest()


def packages_digest(hashes: dict[str, str]) -> str:
    """One hash of a package set (package id → content hash), for a sweep's identity."""
    text = "".join(f"{pid}\t{sha}\n" for pid, sha in sorted(hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_packages_manifest(root: Path, required: bool = False) -> None:
    """A directory of package files that holds a `manifest.json` (a `natural build`, or a union import into one)
    is swept only once that manifest says `complete: true` (written last); `required`: a directory without one is
    refused too (an unfinished build). One line naming the file, nothing written."""
    from memeval.invocation import load_manifest

    path = RunDir(root).manifest
    if not path.is_file():
        if required:
            raise InputError(path, "manifest", "not found: the package directory is an unfinished `memeval natural "
                             "build` (the build writes its manifest last); rerun the build before sweeping it")
        return
    doc = load_manifest(path)  # torn or not an object: one line
    if doc.get("complete") is not True:
        why = "says the build did not finish" if "complete" in doc else "does not say the build finished (written " \
              "before builds recorded it)"
        raise InputError(path, "complete", f"{why}; rerun `memeval natural build` (the same settings rebuild byte "
                         "for byte) before sweeping the directory")


class WriterScorer:
    """Every writer of the sweep's methods against the certified OPT (the MEMAUDIT-Small protocol)."""

    def check_directory(self, root: Path) -> None:
        check_packages_manifest(root)

    def planned(self, pkg: Package, config: SweepConfig) -> tuple[list[str], int]:
        return list(config.methods), config.max_per_group or pkg.max_per_group

    def rows(self, pkg: Package, source: PackageSource, config: SweepConfig) -> list[SweepRow]:
        return writer_rows(pkg, source, config.budgets, config.methods, config.max_per_group, config.certify,
                           config.solver)


def check_backend(config: SweepConfig) -> None:
    if config.backend not in BACKENDS:
        raise InputError("--backend", config.backend, f"expected one of {', '.join(BACKENDS)}")
    if config.backend == "local" and config.scheduler:
        raise InputError("--scheduler", config.scheduler, "a scheduler address needs --backend dask")


SCHEDULER_TIMEOUT_S = 10


def connect_scheduler(config: SweepConfig):
    """The Dask client of `--scheduler`, connected before the sweep directory is claimed: an address where no
    scheduler answers is one line (exit 2) with nothing written. None without a scheduler address."""
    if config.backend != "dask" or not config.scheduler:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError("--backend", "dask", "needs dask.distributed: pip install 'memeval[dask]'") from None
    try:
        _handshake(config.scheduler, SCHEDULER_TIMEOUT_S)
        return Client(config.scheduler, timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError, MemoryError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError("--scheduler", config.scheduler, f"no Dask scheduler answered ({reason}); start one "
                         "(`dask scheduler`) or leave out --scheduler for a local cluster") from None


def _handshake(address: str, timeout: float) -> None:
    """Dask's own connect and handshake under one wall-clock limit, on a thread of its own (a notebook's event loop
    may be running): `Client(timeout=)` bounds the TCP connect but not the handshake read, so a port that accepts
    and stays silent hung the sweep, and one that speaks HTTP had its reply read as a frame length of exabytes."""
    import asyncio
    import threading

    from distributed.comm import connect

    async def probe() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        await comm.close()

    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(probe())
        except Exception as exc:  # noqa: BLE001 - whatever the peer sent, it is not a Dask scheduler
            failed.append(exc)

    thread = threading.Thread(target=run, name="memeval-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive():
        raise TimeoutError(f"no Dask handshake within {timeout:g} s")
    if failed:
        exc = failed[0]
        if isinstance(exc, TimeoutError) and not str(exc):  # asyncio.wait_for's says nothing
            raise TimeoutError(f"connected, but no Dask handshake within {timeout:g} s")
        if isinstance(exc, (OSError, TimeoutError, ValueError)):
            raise exc
        raise OSError(f"what answered does not speak Dask's protocol ({type(exc).__name__})")


@contextmanager
def sweep_backend(config: SweepConfig, client=None):
    """`local`: joblib's own process pool. `dask`: joblib's Dask backend on the scheduler at `config.scheduler`
    (`client`, connected by `connect_scheduler`; workers need memeval installed and, for natural sweeps, the
    package directory at the same path), or on a LocalCluster of `n_jobs` single-threaded worker processes
    started and stopped here."""
    if config.backend == "local":  # run_sweep checked the backend settings before writing anything
        yield
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--backend", "dask", "needs dask.distributed: pip install 'memeval[dask]'") from None
    from joblib import parallel_config

    cluster = None
    own = client is None
    if own:
        if config.scheduler:
            client = connect_scheduler(config)
        else:
            cluster = LocalCluster(n_workers=max(1, config.n_jobs), threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
    try:
        with parallel_config(backend="dask"):
            yield
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()


def certificate_tolerances() -> dict:
    """The tolerances an OPT row's certificate was judged under (memaudit/tolerance.py)."""
    from memeval.memaudit import tolerance

    return {"value_rtol": tolerance.VALUE_RTOL, "bound_rtol": tolerance.BOUND_RTOL,
            "milp_cert_gap": tolerance.MILP_CERT_GAP, "highs_feasibility": tolerance.HIGHS_FEASIBILITY,
            "cost_eps": tolerance.COST_EPS}


def disagreements(opt_rows) -> int:
    """OPT rows whose two solvers disagreed beyond tolerance (never certified, never a denominator)."""
    return sum(1 for r in opt_rows if r.certificate and Certificate.from_dict(r.certificate).disagrees)


def stopped_by_time(opt, second) -> bool:
    """Whether an exact solve of this OPT was cut by a wall-clock limit: it then proves nothing, and what it
    left (uncertified, or read as a disagreement) would depend on the machine's load."""
    solves = [opt, second, (opt.info or {}).get("milp")]
    return any(getattr(s, "status", None) == SolveStatus.TIME_LIMIT or
               isinstance(s, dict) and s.get("status") == SolveStatus.TIME_LIMIT for s in solves)


def writer_rows(pkg: Package, source: PackageSource, budgets: Sequence[float], methods: Sequence[str],
                max_per_group: int | None, certify: str, solver: str = "auto") -> list[SweepRow]:
    """Every (budget, method) row of one package; OPT is the certified denominator of every ratio. A budget whose
    OPT, or its second solver's check, stopped at the MILP's time limit gets no rows: the sweep is then
    incomplete and a rerun computes them (never a row that depends on the machine's load)."""
    cp = pkg.compiled
    k = cp.max_per_group if max_per_group is None else max_per_group
    meta = pkg.meta or {}
    milp_model = None
    rows = []
    every_budget = {}  # writers that score all budgets of a package in one pass, by method and budget
    if "gvt" in methods:
        every_budget["gvt"] = dict(zip([float(b) for b in budgets], gvt_budgets(cp, budgets), strict=True))
    for budget in budgets:
        opt = solve_exact(cp, budget, k, None, solver)
        opt_certified = bool(opt.certified)
        certificate = Certificate.of(opt, certificate_tolerances())  # with solve_exact(method="both")'s agreement
        second = None
        if certify == "milp":
            if milp_model is None:
                milp_model = MilpModel(cp, k)
            second = milp_model.solve(budget)
        elif certify == "parts":
            from memeval.memaudit.parts import solve_parts

            second = solve_parts(cp, budget, k)
            if "refused" in second.info:  # a part too large to enumerate is no disagreement: the MILP checks the row
                if milp_model is None:
                    milp_model = MilpModel(cp, k)
                second = milp_model.solve(budget)
        if stopped_by_time(opt, second):
            continue
        if second is not None:
            agree = values_agree(opt.value, second.value)
            certificate = certificate.checked_by(second, agree)
            if not (second.certified and agree):
                raise CertificationError(f"{pkg.package_id} B={budget}: OPT by {opt.method} = {opt.value!r} "
                                         f"({opt.status}), {certificate.check_line()}"
                                         + (f", {second.info['refused']}" if "refused" in second.info else ""))
            opt_certified = opt_certified and second.certified
        for method in methods:
            if method == "opt":
                selected, value, runtime, own_cert = opt.selected, opt.value, opt.runtime_s, opt.certified
            else:
                res = every_budget[method][float(budget)] if method in every_budget else \
                    run_writer(method, cp, budget, k, solver=solver)
                if res.status == SolveStatus.TIME_LIMIT:  # an exact restricted optimum (fact_only, ...) cut short
                    continue
                selected, value, runtime, own_cert = res.selected, res.value, res.runtime_s, res.certified
            certified = opt_certified and (own_cert is None or bool(own_cert))
            rows.append(SweepRow(
                package_id=pkg.package_id,
                seed=meta.get("seed", source.seed),
                distribution=meta.get("distribution", source.distribution or "natural"),
                budget=float(budget),
                max_per_group=k,
                method=method,
                value=value,
                opt=opt.value,
                ratio=package_ratio(value, opt.value) if opt_certified else None,
                certified=certified,
                invalidation_units_covered=invalidation_covered(cp, selected),
                cost=float(sum(cp.costs[i] for i in selected)),
                selected=[cp.candidate_ids[i] for i in sorted(selected)],
                runtime_s=runtime,
                certificate=certificate.as_dict() if method == "opt" else None,
                sample_id=meta.get("sample_id"),
            ))
    return rows


def package_rows(source: PackageSource, budgets: Sequence[float], methods: Sequence[str],
                 max_per_group: int | None, certify: str, solver: str = "auto") -> list[SweepRow]:
    return writer_rows(source.load(), source, budgets, methods, max_per_group, certify, solver)


def _chunk_rows(sources: list[PackageSource], config: SweepConfig, scorer: PackageScorer) -> list[str]:
    """Rows built (and checked) as records in the worker, sent back as their encoded lines: the main process,
    which shares the cores with the workers, only decodes and writes them (pickling 25,000 pydantic objects, or
    encoding their rows there, cost it more than building them did). Each row records the content hash of the
    package it was computed from."""
    out = []
    for s in sources:
        pkg = s.load()
        sha = content_hash(pkg)
        out += [encode_row({**row.to_row(), "package_sha256": sha}) for row in scorer.rows(pkg, s, config)]
    return out


TASKS_PER_WORKER = 4


def chunk_size(n_packages: int, workers: int, cap: int) -> int:
    """Packages per task. A task costs a round trip and a worker's first task its start-up (imports, the MILP's
    first build), so tasks are large: about TASKS_PER_WORKER per worker, enough that the last ones finishing
    leave no worker idle for long, and at most `cap` (`SweepConfig.chunk`: rows reach the file, and the progress
    bar moves, a task at a time). Rows never depend on it."""
    return max(1, min(cap, -(-n_packages // (TASKS_PER_WORKER * max(1, workers)))))


def summarize(rows: Sequence[SweepRow], n_boot: int = 2000) -> list[SummaryRow]:
    """Mean ratio with a bootstrap 95% CI over packages, per (distribution, budget, method); rows whose
    OPT is not certified are counted and excluded, never averaged. Union groups also name their store's
    `system` and `pruning`."""
    groups: dict[tuple, list[SweepRow]] = defaultdict(list)
    for row in rows:
        groups[(row.distribution, float(row.budget), row.method)].append(row)
    out = []
    for (dist, budget, method), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        members = sorted(members, key=lambda r: (r.package_id, r.max_per_group or 1))  # order-free
        usable = [r for r in members if r.certified and r.ratio is not None]
        ratios = [float(r.ratio) for r in usable]
        interval = bootstrap_mean(ratios, n_boot=n_boot, seed=0) if ratios else None
        inv = [r.invalidation_units_covered for r in usable if r.invalidation_units_covered is not None]
        out.append(
            SummaryRow(
                distribution=dist,
                budget=budget,
                method=method,
                mean_ratio=interval.estimate if interval else None,
                ci_low=interval.low if interval else None,
                ci_high=interval.high if interval else None,
                n=len(ratios),
                certified=sum(1 for r in members if r.certified),
                excluded_uncertified=len(members) - len(usable),
                mean_invalidation_covered=float(np.mean(inv)) if inv else None,
                mean_value=float(np.mean([r.value for r in usable])) if usable else None,
                **({"system": members[0].system, "pruning": members[0].pruning} if members[0].is_union else {}),
            )
        )
    return out


def _sources(config: SweepConfig) -> list[PackageSource]:
    if config.kind == "small":
        return [PackageSource(config.distribution, s, config.facts, config.updates, config.count)
                for s in range(config.seed_start, config.seed_start + config.seeds)]
    root = Path(config.packages_dir)
    paths = sorted(root.glob("*.json")) + sorted((root / "union").glob("*.json"))
    paths = [p for p in paths if p.name not in (MANIFEST, "imported_stores.json")]
    return [PackageSource(path=str(p)) for p in paths]


def load_sweep_rows(sweep_dir: str | Path) -> list[SweepRow]:
    """The sweep's rows, the latest per (package, budget, method, k) in that key's order (memeval.records): a row
    recomputed because its package's content changed supersedes the one before it."""
    path = Path(sweep_dir) / "raw_results.jsonl"
    if not path.is_file():
        raise InputError(path, "raw_results", "not found: expected a `memeval sweep` output directory")
    return records.load_sweep_rows(path)


@dataclass(frozen=True)
class PlannedPackage:
    """One package of a sweep as planned in the main process: its source, id, content hash and the (package,
    budget, method, k) keys it owes. A generated package's hash is None: the worker that builds it hashes it
    (its rows carry the hash), and the main process hashes it only to judge rows a resumed directory holds."""

    source: PackageSource
    package_id: str
    sha256: str | None
    keys: frozenset
    generated: bool


def plan_packages(config: SweepConfig, sources: list[PackageSource], scorer: PackageScorer) -> list[PlannedPackage]:
    """Every package file loaded once, before anything is written: its content hash and the rows it owes. Two
    files holding one package id are refused in one line naming both. Generated packages are not built here
    (their settings pin them; the first is built once, so settings that cannot generate fail before the
    directory is claimed)."""
    planned, where = [], {}
    checked = False
    for s in sources:
        if not s.path:
            if not checked:
                s.load()
                checked = True
            pid = str(PackageId.small(s.distribution, s.seed))
            keys = frozenset((pid, float(b), m, config.max_per_group or 1) for b in config.budgets
                             for m in config.methods)
            planned.append(PlannedPackage(s, pid, None, keys, True))
            continue
        pkg = s.load()
        methods, k = scorer.planned(pkg, config)
        pid = pkg.package_id
        if pid in where:
            raise InputError(s.path, "package_id", f"{pid!r} is also the package of {where[pid]}; a sweep "
                             "scores each package once: remove or rename one of the two files")
        where[pid] = s.path
        keys = frozenset((pid, float(b), m, k) for b in config.budgets for m in methods)
        planned.append(PlannedPackage(s, pid, content_hash(pkg), keys, False))
    return planned


def run_sweep(config: SweepConfig, out_dir: str | Path, progress: bool = True,
              scorer: PackageScorer | None = None, other_configuration: str = "refuse", restart: bool = False
              ) -> SweepSummary:
    """Run (or resume) a sweep into out_dir; returns its summary (typed, and readable as the summary.json
    document: `summary["opt_certified"]`). `scorer` decides which rows each
    package owes (default: the writers of `config.methods`; natural sweeps pass the union-aware scorer).
    A directory holding another configuration is refused in one line, unless `restart` (older spelling:
    `other_configuration="restart"`), which moves it aside to OUT.replaced-<UTC time> — never deletes it."""
    scorer = scorer or WriterScorer()
    check_backend(config)
    time_limit_s()  # a bad MEMEVAL_MILP_TIME_LIMIT is refused before anything is written
    unknown = [m for m in config.methods if m not in ALL_WRITERS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {', '.join(ALL_WRITERS)}")
    sources = _sources(config)
    if config.kind == "natural" and not sources:
        raise ValueError(f"no package files (*.json) in {config.packages_dir}")
    if config.kind == "natural":  # a scorer written before the check existed gets the generic one
        getattr(scorer, "check_directory", check_packages_manifest)(Path(config.packages_dir))
    planned = plan_packages(config, sources, scorer)
    out = Path(out_dir)
    if not restart and other_configuration != "restart":
        read_records(out / "raw_results.jsonl", SweepRow)  # a corrupt file is refused before the directory is claimed
    client = connect_scheduler(config)  # an unreachable scheduler is refused before the directory is claimed
    try:
        with run_directory(out, shlex.join(config.command_line(out)),
                           sweep_identity(config, {p.package_id: p.sha256 for p in planned}),
                           kind="memaudit sweep", command_line=config.command_line(out), config=asdict(config),
                           restart=restart or other_configuration == "restart", legacy=_legacy_identity(out)) as held:
            return _sweep_claimed(config, out, planned, scorer, progress, held, client)
    finally:
        if client is not None:
            client.close()


def _sweep_claimed(config: SweepConfig, out: Path, planned: list[PlannedPackage], scorer: PackageScorer,
                   progress: bool, held: Directory, client=None) -> SweepSummary:
    from joblib import Parallel, delayed

    claimed = held.claim
    raw_path = out / "raw_results.jsonl"
    start = time.perf_counter()
    current = {p.package_id: p.sha256 for p in planned if p.sha256 is not None}
    generated = {p.package_id for p in planned if p.generated}

    def usable(row: SweepRow) -> bool:
        """A row computed from the package as it is now. Rows written before rows carried the hash are kept
        for generated packages (the sweep's settings pin them) and recomputed for package files."""
        sha = row.package_sha256
        return row.package_id in current and (sha == current[row.package_id] or
                                              (sha is None and row.package_id in generated))

    rows_on_disk = read_records(raw_path, SweepRow)
    on_disk = {r.package_id for r in rows_on_disk}
    for p in planned:
        if p.sha256 is None and p.package_id in on_disk:  # a resumed generated package: its rows are judged
            current[p.package_id] = content_hash(p.source.load())
    valid = [r for r in rows_on_disk if usable(r)]
    superseded = sum(1 for r in rows_on_disk if r.package_id in current and not usable(r))
    done = {r.key for r in valid}
    todo = [p.source for p in planned if not p.keys <= done]
    size = chunk_size(len(todo), config.n_jobs, config.chunk)
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    written = 0
    changed: list[str] = []
    with JsonlWriter(raw_path) as writer:
        if chunks:
            with sweep_backend(config, client), \
                    progress_bar(len(todo), f"sweep {config.distribution or config.packages_dir}", "pkg",
                                 progress) as bar:
                n_jobs = -1 if config.backend == "dask" else (config.n_jobs if len(chunks) > 1 else 1)
                jobs = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                    delayed(_chunk_rows)(c, config, scorer) for c in chunks
                )
                for lines in jobs:  # written as each chunk finishes, so a killed run resumes on any backend
                    rows = [json.loads(line) for line in lines]  # each a SweepRow's written form (_chunk_rows)
                    keep = [n for n, r in enumerate(rows) if SweepRow.key_of(r) not in done]
                    written += writer.write_lines(lines[n] for n in keep)
                    for r in (rows[n] for n in keep):
                        if r["package_id"] in generated:  # hashed by the worker unless resumed rows were judged
                            current.setdefault(r["package_id"], r["package_sha256"])
                        if r["package_sha256"] == current.get(r["package_id"]):
                            valid.append(SweepRow.from_row(r, str(raw_path)))
                            done.add(SweepRow.key_of(r))
                        elif r["package_id"] not in changed:
                            changed.append(r["package_id"])
                    bar.update(len({r["package_id"] for r in rows}))
    if changed:
        where = next(p.source.path or p.package_id for p in planned if p.package_id == changed[0])
        raise InputError(where, "content", f"changed while the sweep ran ({len(changed)} package(s)); rows "
                         "computed so far are kept: rerun the sweep")
    wanted = {key for p in planned for key in p.keys}
    short = wanted - done
    missing = {} if not short else {"rows": {
        "requested": len(wanted), "missing": len(short), "packages": len({key[0] for key in short}),
        "reason": f"their OPT's exact solve stopped at the MILP's {time_limit_s():g} s time limit "
                  "(MEMEVAL_MILP_TIME_LIMIT raises it)"}}
    budgets = {float(b) for b in config.budgets}
    selected = [r for r in latest(valid, lambda r: r.key).values()
                if float(r.budget) in budgets and (r.method in config.methods or r.is_union)]
    summary_rows = summarize(selected, config.n_boot)
    elapsed = time.perf_counter() - start
    opt_rows = [r for r in selected if r.method == "opt"]
    union = [r for r in selected if r.is_union]
    summary = SweepSummary(
        rows=tuple(summary_rows),
        packages=len({r.package_id for r in selected}),
        row_count=len(selected),
        opt_rows=len(opt_rows),
        opt_certified=sum(1 for r in opt_rows if r.certified),
        opt_uncertified=sum(1 for r in opt_rows if not r.certified),
        opt_disagreements=disagreements(opt_rows),
        union_rows=len(union),
        union_certified=sum(1 for r in union if r.certified),
        certify=config.certify,
        reused_rows=len(selected) - written,
        computed_rows=written,
        superseded_rows=superseded,  # rows of an older content of a package, recomputed (never reused)
        moved_aside=None if claimed.moved_to is None else str(claimed.moved_to),
        missing=missing,
    )
    write_json_atomic(out / "summary.json", summary.as_dict())
    held.finish(missing, generator=GENERATOR_VERSION if config.kind == "small" else None,
                solver_versions=solver_versions(), wall_time_s=elapsed, rows_written=written,
                rows_total=len(selected))
    return summary


IDENTITY = ("kind", "distribution", "seeds", "seed_start", "packages_dir", "budgets", "methods", "max_per_group",
            "certify", "solver", "facts", "updates", "count")  # what the rows depend on; n_jobs, chunk, n_boot do not


def _identity(config: dict) -> dict:
    out = {k: config.get(k) for k in IDENTITY if k in config}
    if out.get("budgets") is not None:
        out["budgets"] = sorted(float(b) for b in out["budgets"])
    if out.get("methods") is not None:
        out["methods"] = sorted(out["methods"])
    if out.get("packages_dir"):
        out["packages_dir"] = str(Path(out["packages_dir"]).resolve())
    return out


def sweep_identity(config: SweepConfig, hashes: dict[str, str] | None = None):
    """What a sweep's rows depend on (n_jobs, chunk, n_boot and the backend do not). A natural sweep's package
    files are part of it through `packages_sha256`, the digest of every package's content hash (`hashes`:
    package id → hash), so a directory swept before its packages were rebuilt differently is refused."""
    from memeval.rundir import Identity

    fixed = _identity(asdict(config))
    if config.kind == "natural" and hashes is not None:
        fixed["packages_sha256"] = packages_digest(hashes)
    return Identity("memaudit sweep", fixed=fixed)


def _legacy_identity(out: Path):
    """A manifest written before identities were recorded still pins its configuration."""
    from memeval.rundir import Identity, read_manifest

    manifest = read_manifest(out) or {}
    recorded = manifest.get("config")
    if not isinstance(recorded, dict) or "identity" in manifest:
        return None
    return Identity("memaudit sweep", fixed=_identity(recorded))
