"""Markdown tables: F1 and J against published baselines, latency and tokens, the full report.

Every table names the F1 mode that produced it and prints category names with
their ids, because the Mem0 paper's labels differ from the official ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from memeval.baselines import (
    J_BASELINES,
    LATENCY_BASELINES,
    LETTA_FOOTNOTE,
    RELABELLING_FOOTNOTE,
    f1_baselines,
)
from memeval.categories import QA_CATEGORIES, category_label
from memeval.scoring.aggregate import by_category, judge_by_category, overall_mean

Rows = Sequence[Mapping]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "–" if value is None or value != value else f"{100 * value:.2f}"


def f1_table(systems: Mapping[str, Rows], mode: str = "locomo", value_key: str = "f1") -> str:
    """Per-category F1 ×100 for each system, with published rows computed in the same F1 mode."""
    headers = ["System", *[category_label(c) for c in QA_CATEGORIES], "overall (1–4)", "n"]
    body = []
    for name, rows in systems.items():
        scored = [r for r in rows if r.get("category") in QA_CATEGORIES]
        stats = by_category(scored, value_key)
        body.append(
            [
                name,
                *[_pct(stats[c].mean) if c in stats else "–" for c in QA_CATEGORIES],
                _pct(overall_mean(scored, value_key)),
                sum(s.count for s in stats.values()),
            ]
        )
    for base in f1_baselines(mode):
        body.append(
            [
                f"{base.system} (published)",
                *[f"{base.by_category[c]:.2f}" if c in base.by_category else "–" for c in QA_CATEGORIES],
                f"{base.overall:.2f}" if base.overall is not None else "–",
                "",
            ]
        )
    notes = [f"F1 mode: `{mode}`; values ×100; published rows are those computed in the same mode."]
    if mode == "mem0":
        notes.append(RELABELLING_FOOTNOTE)
    if mode == "locomo":
        notes.append(
            "Published LoCoMo-paper rows are overall F1 as cited by the claude-mem design (not re-verified)."
        )
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {n}" for n in notes)


def adversarial_table(systems: Mapping[str, Rows], value_key: str = "f1") -> str:
    """Category 5 on its own, beside the always-abstain answer (which scores 1 on every item)."""
    body = []
    for name, rows in systems.items():
        values = [r[value_key] for r in rows if r.get("category") == 5 and r.get(value_key) is not None]
        body.append([name, _pct(float(np.mean(values))) if values else "–", len(values)])
    if systems:
        n = max(
            len([r for r in rows if r.get("category") == 5]) for rows in systems.values()
        )
        body.append(["always abstain ('not mentioned')", _pct(1.0) if n else "–", n])
    return markdown_table(["System", category_label(5), "n"], body)


def j_table(judgments: Mapping[str, Rows]) -> str:
    """J (0–100 scale as stored) per category as mean ± pooled std, beside the Mem0 paper's J."""
    headers = ["System", *[category_label(c) for c in QA_CATEGORIES], "overall (1–4)", "n"]
    body = []
    for name, rows in judgments.items():
        per_cat, overall = judge_by_category([r for r in rows if r.get("category") in QA_CATEGORIES])
        cells = []
        for c in QA_CATEGORIES:
            s = per_cat.get(c)
            cells.append(f"{s.mean:.2f} ± {s.pooled_std:.2f}" if s and s.count else "–")
        body.append([name, *cells, f"{overall.mean:.2f} ± {overall.pooled_std:.2f}", overall.count])
    for base in J_BASELINES:
        body.append(
            [
                f"{base.system} (published)",
                *[f"{base.by_category[c]:.2f}" if c in base.by_category else "–" for c in QA_CATEGORIES],
                f"{base.overall:.2f}" if base.overall is not None else "–",
                "",
            ]
        )
    notes = [RELABELLING_FOOTNOTE, "Published J is the Mem0 paper's binary protocol (gpt-4o-mini judge).", LETTA_FOOTNOTE]
    return markdown_table(headers, body) + "\n\n" + "\n".join(f"- {n}" for n in notes)


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def latency_table(systems: Mapping[str, Rows]) -> str:
    headers = ["System", "search p50 (s)", "search p95 (s)", "total p50 (s)", "total p95 (s)", "context tokens / q"]

    def fmt(v: float | None, digits: int = 3) -> str:
        if v is None:
            return "–"
        if 0 < abs(v) < 10 ** -digits:  # sub-millisecond lexical search: keep it visible, not 0.000
            return f"{v:.1e}"
        return f"{v:.{digits}f}"

    body = []
    for name, rows in systems.items():
        search = [r["latency_search_s"] for r in rows if r.get("latency_search_s") is not None]
        total = [r["latency_total_s"] for r in rows if r.get("latency_total_s") is not None]
        tokens = [r["context_tokens"] for r in rows if r.get("context_tokens") is not None]
        body.append(
            [
                name,
                fmt(_percentile(search, 50)),
                fmt(_percentile(search, 95)),
                fmt(_percentile(total, 50)),
                fmt(_percentile(total, 95)),
                fmt(float(np.mean(tokens)) if tokens else None, 0),
            ]
        )
    for b in LATENCY_BASELINES:
        body.append(
            [f"{b.system} (published)", f"{b.search_p50_s:.3f}", f"{b.search_p95_s:.3f}", f"{b.total_p50_s:.3f}",
             f"{b.total_p95_s:.3f}", str(b.tokens_per_query)]
        )
    return markdown_table(headers, body)


def category_breakdown(systems: Mapping[str, Rows], value_key: str = "f1") -> str:
    headers = ["System", "category", "mean", "count", "min", "max"]
    body = []
    for name, rows in systems.items():
        for cat, s in by_category(rows, value_key).items():
            body.append([name, category_label(cat), f"{s.mean:.4f}", s.count, f"{s.min:.4f}", f"{s.max:.4f}"])
    return markdown_table(headers, body)


def extremes(rows: Rows, value_key: str = "f1", n: int = 5) -> tuple[list[Mapping], list[Mapping]]:
    """Top and bottom n rows by score; ties broken by sample id so the report is stable."""
    scored = [r for r in rows if r.get(value_key) is not None]
    ordered = sorted(scored, key=lambda r: (-float(r[value_key]), str(r.get("sample_id", ""))))
    bottom = sorted(scored, key=lambda r: (float(r[value_key]), str(r.get("sample_id", ""))))
    return ordered[:n], bottom[:n]


def _question_rows(rows: Sequence[Mapping], value_key: str) -> str:
    return markdown_table(
        ["sample", "category", "question", "gold", "prediction", value_key],
        [
            [
                r.get("sample_id", ""),
                category_label(int(r["category"])),
                r.get("question", ""),
                r.get("gold", r.get("answer", "")),
                r.get("prediction", ""),
                f"{float(r[value_key]):.3f}",
            ]
            for r in rows
        ],
    )


def full_report(
    systems: Mapping[str, Rows],
    judgments: Mapping[str, Mapping[str, Rows]] | None = None,
    mode: str = "locomo",
    title: str = "LoCoMo evaluation report",
) -> str:
    """`judgments`: protocol → system → rows; each protocol gets its own J table (never pooled)."""
    parts = [f"# {title}", "", "## F1 against published baselines", "", f1_table(systems, mode)]
    parts += ["", "## Adversarial (category 5)", "", adversarial_table(systems)]
    if judgments:
        for protocol, by_system in judgments.items():
            parts += ["", f"## J against published baselines ({protocol} judge)", "", j_table(by_system)]
    else:
        parts += ["", "## J against published baselines", "",
                  "No judge ran for this report (J needs an LLM judge; see the README on enabling one)."]
    parts += ["", "## Latency and context tokens", "", latency_table(systems)]
    parts += ["", "## Per-category breakdown", "", category_breakdown(systems)]
    for name, rows in systems.items():
        top, bottom = extremes(rows)
        parts += ["", f"## {name}: top 5 questions", "", _question_rows(top, "f1")]
        parts += ["", f"## {name}: bottom 5 questions", "", _question_rows(bottom, "f1")]
    return "\n".join(parts) + "\n"
