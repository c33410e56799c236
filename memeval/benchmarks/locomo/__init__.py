"""LoCoMo (Maharana et al., 2024): end-to-end QA over ten long conversations, 1,986 questions in five categories."""

from memeval.benchmarks import Benchmark, RunKind

BENCHMARK = Benchmark(
    name="locomo",
    command="memeval.benchmarks.locomo.command",
    tasks={"locomo run": RunKind("memeval.benchmarks.locomo.task:LocomoTask", "AnswerRow", "JudgmentRow")},
    kind_aliases={"memeval locomo run": "locomo run"},  # how the earliest manifests spelled the command
    categories="memeval.benchmarks.locomo.categories:LOCOMO_CATEGORIES",
    publication="memeval.benchmarks.locomo.publication:PUBLICATION",
)
