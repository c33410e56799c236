"""LoCoMo (Maharana et al., 2024): end-to-end QA over ten long conversations, 1,986 questions in five categories."""

from memeval.benchmarks import Benchmark, RunKind

BENCHMARK = Benchmark(
    name="locomo",
    command="memeval.benchmarks.locomo.command",
    title="LoCoMo",
    commands=("memeval.benchmarks.locomo.judge_command",),  # `memeval judge calibrate`: the audit's answer sets
    tasks={"locomo run": RunKind("memeval.benchmarks.locomo.task:LocomoTask", "AnswerRow", "JudgmentRow",
                                 config="memeval.benchmarks.locomo.config:LocomoRunConfig",
                                 written_by=("locomo import",))},  # an import alone is a run of its answers
    kind_aliases={"memeval locomo run": "locomo run"},  # how the earliest manifests spelled the command
    categories="memeval.benchmarks.locomo.categories:LOCOMO_CATEGORIES",
    fetches="memeval.benchmarks.locomo.datasets:DATA_SETS",
    natural_source="memeval.benchmarks.locomo.natural_build:SOURCE",
    answer_keys="memeval.benchmarks.locomo.answer_keys:ANSWER_KEYS",
    judges={"evermemos": "memeval.benchmarks.locomo.evermemos_judge:judge"},
    readers={"claude_official": "memeval.benchmarks.locomo.readers:PaperReader",
             "evermemos_mem0": "memeval.benchmarks.locomo.readers:EverMemOSReader",
             "evermemos_memos": "memeval.benchmarks.locomo.readers:EverMemOSReader",
             "evermemos_cot": "memeval.benchmarks.locomo.readers:EverMemOSReader"},
    publication="memeval.benchmarks.locomo.publication:PUBLICATION",
    conversations="memeval.benchmarks.locomo.data:load_locomo",
    notebooks={"01_prototype_scoring": "locomo run", "02_full_run": "locomo run", "09_trust": "locomo run"},
    configs={"locomo import": "memeval.benchmarks.locomo.command_config:ImportConfig",
             "locomo trust": "memeval.benchmarks.locomo.command_config:TrustConfig",
             "judge calibrate": "memeval.benchmarks.locomo.command_config:CalibrateConfig"},
)
