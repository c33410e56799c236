"""`memeval natural ...`'s own settings, each declared once (memeval.settings): the commands' arguments and the
checks of a notebook's parameters are built from these fields (`--data`, `--out`, `--output`, the progress bars and
the LLM options are the ones every command shares, memeval.commands).

Light on purpose: `memeval --help` imports it to build the parser, and memeval.parameters reads it without the
command line (nothing from memeval.commands)."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.flag_types import bounded, positive_finite_floats, share
from memeval.memaudit.config import BUDGETS
from memeval.natural.defaults import SAMPLE_SEED, TARGET_ACCEPTED
from memeval.natural.source import source_names
from memeval.settings import Setting, flag

PACKAGES = Setting("--packages", help="a `natural build` directory")
BUILD_ROLES = ("extract",)  # the one model role `natural build` calls (--with-graph's triple extraction)
AUDIT_ROLES = ("judge",)  # the one model role `natural audit-llm` calls (each cell's adjudication)
ANALYSIS_BUDGETS = "30,60,100"


def _budgets():
    return flag(BUDGETS, factory=lambda: positive_finite_floats(ANALYSIS_BUDGETS),
                help=f"{BUDGETS.help} (default {ANALYSIS_BUDGETS})")


@dataclass
class BuildConfig:
    """`natural build`'s own settings (its data, directory, progress bars and LLM options are the shared ones)."""

    cost: str = flag("--cost", "words", choices=("words", "bytes"),
                     help="candidate cost: word count (default) or 8 + ceil(bytes/24)")
    target: int = flag("--target", TARGET_ACCEPTED, type=bounded("--target"),
                       help=f"packages to accept ({TARGET_ACCEPTED})")
    seed: int = flag("--seed", SAMPLE_SEED, type=bounded("--seed"), help=f"the examination-order seed ({SAMPLE_SEED})")
    source: str = flag("--source", source_names()[0], choices=tuple(source_names()),
                       help="locomo (default) or longmemeval (--data names the file; evidence from has_answer turns)")
    scope: str = flag("--scope", "question", choices=("question", "conversation"),
                      help="question: one package per accepted question (default); conversation: one package per "
                           "LoCoMo conversation with every turn and every question's evidence units")
    conversations: str = flag("--conversations", "all", help="--scope conversation: all, conv-26, or a list")
    no_union: bool = flag("--no-union", False, switch=True, help="skip the union packages of exported stores")
    with_graph: bool = flag("--with-graph", False, switch=True,
                            help="also export the memory graph (LLM extraction: cache first, then ANTHROPIC_API_KEY; "
                                 "check the cost with --dry-run)")


@dataclass
class SensitivityConfig:
    packages: str = flag(PACKAGES)
    budgets: list[float] = _budgets()
    noise_rate: float = flag("--noise-rate", 0.1, type=share,
                             help="share of coverage cells replaced by a random level in the label-noise check (0.1)")
    noise_seeds: int = flag("--noise-seeds", 3, type=bounded("--noise-seeds"), help="how many label-noise seeds")


@dataclass
class FrameConfig:
    """The audit frame's cells, chosen the same way by every command that uses them (`audit-export`, `audit-llm`)."""

    packages: str = flag(PACKAGES)
    zero_rate: float = flag("--zero-rate", 0.2, type=share, help="share of zero cells sampled per kind")
    seed: int = flag("--seed", 0, type=bounded("--seed"), help="the seed of the zero-cell sample")


@dataclass
class CompareConfig:
    packages: str = flag(PACKAGES)
    labels: str = flag("--labels", help="filled audit-frame CSV (verdict column)")
    budgets: list[float] = _budgets()


@dataclass
class UnionConfig:
    packages: str = flag(PACKAGES)
    store: str = flag("--store", help="the exported store: a JSON object keyed by conversation id")
    format: str = flag("--format", choices=("memeval", "mem0", "letta", "amem"),
                       help="the store's shape: memeval items, Mem0 get_all(), Letta archival passages or A-Mem notes")
    system: str = flag("--system", help="the name the store carries in every table")


@dataclass
class BridgeConfig:
    sweep: str = flag("--sweep", help="a `memaudit sweep natural` output directory")
    run: str = flag("--run", help="a `locomo run` output directory")
