"""The LoCoMo audit's recorded judgments as judge leniency (memeval.scoring.leniency): the EverMemOS judge
(gpt-4o-mini, three runs) on the audit's specific-but-wrong (v1) and vague-but-topical (v2) answer sets, read from
the fetched scored files whenever `memeval data fetch locomo-audit` has stored them."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from memeval.benchmarks.locomo.categories import QA_CATEGORIES
from memeval.scoring.leniency import Leniency, Rate

SCORED_FILES = {"specific_wrong": "v1_scored", "vague_wrong": "v2_scored"}  # the audit's recorded judgments
ANSWER_FILES = {"specific_wrong": "v1_answers", "vague_wrong": "v2_answers"}  # the same answers, unjudged
RECORDED_SOURCE = "recorded: locomo-audit@9493fb4b (not re-run)"
RECORDED_JUDGE = "evermemos"
RECORDED_MODEL = "gpt-4o-mini"
RECORDED_RUNS = 3


def recorded_identity() -> dict:
    """The configuration the audit's recorded judgments were made with (ap-baseline/README.md, "Methodology":
    gpt-4o-mini, temperature 0, the EverMemOS prompts.yaml loaded at runtime, three runs)."""
    return {"judge": RECORDED_JUDGE, "model": RECORDED_MODEL, "prompt_version": _evermemos_version(),
            "prompt_source": _evermemos_origin(), "sampling": "protocol", "temperature_sent": 0.0}


def _evermemos_version() -> str:
    """The version a `--judge evermemos` run records with the fetched EverMemOS prompts, from the pinned source (so
    it is known before they are fetched)."""
    from memeval.protocols.sources import SOURCES

    return "published:" + SOURCES["evermemos_prompts"].templates_sha256[:16]


def _evermemos_origin() -> str:
    from memeval.protocols.sources import SOURCES

    return SOURCES["evermemos_prompts"].origin


def recorded_from(path: str | Path, answer_set: str) -> Leniency:
    """One scored file's recorded judgments as the framework reports them: the per-run mean over the runs (each
    run's accepted / judged, averaged), overall and per category, with its interval over the questions judged."""
    from memeval.benchmarks.locomo.published.detailed import published_stats, read_detailed

    detailed = read_detailed(path)
    stats = published_stats(detailed.rows)
    runs = len(stats.run_scores) or RECORDED_RUNS

    def rate(found) -> Rate:
        return Rate.of((found.mean or 0.0) * found.n / 100, found.n)

    identity = recorded_identity()
    overall = rate(stats)
    return Leniency(**overall.model_dump(), judge=RECORDED_JUDGE, judge_model=RECORDED_MODEL,
                    prompt_version=identity["prompt_version"], prompt_source=identity["prompt_source"],
                    sampling="protocol", temperature_sent=0.0, runs=runs, answer_set=answer_set,
                    by_category={c: rate(stats.by_category[c]) for c in QA_CATEGORIES if c in stats.by_category},
                    source=RECORDED_SOURCE)


def recorded_leniency(directory: str | Path | None = None) -> list[Leniency]:
    """The audit's recorded rates (specific_wrong, vague_wrong), or none when the audit is not fetched. A fetched
    file with another hash is refused (InputError), as everywhere the audit is read."""
    from memeval.benchmarks.locomo.audit.store import audit_path

    out = []
    for answer_set, name in SCORED_FILES.items():
        path = audit_path(name, directory)
        if path is not None:
            out.append(_recorded_cached(str(path), os.stat(path).st_mtime_ns, answer_set, _evermemos_version()))
    return out


@lru_cache(maxsize=8)
def _recorded_cached(path: str, mtime_ns: int, answer_set: str, version: str) -> Leniency:
    """Each table asks again; the file is read once per version of it (and of the pinned prompts)."""
    return recorded_from(path, answer_set)
