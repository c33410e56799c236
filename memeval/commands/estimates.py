"""A dry run's estimate as a person reads it: one row per stage, tokens rounded and marked "≈" unless counted,
dollars in cents, and below the table how each stage's tokens were made (`--json` keeps the raw numbers)."""

from __future__ import annotations

import textwrap

from memeval.llm.types import CostEstimate, RunEstimate

HEADERS = ("stage", "requests", "cached", "to send", "input tokens", "output tokens", "dollars", "at most")
WIDTH = 100


def estimate_table(estimate: RunEstimate) -> str:
    """The table, the total row, where the requests go (a line per provider), then a line per stage saying how its
    tokens were counted, then the note."""
    rows = [HEADERS]
    for name, stage in estimate.stages.items():
        counted = stage.token_count.startswith("exact")
        if isinstance(stage, CostEstimate):
            output = f"{_tokens(stage.output_tokens_expected)} (≤{stage.output_tokens_max:,})"
            rows.append((name, f"{stage.requests:,}", f"{stage.cached:,}", f"{stage.to_send:,}",
                         _tokens(stage.input_tokens_est, counted), output, _usd(stage.usd_est), _usd(stage.usd_max)))
        else:  # embeddings: every text an input, many inputs a request, no output
            rows.append((name, f"{stage.inputs:,} texts", f"{stage.cached:,}", f"{stage.to_send:,}",
                         _tokens(stage.input_tokens_est, counted), "–", _usd(stage.usd_est), _usd(stage.usd_max)))
    rows.append(("total", "", "", "", "", "", _usd(estimate.usd_est_total),
                 _usd(sum(s.usd_max for s in estimate.stages.values()))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = ["dry run: no reply was asked for and nothing written (prompts' tokens may have been counted by the "
             "provider or server);", "dollars at a typical reply's length, at most with every reply at its output cap "
             "(≤)", ""]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
              .rstrip() for row in rows]
    lines.append("")
    from memeval.llm.routes import route_lines

    lines += route_lines(estimate.routes)
    for name, stage in estimate.stages.items():
        lines += textwrap.wrap(f"{name}: input tokens {stage.token_count}", WIDTH, subsequent_indent="  ")
    lines += textwrap.wrap(estimate.note, WIDTH)
    return "\n".join(lines)


def _tokens(n: int, counted: bool = False) -> str:
    """Counted tokens as counted; estimated ones to three significant figures, marked "≈"."""
    if counted or n < 1000:
        return f"{n:,}" if counted else f"≈{n:,}"
    digits = len(str(n)) - 3
    return f"≈{round(n, -digits):,}"


def _usd(value: float) -> str:
    if value == 0:
        return "$0"
    if value < 0.01:
        return "<$0.01"
    return f"${value:,.2f}" if value < 1000 else f"${value:,.0f}"
