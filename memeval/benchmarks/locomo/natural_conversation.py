"""Conversation-scale natural packages (`memeval natural build --scope conversation`): one package per LoCoMo
conversation, with every turn as an experience and every question's evidence as units — the size a real exported
store is audited at (thousands of candidates), rather than one question's ±4-turn slice.

Candidates per turn are those of the question-level packages (natural_source.py): the dated raw span, the
observation fact alone and dated, the best-matching summary sentence. Units: for each question of categories 1–4
with resolvable evidence, an answer unit per evidence turn (and a time unit for temporal questions), each question
weighing 1 in all, covered by the same lexical rules. LoCoMo's annotations mark no updates, so no tombstone is
generated (the manifest says so). Weighing every question equally makes OPT the best store for the whole question
set at a budget.
"""

from __future__ import annotations

from collections import defaultdict

from memeval.benchmarks.locomo.natural_source import eligible_questions
from memeval.conversations import Conversation
from memeval.memaudit.package import Candidate, Experience, Package, Query, Unit
from memeval.memory.render import turn_text
from memeval.natural.rules import (
    COST_RULES,
    RULE_VERSION,
    best_summary_sentence,
    content_tokens,
    lexical_support,
    states_date,
    summary_sentences,
)

SOURCE_LABEL = "LoCoMo conversation-scale packages, rule-adjudicated"
PACKAGE_PREFIX = "locomo-conversation-"
NO_TOMBSTONES = "LoCoMo's annotations mark no updates, so no tombstone candidates exist"


def questions(conversation: Conversation) -> list:
    """One conversation's questions that carry units: the question scope's eligibility (natural_source.py)."""
    return [qa for _, qa in eligible_questions([conversation])]


def build_conversation_package(conversation: Conversation, cost_rule: str = "words") -> Package:
    cost = COST_RULES[cost_rule]
    facts_by_turn: dict[str, list[str]] = {}
    for obs in conversation.observations:
        for dia_id in obs.source_ids:
            facts_by_turn.setdefault(dia_id, []).append(obs.text)
    units: list[Unit] = []
    evidence_units: list[dict] = []
    queries = []
    by_turn: dict[str, list[tuple[dict, frozenset]]] = defaultdict(list)  # turn → (unit, gold tokens)
    for qa in questions(conversation):
        evidence = list(dict.fromkeys(qa.evidence_ids))
        temporal = qa.category == 2
        share = 1.0 / len(evidence)
        ids = []
        for dia_id in evidence:
            answer_unit = f"{qa.sample_id}:answer:{dia_id}"
            time_unit = f"{qa.sample_id}:time:{dia_id}" if temporal else None
            units.append(Unit(answer_unit, share * (0.5 if temporal else 1.0), "fact",
                              f"{qa.sample_id}: the answer-bearing content of {dia_id}"))
            ids.append(answer_unit)
            if time_unit:
                units.append(Unit(time_unit, share * 0.5, "temporal", f"{qa.sample_id}: when {dia_id} was said"))
                ids.append(time_unit)
            unit = {"turn": dia_id, "answer_unit": answer_unit, "time_unit": time_unit, "answer": qa.answer or "",
                    "question": qa.sample_id}
            evidence_units.append(unit)
            by_turn[dia_id].append((unit, content_tokens(unit["answer"])))
        queries.append(Query(qa.sample_id, qa.question, tuple(ids)))

    experiences, candidates, coverage = [], [], []
    for session in conversation.sessions:
        sentences = summary_sentences(conversation.session_summaries.get(session.index, ""))
        for turn in session.turns:
            body = turn_text(turn)
            raw = f"[{session.date_time}] {body}"
            experiences.append(Experience(turn.dia_id, raw, float(turn.session * 10_000 + turn.position)))
            options = [("raw", raw)]
            fact = " ".join(facts_by_turn.get(turn.dia_id, ()))
            if fact:
                options += [("fact", fact), ("dated_fact", f"[{session.date_time}] {fact}")]
            sentence = best_summary_sentence(body, sentences)
            if sentence:
                options.append(("summary", sentence))
            turn_tokens = content_tokens(body)
            for kind, text in options:
                cid = f"{turn.dia_id}:{kind}"
                candidates.append(Candidate(cid, turn.dia_id, kind, cost(text), text))
                text_tokens = content_tokens(text)
                for unit, gold in by_turn.get(turn.dia_id, ()):
                    if kind == "raw":
                        answer_value, time_value = 1.0, 1.0
                    else:
                        answer_value = lexical_support(gold, turn_tokens, text_tokens)
                        time_value = 1.0 if kind == "dated_fact" or (kind == "summary"
                                                                     and states_date(text, session.date)) else 0.0
                    if answer_value > 0:
                        coverage.append((cid, unit["answer_unit"], answer_value))
                    if time_value > 0 and unit["time_unit"]:
                        coverage.append((cid, unit["time_unit"], time_value))
    return Package(
        package_id=f"{PACKAGE_PREFIX}{conversation.sample_id}",
        experiences=tuple(experiences), candidates=tuple(candidates), units=tuple(units),
        coverage=tuple(coverage), max_per_group=1,
        meta={"source": SOURCE_LABEL, "distribution": "locomo-conversation", "conversation": conversation.sample_id,
              "questions": len(queries), "evidence_units": evidence_units, "tombstones": NO_TOMBSTONES,
              "rule_version": RULE_VERSION, "cost_rule": cost_rule, "estimator": "tfidf_salience"},
        queries=tuple(queries),
    )
