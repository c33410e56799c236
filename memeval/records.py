"""The typed shape of every result row written to disk: answers, judgments, sweep rows, package ids, run results.

Every writer and reader of `answers.jsonl`, `judgments.jsonl` and `raw_results.jsonl` goes through these
records, so a field is named once and a malformed row fails with one line naming its file, line and field.
Records are read by attribute (`row.f1`), never as dicts: code that aggregates over a field chosen at run time
takes a getter (`operator.attrgetter("f1")`), and `to_row` gives the written form. Files written before the
records existed still load: the one place that decodes the old packed strings (`union:<system>:<pruning>`
methods, package ids without a `sample_id` field) is `SweepRow`'s validator below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from memeval.errors import InputError
from memeval.jsonl import JsonlWriter, read_rows

R = TypeVar("R", bound="Record")
Gold = str | int | float | None


class Record(BaseModel):
    """A row of a results file: fields checked on read and on write, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    optional_fields: ClassVar[frozenset[str]] = frozenset()  # left out of the row when None (older files lack them)

    def to_row(self) -> dict:
        row = self.model_dump(mode="json")
        for name in self.optional_fields:
            if row.get(name) is None:
                row.pop(name, None)
        return row

    def replace(self: R, **changes: Any) -> R:
        return type(self).model_validate({**self.to_row(), **changes})

    @classmethod
    def from_row(cls: type[R], row: Mapping, where: str = "row") -> R:
        try:
            return cls.model_validate(dict(row))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"]) or cls.__name__
            raise InputError(where, field, error["msg"]) from None


def read_records(path: str | Path, record: type[R]) -> list[R]:
    """Every row of a JSONL results file as `record`; a torn last line is dropped as `read_rows` does."""
    return [record.from_row(row, f"{path} line {n}") for n, row in enumerate(read_rows(path), start=1)]


def write_records(writer: JsonlWriter, records: Iterable[Record]) -> int:
    return writer.write(r.to_row() for r in records)


def load_answers(path: str | Path) -> list[AnswerRow]:
    """The latest row per (system, question): a retried row supersedes the errored one."""
    return list(latest(read_records(path, AnswerRow), lambda r: r.key).values())


def load_judgments(path: str | Path, answer_key: str | None = "original") -> list[JudgmentRow]:
    """The latest row per (system, question, protocol), as for answers: those made against `answer_key`'s gold
    (the published key by default, so a reader that knows nothing of corrected keys sees what it always did;
    None: every key's rows)."""
    rows = latest(read_records(path, JudgmentRow), lambda r: r.key).values()
    return [r for r in rows if answer_key is None or r.answer_key == answer_key]


def load_sweep_rows(path: str | Path) -> list[SweepRow]:
    """A sweep's raw_results.jsonl: the latest row per (package, budget, method, k), in that key's order. Workers
    append rows as they finish, so two runs of one sweep write them in different orders; every reader sorts here,
    once, and a seeded bootstrap that resamples rows by position gives the same interval whichever run wrote them."""
    return sorted(latest(read_records(path, SweepRow), lambda r: r.key).values(), key=lambda r: r.key)


def latest(records: Iterable[R], key: Callable[[R], tuple]) -> dict[tuple, R]:
    """The last record per key (a retried row supersedes the errored one), in first-seen key order."""
    out: dict[tuple, R] = {}
    for record in records:
        out[key(record)] = record
    return out


class AnswerRow(Record):
    """One (system, question) answer of a LoCoMo run (answers.jsonl)."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({"retrieval_scores", "request_keys"})

    sample_id: str
    conversation_id: str
    category: int
    question: str
    gold: Gold
    prediction: str
    system: str
    answerer: str
    k: int | None
    f1: float | None
    evidence_ids: list[str]
    evidence_recall: float | None
    recall_curve: list[float] | None
    retrieved_ids: list[list[str]]
    latency_search_s: float | None
    latency_total_s: float | None
    context_tokens: int | None
    error: str | None
    retrieval_scores: list[float] | None = None  # the system's score of each memory in retrieved_ids (viewer)
    # the response-cache key of each model call that made the prediction (the viewer shows the request and reply
    # from the cache); None for rows made without a model or before keys were recorded
    request_keys: list[str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.sample_id)

    @property
    def final(self) -> bool:
        return self.error is None


class JudgeOutcome(Record):
    """What a judge made of one answer: every run's score, their mean on 0–100, and what it said in each run
    (rows written before explanations were kept have none)."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({"explanations"})

    protocol: str
    scores: list[float]
    mean: float | None
    std: float | None
    run_count: int
    warning: str | None
    errors: list[str]
    explanations: list[str] | None = None


class JudgmentRow(JudgeOutcome):
    """One judged (system, question, protocol) (judgments.jsonl), with the judge model that gave it (rows
    written before the model was recorded have none)."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({"explanations", "judge_model", "request_keys"})

    sample_id: str
    conversation_id: str
    category: int
    system: str
    prompt_version: str
    judge_model: str | None = None
    request_keys: list[str] | None = None  # each judge run's response-cache key, in run order (the viewer's transcript)
    # the gold it was judged against: "original" (the published key; every row written before keys existed) or
    # "corrected" (the LoCoMo audit's correct answer, memeval/benchmarks/locomo/audit_key.py), a row of its own beside the original
    answer_key: str = "original"

    def to_row(self) -> dict:
        row = super().to_row()
        if row.get("answer_key") == "original":  # files stay as they were for the published key
            row.pop("answer_key")
        return row

    @property
    def key(self) -> tuple[str, ...]:
        """(system, question, protocol), and the answer key when it is not the original one (older rows and
        original-key rows keep the key they always had)."""
        base = (self.system, self.sample_id, self.protocol)
        return base if self.answer_key == "original" else (*base, self.answer_key)


_NATURAL = re.compile(r"^locomo-natural-(?P<conversation>.+)-q(?P<question>\d+)$")
_SMALL = re.compile(r"^small-(?P<distribution>.+)-s(?P<seed>\d+)$")


class PackageId(Record):
    """The parts a package id is made of; `str()` writes the id, `parse` reads an id written before packages
    carried their parts in `meta`."""

    kind: str  # "natural", "small" or "other"
    conversation_id: str | None = None
    question: int | None = None
    distribution: str | None = None
    seed: int | None = None
    system: str | None = None  # union packages: the exported store's system
    raw: str | None = None  # kind "other": the id as given

    @classmethod
    def natural(cls, sample_id: str, system: str | None = None) -> PackageId:
        conversation, _, question = sample_id.rpartition(":q")
        return cls(kind="natural", conversation_id=conversation, question=int(question), system=system)

    @classmethod
    def small(cls, distribution: str, seed: int) -> PackageId:
        return cls(kind="small", distribution=distribution, seed=seed)

    @classmethod
    def parse(cls, package_id: str) -> PackageId:
        base, _, system = package_id.partition("+")
        if match := _NATURAL.match(base):
            return cls(kind="natural", conversation_id=match["conversation"], question=int(match["question"]),
                       system=system or None)
        if match := _SMALL.match(base):
            return cls(kind="small", distribution=match["distribution"], seed=int(match["seed"]),
                       system=system or None)
        return cls(kind="other", raw=base, system=system or None)

    @property
    def sample_id(self) -> str | None:
        return f"{self.conversation_id}:q{self.question:04d}" if self.kind == "natural" else None

    @property
    def base(self) -> PackageId:
        return self.model_copy(update={"system": None})

    def __str__(self) -> str:
        if self.kind == "natural":
            text = f"locomo-natural-{self.conversation_id}-q{self.question:04d}"
        elif self.kind == "small":
            text = f"small-{self.distribution}-s{self.seed:04d}"
        else:
            text = str(self.raw)
        return text + (f"+{self.system}" if self.system else "")


UNION_METHOD_PREFIX = "union:"


def union_method(system: str, pruning: str) -> str:
    """The method name union rows are grouped under in summaries (written, never parsed back: rows carry
    `system` and `pruning`)."""
    return f"{UNION_METHOD_PREFIX}{system}:{pruning}"


@lru_cache(maxsize=65536)
def _sample_id_of(package_id: str) -> str | None:
    """The LoCoMo question a natural package id names (None for others): read once per id, not once per row (a
    sweep reads fifty rows of each package)."""
    return PackageId.parse(package_id).sample_id


def _sweep_key(package_id: str, budget: float, method: str, max_per_group: int | None) -> tuple[str, float, str, int]:
    return (package_id, float(budget), method, int(max_per_group or 1))


class SweepRow(Record):
    """One (package, budget, method) row of a MEMAUDIT sweep (raw_results.jsonl). Union rows (an exported
    store beside a natural package) also carry the store's `system`, its `pruning` rule and the package OPT."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({
        "certificate", "sample_id", "system", "pruning", "union_of", "opt_package", "package_ratio", "exported",
        "exported_fitting", "package_sha256"})

    package_id: str
    seed: int | None
    distribution: str
    budget: float
    max_per_group: int
    method: str
    value: float
    opt: float | None
    ratio: float | None
    certified: bool
    invalidation_units_covered: float | None
    cost: float
    selected: list[str]
    runtime_s: float | None
    certificate: dict | None = None
    sample_id: str | None = None  # natural packages: the LoCoMo question the package was built for
    system: str | None = None
    pruning: str | None = None
    union_of: str | None = None
    opt_package: float | None = None
    package_ratio: float | None = None
    exported: int | None = None
    exported_fitting: int | None = None
    # SHA-256 of the package's canonical content the row was computed from (memaudit.sweep.content_hash); rows
    # written before it was recorded have none. A sweep never reuses a row whose package now hashes otherwise.
    package_sha256: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _older_rows(cls, data: Any) -> Any:
        """Rows written before the fields existed: the only place an id or a method string is decoded."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        method = str(data.get("method", ""))
        if method.startswith(UNION_METHOD_PREFIX) and data.get("pruning") is None:
            _, system, pruning = method.split(":")
            data.setdefault("system", system)
            data["pruning"] = pruning
        if data.get("sample_id") is None and isinstance(data.get("package_id"), str):
            sample_id = _sample_id_of(data["package_id"])
            if sample_id is not None:
                data["sample_id"] = sample_id
        return data

    @staticmethod
    def key_of(row: Mapping) -> tuple[str, float, str, int]:
        """A row's identity in a sweep file, from its written form (a sweep worker's output); a record's is `key`."""
        return _sweep_key(row["package_id"], row["budget"], row["method"], row["max_per_group"])

    @property
    def key(self) -> tuple[str, float, str, int]:
        return _sweep_key(self.package_id, self.budget, self.method, self.max_per_group)

    @property
    def is_union(self) -> bool:
        return self.pruning is not None


class ResultRow(Record):
    """One metric of one system (or writer) in one group of a stored run or sweep (`memeval results`)."""

    directory: str
    kind: str  # "locomo run" or "memaudit sweep"
    system: str
    group: str  # a category, an overall, or a distribution and budget
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int
    resampled: str  # what the 95% interval resamples: conversations, questions or packages
    commit: str | None
    command: str | None
    minus_system: str | None = None  # a paired row within one run ("paired systems"): `system` minus this one
    mde: float | None = None  # minimum detectable difference (80% power, α = 0.05, clustered; memeval.scoring.power)
    verdict: str | None = None  # a paired row's: "within noise" or "real at α = 0.05" (or why neither is said)
    leniency: str | None = None  # a J row's: its judge configuration's measured false-accept rate, or "not measured"


class ResultsRun(Record):
    """One directory of `memeval results --format json`: the short name its cells and differences use."""

    name: str
    directory: str
    kind: str
    status: str  # `memeval ls`'s: complete, incomplete, running or replaced
    commit: str | None
    command: str | None


class ResultsCell(Record):
    """One system (or writer) × metric of one run, with its 95% interval ([low, high], null when there is none)."""

    run: str
    system: str
    group: str
    metric: str
    value: float | None  # null where the estimate is not a finite number
    interval: tuple[float, float] | None
    n: int
    resampled: str
    mde: float | None = None  # what a difference from this system must reach to be found (80% power, α = 0.05)
    leniency: str | None = None  # J cells: the judge's measured false-accept rate, or "leniency not measured"


class ResultsDifference(Record):
    """`run` minus `minus` on the questions both answered, paired by question, with its 95% interval."""

    run: str
    minus: str
    system: str
    group: str
    metric: str
    difference: float | None
    interval: tuple[float, float] | None
    n: int
    resampled: str
    minus_system: str | None = None  # two systems of one run (`run` = `minus`): `system` minus this one
    mde: float | None = None  # minimum detectable difference (80% power, α = 0.05, clustered by conversation)
    verdict: str | None = None  # "within noise" or "real at α = 0.05" (or why neither can be said)


class ResultsDocument(Record):
    """What `memeval results --format json` writes: the runs, every cell, every paired difference (between runs,
    and between the systems of one run), each with its minimum detectable difference."""

    format: str = "memeval results"
    version: int = 1
    runs: list[ResultsRun]
    cells: list[ResultsCell]
    paired: list[ResultsDifference]
    answer_key: list[str] = []  # the LoCoMo answer key the cells are scored against, and the ceiling line


class StoreIngest(Record):
    """What a library system (Mem0) did ingesting one conversation, kept beside the store it wrote
    (stores/<label>.ingest.jsonl): its add calls, the memories it kept, and the warnings and errors its own logging
    raised (counted by message) — a store of 0 memories says why."""

    conversation_id: str
    system: str
    add_calls: int
    memories: int
    library_log: dict[str, int] = {}


class RunResult(Record):
    """What `run_locomo` returns: where it wrote, the report, and the rows of this run's selection."""

    out: str
    report: str
    answers: dict[str, list[AnswerRow]]  # system → rows
    judgments: dict[str, dict[str, list[JudgmentRow]]]  # protocol → system → rows
    answer_counts: dict
    judge_counts: dict | None
    notes: list[str]
    llm: dict | None
    missing: dict = {}  # what was requested and is not there (see locomo_run.missing_rows); empty: complete

    @property
    def complete(self) -> bool:
        return not self.missing

    def closing_line(self) -> str | None:
        from memeval.rundir import incomplete_line

        return incomplete_line(self.missing)

    def summary(self) -> dict:
        return {"out": self.out, "answer_counts": self.answer_counts, "judge_counts": self.judge_counts,
                "notes": self.notes, "llm": self.llm, "missing": self.missing, "complete": self.complete}


class LMEAnswerRow(Record):
    """One (system, question) of a LongMemEval run."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({"retrieval"})

    question_id: str
    question_type: str
    abstention: bool
    question: str
    answer: str
    prediction: str
    system: str
    answerer: str
    # memeval's evidence_recall@1..DEPTH (share of evidence found), not the benchmark's recall: ranked systems only
    session_recall: list[float] | None  # of the evidence sessions (answer_session_ids)
    turn_recall: list[float] | None  # of the has_answer turns
    sessions_given: float | None  # share of evidence sessions among what the reader was given
    context_tokens: int
    latency_search_s: float
    error: str | None
    # The benchmark's own retrieval numbers, "session"/"turn" → "recall_any@5", "recall_all@5", "ndcg_any@5", ...
    # (memeval.benchmarks.longmemeval.metrics); None for unranked systems and questions the benchmark leaves out.
    retrieval: dict[str, dict[str, float]] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.question_id)


class LMEJudgmentRow(Record):
    question_id: str
    question_type: str
    abstention: bool
    system: str
    protocol: str
    prompt_version: str
    label: bool
    reply: str
    judge_model: str | None = None  # rows written before the judge was recorded have none

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.question_id)


class Graph80AnswerRow(Record):
    """One (system, question, repeat) of the memory-graph study: the answer and its LLM-free diagnostics."""

    question_id: str
    type: str
    system: str
    repeat: int
    question: str
    gold: str
    prediction: str
    answerer: str
    error: str | None
    path_recall: float | None
    entity_recall: float | None
    context_tokens: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.system, self.question_id, self.repeat)


class Graph80JudgmentRow(Record):
    """The three-dimension judge's score of one graph80 answer (None when its reply could not be parsed, and then
    `error` says why)."""

    optional_fields: ClassVar[frozenset[str]] = frozenset({"error"})

    question_id: str
    system: str
    repeat: int
    protocol: str
    prompt_version: str
    score: float | None
    judge_model: str | None
    error: str | None = None

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.system, self.question_id, self.repeat, self.protocol)


class TrustCell(Record):
    """One score of the trust section (trust.json): a system's F1 or J over one category (or categories 1–4) under
    one answer key, with its 95% normal interval (SE clustered by conversation); `value` None when it cannot be
    given under that key (`why` says so)."""

    run: str
    system: str
    origin: str  # "memeval" or "imported: <format>" (a published run)
    measure: str  # "F1" or "J <protocol>"
    key: str  # original | corrected | excluded
    category: str  # "1".."4" or "overall" (categories 1–4)
    value: float | None
    low: float | None
    high: float | None
    n: int
    why: str | None = None


class TrustPair(Record):
    """Two adjacent systems of one measure under one answer key (ordered by their overall score under that key) in
    one category: the paired difference, its clustered SE, the minimum detectable difference and the verdict. The
    audit's known-wrong answer sets are reference sets, never in a pair."""

    measure: str
    key: str = "original"  # original | corrected | excluded
    category: str
    a: str
    b: str
    difference: float | None
    se: float | None
    mde: float | None
    n: int
    clusters: int
    verdict: str


class TrustLeniency(Record):
    """One judge configuration's measured acceptance of one answer set (None: not measured)."""

    judge: str  # the configuration as a table names it
    answer_set: str  # specific_wrong | vague_wrong | gold
    rate: float | None
    low: float | None
    high: float | None
    n: int
    source: str | None


class TrustDocument(Record):
    """Everything the trust section says, as typed rows (trust.json beside trust.md)."""

    audit: dict[str, Any]
    keys: list[str]
    ceilings: dict[str, float]  # category ("1".."4", "overall") → percent of questions whose original key is right
    f1_ceilings: dict[str, float]  # the F1 ×100 a perfect system (the audit's answers) gets under the original key
    cells: list[TrustCell]
    pairs: list[TrustPair]
    leniency: list[TrustLeniency]
    judges: dict[str, str]  # measure → its judge's configuration and leniency sentence
    words: dict[str, float | None]  # "run · system" → mean answer length in words (categories 1–4)
    notes: list[str]
