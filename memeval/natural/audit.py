"""Label sources for natural packages and their agreement: `rule` (the packages' own coverage), `llm`
(Claude per cell, 0 / 0.5 / 1 with a reason, cached) and `human` (an audit-frame CSV filled in by people).

The audit frame holds every nonzero rule cell plus a stratified 20% sample (per candidate kind, seeded) of the
zero cells, with the texts a person needs. Agreement between two sources is computed on the cells both
labelled, after mapping values to three levels (0, partial, 1) since the rule uses quarters.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from memeval.atomic import atomic_open
from memeval.engine.judge import Judge
from memeval.errors import InputError
from memeval.llm.client import LLMClient, LLMError, LLMRequest
from memeval.llm.json_reply import reply_json
from memeval.memaudit.package import Package
from memeval.natural.sensitivity import mean_ratios, score_packages
from memeval.prompts import load_prompt, prompt_hash
from memeval.records import Record
from memeval.safe_json import read_text

Cell = tuple[str, str, str]  # (package_id, candidate_id, unit_id)
FRAME_FIELDS = ["package_id", "candidate", "unit", "rule_value", "candidate_kind", "candidate_text",
                "unit_description", "question", "answer", "verdict"]
VERDICTS = {"0": 0.0, "0.5": 0.5, "1": 1.0, "0.0": 0.0, "1.0": 1.0}
ADJUDICATION_TEMPERATURE = 0.0
# the object the prompt asks for, closed and every key required (OpenAI's strict Structured Outputs take no other)
ADJUDICATION_SCHEMA = json.dumps({"type": "object", "additionalProperties": False, "required": ["value", "reason"],
                                  "properties": {"value": {"type": "number", "enum": [0, 0.5, 1]},
                                                 "reason": {"type": "string"}}})


def rule_labels(packages: Sequence[Package]) -> dict[Cell, float]:
    """Every candidate × unit cell of every package (zeros included)."""
    out = {}
    for pkg in packages:
        cells = {(c, u): v for c, u, v in pkg.coverage}
        for cand in pkg.candidates:
            for unit in pkg.units:
                out[(pkg.package_id, cand.id, unit.id)] = cells.get((cand.id, unit.id), 0.0)
    return out


def frame_cells(packages: Sequence[Package], zero_rate: float = 0.2, seed: int = 0) -> list[Cell]:
    labels = rule_labels(packages)
    kinds = {(p.package_id, c.id): c.kind for p in packages for c in p.candidates}
    nonzero = [cell for cell, v in labels.items() if v > 0]
    zeros_by_kind: dict[str, list[Cell]] = defaultdict(list)
    for cell, v in labels.items():
        if v == 0:
            zeros_by_kind[kinds[cell[:2]]].append(cell)
    rng = random.Random(seed)
    sampled = []
    for kind in sorted(zeros_by_kind):
        cells = zeros_by_kind[kind]
        sampled += rng.sample(cells, round(zero_rate * len(cells)))
    return sorted(nonzero + sampled)


def write_audit_frame(packages: Sequence[Package], path: str | Path, zero_rate: float = 0.2, seed: int = 0) -> int:
    by_id = {p.package_id: p for p in packages}
    labels = rule_labels(packages)
    cells = frame_cells(packages, zero_rate, seed)
    with atomic_open(path, newline="") as fh:
        writer = csv.DictWriter(fh, FRAME_FIELDS)
        writer.writeheader()
        for pid, cid, uid in cells:
            pkg = by_id[pid]
            cand = next(c for c in pkg.candidates if c.id == cid)
            unit = next(u for u in pkg.units if u.id == uid)
            writer.writerow({"package_id": pid, "candidate": cid, "unit": uid, "rule_value": labels[(pid, cid, uid)],
                             "candidate_kind": cand.kind, "candidate_text": cand.text,
                             "unit_description": unit.description, "question": pkg.meta.get("question", ""),
                             "answer": pkg.meta.get("answer", ""), "verdict": ""})
    return len(cells)


def read_verdicts(path: str | Path) -> dict[Cell, float]:
    """Filled-in verdicts (0, 0.5 or 1); empty verdicts are unlabelled cells; anything else is an error naming
    the file, the line and the field."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "audit frame", "no such file")
    out = {}
    with io.StringIO(read_text(path, "audit frame"), newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"package_id", "candidate", "unit", "verdict"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(path, "header", f"missing column(s) {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            verdict = (row["verdict"] or "").strip()
            if not verdict:
                continue
            if verdict not in VERDICTS:
                raise InputError(f"{path}:{line}", "verdict", f"expected 0, 0.5 or 1, got {verdict!r}")
            out[(row["package_id"], row["candidate"], row["unit"])] = VERDICTS[verdict]
    return out


def three_level(value: float) -> int:
    return 0 if value <= 0 else (2 if value >= 1 else 1)


def agreement(a: Mapping[Cell, float], b: Mapping[Cell, float]) -> dict:
    shared = sorted(set(a) & set(b))
    if not shared:
        return {"cells": 0, "kappa": None, "raw_agreement": None}
    la = [three_level(a[c]) for c in shared]
    lb = [three_level(b[c]) for c in shared]
    same = float(np.mean(np.equal(la, lb)))
    kappa = float(cohen_kappa_score(la, lb)) if len(set(la) | set(lb)) > 1 else (1.0 if same == 1 else 0.0)
    return {"cells": len(shared), "kappa": kappa, "raw_agreement": same}


def relabel(packages: Sequence[Package], labels: Mapping[Cell, float]) -> list[Package]:
    """Packages whose cells take `labels` where given (other cells keep the rule value)."""
    out = []
    for pkg in packages:
        cells = {(c, u): v for c, u, v in pkg.coverage}
        for (pid, cid, uid), value in labels.items():
            if pid == pkg.package_id:
                cells[(cid, uid)] = value
        out.append(replace(pkg, coverage=tuple((c, u, v) for (c, u), v in sorted(cells.items()) if v > 0)))
    return out


def compare_sources(packages: Sequence[Package], a: Mapping[Cell, float], b: Mapping[Cell, float],
                    budgets: Sequence[float]) -> dict:
    """Agreement on shared cells, and writers re-scored under each source: mean absolute ratio change and
    whether the writer ranking is preserved per budget."""
    ra = mean_ratios(score_packages(relabel(packages, a), budgets))
    rb = mean_ratios(score_packages(relabel(packages, b), budgets))
    by_budget = {}
    for budget in budgets:
        methods = sorted(m for bud, m in ra if bud == float(budget) and m != "opt")
        va, vb = [ra[(float(budget), m)] for m in methods], [rb[(float(budget), m)] for m in methods]
        order_a = sorted(methods, key=lambda m: -ra[(float(budget), m)])
        order_b = sorted(methods, key=lambda m: -rb[(float(budget), m)])
        by_budget[float(budget)] = {"ratio_mad": float(np.mean(np.abs(np.subtract(va, vb)))),
                                    "kendall_tau": float(kendalltau(va, vb).statistic),
                                    "ranking_preserved": order_a == order_b}
    return {**agreement(a, b), "by_budget": by_budget}


def adjudication_request(pkg: Package, candidate_id: str, unit_id: str) -> LLMRequest:
    cand = next(c for c in pkg.candidates if c.id == candidate_id)
    unit = next(u for u in pkg.units if u.id == unit_id)
    evidence_turn = unit_id.split(":", 1)[1]
    evidence = next((e.text for e in pkg.experiences if e.id == evidence_turn), "")
    prompt = load_prompt("adjudicate_cell").format(question=pkg.meta.get("question", ""),
                                                   answer=pkg.meta.get("answer", ""), unit=unit.description,
                                                   evidence=evidence, candidate=cand.text)
    return LLMRequest(messages=(("user", prompt),), max_tokens=128,
                      temperature=ADJUDICATION_TEMPERATURE, template_version=prompt_hash("adjudicate_cell"),
                      role="judge", output_schema=ADJUDICATION_SCHEMA)


def parse_adjudication(text: str) -> tuple[float | None, str]:
    """The label and its reason when the reply is the JSON object the prompt asks for (memeval/llm/json_reply.py)
    with a value of 0, 0.5 or 1; else None and why."""
    doc = reply_json(text)
    value = doc.get("value") if isinstance(doc, dict) else None
    if value in (0, 0.5, 1) and not isinstance(value, bool):
        return float(value), str(doc.get("reason", ""))
    return None, f"unparseable adjudication: {text.strip()[:80]!r}"


class LabelVerdict(Record):
    """The adjudicator's label of one coverage cell (None: the reply could not be used) and its reason."""

    package_id: str
    candidate: str
    unit: str
    value: float | None
    reason: str


class LabelAdjudicator(Judge):
    """The LLM label source of the audit as a judge: one cell (package, candidate, unit) in, a 0 / 0.5 / 1 label
    out. It judges coverage cells, not answers, so the audit calls it directly rather than through a run."""

    name = "label"
    temperature = ADJUDICATION_TEMPERATURE
    own_schema = True

    def __init__(self, packages: Sequence[Package]):
        self.by_id = {p.package_id: p for p in packages}

    def version(self) -> str:
        return prompt_hash("adjudicate_cell")

    def key(self, cell: Cell) -> tuple:
        return tuple(cell)

    def requests(self, cell: Cell) -> list[LLMRequest]:
        package_id, candidate_id, unit_id = cell
        return [adjudication_request(self.by_id[package_id], candidate_id, unit_id)]

    def judgment(self, cell: Cell, replies, model: str | None) -> LabelVerdict:
        value, reason = parse_adjudication(replies[0].text)
        return LabelVerdict(package_id=cell[0], candidate=cell[1], unit=cell[2], value=value, reason=reason)


def llm_labels(client: LLMClient, packages: Sequence[Package], cells: Sequence[Cell]) -> tuple[dict, dict]:
    """(labels, reasons) for the cells the model answered; failed or unparseable cells stay unlabelled."""
    judge = LabelAdjudicator(packages)
    labels, reasons = {}, {}
    replies = client.complete_many([r for cell in cells for r in judge.requests(cell)])
    for cell, out in zip(cells, replies, strict=True):
        if isinstance(out, LLMError):
            reasons[cell] = f"call failed: {out}"
            continue
        verdict = judge.judgment(cell, [out], None)
        reasons[cell] = verdict.reason
        if verdict.value is not None:
            labels[cell] = verdict.value
    return labels, reasons


def write_verdicts(path: str | Path, labels: Mapping[Cell, float], reasons: Mapping[Cell, str]) -> int:
    """A verdict CSV (the audit frame's key columns) from another label source, readable by read_verdicts."""
    with atomic_open(path, newline="") as fh:
        writer = csv.DictWriter(fh, ["package_id", "candidate", "unit", "verdict", "reason"])
        writer.writeheader()
        for cell in sorted(set(labels) | set(reasons)):
            value = labels.get(cell)
            writer.writerow({"package_id": cell[0], "candidate": cell[1], "unit": cell[2],
                             "verdict": "" if value is None else f"{value:g}", "reason": reasons.get(cell, "")})
    return len(labels)
