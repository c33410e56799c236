"""Published LongMemEval_S accuracies as data, each with its source, reader and judge, so a table can say
which rows were graded by the benchmark's own protocol (LongMemEval's yes/no prompts, judge
gpt-4o-2024-08-06) and which were not. A row whose judge differs is never pooled with ours.

Every row is the benchmark's overall accuracy (the mean over all 500 questions, abstention questions included),
which memeval's report computes the same way (`overall`, memeval.benchmarks.longmemeval.metrics.qa_metrics); a row
of another summary (task-averaged, one type) must say so in `metric`.

Looked up 2026-12-03 through the search tool; where only a secondary summary was reachable it is named.
The LongMemEval paper's own reader table (arXiv:2410.10813) was not reachable here and has no rows yet.
"""

from __future__ import annotations

from dataclasses import dataclass

OVERALL = "overall"  # the name of the report column computed the way these rows were


@dataclass(frozen=True)
class LMEBaseline:
    system: str
    reader: str
    accuracy: float  # ×100, overall over the 500 questions
    judge: str
    same_protocol: bool | None  # None: the source does not say enough to tell
    source: str
    metric: str = OVERALL  # which of the report's accuracy columns this number compares with


ZEP_PAPER = ("Rasmussen et al. 2025, Zep (arXiv:2501.13956v1), LongMemEval_S table, as summarised by "
             "memorypapers.org; the judge model is not restated in the summary")
ZEP_RESEARCH = ("getzep.com/research (2026): 451/500; reader and judge gpt-5.4 with a chain-of-thought judge, "
                "as summarised by donto.org/benchmarks/longmemeval")

LONGMEMEVAL_BASELINES: tuple[LMEBaseline, ...] = (
    LMEBaseline("Full context", "gpt-4o", 60.2, "gpt-4o (unverified)", None, ZEP_PAPER),
    LMEBaseline("Zep", "gpt-4o", 71.2, "gpt-4o (unverified)", None, ZEP_PAPER),
    LMEBaseline("Zep (2026)", "gpt-5.4", 90.2, "gpt-5.4, chain of thought", False, ZEP_RESEARCH),
)
