"""LongMemEval's numbers as the benchmark itself computes them, so a memeval row can stand beside a published one.

Accuracy (the benchmark's QA summary): every judged question counts in its own question type, abstention
questions (`_abs` anywhere in the id) included; task-averaged accuracy is the plain mean of the six type means
(undefined while a type has no judged question); overall accuracy is the mean over all judged questions; abstention
accuracy is the mean over the `_abs` questions alone.

Retrieval (the benchmark's retrieval evaluation): only user turns are corpus items, with ids `<session id>_<n>`
(`n` the 1-based index among all the session's turns). A session credits a question only through its `has_answer`
user turns: in a session whose id contains "answer", a user turn without `has_answer` is renamed "noans" (and at
session granularity the whole session is, when none of its user turns has it); the correct ids are those still
containing "answer". `recall_any@k` / `recall_all@k`: some / every correct id among the first k; `ndcg_any@k`:
binary gains with discount 1 at ranks 1 and 2 and 1/log2(rank) after, over the ideal order of the whole corpus.
Session-level numbers from a turn ranking drop the turn suffix and widen k until k distinct session ids are
seen. Abstention questions and questions without a user `has_answer` turn are left out of the means.

memeval's own retrieval measure, the share of evidence found among the first k memories, is a different number
and is kept under its own name, `evidence_recall@k` (`memeval.qa.evidence.recall_curve`). Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memeval.benchmarks.longmemeval.data import LMEInstance, is_abstention

QA_TYPES = ("single-session-user", "single-session-preference", "single-session-assistant", "multi-session",
            "temporal-reasoning", "knowledge-update")  # the order the benchmark prints them in
RETRIEVAL_KS = (1, 3, 5, 10, 30, 50)  # the cut-offs the benchmark records for every question
RETRIEVAL_NAMES = ("recall_any", "recall_all", "ndcg_any")
LEVELS = ("session", "turn")
CREDIT_MARK = "answer"  # a corpus id is correct when it contains this
NO_CREDIT_MARK = "noans"  # what "answer" becomes in an id that must not earn credit

# A haystack in the benchmark's layout: (session id, [(role, has_answer) for every turn]).
Haystack = Sequence[tuple[str, Sequence[tuple[str, bool]]]]
# Per question: level ("session" / "turn") → metric name ("recall_any@5", ...) → value.
RetrievalScores = dict[str, dict[str, float]]


# --- accuracy ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QAMetrics:
    """Accuracies in [0, 1]; None where the benchmark's mean would be over nothing (it prints nan)."""

    by_type: dict[str, float | None]  # QA_TYPES order, `_abs` questions inside their own type
    counts: dict[str, int]
    task_averaged: float | None  # mean of the six type means; None unless every type has a judged question
    overall: float | None
    abstention: float | None
    abstention_count: int
    judged: int


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def qa_metrics(rows: Iterable[tuple[str, str, bool]]) -> QAMetrics:
    """The benchmark's accuracy summary from (question_id, question_type, label) per judged question.

    A question type outside the six is refused: the benchmark has no slot for it and would stop."""
    by_type: dict[str, list[float]] = {t: [] for t in QA_TYPES}
    abstention: list[float] = []
    for question_id, question_type, label in rows:
        if question_type not in by_type:
            raise ValueError(f"{question_id}: question type {question_type!r} is not one of LongMemEval's six")
        score = 1.0 if label else 0.0
        by_type[question_type].append(score)
        if is_abstention(question_id):
            abstention.append(score)
    means = {t: _mean(v) for t, v in by_type.items()}
    every = [s for v in by_type.values() for s in v]
    task = None if any(m is None for m in means.values()) else _mean([m for m in means.values() if m is not None])
    return QAMetrics(means, {t: len(v) for t, v in by_type.items()}, task, _mean(every), _mean(abstention),
                     len(abstention), len(every))


# --- corpus ids and credit --------------------------------------------------------------------------------------

def haystack_of(instance: LMEInstance) -> Haystack:
    """A loaded instance's haystack in the layout the retrieval rules read."""
    return [(s.session_id, [(t.role, t.has_answer) for t in s.turns]) for s in instance.sessions]


def haystack_from_entry(entry: Mapping) -> Haystack:
    """A raw instance as the release writes it (parallel `haystack_session_ids` / `haystack_sessions`)."""
    return [(str(sid), [(t["role"], bool(t.get("has_answer", False))) for t in turns])
            for sid, turns in zip(entry["haystack_session_ids"], entry["haystack_sessions"], strict=True)]


def _no_credit(corpus_id: str) -> str:
    return corpus_id.replace(CREDIT_MARK, NO_CREDIT_MARK)


def turn_corpus_ids(haystack: Haystack) -> list[tuple[str, int, str]]:
    """(session id, 0-based turn index, corpus id) of every user turn, in haystack order; assistant turns are not
    in the corpus. In a session whose id contains "answer" a user turn without `has_answer` gets a "noans" id."""
    out = []
    for session_id, turns in haystack:
        for index, (role, has_answer) in enumerate(turns):
            if role != "user":
                continue
            corpus_id = f"{session_id}_{index + 1}"
            out.append((session_id, index, corpus_id if CREDIT_MARK not in session_id or has_answer
                        else _no_credit(corpus_id)))
    return out


def session_corpus_ids(haystack: Haystack) -> list[str]:
    """One id per session; an "answer" session none of whose user turns has `has_answer` gets a "noans" id."""
    out = []
    for session_id, turns in haystack:
        credited = any(has_answer for role, has_answer in turns if role == "user")
        out.append(session_id if CREDIT_MARK not in session_id or credited else _no_credit(session_id))
    return out


def correct_ids(corpus_ids: Iterable[str]) -> set[str]:
    """The ids that earn credit: those still containing "answer" after the renaming."""
    return {c for c in corpus_ids if CREDIT_MARK in c}


def retrieval_scored(question_id: str, haystack: Haystack) -> bool:
    """Whether the benchmark averages this question's retrieval numbers: not an abstention question, and some
    user turn (in any session) has `has_answer` — so evidence held only in assistant turns is left out."""
    return not is_abstention(question_id) and any(
        has_answer for _, turns in haystack for role, has_answer in turns if role == "user")


def strip_turn(corpus_id: str) -> str:
    """A turn id's session id: everything before the last underscore (a "noans" turn stays "noans")."""
    return "_".join(corpus_id.split("_")[:-1])


# --- ranking metrics --------------------------------------------------------------------------------------------

def dcg(gains: Sequence[float]) -> float:
    """The benchmark's discount: rank 1 undiscounted, rank r ≥ 2 divided by log2(r) (so ranks 1 and 2 weigh
    the same — not the 1/log2(r + 1) of most libraries)."""
    return sum(g if rank == 1 else g / math.log2(rank) for rank, g in enumerate(gains, start=1))


def ranking_scores(ranked: Sequence[str], corpus: Sequence[str], correct: set[str], k: int
                   ) -> tuple[float, float, float]:
    """(recall_any@k, recall_all@k, ndcg_any@k) of one ranking of corpus ids, in the order given (ties are the
    retriever's to break). The ideal DCG is over every corpus entry, ranked or not; with no correct id recall_any
    is 0, recall_all 1 and ndcg 0, as in the benchmark (such questions are left out of its means anyway)."""
    top = list(ranked[:k])
    seen = set(top)
    recall_any = 1.0 if any(c in seen for c in correct) else 0.0
    recall_all = 1.0 if all(c in seen for c in correct) else 0.0
    ideal = dcg(sorted((1.0 if c in correct else 0.0 for c in corpus), reverse=True)[:k])
    actual = dcg([1.0 if c in correct else 0.0 for c in top])
    return recall_any, recall_all, (actual / ideal if ideal else 0.0)


def widened_k(ranked_sessions: Sequence[str], corpus_size: int, k: int) -> int:
    """The depth at which a turn ranking (mapped to session ids) first shows k distinct sessions; it stops one
    past the corpus size when there are fewer (the benchmark's loop bound)."""
    depth, seen = k, set(ranked_sessions[:k])  # seen: the distinct ids among the first `depth`
    while depth <= corpus_size and len(seen) < k:
        if depth < len(ranked_sessions):
            seen.add(ranked_sessions[depth])
        depth += 1
    return depth


def turn_ranking_scores(ranked_turns: Sequence[str], turn_corpus: Sequence[str], ks: Sequence[int] = RETRIEVAL_KS
                        ) -> RetrievalScores:
    """Turn- and session-level numbers of one ranking of turn corpus ids (`turn_corpus`: every user turn's id)."""
    correct = correct_ids(turn_corpus)
    sessions = [strip_turn(t) for t in ranked_turns]
    session_corpus = [strip_turn(t) for t in turn_corpus]
    session_correct = {strip_turn(c) for c in correct}
    out: RetrievalScores = {"session": {}, "turn": {}}
    for k in ks:
        out["turn"].update(_named(k, ranking_scores(ranked_turns, turn_corpus, correct, k)))
        depth = widened_k(sessions, len(session_corpus), k)
        out["session"].update(_named(k, ranking_scores(sessions, session_corpus, session_correct, depth)))
    return out


def session_ranking_scores(ranked_sessions: Sequence[str], session_corpus: Sequence[str],
                           ks: Sequence[int] = RETRIEVAL_KS) -> RetrievalScores:
    """Session-level numbers of a retriever that ranks whole sessions (no turn level, as in the benchmark)."""
    correct = correct_ids(session_corpus)
    session: dict[str, float] = {}
    for k in ks:
        session.update(_named(k, ranking_scores(ranked_sessions, session_corpus, correct, k)))
    return {"session": session, "turn": {}}


def _named(k: int, values: tuple[float, float, float]) -> dict[str, float]:
    return {f"{name}@{k}": v for name, v in zip(RETRIEVAL_NAMES, values, strict=True)}


def mean_retrieval(per_question: Iterable[RetrievalScores | None]) -> tuple[RetrievalScores, int]:
    """The mean of every metric over the questions that have one (None: left out, e.g. not scored), and how
    many questions that was."""
    rows = [r for r in per_question if r is not None]
    out: RetrievalScores = {}
    for level in LEVELS:
        values: dict[str, list[float]] = {}
        for row in rows:
            for name, value in row.get(level, {}).items():
                values.setdefault(name, []).append(value)
        out[level] = {name: sum(v) / len(v) for name, v in values.items()}
    return out, len(rows)
