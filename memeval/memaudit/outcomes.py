"""Typed MEMAUDIT results: a solver's status, its result, the certificate an OPT row of a sweep carries, and a
sweep's summary. Pure records below the solvers (memaudit/solvers.py, memaudit/milp.py) and the sweep, so that
neither solver module imports the other's results. Each record writes exactly the JSON it replaced (the same
keys, the same values: statuses are strings on disk, floats are the solvers' own)."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from memeval.memaudit.package import CompiledPackage


class SolveStatus(enum.StrEnum):
    """How a solve (or a writer) ended. A `str` (an `enum.StrEnum`), so JSON output, comparisons with the
    strings written before and f-strings read exactly as the bare strings did."""

    OPTIMAL = "optimal"  # proved optimal (B&B: every bound within tolerance; MILP: gap <= MILP_CERT_GAP)
    OPTIMAL_GAP_NONZERO = "optimal_gap_nonzero"  # HiGHS said optimal with a relative gap above MILP_CERT_GAP
    NODE_LIMIT = "node_limit"  # B&B stopped at its state limit: the incumbent is a lower bound only
    TIME_LIMIT = "time_limit"
    ERROR = "error"  # the solver raised; the result holds no store
    DISAGREEMENT = "disagreement"  # `both`: B&B and MILP values differ beyond tolerance
    DONE = "done"  # a heuristic writer finished (nothing to certify)
    # the other statuses cvxpy reports for the MILP, passed through as cvxpy spells them
    OPTIMAL_INACCURATE = "optimal_inaccurate"
    INFEASIBLE = "infeasible"
    INFEASIBLE_INACCURATE = "infeasible_inaccurate"
    UNBOUNDED = "unbounded"
    UNBOUNDED_INACCURATE = "unbounded_inaccurate"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    USER_LIMIT = "user_limit"
    SOLVER_ERROR = "solver_error"

    @classmethod
    def _missing_(cls, value: object) -> SolveStatus | None:
        """A status a later cvxpy adds is kept as it spells it (a member of no name in the list above), never
        renamed or refused: the row records what the solver said."""
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper()
        member._value_ = value
        return member


@dataclass
class SolveResult:
    method: str
    value: float
    selected: list[int]
    cost: float
    status: SolveStatus
    certified: bool
    runtime_s: float
    nodes: int = 0
    dual_bound: float | None = None
    gap: float | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = SolveStatus(self.status)

    def selected_ids(self, cp: CompiledPackage) -> list[str]:
        return [cp.candidate_ids[i] for i in sorted(self.selected)]


@dataclass(frozen=True)
class MilpCheck:
    """The MILP's own solve of an OPT row (`--certify milp`)."""

    value: float
    status: SolveStatus
    gap: float | None
    dual_bound: float | None
    nodes: int
    runtime_s: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", SolveStatus(self.status))

    @classmethod
    def of(cls, result: SolveResult) -> MilpCheck:
        return cls(result.value, result.status, result.gap, result.dual_bound, result.nodes, result.runtime_s)


@dataclass(frozen=True)
class PartsCheck:
    """The parts solver's own solve of an OPT row (`--certify parts`: memaudit/parts.py)."""

    value: float
    status: SolveStatus
    parts: int
    runtime_s: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", SolveStatus(self.status))

    @classmethod
    def of(cls, result: SolveResult) -> PartsCheck:
        return cls(result.value, result.status, int(result.info.get("parts", 0)), result.runtime_s)


@dataclass(frozen=True)
class Certificate:
    """What an OPT row of a sweep proves: the solver that found OPT, its status, nodes, gap and dual bound, the
    tolerances it was judged under, and, where a second solver checked it, whether the two agree (and, under
    `--certify milp`, the MILP's own solve). Written into the row as the flat dict `as_dict` gives."""

    opt_solver: str
    opt_status: SolveStatus
    opt_nodes: int
    opt_gap: float | None = None
    opt_dual_bound: float | None = None
    # None only for a certificate read from a row written before certificates recorded the gap, the dual bound and
    # the tolerances: such a row has none of the three keys, and `as_dict` writes none of them back
    tolerances: Mapping[str, float] | None = None
    agree: bool | None = None  # None: no second solver checked this OPT
    milp: MilpCheck | None = None
    parts: PartsCheck | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "opt_status", SolveStatus(self.opt_status))

    @classmethod
    def of(cls, opt: SolveResult, tolerances: Mapping[str, float]) -> Certificate:
        """The certificate of `opt` as solved; `solve_exact(method="both")` records its own B&B/MILP agreement."""
        agree = bool(opt.info["milp"]["agree"]) if "milp" in opt.info else None
        return cls(opt.method, opt.status, opt.nodes, opt.gap, opt.dual_bound, dict(tolerances), agree)

    def checked_by(self, second: SolveResult, agree: bool) -> Certificate:
        """This certificate with a second exact solver's solve of the same OPT (`--certify milp` or `--certify
        parts`: the result's `method` says which) and their agreement."""
        if second.method == "parts":
            return replace(self, agree=agree, milp=None, parts=PartsCheck.of(second))
        return replace(self, agree=agree, milp=MilpCheck.of(second), parts=None)

    def check_line(self) -> str:
        """The second solver's solve in words, for an error naming a disagreement."""
        if self.parts is not None:
            return f"parts = {self.parts.value!r} ({self.parts.status})"
        if self.milp is not None:
            return f"MILP = {self.milp.value!r} ({self.milp.status}, gap {self.milp.gap})"
        return "no second solver"

    @property
    def disagrees(self) -> bool:
        """The two solvers disagreed beyond tolerance (never certified, never a denominator)."""
        return self.agree is False or self.opt_status == SolveStatus.DISAGREEMENT

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"opt_solver": self.opt_solver, "opt_status": self.opt_status,
                               "opt_nodes": self.opt_nodes}
        if self.tolerances is not None:
            out.update(opt_gap=self.opt_gap, opt_dual_bound=self.opt_dual_bound, tolerances=dict(self.tolerances))
        if self.agree is not None and self.milp is None and self.parts is None:
            out["agree"] = self.agree
        if self.parts is not None:
            p = self.parts
            out.update(parts_value=p.value, parts_status=p.status, parts_count=p.parts, parts_runtime_s=p.runtime_s,
                       agree=self.agree)
        if self.milp is not None:
            m = self.milp
            out.update(milp_value=m.value, milp_status=m.status, milp_gap=m.gap, milp_dual_bound=m.dual_bound,
                       milp_nodes=m.nodes, milp_runtime_s=m.runtime_s, agree=self.agree)
        return out

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Certificate:
        """A certificate as a row records it (rows of every version: older ones lack the gap, the dual bound and
        the tolerances)."""
        milp = None
        if "milp_value" in doc:
            milp = MilpCheck(doc["milp_value"], doc["milp_status"], doc.get("milp_gap"), doc.get("milp_dual_bound"),
                             doc.get("milp_nodes", 0), doc.get("milp_runtime_s", 0.0))
        parts = None
        if "parts_value" in doc:
            parts = PartsCheck(doc["parts_value"], doc["parts_status"], doc.get("parts_count", 0),
                               doc.get("parts_runtime_s", 0.0))
        return cls(doc["opt_solver"], doc["opt_status"], doc["opt_nodes"], doc.get("opt_gap"),
                   doc.get("opt_dual_bound"), doc.get("tolerances"), doc.get("agree"), milp, parts)


@dataclass(frozen=True)
class SummaryRow:
    """One (distribution, budget, method) line of a sweep's summary: the mean ratio to OPT with its bootstrap CI
    over packages, from certified rows only. Union lines also name their store's `system` and `pruning`."""

    distribution: str
    budget: float
    method: str
    mean_ratio: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    certified: int
    excluded_uncertified: int
    mean_invalidation_covered: float | None
    mean_value: float | None
    system: str | None = None
    pruning: str | None = None  # set on union lines only (their `system` is written beside it)

    @property
    def is_union(self) -> bool:
        return self.pruning is not None

    def as_dict(self) -> dict:
        return {"distribution": self.distribution, "budget": self.budget, "method": self.method,
                **({"system": self.system, "pruning": self.pruning} if self.is_union else {}),
                "mean_ratio": self.mean_ratio, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n,
                "certified": self.certified, "excluded_uncertified": self.excluded_uncertified,
                "mean_invalidation_covered": self.mean_invalidation_covered, "mean_value": self.mean_value}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SummaryRow:
        return cls(doc["distribution"], doc["budget"], doc["method"], doc["mean_ratio"], doc["ci_low"],
                   doc["ci_high"], doc["n"], doc["certified"], doc["excluded_uncertified"],
                   doc["mean_invalidation_covered"], doc["mean_value"], doc.get("system"), doc.get("pruning"))


SUMMARY_KEYS = ("rows", "packages", "row_count", "opt_rows", "opt_certified", "opt_uncertified", "opt_disagreements",
                "union_rows", "union_certified", "certify", "reused_rows", "computed_rows", "superseded_rows")


@dataclass(frozen=True, eq=False)
class SweepSummary(Mapping):
    """A sweep's summary (summary.json): its lines and its counts. Also a read-only mapping over the document it
    writes (`summary["opt_certified"]`, `summary["rows"]` as a list of dicts, `moved_aside` when the run moved a
    directory aside), so code that read the summary as a dict reads it unchanged; it compares equal to that dict."""

    rows: tuple[SummaryRow, ...]
    packages: int
    row_count: int
    opt_rows: int
    opt_certified: int
    opt_uncertified: int
    opt_disagreements: int
    union_rows: int
    union_certified: int
    certify: str
    reused_rows: int
    computed_rows: int
    superseded_rows: int  # rows of an older content of a package, recomputed (never reused)
    moved_aside: str | None = None  # where `restart` moved an older directory; returned, not written
    missing: Mapping[str, Any] = field(default_factory=dict)  # rows not written (the manifest's `missing`)

    def as_dict(self) -> dict:
        """The document summary.json holds (without `moved_aside`)."""
        return {key: [r.as_dict() for r in self.rows] if key == "rows" else getattr(self, key) for key in SUMMARY_KEYS}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SweepSummary:
        """A summary as summary.json (or `as_dict`) holds it."""
        values = {key: doc[key] for key in SUMMARY_KEYS if key != "rows"}
        return cls(tuple(SummaryRow.from_dict(r) for r in doc["rows"]), **values, moved_aside=doc.get("moved_aside"),
                   missing=doc.get("missing") or {})

    @cached_property
    def _document(self) -> dict:
        doc = self.as_dict()
        if self.moved_aside is not None:
            doc["moved_aside"] = self.moved_aside
        if self.missing:
            doc["missing"] = dict(self.missing)
        return doc

    @property
    def complete(self) -> bool:
        return not self.missing

    def closing_line(self) -> str | None:
        """What a sweep without every requested row says last (None when complete)."""
        from memeval.rundir import incomplete_line

        return incomplete_line(self.missing)

    def __getitem__(self, key: str) -> Any:
        return self._document[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._document)

    def __len__(self) -> int:
        return len(self._document)
