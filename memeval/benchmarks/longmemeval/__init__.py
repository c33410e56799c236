"""LongMemEval (Wu et al., 2025): 500 questions, each over its own haystack of chat sessions."""

from memeval.benchmarks import Benchmark, RunKind

BENCHMARK = Benchmark(
    name="longmemeval",
    command="memeval.benchmarks.longmemeval.command",
    title="LongMemEval",
    tasks={"longmemeval run": RunKind("memeval.benchmarks.longmemeval.task:LongMemEvalTask", "LMEAnswerRow", "LMEJudgmentRow",
                       config="memeval.benchmarks.longmemeval.config:LongMemEvalConfig")},
    fetches="memeval.benchmarks.longmemeval.datasets:DATA_SETS",
    natural_source="memeval.benchmarks.longmemeval.natural_source:SOURCE",
    judges={"longmemeval": "memeval.benchmarks.longmemeval.judge:LongMemEvalJudge"},
    publication="memeval.benchmarks.longmemeval.publication:PUBLICATION",
    notebooks={"08_longmemeval": "longmemeval run"},
)
