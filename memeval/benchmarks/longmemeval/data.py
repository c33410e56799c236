"""LongMemEval (Wu et al., ICLR 2025) as typed records: one instance per question, each with its own haystack of
timestamped sessions, evidence sessions and the `has_answer` turns.

The data is not redistributed here: `memeval data fetch longmemeval --variant s|m|oracle` downloads the cleaned
release at a pinned dataset revision and checks its SHA-256 (docs/data-and-scoring.md). Malformed files are one
error naming file, instance and field; harmless irregularities are counted as quirks, never fatal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memeval.errors import InputError
from memeval.safe_json import load_json_file
from memeval.safe_paths import check_id

QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "temporal-reasoning", "knowledge-update", "multi-session")
ABSTENTION_MARK = "_abs"  # anywhere in the id, as the benchmark's scripts test it (not only as a suffix)
KNOWN_FIELDS = frozenset({"question_id", "question_type", "question", "answer", "question_date",
                          "haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"})


def is_abstention(question_id: str) -> bool:
    """An abstention (unanswerable) question: the benchmark tests `'_abs' in question_id`, so memeval does too."""
    return ABSTENTION_MARK in question_id


@dataclass(frozen=True)
class LMETurn:
    role: str  # "user" or "assistant"
    content: str
    has_answer: bool = False


@dataclass(frozen=True)
class LMESession:
    session_id: str
    date: str  # as written, e.g. "2023/05/20 (Sat) 02:21"
    turns: tuple[LMETurn, ...]

    @property
    def evidence(self) -> bool:
        return any(t.has_answer for t in self.turns)


@dataclass(frozen=True)
class LMEInstance:
    question_id: str
    question_type: str
    question: str
    answer: str  # stringified; for preference questions a rubric, for abstention questions an explanation
    question_date: str
    sessions: tuple[LMESession, ...]
    answer_session_ids: tuple[str, ...]
    metadata: dict = field(default_factory=dict, compare=False)  # fields the release adds beyond the known ones

    @property
    def abstention(self) -> bool:
        return is_abstention(self.question_id)

    @property
    def evidence_turns(self) -> list[tuple[str, int]]:
        """(session id, turn index) of every `has_answer` turn."""
        return [(s.session_id, i) for s in self.sessions for i, t in enumerate(s.turns) if t.has_answer]


@dataclass
class LMELoadReport:
    path: str
    quirks: Counter = field(default_factory=Counter)


def _require(row: dict, name: str, kinds, where: str):
    if name not in row:
        raise InputError(where, name, "missing")
    if not isinstance(row[name], kinds) or isinstance(row[name], bool):
        expected = " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
        raise InputError(where, name, f"expected {expected}, got {type(row[name]).__name__}")
    return row[name]


def parse_instance(row: object, where: str, quirks: Counter) -> LMEInstance:
    if not isinstance(row, dict):
        raise InputError(where, "instance", "expected an object")
    qid = check_id(str(_require(row, "question_id", (str, int), where)), where, "question_id")  # a file name
    where = f"{where} ({qid})"
    qtype = _require(row, "question_type", str, where)
    if qtype not in QUESTION_TYPES:
        raise InputError(where, "question_type", f"{qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
    answer = _require(row, "answer", (str, int, float), where)
    if not isinstance(answer, str):
        quirks["non-string answers (stringified)"] += 1
    ids = _require(row, "haystack_session_ids", list, where)
    dates = _require(row, "haystack_dates", list, where)
    raw_sessions = _require(row, "haystack_sessions", list, where)
    if len(ids) != len(raw_sessions):
        raise InputError(where, "haystack_session_ids", f"{len(ids)} ids for {len(raw_sessions)} sessions")
    if len(dates) != len(raw_sessions):
        quirks["sessions without a date"] += abs(len(raw_sessions) - len(dates))
    sessions = []
    for s, (sid, turns) in enumerate(zip(ids, raw_sessions, strict=True)):
        if not isinstance(turns, list):
            raise InputError(where, f"haystack_sessions[{s}]", "expected a list of turns")
        parsed = []
        for t, turn in enumerate(turns):
            at = f"haystack_sessions[{s}][{t}]"
            if not isinstance(turn, dict):
                raise InputError(where, at, "expected a turn object")
            role = turn.get("role")
            if role not in ("user", "assistant"):
                raise InputError(where, f"{at}.role", f"expected user or assistant, got {role!r}")
            content = turn.get("content")
            if not isinstance(content, str):
                raise InputError(where, f"{at}.content", "expected a string")
            if not content.strip():
                quirks["empty turns"] += 1
            parsed.append(LMETurn(role, content, bool(turn.get("has_answer", False))))
        sessions.append(LMESession(str(sid), str(dates[s]) if s < len(dates) else "", tuple(parsed)))
    evidence = tuple(str(e) for e in _require(row, "answer_session_ids", list, where))
    known = {s.session_id for s in sessions}
    missing = [e for e in evidence if e not in known]
    if missing:
        quirks["evidence sessions not in the haystack"] += len(missing)
    instance = LMEInstance(qid, qtype, str(_require(row, "question", str, where)), str(answer),
                           str(row.get("question_date", "")), tuple(sessions), evidence,
                           {k: v for k, v in row.items() if k not in KNOWN_FIELDS})
    if not instance.abstention and not instance.evidence_turns:
        quirks["answerable questions without a has_answer turn"] += 1
    uncredited = sum(1 for s in sessions if "answer" not in s.session_id for t in s.turns
                     if t.role == "user" and t.has_answer)
    if uncredited:  # the benchmark credits a turn by its session id (memeval.benchmarks.longmemeval.metrics)
        quirks["has_answer user turns in sessions without \"answer\" in the id (no retrieval credit)"] += uncredited
    return instance


def load_longmemeval(path: str | Path) -> tuple[list[LMEInstance], LMELoadReport]:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "longmemeval", "no such file (fetch it: memeval data fetch longmemeval --variant s)")
    doc = load_json_file(path, "json", kind="longmemeval")
    if not isinstance(doc, list):
        raise InputError(path, "top level", "expected a list of instances")
    if not doc:
        raise InputError(path, "top level", "no instances")
    report = LMELoadReport(str(path))
    instances = [parse_instance(row, f"{path}[{i}]", report.quirks) for i, row in enumerate(doc)]
    seen = Counter(i.question_id for i in instances)
    twice = [q for q, n in seen.items() if n > 1]
    if twice:
        raise InputError(path, "question_id", f"repeated: {', '.join(twice[:3])}")
    return instances, report


def stats(instances: list[LMEInstance]) -> dict:
    sessions = [len(i.sessions) for i in instances]
    return {
        "instances": len(instances),
        "by_type": {t: sum(1 for i in instances if i.question_type == t) for t in QUESTION_TYPES},
        "abstention": sum(1 for i in instances if i.abstention),
        "sessions": sum(sessions),
        "sessions_per_question_mean": sum(sessions) / len(sessions) if sessions else 0.0,
        "turns": sum(len(s.turns) for i in instances for s in i.sessions),
        "evidence_turns": sum(len(i.evidence_turns) for i in instances),
        "evidence_sessions": sum(len(i.answer_session_ids) for i in instances),
    }
