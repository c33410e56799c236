"""`memeval locomo run`'s settings, each declared once: its flag, type, default, help, choices and bounds. The
command's arguments, the checks every way of making a run passes (CLI, `memeval.api`, notebook parameters) and
the rerun command a manifest records are built from these fields (memeval.settings).

Light on purpose: `memeval --help` imports it to build the parser."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from memeval.benchmarks.locomo.answer_keys import AMBIGUOUS_FLAG_HELP, KEY_FLAG_HELP
from memeval.benchmarks.locomo.audit_key import AMBIGUOUS_CHOICES, KEY_MODES
from memeval.commands.arguments import DATA, FAIL_FAST, OUT, PROGRESS, RESTART, SYSTEMS, bounded, systems_help
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
from memeval.errors import InputError
from memeval.invocation import command_from
from memeval.memory.registry import BUILTIN
from memeval.qa.choices import ANSWERERS, JUDGE_CHOICES
from memeval.qa.selection import QUESTIONS_HELP
from memeval.rundir import RunDir
from memeval.settings import check_settings, flag

# The sample ids of the released locomo10.json, for --help (tests/test_cli.py checks them against the data).
RELEASED_CONVERSATIONS = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48",
                          "conv-49", "conv-50")


@dataclass
class LocomoRunConfig:
    out: str = flag(OUT, path=True, last=True,
                    help="run directory (resumable: rerun to continue; another configuration is refused)")
    data: str | None = flag(DATA, None, path=True, help="LoCoMo file or directory (default: the documented search order)")
    conversations: str = flag("--conversations", "all",
                              help="all, one id or a comma-separated list; the released data's ids: "
                                   + ", ".join(RELEASED_CONVERSATIONS))
    questions: str = flag("--questions", "all", help=QUESTIONS_HELP)
    question_seed: int = flag(  # which sample `N` / `sample:N` draws
        "--question-seed", 0, type=bounded("--question-seed"), metavar="N",
        help="the seed of the `N` / `sample:N` sample (default 0; recorded in the run's identity, so another seed "
             "is another run)")
    systems: list[str] = flag(SYSTEMS, factory=lambda: ["rag_turns"], systems=True,
                              help=systems_help("rag_turns:chunk_tokens=256", BUILTIN))
    answerer: str = flag(
        "--reader", "extractive", choices=ANSWERERS, aliases=("--answerer",), dest="answerer",
        help="who reads the memories and answers: extractive (no LLM, the default), claude (this project's memory "
             "prompt) or claude_official (the LoCoMo paper's setting: its own prompts byte for byte once `memeval "
             "data fetch protocols` has fetched them, else paraphrased), evermemos_mem0, evermemos_memos or "
             "evermemos_cot (the EverMemOS framework's answer prompts over the retrieved memories, fetched the same "
             "way); --answerer: older spelling, still accepted")
    judge: str = flag(
        "--judge", "none", choices=JUDGE_CHOICES,
        help="none (default: F1 only), graded (0-100, 10 runs a question) or binary (Mem0's CORRECT/WRONG judge: "
             "its prompt byte for byte once `memeval data fetch protocols` has fetched it, else paraphrased; Mem0's "
             "label rule either way) or evermemos (the EverMemOS framework's judge: system and user prompts, 3 runs, "
             "JSON label; fetched the same way); needs a key or a cache holding the calls")
    judge_runs: int | None = flag("--judge-runs", None, type=bounded("--judge-runs"),
                                  help="judge runs per question (default: graded 10, binary 1, evermemos 3)")
    judge_mode: str = flag("--judge-mode", "sync", choices=("sync", "batch"),
                           help="sync: one request per judgment (default); batch: uncached judgments through the "
                                "Message Batches API at half price, resumed after a kill")
    k: int = flag("--k", 10, type=bounded("--k"), help="memories given to the reader by ranked systems")
    answer_max_tokens: int | None = flag(  # None: each reader protocol's own cap
        "--answer-max-tokens", None, type=bounded("--answer-max-tokens"), metavar="N",
        help="the LLM reader's output cap (default: its protocol's, 64; the paper's 50 with claude_official's "
             "fetched prompts). A reply still running at the cap is never an answer: a model with longer answers "
             "needs a larger cap (a small base model may never stop: use an instruction-tuned one); part of the "
             "run's identity and of every request's cache key")
    llm_backend: str = flag(BACKEND)
    budget_usd: float | None = flag(BUDGET_USD)
    max_concurrency: int = flag(MAX_CONCURRENCY)
    sampling: str = flag(SAMPLING)
    response_format: str = flag(RESPONSE_FORMAT)
    context_tokens: int | None = flag(CONTEXT_TOKENS)  # the server's window; not part of the identity
    models: dict = flag(MODELS, factory=dict, models=("answer", "judge", "extract", "embed"))  # role → model
    prices: str | None = flag(PRICES, path=True)  # dollars only: not part of the run's identity
    # the answer key the report scores against (memeval/benchmarks/locomo/keyed.py): no stored answer depends on it,
    # and a corrected key's judgments are rows of their own, so it is not part of the run's identity either
    key: str = flag("--key", "original", choices=KEY_MODES, help=KEY_FLAG_HELP)
    ambiguous: str = flag("--ambiguous", "include", choices=AMBIGUOUS_CHOICES, help=AMBIGUOUS_FLAG_HELP)
    poll_interval_s: float = 30.0
    progress: bool = flag(PROGRESS, True)
    restart: bool = flag(RESTART, False)  # move a run with another identity (or this one) aside to DIR.replaced-<UTC>
    fail_fast: bool = flag(  # the first plug-in failure stops the run (else it is recorded in the row's `error`)
        FAIL_FAST, False, rerun=False)

    def validate(self) -> None:
        """The settings as their flags read them, then what needs the data's neighbours: the question selection,
        the reader's cap and each system built (parameters and values checked before anything is written)."""
        from memeval.memory.registry import check_system
        from memeval.qa.choices import LLM_ANSWERERS
        from memeval.qa.reader_cap import check_cap
        from memeval.qa.selection import questions_identity

        check_settings(self)
        questions_identity(self.questions, self.question_seed)
        check_cap(self.answer_max_tokens, self.answerer in LLM_ANSWERERS)
        if not self.systems:
            raise InputError("--systems", "(none)", "name at least one memory system")
        imported = imported_systems(Path(self.out))
        for spec in self.systems:
            if spec in imported:  # answers another harness made, brought in by `memeval locomo import`
                continue
            check_system(spec)

    def command_line(self) -> list[str]:
        """This configuration as a `memeval locomo run` command."""
        return command_from(self, ["memeval", "locomo", "run"])

    @property
    def runs(self) -> int:
        from memeval.benchmarks.locomo.evermemos_judge import RUNS as EVERMEMOS_RUNS
        from memeval.scoring.judge import GRADED_RUNS

        if self.judge_runs is not None:
            return self.judge_runs
        return GRADED_RUNS if self.judge == "graded" else EVERMEMOS_RUNS if self.judge == "evermemos" else 1


def imported_systems(out: Path) -> dict[str, dict]:
    """Systems whose answers were imported into this run directory (name → source file, format, SHA-256)."""
    path = RunDir(out).manifest
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text()).get("imported") or {}
    except json.JSONDecodeError:
        raise InputError(path, "manifest", "not valid JSON; move the run directory aside") from None
