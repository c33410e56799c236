"""`memeval longmemeval run`'s settings, each declared once (memeval.settings): the command's arguments, the checks
every way of making a run passes and the rerun command a manifest records are built from these fields.

Light on purpose: `memeval --help` imports it to build the parser."""

from __future__ import annotations

from dataclasses import dataclass

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
    DRY_RUN,
    MAX_CONCURRENCY,
    MODELS,
    PRICES,
    RESPONSE_FORMAT,
    SAMPLING,
)
from memeval.invocation import command_from
from memeval.settings import flag

READERS = ("extractive", "llm")


@dataclass
class LongMemEvalConfig:
    data: str = flag(DATA, path=True, help="a LongMemEval file (memeval data fetch longmemeval --variant s)")
    out: str = flag(OUT, path=True, last=True,
                    help="run directory (resumable: rerun to continue; another configuration is refused)")
    systems: list[str] = flag(SYSTEMS, factory=lambda: ["rag_turns"], systems=True,
                              help=systems_help("rag_turns:chunk_tokens=256"))
    questions: int | None = flag("--questions", None, type=bounded("--questions"),  # the first N; None: all
                                 help="the first N questions (default: all)")
    k: int = flag(K)
    judge: str = flag("--judge", "none", choices=("none", "longmemeval"),
                      help="longmemeval: the benchmark's yes/no protocol (needs a key or a cache); the published one "
                           "is --judge-model gpt-4o-2024-08-06 --llm openai")
    llm_backend: str = flag(BACKEND)
    progress: bool = flag(PROGRESS, True)
    reader: str = flag("--reader", "extractive", choices=READERS,  # llm: the answer role's model reads the memories
                       help="extractive: the no-LLM baseline; llm: the answer model reads the memories")
    models: dict = flag(MODELS, factory=dict, models=("answer", "judge"))  # role → model id the user named
    sampling: str = flag(SAMPLING)
    response_format: str = flag(RESPONSE_FORMAT)
    context_tokens: int | None = flag(CONTEXT_TOKENS)  # the server's window; not part of the identity
    budget_usd: float | None = flag(BUDGET_USD)
    max_concurrency: int = flag(MAX_CONCURRENCY)
    prices: str | None = flag(PRICES, path=True)  # dollars only: not part of the run's identity
    dry_run: bool = flag(DRY_RUN, False)
    restart: bool = flag(RESTART, False)  # move what `out` holds aside to OUT.replaced-<UTC> first
    fail_fast: bool = flag(FAIL_FAST, False)  # the first plug-in failure stops the run (else: the row's `error`)
    answer_max_tokens: int | None = flag(  # None: the reader protocol's own cap
        "--answer-max-tokens", None, type=bounded("--answer-max-tokens"), metavar="N",
        help="--reader llm: the reader's output cap (default: its protocol's, 200; the benchmark's 500 with its "
             "fetched prompt). A reply still running at the cap is never an answer; part of the run's identity and "
             "of every request's cache key")

    def command_line(self) -> list[str]:
        """This configuration as a `memeval longmemeval run` command (recorded in the manifest, shown by `ls`)."""
        return command_from(self, ["memeval", "longmemeval", "run"])
