"""The bridge from write-time quality to answer quality: per question and system, the union ratio of the
system's pruned store against its QA outcome in a full run (F1, evidence recall, J when judged).

Spearman's rho with a percentile bootstrap over questions. The `rag_turns` union store is its 128-token
chunks while the QA run may retrieve single turns: same system family, not the same store — tables say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import rankdata, spearmanr

from memeval.errors import InputError
from memeval.qa.choices import JUDGE_PROTOCOLS as PROTOCOLS
from memeval.records import SweepRow, load_answers, load_judgments
from memeval.rundir import RunDir

OUTCOMES = ("f1", "evidence_recall", *(f"j_{protocol}" for protocol in PROTOCOLS))


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair (average ranks for ties, as scipy), NaN where a row is constant."""
    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (rx * ry).sum(axis=1) / denom, np.nan)


def spearman_interval(x: Sequence[float], y: Sequence[float], n_boot: int = 2000, seed: int = 0) -> dict:
    """rho with a percentile bootstrap; resamples where either side is constant are left out."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"rho": None, "low": None, "high": None, "n": int(len(x)),
                "note": "fewer than 3 pairs or a constant variable: rho undefined"}
    rho = float(spearmanr(x, y).statistic)
    idx = np.random.default_rng(seed).integers(0, len(x), (n_boot, len(x)))
    boots = _row_spearman(x[idx], y[idx])
    boots = boots[~np.isnan(boots)]
    low, high = np.quantile(boots, [0.025, 0.975]) if len(boots) else (np.nan, np.nan)
    return {"rho": rho, "low": float(low), "high": float(high), "n": int(len(x)), "note": ""}


def bridge_pairs(sweep_rows: Sequence[SweepRow], run_dir: str | Path) -> list[dict]:
    """Joined (question, system, pruning, budget) rows with union ratio and the QA outcomes. J is kept per
    judge protocol (`j_graded`, `j_binary`, on 0–1): two protocols' scores are different measurements."""
    run_dir = Path(run_dir)
    if not RunDir(run_dir).answers.is_file():
        raise InputError(RunDir(run_dir).answers, "answers", "not found: --run must be a `locomo run` directory")
    answers = {r.key: r for r in load_answers(RunDir(run_dir).answers) if r.final}
    judged = {r.key: r.mean for r in load_judgments(RunDir(run_dir).judgments)}
    out = []
    for row in sweep_rows:
        if not row.is_union or row.ratio is None:
            continue
        answer = answers.get((row.system, row.sample_id))
        if answer is None:
            continue
        pair = {"sample_id": row.sample_id, "system": row.system, "pruning": row.pruning, "budget": row.budget,
                "union_ratio": row.ratio, "f1": answer.f1, "evidence_recall": answer.evidence_recall}
        for protocol in PROTOCOLS:
            j = judged.get((row.system, row.sample_id, protocol))
            pair[f"j_{protocol}"] = None if j is None else j / 100.0
        out.append(pair)
    return out


def bridge_table(pairs: Sequence[dict], n_boot: int = 2000) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for p in pairs:
        groups.setdefault((p["system"], p["pruning"], p["budget"]), []).append(p)
    rows = []
    for (system, pruning, budget), members in sorted(groups.items()):
        for outcome in OUTCOMES:
            usable = [m for m in members if m.get(outcome) is not None]
            if not usable:
                continue
            stats = spearman_interval([m["union_ratio"] for m in usable], [m[outcome] for m in usable], n_boot)
            rows.append({"system": system, "pruning": pruning, "budget": budget, "outcome": outcome, **stats})
    return rows
