"""Union packages: what a memory system wrote over a natural package's support slice, as `external`
candidates beside the package's own (natural-packages.md §3), and their evaluation.

Each exported memory is its own group, costs its word count as rendered to the reader (dated memories carry
their date), and covers evidence units by the same rules as package candidates: answer units by lexical
support for every evidence turn among its sources, time units when it is dated.

Pruning to the budget: `recency` (latest source first), `salience` (the declared TF-IDF salience over the
system's exported texts, question-free as at write time), `upper` (exact OPT over the system's own memories
only — an analysis bound, not a writer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from memeval.conversations import Conversation
from memeval.memaudit.objective import objective
from memeval.memaudit.outcomes import SolveStatus
from memeval.memaudit.package import Candidate, Experience, Package
from memeval.memaudit.solvers import solve_exact
from memeval.memaudit.tolerance import fits
from memeval.memaudit.writers import TfidfSalienceEstimator
from memeval.memory.base import MemoryItem
from memeval.memory.render import observation_items, turn_items, turn_text
from memeval.natural.rules import content_tokens, lexical_support, summary_sentences, word_cost
from memeval.records import PackageId, SweepRow, union_method

EXPORT_SYSTEMS = ("observations", "summaries", "rag_turns")
PRUNINGS = ("recency", "salience", "upper")
UNION_DISTRIBUTION = "locomo-natural-union"
RAG_CHUNK_TOKENS = 128


def exported_store(conversation: Conversation, system: str, slice_ids: set[str],
                   graph_export: Sequence[MemoryItem] | None = None) -> list[MemoryItem]:
    """The items `system` writes that draw on the slice (any source in it). `memory_graph` needs the graph's
    export (`graph_exports`), which exists only where an extractor ran."""
    if system == "memory_graph":
        if graph_export is None:
            raise ValueError("memory_graph has no export without an extraction run (see graph_exports)")
        items = list(graph_export)
    elif system == "observations":
        items = observation_items(conversation)
    elif system == "summaries":
        items = []
        for session in conversation.sessions:
            ids = tuple(t.dia_id for t in session.turns)
            for sentence in summary_sentences(conversation.session_summaries.get(session.index, "")):
                items.append(MemoryItem(sentence, 0.0, ids, session.date_time, "summary"))
    elif system == "rag_turns":
        items = turn_items(conversation, RAG_CHUNK_TOKENS)
    else:
        raise ValueError(f"no exporter for {system!r}; known: {', '.join(EXPORT_SYSTEMS)}")
    return [i for i in items if slice_ids.intersection(i.source_ids)]


def graph_exports(conversations: Sequence[Conversation], client) -> dict[str, list[MemoryItem]]:
    """The memory graph's triples per conversation, extracted through `client` (cache first). Raises the
    client's error (e.g. a replay cache miss) rather than exporting an empty graph."""
    from memeval.memory.registry import build_system

    out = {}
    for conversation in conversations:
        system = build_system("memory_graph", client=client)
        system.ingest(conversation)
        out[conversation.sample_id] = system.export()
    return out


def package_evidence_units(base: Package) -> list[dict]:
    """Each evidence unit of a package with its turn, gold answer and time unit: a conversation-scale package
    lists them in its meta (many questions); a question-level package has one answer and its evidence turns."""
    meta = base.meta
    if "evidence_units" in meta:
        return list(meta["evidence_units"])
    unit_ids = {u.id for u in base.units}
    return [{"turn": d, "answer_unit": f"answer:{d}", "answer": meta.get("answer") or "",
             "time_unit": f"time:{d}" if f"time:{d}" in unit_ids else None} for d in meta["evidence"]]


def _checked_units(base: Package, turns: dict) -> list[dict]:
    """The package's evidence units, each naming a turn of the conversation by its id (a dict key here): a package
    file edited by hand, or of another conversation, is one line naming the package and field."""
    from memeval.errors import InputError

    try:
        units = package_evidence_units(base)
    except (KeyError, TypeError):
        raise InputError(base.package_id, "meta.evidence", "missing or not a list of turn ids") from None
    for i, unit in enumerate(units):
        if not isinstance(unit, dict) or not all(isinstance(unit.get(k), str) for k in ("turn", "answer",
                                                                                      "answer_unit")):
            raise InputError(base.package_id, f"meta.evidence_units[{i}]", "expected turn, answer and answer_unit "
                             "as strings")
        if unit["turn"] not in turns:
            raise InputError(base.package_id, f"meta.evidence_units[{i}].turn", f"{unit['turn']!r:.40} is not a turn "
                             "of the package's conversation")
    return units


def union_package(base: Package, conversation: Conversation, system: str,
                  graph_export: Sequence[MemoryItem] | None = None,
                  store: Sequence[MemoryItem] | None = None) -> Package:
    """`store`: an imported system's exported memories for this conversation (memeval natural union); else
    the built-in `system`'s own export."""
    meta = base.meta
    turns = {t.dia_id: t for s in conversation.sessions for t in s.turns}
    evidence_units = [(unit, content_tokens(unit["answer"]), content_tokens(turn_text(turns[unit["turn"]])))
                      for unit in _checked_units(base, turns)]  # tokens once per unit, not per exported item
    position = {e.id: e.time for e in base.experiences}
    slice_ids = set(position)
    experiences, candidates, coverage = list(base.experiences), list(base.candidates), list(base.coverage)
    items = ([i for i in store if slice_ids.intersection(i.source_ids)] if store is not None
             else exported_store(conversation, system, slice_ids, graph_export))
    for n, item in enumerate(items):
        text = f"[{item.time}] {item.text}" if item.time else item.text
        group = f"x:{system}:{n}"
        latest = max((position[s] for s in item.source_ids if s in position), default=0.0)
        experiences.append(Experience(group, text, latest + 0.5))
        cid = f"{group}:external"
        candidates.append(Candidate(cid, group, "external", word_cost(text), text))
        tokens = content_tokens(item.text)
        for unit, gold, turn_tokens in evidence_units:
            if unit["turn"] not in item.source_ids:
                continue
            support = lexical_support(gold, turn_tokens, tokens)
            if support > 0:
                coverage.append((cid, unit["answer_unit"], support))
            if item.time and unit["time_unit"]:
                coverage.append((cid, unit["time_unit"], 1.0))
    union_id = PackageId.parse(base.package_id).model_copy(update={"system": system})
    return replace(base, package_id=str(union_id), experiences=tuple(experiences),
                   candidates=tuple(candidates), coverage=tuple(coverage),
                   meta={**meta, "union_of": base.package_id, "external_system": system})


def _prune_in_order(cp, order: Sequence[int], budget: float) -> list[int]:
    chosen, spent = [], 0.0
    for i in order:
        if fits(spent + cp.costs[i], budget):
            chosen.append(int(i))
            spent += cp.costs[i]
    return chosen


def union_rows(pkg: Package, budgets: Sequence[float], solver: str = "auto") -> list[SweepRow]:
    """One row per budget × pruning: raw F(Y), package ratio (may exceed 1) and union ratio."""
    cp = pkg.compiled
    system = pkg.meta["external_system"]
    external = np.array([k == "external" for k in cp.kinds])
    own = np.flatnonzero(external)
    salience = TfidfSalienceEstimator(tuple(cp.texts[i] for i in own)).salience if own.size else np.array([])
    salience_order = [int(own[j]) for j in np.argsort(-salience, kind="stable")]
    recency_order = [int(i) for i in sorted(own, key=lambda i: (-cp.group_of[i], i))]
    rows = []
    for budget in budgets:
        opt_union = solve_exact(cp, budget, 1, None, solver)
        opt_package = solve_exact(cp, budget, 1, ~external, solver)
        upper = solve_exact(cp, budget, 1, external, solver)
        if any(s.status == SolveStatus.TIME_LIMIT for s in (opt_union, opt_package, upper)):
            continue  # proves nothing: no row, so the sweep is incomplete and a rerun computes them (never load-bound)
        certified = bool(opt_union.certified and opt_package.certified)
        for pruning in PRUNINGS:
            if pruning == "upper":
                selected, own_certified = upper.selected, upper.certified
            else:
                selected = _prune_in_order(cp, recency_order if pruning == "recency" else salience_order, budget)
                own_certified = True
            value = objective(cp, np.array(selected, dtype=int))
            rows.append(SweepRow(
                package_id=pkg.package_id, union_of=pkg.meta["union_of"], sample_id=pkg.meta.get("sample_id"),
                system=system, pruning=pruning, distribution=UNION_DISTRIBUTION, seed=None, budget=float(budget),
                max_per_group=1, method=union_method(system, pruning), value=value,
                opt=opt_union.value, opt_package=opt_package.value,
                ratio=value / opt_union.value if certified and opt_union.value > 0 else (
                    1.0 if certified and value <= 0 else None),
                package_ratio=value / opt_package.value if opt_package.value > 0 else None,
                certified=bool(certified and own_certified),
                invalidation_units_covered=None, exported=int(own.size),
                exported_fitting=int(sum(1 for i in own if fits(cp.costs[i], budget))),
                cost=float(sum(cp.costs[i] for i in selected)),
                selected=[cp.candidate_ids[i] for i in sorted(selected)], runtime_s=None,
            ))
    return rows

