"""Natural MEMAUDIT packages from LongMemEval (`memeval natural build --source longmemeval`): one package per
question, with the LoCoMo construction's strict acceptance and rejection reasons, evidence from the `has_answer`
turns.

LongMemEval carries no observation or summary annotations, so the non-raw candidates of a turn are written by a
query-blind rule: its most salient sentence (largest summed inverse session frequency of its content tokens,
ties to the earlier sentence), alone and with the session date. Coverage uses the same lexical-support rules as
LoCoMo's packages (natural/rules.py), so a sentence covers an answer unit to the extent it keeps the answer.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from memeval.benchmarks.longmemeval.data import LMEInstance, LMESession
from memeval.data.fetch import data_hashes
from memeval.errors import InputError
from memeval.invocation import flag_args, invocation, path_text
from memeval.memaudit.package import Candidate, Experience, Package, Query
from memeval.natural.build import dump, one_writer, provenance, settle_output, write_build
from memeval.natural.defaults import SAMPLE_SEED, TARGET_ACCEPTED
from memeval.natural.examine import WINDOW, Examined, accept, evidence_units, examine_until
from memeval.natural.rules import COST_RULES, RULE_VERSION, content_tokens, lexical_support, summary_sentences
from memeval.natural.source import NaturalSource
from memeval.rundir import MANIFEST

SOURCE_LABEL = "LongMemEval-Natural, rule-adjudicated"
PACKAGE_PREFIX = "longmemeval-natural-"
TEMPORAL_TYPE = "temporal-reasoning"


def evidence_turns(instance: LMEInstance) -> list[str]:
    return [f"{s.session_id}:{j}" for s in instance.sessions for j, t in enumerate(s.turns) if t.has_answer]


def eligible(instances: Sequence[LMEInstance]) -> list[LMEInstance]:
    """Answerable questions whose evidence is marked at turn level (in file order)."""
    return [i for i in instances if not i.abstention and evidence_turns(i)]


def examination_order(instances: Sequence[LMEInstance], seed: int) -> list[LMEInstance]:
    order = eligible(instances)
    random.Random(seed).shuffle(order)
    return order


def salient_sentence(text: str, idf: dict[str, float]) -> str | None:
    """The turn's sentence with the largest summed idf of its content tokens; None for a one-sentence turn."""
    sentences = summary_sentences(text)
    if len(sentences) < 2:
        return None
    scored = [(sum(idf.get(t, 0.0) for t in content_tokens(s)), -i, s) for i, s in enumerate(sentences)]
    best = max(scored)
    return best[2] if best[0] > 0 else None


def _session_idf(session: LMESession) -> dict[str, float]:
    df = Counter(t for turn in session.turns for t in content_tokens(turn.content))
    n = len(session.turns)
    return {token: math.log((1 + n) / (1 + count)) + 1.0 for token, count in df.items()}


def build_package(instance: LMEInstance, cost_rule: str = "words") -> Package:
    cost = COST_RULES[cost_rule]
    evidence = evidence_turns(instance)
    temporal = instance.question_type == TEMPORAL_TYPE
    gold = content_tokens(instance.answer)
    units = evidence_units(evidence, temporal)
    unit_ids = {u.id for u in units}
    wanted: dict[str, set[int]] = {}
    by_id = {s.session_id: s for s in instance.sessions}
    for turn_id in evidence:
        session_id, _, position = turn_id.rpartition(":")
        n = len(by_id[session_id].turns)
        p = int(position)
        wanted.setdefault(session_id, set()).update(range(max(0, p - WINDOW), min(n, p + WINDOW + 1)))

    experiences, candidates, coverage = [], [], []
    for order, session in enumerate(instance.sessions):
        if session.session_id not in wanted:
            continue
        idf = _session_idf(session)
        for j in sorted(wanted[session.session_id]):
            turn = session.turns[j]
            turn_id = f"{session.session_id}:{j}"
            raw = f"[{session.date}] {turn.role}: {turn.content}"
            experiences.append(Experience(turn_id, raw, float(order * 100_000 + j)))
            options = [("raw", raw)]
            sentence = salient_sentence(turn.content, idf)
            if sentence:
                options += [("sentence", sentence), ("dated_sentence", f"[{session.date}] {sentence}")]
            turn_tokens = content_tokens(turn.content)
            for kind, text in options:
                cid = f"{turn_id}:{kind}"
                candidates.append(Candidate(cid, turn_id, kind, cost(text), text))
                answer_unit, time_unit = f"answer:{turn_id}", f"time:{turn_id}"
                if answer_unit not in unit_ids:
                    continue
                answer_value = 1.0 if kind == "raw" else lexical_support(gold, turn_tokens, content_tokens(text))
                time_value = 1.0 if kind in ("raw", "dated_sentence") else 0.0
                if answer_value > 0:
                    coverage.append((cid, answer_unit, answer_value))
                if time_value > 0 and time_unit in unit_ids:
                    coverage.append((cid, time_unit, time_value))
    return Package(
        package_id=f"{PACKAGE_PREFIX}{instance.question_id}",
        experiences=tuple(experiences), candidates=tuple(candidates), units=tuple(units),
        coverage=tuple(coverage), max_per_group=1,
        meta={"source": SOURCE_LABEL, "distribution": "longmemeval-natural", "question_id": instance.question_id,
              "question_type": instance.question_type, "question": instance.question, "answer": instance.answer,
              "evidence": evidence, "rule_version": RULE_VERSION, "cost_rule": cost_rule, "window": WINDOW,
              "estimator": "tfidf_salience"},
        queries=(Query(instance.question_id, instance.question, tuple(u.id for u in units)),),
    )


def examine(instance: LMEInstance, cost_rule: str = "words") -> Examined:
    """The LoCoMo construction's acceptance rules and reasons, on LongMemEval's evidence turns."""
    gold = content_tokens(instance.answer)
    if not gold:
        return Examined(instance.question_id, False, "answer_has_no_content_tokens")
    turns = {f"{s.session_id}:{j}": t for s in instance.sessions for j, t in enumerate(s.turns)}
    evidence_tokens = frozenset().union(*(content_tokens(turns[e].content) for e in evidence_turns(instance)))
    if len(gold & evidence_tokens) < 0.5 * len(gold):
        return Examined(instance.question_id, False, "evidence_turns_hold_under_half_of_answer")
    return accept(instance.question_id, build_package(instance, cost_rule))


def build_lme_natural(instances: Sequence[LMEInstance], target: int, seed: int, cost_rule: str = "words",
                      progress: bool = False) -> list[Examined]:
    """Examine in seeded order until `target` are accepted (or the eligible pool runs out)."""
    return examine_until(examination_order(instances, seed), lambda i: examine(i, cost_rule), target,
                         "natural packages (LongMemEval)", progress)


@one_writer
def build_longmemeval_directory(out: str | Path, data: str, cost_rule: str = "words", target: int = TARGET_ACCEPTED,
                                seed: int = SAMPLE_SEED, progress: bool = False) -> dict:
    """`natural build --source longmemeval`: the same files as LoCoMo's build (packages, rejected.jsonl,
    examined.jsonl, manifest.json), no union packages (LongMemEval has no annotated stores to export)."""
    from memeval.benchmarks.longmemeval.data import load_longmemeval

    instances, _ = load_longmemeval(data)
    identity = settle_output(out, {"source": SOURCE_LABEL, "scope": "question", "cost_rule": cost_rule,
                                   "target": target, "seed": seed, "rule_version": RULE_VERSION,
                                   "data_sha256": data_hashes(data)})
    examined = build_lme_natural(instances, target, seed, cost_rule, progress)
    accepted = [e for e in examined if e.accepted]
    rejected = [e for e in examined if not e.accepted]
    line = ["memeval", "natural", "build", "--source", "longmemeval", *flag_args(
        {"data": data, "cost": cost_rule, "target": target, "seed": seed},
        {"data": None, "cost": "words", "target": TARGET_ACCEPTED, "seed": SAMPLE_SEED},
        {"data": "--data", "cost": "--cost", "target": "--target", "seed": "--seed"}, paths=("data",)),
        "--out", path_text(out)]
    manifest = {
        **invocation(line), "command": "natural build", "source": SOURCE_LABEL, "examined": len(examined),
        "eligible": len(eligible(instances)), "accepted": len(accepted), "rejected": len(rejected),
        "rejected_by_reason": dict(sorted(Counter(e.reason for e in rejected).items())),
        "accepted_by_type": dict(sorted(Counter(e.package.meta["question_type"] for e in accepted).items())),
        "target": target, "seed": seed, "window": WINDOW, "cost_rule": cost_rule, "rule_version": RULE_VERSION,
        "data_sha256": data_hashes(data), **provenance(),
        "packages": [e.package.package_id for e in accepted], "union_systems": [],
        "union_not_exported": {"all": "LongMemEval has no annotated observations or summaries to export; score "
                                      "your own store with `memeval natural union --store`"},
        "identity": identity,
        "complete": True,  # written last, after every package file
    }
    files = {f"{e.package.package_id}.json": e.package.to_json() for e in accepted}
    files["rejected.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in rejected)
    files["examined.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in examined)
    files[MANIFEST] = dump(manifest)
    write_build(out, files, (PACKAGE_PREFIX,), union=False)
    return manifest


def build_command(args: argparse.Namespace) -> int:
    """`memeval natural build --source longmemeval`: the question scope only, from the file --data names."""
    if args.scope == "conversation":
        raise InputError("natural build --scope conversation", "--source/--with-graph",
                         "conversation-scale packages are built from LoCoMo without the graph")
    if args.conversations != "all":
        raise InputError("natural build", "--conversations", "applies to --scope conversation only; the question "
                         "scope builds LoCoMo-Natural-87 from every conversation (add --scope conversation)")
    if not args.data:
        raise InputError("natural build --source longmemeval", "--data", "name the LongMemEval file (memeval "
                         "data fetch longmemeval writes it)")
    if args.with_graph:
        raise InputError("natural build --source longmemeval", "--with-graph", "the memory graph's union "
                         "packages are built for LoCoMo only")
    manifest = build_longmemeval_directory(args.out, args.data, args.cost, args.target, args.seed,
                                           progress=not args.no_progress, restart=args.restart)
    print(json.dumps({k: manifest[k] for k in ("source", "eligible", "examined", "accepted", "rejected",
                                               "rejected_by_reason", "accepted_by_type", "rule_version")}))
    return 0


SOURCE = NaturalSource("longmemeval", (PACKAGE_PREFIX,), build_command)
