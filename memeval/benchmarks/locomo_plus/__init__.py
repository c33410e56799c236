"""LoCoMo-Plus (Li et al., 2026): LoCoMo's five categories plus Cognitive — a cue dialogue and a later trigger
stitched into LoCoMo conversations, judged correct / partial / wrong by a per-category judge."""

from memeval.benchmarks import Benchmark, RunKind

BENCHMARK = Benchmark(
    name="locomo_plus",
    command="memeval.benchmarks.locomo_plus.command",
    title="LoCoMo-Plus",
    tasks={"locomo-plus run": RunKind("memeval.benchmarks.locomo_plus.task:LocomoPlusTask", "AnswerRow",
                                      "JudgmentRow", config="memeval.benchmarks.locomo_plus.config:LocomoPlusConfig",
                                      judges={"locomo_plus": "memeval.benchmarks.locomo_plus.judge:LocomoPlusJudge"})},
    categories="memeval.benchmarks.locomo_plus.categories:LOCOMO_PLUS_CATEGORIES",
    fetches="memeval.benchmarks.locomo_plus.datasets:DATA_SETS",
    conversations="memeval.benchmarks.locomo_plus.viewed:run_conversations",  # LoCoMo's and each item's stitched one
)
