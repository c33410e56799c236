"""The readers and judges a conversation-QA run can name, kept import-light (the CLI builds its parsers from these):
the shared ones, then those each registered benchmark declares, by the names its declaration gives them. A
benchmark's judges judge its runs' answer rows; those of benchmarks recording the shared AnswerRow are offered here."""

from memeval.benchmarks import declarations

SHARED_LLM_READERS = ("claude",)  # memeval/qa/readers.py, beside `extractive` (no LLM)
SHARED_JUDGES = ("graded", "binary")  # memeval/scoring/judge.py
LLM_ANSWERERS = (*SHARED_LLM_READERS, *(name for benchmark in declarations() for name in benchmark.readers))
ANSWERERS = ("extractive", *LLM_ANSWERERS)
JUDGE_PROTOCOLS = (*SHARED_JUDGES, *(name for benchmark in declarations() if benchmark.tasks
                                     and all(kind.answer_record == "AnswerRow" for kind in benchmark.tasks.values())
                                     for name in benchmark.judges))
JUDGE_CHOICES = ("none", *JUDGE_PROTOCOLS)
