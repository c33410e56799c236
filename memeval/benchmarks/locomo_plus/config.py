"""`memeval locomo-plus run`'s settings, each declared once (memeval.settings): the command's arguments, the checks
every way of making a run passes and the rerun command a manifest records are built from these fields.

Light on purpose: `memeval --help` imports it to build the parser."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.benchmarks.locomo_plus.data import CHOICES
from memeval.commands.arguments import (
    DATA,
    FAIL_FAST,
    OUT,
    PROGRESS,
    RESTART,
    SYSTEMS,
    K,
    bounded,
    systems_help,
)
from memeval.commands.llm_options import (
    BACKEND,
    BUDGET_USD,
    CONTEXT_TOKENS,
    MAX_CONCURRENCY,
    MODELS,
    PRICES,
    RESPONSE_FORMAT,
    SAMPLING,
)
from memeval.invocation import command_from
from memeval.memory.registry import BUILTIN
from memeval.qa.selection import QUESTIONS_HELP
from memeval.settings import flag

READERS = ("extractive", "claude")  # claude: the answer role's model, whatever it is (--answer-model)
JUDGE_NAME = "locomo_plus"  # the benchmark's per-category judge (judge.py)
JUDGES = ("none", JUDGE_NAME)


@dataclass
class LocomoPlusConfig:
    out: str = flag(OUT, path=True, last=True,
                    help="run directory (resumable: rerun to continue; another configuration is refused)")
    data: str | None = flag(DATA, None, path=True,
                            help="the fetched LoCoMo-Plus directory, or its locomo_plus.json (default: "
                                 "$MEMEVAL_LOCOMO_PLUS_DIR, else data/locomo_plus/); a prompt.py beside it gives the "
                                 "judge the benchmark's own prompts")
    locomo: str | None = flag("--locomo", None, path=True,
                              help="LoCoMo file or directory (default: the documented search order)")
    conversations: str = flag("--conversations", "all",
                              help="all, or LoCoMo conversation ids (comma-separated): their questions, and the items "
                                   "stitched into them")
    questions: str = flag("--questions", "all", help="LoCoMo's questions per conversation, or none; " + QUESTIONS_HELP)
    question_seed: int = flag("--question-seed", 0, type=bounded("--question-seed"), metavar="N",
                              help="the seed of a `N` / `sample:N` question sample (default 0; in the run's identity)")
    items: str = flag("--items", "all", help="Cognitive items: all (default), none, or the first N")
    choice: str = flag("--choice", "cyclic", choices=CHOICES,
                       help="which conversation an item goes into: cyclic (item i into conversation i mod 10, the "
                            "benchmark's evaluation input; default) or random (build_conv.py's draw, seeded by --seed)")
    seed: int = flag("--seed", 0, type=bounded("--seed"), metavar="N",
                     help="--choice random: the seed (default 0; in the run's identity)")
    systems: list[str] = flag(SYSTEMS, factory=lambda: ["rag_turns"], systems=True,
                              help=systems_help("rag_turns:chunk_tokens=256", BUILTIN))
    reader: str = flag("--reader", "extractive", choices=READERS,
                       help="extractive (no LLM, the default) or claude (the answer role's model, any provider, over "
                            "the memories)")
    judge: str = flag("--judge", "none", choices=JUDGES,
                      help="locomo_plus: the benchmark's per-category judge (correct 1, partial 0.5, wrong 0): its "
                           "prompts byte for byte once fetched, else paraphrased; needs a key, a server or a cache")
    k: int = flag(K)
    answer_max_tokens: int | None = flag(
        "--answer-max-tokens", None, type=bounded("--answer-max-tokens"), metavar="N",
        help="the LLM reader's output cap (default: 64 for LoCoMo's questions, 200 for a trigger's reply); part of "
             "the run's identity")
    llm_backend: str = flag(BACKEND)
    budget_usd: float | None = flag(BUDGET_USD)
    max_concurrency: int = flag(MAX_CONCURRENCY)
    sampling: str = flag(SAMPLING)
    response_format: str = flag(RESPONSE_FORMAT)
    context_tokens: int | None = flag(CONTEXT_TOKENS)
    models: dict = flag(MODELS, factory=dict, models=("answer", "judge", "extract", "embed"))
    prices: str | None = flag(PRICES, path=True)
    progress: bool = flag(PROGRESS, True)
    restart: bool = flag(RESTART, False)
    fail_fast: bool = flag(FAIL_FAST, False, rerun=False)

    def command_line(self) -> list[str]:
        return command_from(self, ["memeval", "locomo-plus", "run"])
