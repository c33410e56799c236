"""graph80: the memory-graph study's synthetic corpus, systems and diagnostics."""

from memeval.benchmarks import Benchmark, RunKind

BENCHMARK = Benchmark(
    name="graph80",
    command="memeval.benchmarks.graph80.command",
    title="graph80",
    tasks={"graph80 run": RunKind("memeval.benchmarks.graph80.task:Graph80Task", "Graph80AnswerRow", "Graph80JudgmentRow",
                       config="memeval.benchmarks.graph80.config:StudyConfig",
                       memory_systems=False)},  # its systems are the study's own variants
    judges={"three_dim": "memeval.benchmarks.graph80.judge:ThreeDimJudge"},
    publication="memeval.benchmarks.graph80.publication:PUBLICATION",
    notebooks={"06_memory_graph_study": "graph80 run"},
    configs={"graph80 generate": "memeval.benchmarks.graph80.config:GenerateConfig"},
)
