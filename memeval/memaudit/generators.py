"""The MEMAUDIT paper's exact-small (`base`) and validity-stress distributions, built from their published
parameters in their published draw order, so that the same seed gives byte-identical package JSON.

Each builder declares experiences in stream order; candidates are `kind cost {unit: a}`; a group with two
candidates of one kind names them by variant (`experience:variant`), otherwise by kind.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from memeval.memaudit.names import DISTRIBUTIONS
from memeval.memaudit.package import Candidate, Experience, Package, Unit

STRESS_DISTRIBUTIONS = DISTRIBUTIONS[1:]
SALTS = {"density_trap": 11, "scope_shift": 23, "summary_tradeoff": 37, "redundancy_heavy": 41, "abstention_hard": 53}
GENERATOR_VERSION = "memaudit-generators/1"


def clamp(x: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, x))


def salted_rng(seed: int, salt: int) -> random.Random:
    return random.Random((seed + 1) * 1000003 + salt)


class _Builder:
    def __init__(self):
        self.experiences: list[Experience] = []
        self.candidates: list[Candidate] = []
        self.units: dict[str, Unit] = {}
        self.coverage: list[tuple[str, str, float]] = []
        self.invalidation: list[str] = []

    def unit(self, uid: str, weight: float, kind: str, description: str = "", invalidation: bool = False) -> str:
        if uid not in self.units:
            self.units[uid] = Unit(uid, round(float(weight), 10), kind, description or uid)
            if invalidation:
                self.invalidation.append(uid)
        return uid

    def experience(self, eid: str, text: str) -> str:
        self.experiences.append(Experience(eid, text, len(self.experiences)))
        return eid

    def candidate(self, eid: str, variant: str, kind: str, cost: float, cover: dict[str, float], text: str = "") -> None:
        cid = f"{eid}:{variant}"
        self.candidates.append(Candidate(cid, eid, kind, float(cost), text or f"{kind} of {eid}"))
        for uid, value in cover.items():
            if value > 0:
                self.coverage.append((cid, uid, float(value)))

    def build(self, package_id: str, meta: dict) -> Package:
        return Package(
            package_id=package_id,
            experiences=tuple(self.experiences),
            candidates=tuple(self.candidates),
            units=tuple(self.units.values()),
            coverage=tuple(self.coverage),
            max_per_group=1,
            meta=meta,
            invalidation_units=tuple(self.invalidation),
        )


def _base(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = random.Random(seed)
    for i in range(facts):
        fact = b.unit(f"fact:{i}", rng.choice([1.0, 1.2, 1.4]), "fact", f"fact {i}")
        context = b.unit(f"context:{i // 2}", 0.35, "fact", f"context shared by facts {2 * (i // 2)}-{2 * (i // 2) + 1}")
        raw_cost = 5 + rng.randint(0, 1)
        e = b.experience(f"fact_{i}", f"The user states fact {i}.")
        b.candidate(e, "raw", "raw", raw_cost, {fact: 1.0, context: 0.4})
        b.candidate(e, "fact", "fact", 2, {fact: 1.0})
        b.candidate(e, "summary", "summary", 3, {fact: 0.7, context: 0.5})
    for j in range(updates):
        stale = b.unit(f"stale:{j}", 0.15, "stale", f"old preference {j}")
        current = b.unit(f"current:{j}", 2.0 + 0.25 * rng.randint(0, 2), "current", f"current preference {j}")
        invalid = b.unit(f"invalid:{j}", 2.0 + 0.25 * rng.randint(0, 2), "invalidation",
                         f"old preference {j} no longer holds", invalidation=True)
        old = b.experience(f"pref_{j}_old", f"The user states preference {j}.")
        b.candidate(old, "raw", "raw", 4, {stale: 1.0})
        b.candidate(old, "fact", "fact", 2, {stale: 1.0})
        b.candidate(old, "summary", "summary", 3, {stale: 0.75})
        upd = b.experience(f"pref_{j}_update", f"The user changes preference {j}.")
        b.candidate(upd, "raw", "raw", 6, {current: 1.0, invalid: 0.45, stale: 0.2})
        b.candidate(upd, "fact", "fact", 2, {current: 1.0})
        b.candidate(upd, "tombstone", "tombstone", 1, {invalid: 1.0})
        b.candidate(upd, "update", "update", 3, {current: 1.0, invalid: 1.0})
        b.candidate(upd, "summary", "summary", 4, {current: 0.75, invalid: 0.75, stale: 0.1})


def _update_chain(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    length = count if count is not None else clamp(updates + 1, 2, 4)
    # Each step's current version is weighted 2.3 (last step) or 0.25 (intermediate), and every superseded
    # version is then set to 0.1, which overrides the intermediate 0.25. This reading reproduces the paper's
    # no-tombstone OPT ratio at B = 6 (0.513); keeping 0.25 would give 0.525.
    version_weight = {s: (2.3 if s == length else 0.25) for s in range(1, length + 1)}
    version_weight.update({s: 0.1 for s in range(length)})
    units = {s: b.unit(f"v{s}", version_weight[s], "current" if s == length else "stale", f"version {s}")
             for s in range(length + 1)}
    inv = {s: b.unit(f"inv{s}", 1.85, "invalidation", f"version {s} superseded", invalidation=True)
           for s in range(length)}
    e = b.experience("version_0", "The initial version is stated.")
    b.candidate(e, "raw", "raw", 4, {units[0]: 1.0})
    b.candidate(e, "fact", "fact", 2, {units[0]: 1.0})
    b.candidate(e, "summary", "summary", 3, {units[0]: 0.7})
    for s in range(1, length + 1):
        p, c, i = units[s - 1], units[s], inv[s - 1]
        e = b.experience(f"update_{s}", f"Version {s} replaces version {s - 1}.")
        b.candidate(e, "raw", "raw", 5, {c: 1.0, i: 0.35, p: 0.15})
        b.candidate(e, "fact", "fact", 2, {c: 1.0})
        b.candidate(e, "tombstone", "tombstone", 1, {i: 1.0})
        b.candidate(e, "update", "update", 3, {c: 0.95, i: 1.0})
        b.candidate(e, "summary", "summary", 3, {c: 0.65, i: 0.65})


def _temporal_interval(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    n = count if count is not None else clamp(facts + updates, 3, 5)
    k = clamp(updates, 1, 3)
    for i in range(n):
        label = b.unit(f"label:{i}", 0.9, "fact", f"interval {i} label")
        start = b.unit(f"start:{i}", 0.75, "temporal", f"interval {i} start")
        end = b.unit(f"end:{i}", 0.85, "temporal", f"interval {i} end")
        duration = b.unit(f"duration:{i}", 0.55, "temporal", f"interval {i} duration")
        e = b.experience(f"interval_{i}", f"An activity {i} runs over an interval.")
        b.candidate(e, "fact", "fact", 2, {label: 1.0})
        b.candidate(e, "interval_fact", "interval_fact", 3, {start: 1.0, end: 1.0, duration: 0.7})
        b.candidate(e, "summary", "summary", 2, {label: 0.85, start: 0.35, end: 0.35})
        b.candidate(e, "raw", "raw", 5, {label: 1.0, start: 1.0, end: 1.0, duration: 1.0})
    for j in range(k):
        old_open = b.unit(f"old_open:{j}", 0.1, "stale", f"interval {j} believed open")
        closed = b.unit(f"closed:{j}", 1.4, "current", f"interval {j} closed")
        invalid = b.unit(f"invalid:{j}", 1.6, "invalidation", f"open interval {j} no longer holds", invalidation=True)
        e = b.experience(f"closure_{j}", f"Interval {j} is closed.")
        b.candidate(e, "raw", "raw", 5, {closed: 1.0, invalid: 0.45, old_open: 0.15})
        b.candidate(e, "fact", "fact", 2, {closed: 1.0})
        b.candidate(e, "tombstone", "tombstone", 1, {invalid: 1.0})
        b.candidate(e, "update", "update", 3, {closed: 1.0, invalid: 1.0})
        b.candidate(e, "summary", "summary", 3, {closed: 0.7, invalid: 0.7})


def _density_trap(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = salted_rng(seed, SALTS["density_trap"])
    m = count if count is not None else 5
    lure = b.unit("lure", 2.2, "fact", "shared lure")
    for i in range(m):
        specific = b.unit(f"specific:{i}", 1.45 + 0.15 * rng.randrange(3), "fact", f"item {i} specific")
        context = b.unit(f"context:{i // 2}", 0.3, "fact", f"context {i // 2}")
        e = b.experience(f"item_{i}", f"Item {i} is discussed.")
        b.candidate(e, "cheap_lure", "fact", 1, {lure: 0.55, specific: 0.05})
        b.candidate(e, "specific", "fact", 2, {specific: 1.0})
        b.candidate(e, "summary", "summary", 3, {specific: 0.7, lure: 0.25, context: 0.35})
        b.candidate(e, "raw", "raw", 4, {specific: 1.0, context: 0.6, lure: 0.15})


SCOPES = ("home", "work", "travel", "medical", "finance")


def _scope_shift(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = salted_rng(seed, SALTS["scope_shift"])
    n = count if count is not None else clamp(facts + 1, 3, 5)
    names = [SCOPES[i] if i < len(SCOPES) else f"scope{i}" for i in range(n)]
    generic = None
    prefs, contexts = [], []
    for name in names:
        pref = b.unit(f"pref:{name}", 1.6 + 0.2 * rng.randrange(3), "preference", f"{name} preference")
        context = b.unit(f"context:{name}", 0.55, "fact", f"{name} context")
        generic = b.unit("generic", 0.35, "preference", "generic preference")
        prefs.append(pref)
        contexts.append(context)
        e = b.experience(f"scope_{name}", f"A preference in the {name} scope.")
        b.candidate(e, "fact", "fact", 2, {pref: 1.0})
        b.candidate(e, "generic", "summary", 2, {generic: 0.8, pref: 0.35})
        b.candidate(e, "scoped", "summary", 3, {pref: 0.75, context: 0.8})
        b.candidate(e, "raw", "raw", 5, {pref: 1.0, context: 1.0, generic: 0.2})
    e = b.experience("review", "A cross-scope review.")
    b.candidate(e, "summary", "summary", 4, {**{p: 0.42 for p in prefs}, **{c: 0.35 for c in contexts}})


def _summary_tradeoff(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = salted_rng(seed, SALTS["summary_tradeoff"])
    n = count if count is not None else 5
    for i in range(n):
        primary = b.unit(f"primary:{i}", 1.35 + 0.15 * rng.randrange(3), "fact", f"episode {i} primary")
        secondary = b.unit(f"secondary:{i}", 1.0 + 0.1 * rng.randrange(2), "fact", f"episode {i} secondary")
        context = b.unit(f"context:{i}", 0.35, "fact", f"episode {i} context")
        e = b.experience(f"episode_{i}", f"Episode {i}.")
        b.candidate(e, "primary", "fact", 2, {primary: 1.0})
        b.candidate(e, "secondary", "fact", 2, {secondary: 1.0})
        b.candidate(e, "compressed", "summary", 2, {primary: 0.45, secondary: 0.45, context: 0.25})
        b.candidate(e, "balanced", "summary", 3, {primary: 0.72, secondary: 0.72, context: 0.45})
        b.candidate(e, "raw", "raw", 5, {primary: 1.0, secondary: 1.0, context: 0.85})


def _redundancy_heavy(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = salted_rng(seed, SALTS["redundancy_heavy"])
    n = count if count is not None else 5
    core = b.unit("core", 2.4, "fact", "core fact repeated everywhere")
    for i in range(n):
        tail = b.unit(f"tail:{i}", 1.0 + 0.15 * rng.randrange(3), "fact", f"item {i} tail")
        local = b.unit(f"local:{i // 2}", 0.3, "fact", f"local context {i // 2}")
        e = b.experience(f"item_{i}", f"Item {i} repeats the core fact.")
        b.candidate(e, "core", "fact", 2, {core: 0.85})
        b.candidate(e, "tail", "fact", 2, {tail: 1.0})
        b.candidate(e, "summary", "summary", 3, {core: 0.6, tail: 0.8, local: 0.25})
        b.candidate(e, "raw", "raw", 4, {core: 1.0, tail: 1.0, local: 0.4})


def _abstention_hard(b: _Builder, seed: int, facts: int, updates: int, count: int | None) -> None:
    rng = salted_rng(seed, SALTS["abstention_hard"])
    n = count if count is not None else 5
    for i in range(n):
        if i % 2 == 0:
            abstain = b.unit(f"abstain:{i}", 2.0 + 0.15 * rng.randrange(3), "abstention", f"item {i} is ambiguous")
            conflict = b.unit(f"conflict:{i}", 0.9, "fact", f"item {i} conflicting reports")
            unsupported = b.unit(f"unsupported:{i}", 0.05, "fact", f"item {i} unsupported claim")
            e = b.experience(f"item_{i}", f"Ambiguous item {i}.")
            b.candidate(e, "overconfident", "fact", 2, {unsupported: 1.0})
            b.candidate(e, "abstain_marker", "abstention", 1, {abstain: 1.0})
            b.candidate(e, "conflict_marker", "uncertainty", 2, {abstain: 0.8, conflict: 1.0})
            b.candidate(e, "raw", "raw", 4, {abstain: 0.9, conflict: 1.0, unsupported: 0.1})
            b.candidate(e, "summary", "summary", 3, {abstain: 0.65, conflict: 0.7})
        else:
            answer = b.unit(f"answer:{i}", 1.75 + 0.15 * rng.randrange(2), "fact", f"item {i} answer")
            evidence = b.unit(f"evidence:{i}", 0.55, "fact", f"item {i} evidence")
            abstain = b.unit(f"abstain:{i}", 0.2, "abstention", f"item {i} unneeded abstention")
            e = b.experience(f"item_{i}", f"Answerable item {i}.")
            b.candidate(e, "answer", "fact", 2, {answer: 1.0})
            b.candidate(e, "unneeded", "abstention", 1, {abstain: 1.0})
            b.candidate(e, "summary", "summary", 3, {answer: 0.75, evidence: 0.8})
            b.candidate(e, "raw", "raw", 4, {answer: 1.0, evidence: 1.0})


_BUILDERS: dict[str, Callable] = {
    "base": _base,
    "update_chain": _update_chain,
    "temporal_interval": _temporal_interval,
    "density_trap": _density_trap,
    "scope_shift": _scope_shift,
    "summary_tradeoff": _summary_tradeoff,
    "redundancy_heavy": _redundancy_heavy,
    "abstention_hard": _abstention_hard,
}


def generate(
    distribution: str, seed: int, facts: int = 3, updates: int = 2, count: int | None = None
) -> Package:
    """One package. `facts`/`updates` are the paper's count parameters; `count` overrides a stress
    distribution's clamped item count (for larger packages than the paper used)."""
    if distribution not in _BUILDERS:
        raise ValueError(f"unknown distribution {distribution!r}; choose from {', '.join(DISTRIBUTIONS)}")
    builder = _Builder()
    _BUILDERS[distribution](builder, seed, facts, updates, count)
    meta = {"generator": GENERATOR_VERSION, "distribution": distribution, "seed": seed, "facts": facts,
            "updates": updates}
    if count is not None:
        meta["count"] = count
    from memeval.records import PackageId  # pydantic: only when a package is built, not on import

    return builder.build(str(PackageId.small(distribution, seed)), meta)
