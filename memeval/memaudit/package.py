"""The `memaudit.package/v1` format: records, validation with errors that name package, field and id, and
the compiled array form every solver and writer works on."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from memeval.atomic import write_text_atomic
from memeval.errors import InputError
from memeval.memaudit.saturation import Saturation, SaturationError, normalised
from memeval.memaudit.tolerance import MIN_COST
from memeval.safe_paths import check_package_id

SCHEMA = "memaudit.package/v1"
KNOWN_CANDIDATE_KINDS = frozenset(
    {"raw", "fact", "summary", "tombstone", "update", "interval_fact", "abstention", "uncertainty", "edge",
     "dated_fact", "external"}
)


@dataclass(frozen=True)
class Experience:
    id: str
    text: str = ""
    time: float = 0


@dataclass(frozen=True)
class Candidate:
    id: str
    experience: str
    kind: str
    cost: float
    text: str = ""


@dataclass(frozen=True)
class Unit:
    id: str
    weight: float
    kind: str = "fact"
    description: str = ""
    saturation: dict | None = field(default=None, compare=False, hash=False)  # None: min(1, z) (saturation.py)


@dataclass(frozen=True)
class Query:
    id: str
    text: str = ""
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Package:
    package_id: str
    experiences: tuple[Experience, ...]
    candidates: tuple[Candidate, ...]
    units: tuple[Unit, ...]
    coverage: tuple[tuple[str, str, float], ...]  # (candidate id, unit id, value), nonzero cells
    budget: float | None = None
    max_per_group: int = 1
    meta: dict = field(default_factory=dict, compare=False, hash=False)
    queries: tuple[Query, ...] = ()
    invalidation_units: tuple[str, ...] = ()

    @cached_property
    def compiled(self) -> "CompiledPackage":
        return compile_package(self)

    def to_json_dict(self) -> dict:
        doc: dict[str, Any] = {"schema": SCHEMA, "package_id": self.package_id}
        if self.budget is not None:
            doc["budget"] = self.budget
        doc["max_per_group"] = self.max_per_group
        if self.meta:
            doc["meta"] = self.meta
        doc["experiences"] = [{"id": e.id, "text": e.text, "time": e.time} for e in self.experiences]
        doc["candidates"] = [
            {"id": c.id, "experience": c.experience, "kind": c.kind, "text": c.text, "cost": c.cost}
            for c in self.candidates
        ]
        doc["units"] = [
            {"id": u.id, "weight": u.weight, "kind": u.kind, "description": u.description,
             **({"saturation": u.saturation} if u.saturation is not None else {})} for u in self.units
        ]
        doc["coverage"] = [{"candidate": c, "unit": u, "value": v} for c, u, v in self.coverage]
        if self.queries:
            doc["queries"] = [{"id": q.id, "text": q.text, "requires": list(q.requires)} for q in self.queries]
        if self.invalidation_units:
            doc["invalidation_units"] = list(self.invalidation_units)
        return doc

    def to_json(self) -> str:
        """Canonical text: same package, same bytes."""
        return json.dumps(self.to_json_dict(), indent=1, ensure_ascii=False, sort_keys=False) + "\n"

    def write(self, path: str | Path) -> Path:
        return write_text_atomic(path, self.to_json())


@dataclass(frozen=True)
class CoverageCsr:
    """Compressed sparse rows of the coverage matrix in scipy's canonical form (each row's units ascending, one
    entry per cell, explicit zeros kept, 32-bit indices while they fit), built with numpy alone."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    @staticmethod
    def from_cells(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> CoverageCsr:
        """From distinct (row, column, value) cells in any order."""
        index = np.int32 if max(shape[0], shape[1], len(values)) < 2**31 - 1 else np.int64
        order = np.lexsort((cols, rows))
        counts = np.bincount(rows, minlength=shape[0]) if len(rows) else np.zeros(shape[0], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(index)
        return CoverageCsr(indptr, cols[order].astype(index), values[order].astype(float),
                           (int(shape[0]), int(shape[1])))

    @staticmethod
    def from_dense(matrix: np.ndarray) -> CoverageCsr:
        """The non-zero cells of a dense matrix."""
        rows, cols = np.nonzero(matrix)
        return CoverageCsr.from_cells(rows, cols, matrix[rows, cols], matrix.shape)

    def block(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """(the units any of `rows` holds an entry for, ascending; those rows made dense over those units only),
        read straight from the arrays: the work grows with the rows' entries, not with the matrix."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lengths = (ends - starts).astype(np.int64)
        offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        entries = offsets + np.arange(int(lengths.sum()))
        units = self.indices[entries]
        cols = np.unique(units).astype(np.int64)
        dense = np.zeros((len(rows), len(cols)))
        dense[np.repeat(np.arange(len(rows)), lengths), np.searchsorted(cols, units)] = self.data[entries]
        return cols, dense


DENSE_CELLS = 4_000_000  # above this many coverage cells the objective sums sparse rows


@dataclass(frozen=True)
class CompiledPackage:
    """Arrays in stream order: candidates grouped by experience, groups ordered by (time, listing order)."""

    package_id: str
    candidate_ids: tuple[str, ...]
    kinds: tuple[str, ...]
    costs: np.ndarray  # (n_candidates,)
    weights: np.ndarray  # (n_units,)
    coverage_csr: CoverageCsr  # (n_candidates, n_units), values in [0, 1]: the package as compiled
    group_of: np.ndarray  # (n_candidates,) group index
    groups: tuple[np.ndarray, ...]  # candidate indices per group, in stream order
    unit_ids: tuple[str, ...]
    invalidation_mask: np.ndarray  # (n_units,) bool
    max_per_group: int
    texts: tuple[str, ...] = ()  # candidate texts (estimators may read them; coverage stays hidden)
    estimator: str = ""  # the package's declared estimator for estimated_gvt (meta.estimator), if any
    saturation: Saturation | None = None  # per-unit concave h_r; None: min(1, z) everywhere

    def h(self, z: np.ndarray) -> np.ndarray:
        """The units' saturation applied along the last axis of z: F = h(z) @ weights."""
        return np.minimum(1.0, z) if self.saturation is None else self.saturation.h(z)

    def h_at(self, values: np.ndarray, units: np.ndarray) -> np.ndarray:
        """h of sparse entries: values[i] at unit units[i]."""
        return np.minimum(1.0, values) if self.saturation is None else self.saturation.h_at(values, units)

    def h_cols(self, z: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """h of z whose last axis holds only the units `cols` (a writer looking at the units a group touches)."""
        if self.saturation is None:
            return np.minimum(1.0, z)
        return (np.asarray(z)[..., None] * self.saturation.slopes[cols] + self.saturation.intercepts[cols]).min(axis=-1)

    def touched(self, candidates) -> tuple[np.ndarray, np.ndarray]:
        """(units any of `candidates` covers, their dense rows over those units only): the work of a group's
        marginal gains grows with what the group touches, not with the package's size."""
        candidates = np.asarray(candidates)
        if self.is_large:  # straight from the CSR arrays: scipy's fancy indexing costs more than the arithmetic
            return self.coverage_csr.block(candidates)
        rows = self.coverage[candidates]
        cols = np.flatnonzero(rows.any(axis=0))
        return cols, rows[:, cols]

    def rows(self, candidates) -> np.ndarray:
        """Dense coverage rows of some candidates, without making the whole matrix dense for a large package."""
        if self.is_large:
            return self.coverage_sparse[np.asarray(candidates)].toarray()
        return self.coverage[candidates]

    def row(self, candidate: int) -> np.ndarray:
        return self.coverage_sparse[candidate].toarray()[0] if self.is_large else self.coverage[candidate]

    @property
    def h_max(self) -> np.ndarray:
        return np.ones(len(self.weights)) if self.saturation is None else self.saturation.h_max

    @property
    def h_width(self) -> int:
        """Lines per unit in h (memory per evaluated cell)."""
        return 1 if self.saturation is None else self.saturation.width

    @property
    def n_candidates(self) -> int:
        return len(self.candidate_ids)

    @cached_property
    def coverage(self) -> np.ndarray:
        """Dense coverage, made on first use by the code that needs it (B&B, writers); the MILP and the
        objective of a large package read `coverage_sparse` and never make it."""
        csr = self.coverage_csr
        dense = np.zeros(csr.shape)
        dense[np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), csr.indices] = csr.data
        return dense

    @cached_property
    def coverage_sparse(self):
        """The coverage as a scipy CSR matrix, made on first use (the MILP, a large package's slicing): scipy is
        not imported by the exact search and writers on small packages, so a sweep worker never pays for it."""
        import scipy.sparse as sparse

        csr = self.coverage_csr
        return sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=csr.shape)

    @property
    def is_large(self) -> bool:
        return self.n_candidates * len(self.weights) > DENSE_CELLS

    @cached_property
    def memo(self) -> dict:
        """Tables the solvers and writers derive from this package once and reuse across budgets, methods and
        calls (keyed by what each depends on); the package itself never changes."""
        return {}

    def index(self, candidate_ids) -> list[int]:
        lookup = {c: i for i, c in enumerate(self.candidate_ids)}
        return [lookup[c] for c in candidate_ids]


def compile_package(pkg: Package) -> CompiledPackage:
    order = sorted(range(len(pkg.experiences)), key=lambda i: (pkg.experiences[i].time, i))
    group_index = {pkg.experiences[i].id: g for g, i in enumerate(order)}
    # candidates sorted by group (stable, so listing order inside a group is kept)
    cand_order = sorted(range(len(pkg.candidates)), key=lambda i: (group_index[pkg.candidates[i].experience], i))
    cands = [pkg.candidates[i] for i in cand_order]
    cand_pos = {c.id: i for i, c in enumerate(cands)}
    unit_pos = {u.id: i for i, u in enumerate(pkg.units)}
    cells: dict[tuple[int, int], float] = {}
    for cid, uid, value in pkg.coverage:
        cells[(cand_pos[cid], unit_pos[uid])] = value  # a repeated cell keeps its last value, as before
    rows = np.fromiter((r for r, _ in cells), dtype=np.int64, count=len(cells))
    cols = np.fromiter((c for _, c in cells), dtype=np.int64, count=len(cells))
    coverage = CoverageCsr.from_cells(rows, cols, np.fromiter(cells.values(), dtype=float, count=len(cells)),
                                      (len(cands), len(pkg.units)))
    group_of = np.array([group_index[c.experience] for c in cands], dtype=np.int64)
    groups = tuple(np.flatnonzero(group_of == g) for g in range(len(order)))
    invalid = set(pkg.invalidation_units)
    return CompiledPackage(
        package_id=pkg.package_id,
        candidate_ids=tuple(c.id for c in cands),
        kinds=tuple(c.kind for c in cands),
        costs=np.array([c.cost for c in cands], dtype=float),
        weights=np.array([u.weight for u in pkg.units], dtype=float),
        coverage_csr=coverage,
        group_of=group_of,
        groups=groups,
        unit_ids=tuple(u.id for u in pkg.units),
        invalidation_mask=np.array([u.id in invalid for u in pkg.units], dtype=bool),
        max_per_group=pkg.max_per_group,
        texts=tuple(c.text for c in cands),
        estimator=str((pkg.meta or {}).get("estimator", "")),
        saturation=Saturation.from_specs([u.saturation for u in pkg.units]),
    )


# --- loading and validation ------------------------------------------------------------------------------
def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def package_from_dict(doc: Any, source: str = "<package>") -> Package:
    """Validate a parsed package; every error names the package (or file), the field and the offending id."""
    if not isinstance(doc, dict):
        raise InputError(source, "package", f"expected a JSON object, got {type(doc).__name__}")
    pid = doc.get("package_id")
    if not isinstance(pid, str) or not pid:
        raise InputError(source, "package_id", "missing or not a string")
    check_package_id(pid, source)  # it names files and rows, and is printed: the documented id rule, never `../`
    where = f"{source} [{pid}]"
    if doc.get("schema") != SCHEMA:
        raise InputError(where, "schema", f"expected {SCHEMA!r}, got {doc.get('schema')!r}")

    def items(name: str, required: bool = True) -> list:
        value = doc.get(name, None if required else [])
        if not isinstance(value, list):
            raise InputError(where, name, "missing" if value is None else f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise InputError(where, f"{name}[{i}]", "expected an object")
        return value

    def ident(item: dict, name: str, i: int) -> str:
        value = item.get("id")
        if not isinstance(value, str) or not value:
            raise InputError(where, f"{name}[{i}].id", "missing or not a string")
        return value

    def unique(ids: list[str], name: str) -> None:
        seen: set[str] = set()
        for x in ids:
            if x in seen:
                raise InputError(where, name, f"duplicate id {x!r}")
            seen.add(x)

    experiences = []
    for i, item in enumerate(items("experiences")):
        eid = ident(item, "experiences", i)
        time = item.get("time", i)
        if not _finite_number(time):
            raise InputError(where, f"experiences[{eid}].time", f"expected a number, got {time!r}")
        experiences.append(Experience(eid, str(item.get("text", "")), time))
    unique([e.id for e in experiences], "experiences")
    exp_ids = {e.id for e in experiences}

    candidates = []
    for i, item in enumerate(items("candidates")):
        cid = ident(item, "candidates", i)
        exp = item.get("experience")
        if not _known(exp, exp_ids):
            raise InputError(where, f"candidates[{cid}].experience", f"unknown experience {exp!r}")
        cost = item.get("cost")
        if not _finite_number(cost) or cost < MIN_COST:
            raise InputError(where, f"candidates[{cid}].cost", f"must be a finite number >= {MIN_COST:g}, got {cost!r}")
        kind = item.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError(where, f"candidates[{cid}].kind", "missing or not a string")
        candidates.append(Candidate(cid, exp, kind, float(cost), str(item.get("text", ""))))
    unique([c.id for c in candidates], "candidates")
    if not candidates:  # nothing to store: every "optimum" would be 0 and pass as certified
        raise InputError(where, "candidates", "empty: a package needs at least one candidate")
    cand_ids = {c.id for c in candidates}

    units = []
    for i, item in enumerate(items("units")):
        uid = ident(item, "units", i)
        weight = item.get("weight")
        if not _finite_number(weight) or weight < 0:
            raise InputError(where, f"units[{uid}].weight", f"must be a number >= 0, got {weight!r}")
        spec = item.get("saturation")
        if spec is not None and not isinstance(spec, dict):
            raise InputError(where, f"units[{uid}].saturation", "expected an object: {\"cap\": c} or "
                             "{\"breakpoints\": [[0, 0], [z, h], ...]}")
        try:
            spec = normalised(spec)
        except SaturationError as exc:
            raise InputError(where, f"units[{uid}].saturation", str(exc)) from None
        units.append(Unit(uid, float(weight), str(item.get("kind", "fact")), str(item.get("description", "")),
                          spec))
    unique([u.id for u in units], "units")
    if not units:  # nothing to cover: every store scores 0 and every ratio would be 1
        raise InputError(where, "units", "empty: a package needs at least one unit")
    unit_ids = {u.id for u in units}

    coverage = []
    seen_cells: set[tuple[str, str]] = set()
    for i, item in enumerate(items("coverage")):
        cid, uid, value = item.get("candidate"), item.get("unit"), item.get("value")
        if not _known(cid, cand_ids):
            raise InputError(where, f"coverage[{i}].candidate", f"unknown candidate {cid!r}")
        if not _known(uid, unit_ids):
            raise InputError(where, f"coverage[{i}].unit", f"unknown unit {uid!r}")
        if not _finite_number(value) or not 0 <= value <= 1:
            raise InputError(where, f"coverage[{i}].value", f"must be in [0, 1], got {value!r} ({cid} x {uid})")
        if (cid, uid) in seen_cells:
            raise InputError(where, f"coverage[{i}]", f"duplicate cell {cid} x {uid}")
        seen_cells.add((cid, uid))
        if value > 0:
            coverage.append((cid, uid, float(value)))

    queries = []
    for i, item in enumerate(items("queries", required=False)):
        qid = ident(item, "queries", i)
        requires = item.get("requires", [])
        if not isinstance(requires, list):
            raise InputError(where, f"queries[{qid}].requires", "expected a list")
        for uid in requires:
            if not _known(uid, unit_ids):
                raise InputError(where, f"queries[{qid}].requires", f"unknown unit {uid!r}")
        queries.append(Query(qid, str(item.get("text", "")), tuple(requires)))
    unique([q.id for q in queries], "queries")

    invalidation = doc.get("invalidation_units", [])
    if not isinstance(invalidation, list):
        raise InputError(where, "invalidation_units", "expected a list")
    for uid in invalidation:
        if not _known(uid, unit_ids):
            raise InputError(where, "invalidation_units", f"unknown unit {uid!r}")

    budget = doc.get("budget")
    if budget is not None and (not _finite_number(budget) or budget <= 0):
        raise InputError(where, "budget", f"must be a finite number > 0, got {budget!r}")
    k = doc.get("max_per_group", 1)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(where, "max_per_group", f"must be an integer >= 1, got {k!r}")
    meta = doc.get("meta", {})
    if not isinstance(meta, dict):
        raise InputError(where, "meta", "expected an object")
    return Package(
        package_id=pid,
        experiences=tuple(experiences),
        candidates=tuple(candidates),
        units=tuple(units),
        coverage=tuple(coverage),
        budget=None if budget is None else float(budget),
        max_per_group=k,
        meta=meta,
        queries=tuple(queries),
        invalidation_units=tuple(invalidation),
    )


def _known(value, ids: set[str]) -> bool:
    """An id field names a known id; a list or object there (unhashable) is simply not one."""
    return isinstance(value, str) and value in ids


def load_package(path: str | Path) -> Package:
    from memeval.safe_json import load_json_file

    path = Path(path)
    if not path.exists():
        raise InputError(path, "path", "no such file")
    doc = load_json_file(path, "json", kind="package")  # UTF-8 (a BOM skipped), nesting and integer size bounded: one line
    return package_from_dict(doc, str(path))
