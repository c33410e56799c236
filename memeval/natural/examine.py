"""What every natural-package source shares (natural-packages.md §1): the support window, the evidence units of a
question, the last acceptance checks, and examination in a seeded order until enough are accepted. Each source
(a benchmark's `natural_source`) decides what is eligible and how a package is built."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memeval.memaudit.package import Package, Unit
from memeval.memaudit.solvers import solve_exact

WINDOW = 4
ACCEPT_BUDGET = 100.0


@dataclass(frozen=True)
class Examined:
    sample_id: str
    accepted: bool
    reason: str | None
    package: Package | None = None

    def as_row(self) -> dict:
        return {"sample_id": self.sample_id, "accepted": self.accepted, "reason": self.reason,
                "package_id": self.package.package_id if self.package else None}


def evidence_units(evidence: Sequence[str], temporal: bool) -> list[Unit]:
    """A question's units: an answer unit per evidence turn sharing weight 1 (half of it for temporal questions,
    whose other half goes to a time unit per turn)."""
    units: list[Unit] = []
    for turn_id in evidence:
        share = 1.0 / len(evidence)
        units.append(Unit(f"answer:{turn_id}", share * (0.5 if temporal else 1.0), "fact",
                          f"the answer-bearing content of {turn_id}"))
        if temporal:
            units.append(Unit(f"time:{turn_id}", share * 0.5, "temporal", f"when {turn_id} was said"))
    return units


def accept(sample_id: str, package: Package) -> Examined:
    """The last acceptance checks, shared by every source: a non-raw candidate covers something, and OPT at the
    acceptance budget is certified and positive."""
    kinds = {c.id: c.kind for c in package.candidates}
    if not any(kinds[cid] != "raw" and value > 0 for cid, _, value in package.coverage):
        return Examined(sample_id, False, "no_non_raw_candidate_covers_anything")
    opt = solve_exact(package.compiled, ACCEPT_BUDGET, 1, None, "auto")
    if not opt.certified:
        return Examined(sample_id, False, f"opt_not_certified_at_B{ACCEPT_BUDGET:g}")
    if opt.value <= 0:
        return Examined(sample_id, False, f"opt_zero_at_B{ACCEPT_BUDGET:g}")
    return Examined(sample_id, True, None, package)


def examine_until(order, examine_one, target: int, label: str = "natural packages",
                  progress: bool = False) -> list[Examined]:
    """Examine `order` until `target` are accepted (or it runs out); every examined item is kept."""
    from memeval.progress import progress_bar

    examined, accepted = [], 0
    with progress_bar(target, label, "pkg", progress) as bar:
        for item in order:
            if accepted >= target:
                break
            result = examine_one(item)
            examined.append(result)
            accepted += result.accepted
            if result.accepted:
                bar.update(1)
    return examined
