"""Deterministic construction of LoCoMo natural packages (natural-packages.md §1): one package per question
(`memeval natural build`, the question scope).

Examination order is a seeded shuffle (seed 87) of the eligible questions; every examined question is either
accepted (a package) or rejected with a reason, and Natural-87 is the first 87 accepted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from memeval.benchmarks.locomo.categories import QA_CATEGORIES
from memeval.conversations import QA, Conversation, Session, Turn
from memeval.memaudit.package import Candidate, Experience, Package, Query
from memeval.memory.render import turn_text
from memeval.natural.defaults import SAMPLE_SEED, TARGET_ACCEPTED
from memeval.natural.examine import WINDOW, Examined, accept, evidence_units, examine_until
from memeval.natural.rules import (
    COST_RULES,
    RULE_VERSION,
    best_summary_sentence,
    content_tokens,
    lexical_support,
    states_date,
    summary_sentences,
)
from memeval.records import PackageId

SOURCE_LABEL = "LoCoMo-Natural-87, rule-adjudicated"


def eligible_questions(conversations: Sequence[Conversation]) -> list[tuple[Conversation, QA]]:
    """Categories 1–4 whose evidence ids all resolve to turns (in file order)."""
    return [(c, qa) for c in conversations for qa in c.qa
            if qa.category in QA_CATEGORIES and qa.evidence_ids and not qa.unresolved_evidence]


def examination_order(conversations: Sequence[Conversation], seed: int = SAMPLE_SEED):
    order = eligible_questions(conversations)
    random.Random(seed).shuffle(order)
    return order


def _turn_index(conversation: Conversation) -> dict[str, tuple[Session, int]]:
    return {t.dia_id: (s, i) for s in conversation.sessions for i, t in enumerate(s.turns)}


def support_slice(conversation: Conversation, evidence_ids: Sequence[str], window: int = WINDOW) -> list[Turn]:
    """Turns within ±window of each evidence turn, evidence sessions only, merged, in conversation order."""
    where = _turn_index(conversation)
    keep: set[tuple[int, int]] = set()
    for dia_id in evidence_ids:
        session, pos = where[dia_id]
        for p in range(max(0, pos - window), min(len(session.turns), pos + window + 1)):
            keep.add((session.index, p))
    sessions = {s.index: s for s in conversation.sessions}
    return [sessions[s].turns[p] for s, p in sorted(keep)]


def package_id_for(sample_id: str) -> str:
    return str(PackageId.natural(sample_id))


def build_package(conversation: Conversation, qa: QA, cost_rule: str = "words") -> Package:
    cost = COST_RULES[cost_rule]
    sessions = {s.index: s for s in conversation.sessions}
    facts_by_turn: dict[str, list[str]] = {}
    for obs in conversation.observations:
        for dia_id in obs.source_ids:
            facts_by_turn.setdefault(dia_id, []).append(obs.text)
    evidence = list(dict.fromkeys(qa.evidence_ids))
    temporal = qa.category == 2
    gold = content_tokens(qa.answer or "")

    units = evidence_units(evidence, temporal)
    unit_ids = {u.id for u in units}

    experiences, candidates, coverage = [], [], []
    for turn in support_slice(conversation, evidence):
        session = sessions[turn.session]
        body = turn_text(turn)
        raw = f"[{session.date_time}] {body}"
        experiences.append(Experience(turn.dia_id, raw, float(turn.session * 10_000 + turn.position)))
        turn_tokens = content_tokens(body)
        options = [("raw", raw)]
        fact = " ".join(facts_by_turn.get(turn.dia_id, ()))
        if fact:
            options += [("fact", fact), ("dated_fact", f"[{session.date_time}] {fact}")]
        sentence = best_summary_sentence(body, summary_sentences(conversation.session_summaries.get(turn.session,
                                                                                                     "")))
        if sentence:
            options.append(("summary", sentence))
        for kind, text in options:
            cid = f"{turn.dia_id}:{kind}"
            candidates.append(Candidate(cid, turn.dia_id, kind, cost(text), text))
            answer_unit, time_unit = f"answer:{turn.dia_id}", f"time:{turn.dia_id}"
            if answer_unit not in unit_ids:
                continue
            if kind == "raw":
                answer_value, time_value = 1.0, 1.0
            else:
                answer_value = lexical_support(gold, turn_tokens, content_tokens(text))
                time_value = 1.0 if kind == "dated_fact" or (kind == "summary"
                                                             and states_date(text, session.date)) else 0.0
            if answer_value > 0:
                coverage.append((cid, answer_unit, answer_value))
            if time_value > 0 and time_unit in unit_ids:
                coverage.append((cid, time_unit, time_value))

    return Package(
        package_id=package_id_for(qa.sample_id),
        experiences=tuple(experiences),
        candidates=tuple(candidates),
        units=tuple(units),
        coverage=tuple(coverage),
        max_per_group=1,
        meta={"source": SOURCE_LABEL, "distribution": "locomo-natural", "conversation": conversation.sample_id,
              "sample_id": qa.sample_id, "question": qa.question, "answer": qa.answer, "category": qa.category,
              "evidence": evidence, "rule_version": RULE_VERSION, "cost_rule": cost_rule, "window": WINDOW,
              "estimator": "tfidf_salience"},
        queries=(Query(qa.sample_id, qa.question, tuple(u.id for u in units)),),
    )


def examine(conversation: Conversation, qa: QA, cost_rule: str = "words") -> Examined:
    """Strict acceptance: rejections are data with a reason, never silently dropped."""
    gold = content_tokens(qa.answer or "")
    if not gold:
        return Examined(qa.sample_id, False, "answer_has_no_content_tokens")
    where = _turn_index(conversation)
    evidence_tokens = frozenset().union(*(content_tokens(turn_text(where[e][0].turns[where[e][1]]))
                                          for e in qa.evidence_ids))
    if len(gold & evidence_tokens) < 0.5 * len(gold):
        return Examined(qa.sample_id, False, "evidence_turns_hold_under_half_of_answer")
    return accept(qa.sample_id, build_package(conversation, qa, cost_rule))


def build_natural(conversations: Sequence[Conversation], target: int = TARGET_ACCEPTED, seed: int = SAMPLE_SEED,
                  cost_rule: str = "words", progress: bool = False) -> list[Examined]:
    """Examine in seeded order until `target` are accepted (or the eligible pool runs out)."""
    return examine_until(examination_order(conversations, seed), lambda pair: examine(*pair, cost_rule), target,
                         progress=progress)
