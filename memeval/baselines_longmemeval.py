"""Published LongMemEval_S accuracies as data, each with its source, reader and judge, so a table can say
which rows were graded by the benchmark's own protocol (LongMemEval's yes/no prompts, judge
gpt-4o-2024-08-06) and which were not. A row whose judge differs is never pooled with ours.

Looked up 2026-12-03 through the search tool; where only a secondary summary was reachable it is named.
The LongMemEval paper's own reader table (arXiv:2410.10813) was not reachable here and has no rows yet.
"""

from __future__ import annotations

from dataclasses import dataclass

PUBLISHED_JUDGE = "gpt-4o-2024-08-06"
PUBLISHED_PROTOCOL = "longmemeval"


@dataclass(frozen=True)
class LMEBaseline:
    system: str
    reader: str
    accuracy: float  # ×100, overall over the 500 questions
    judge: str
    same_protocol: bool | None  # None: the source does not say enough to tell
    source: str


ZEP_PAPER = ("Rasmussen et al. 2025, Zep (arXiv:2501.13956v1), LongMemEval_S table, as summarised by "
             "memorypapers.org; the judge model is not restated in the summary")
ZEP_RESEARCH = ("getzep.com/research (2026): 451/500; reader and judge gpt-5.4 with a chain-of-thought judge, "
                "as summarised by donto.org/benchmarks/longmemeval")

LONGMEMEVAL_BASELINES: tuple[LMEBaseline, ...] = (
    LMEBaseline("Full context", "gpt-4o", 60.2, "gpt-4o (unverified)", None, ZEP_PAPER),
    LMEBaseline("Zep", "gpt-4o", 71.2, "gpt-4o (unverified)", None, ZEP_PAPER),
    LMEBaseline("Zep (2026)", "gpt-5.4", 90.2, "gpt-5.4, chain of thought", False, ZEP_RESEARCH),
)


def protocol_label(judge_model: str | None, protocol: str = PUBLISHED_PROTOCOL) -> str:
    """How a judged run relates to the benchmark's published protocol."""
    if protocol == PUBLISHED_PROTOCOL and judge_model == PUBLISHED_JUDGE:
        return "the published protocol (LongMemEval's prompts, judge gpt-4o-2024-08-06)"
    return (f"not the published protocol: judge {judge_model or 'unknown'} instead of {PUBLISHED_JUDGE}; "
            "not comparable to published rows")
