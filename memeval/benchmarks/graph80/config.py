"""`memeval graph80 generate` and `graph80 run`'s settings, each declared once (memeval.settings): the commands'
arguments, the checks every way of making a study passes and the rerun command a manifest records are built from
these fields.

Light on purpose: `memeval --help` imports it to build the parser."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from memeval.commands.arguments import DATA, OUT, PROGRESS, RESTART, SYSTEMS, bounded, systems_help
from memeval.invocation import command_from
from memeval.settings import check_settings, flag


@dataclass(kw_only=True)
class GenerateConfig:
    seed: int = flag("--seed", 0, type=bounded("--seed"), help="the corpus seed")
    out: str = flag(OUT, path=True, last=True, help="corpus directory")


@dataclass
class StudyConfig:
    data: str = flag(DATA, path=True, help="a `graph80 generate` directory")
    out: str = flag(OUT, path=True, last=True,
                    help="study directory (answers.jsonl, judgments.jsonl, rows.jsonl, summary.json, report.md, "
                         "manifest.json; a rerun resumes, another configuration is refused)")
    systems: list[str] = flag(SYSTEMS, systems=True, help=systems_help("memory_graph:hops=1"),
                              cli_default="memory_graph:hops=0;memory_graph:hops=1;memory_graph:hops=2;chunks")
    extractor: str = flag("--extractor", "gold", choices=("gold", "llm"),
                          help="gold: the corpus's own triples (default, no LLM); llm: triples extracted by the model")
    answerer: str = flag("--reader", "extractive", choices=("extractive", "claude"), aliases=("--answerer",),
                         dest="answerer",
                         help="who answers from the memories: extractive (no LLM, the default) or claude; "
                              "--answerer: older spelling, still accepted")
    judge: str = flag("--judge", "none", choices=("none", "three_dim"),
                      help="none: gold-answer containment, labelled as such (default); three_dim: the "
                           "three-dimension LLM judge (entity, relation, no wrong information)")
    repeats: int = flag("--repeats", 3, type=bounded("--repeats"), help="runs of every question per system (default 3)")
    progress: bool = flag(PROGRESS, True)
    restart: bool = flag(RESTART, False)  # move what `out` holds aside to OUT.replaced-<UTC> first

    def validate(self) -> None:
        check_settings(self)

    def public(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("progress", "restart")}

    def command_line(self) -> list[str]:
        """This configuration as a `memeval graph80 run` command."""
        return command_from(self, ["memeval", "graph80", "run"])
