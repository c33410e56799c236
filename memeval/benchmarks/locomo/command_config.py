"""The settings of LoCoMo's commands besides `locomo run` (config.py), each declared once (memeval.settings):
`locomo import`, `locomo trust`, `judge calibrate` and `locomo run --json`. Their arguments, the configuration
read back from them, a notebook parameter's check (`locomo trust --ambiguous`) and the command line a manifest
records (`locomo import`, `judge calibrate`) are built from these fields.

Light on purpose: `memeval --help` imports it to build the parsers."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.commands.arguments import DATA, OUT, PROGRESS, RESTART, system_name
from memeval.commands.llm_options import BACKEND, MODELS
from memeval.flag_types import bounded
from memeval.invocation import command_from, path_text
from memeval.scoring.leniency import ANSWER_SETS
from memeval.settings import Setting, flag

IMPORT_FORMATS = ("memeval", "mem0", "jsonl", "evermemos")
CALIBRATING_JUDGES = ("binary", "graded", "evermemos")

RUN_JSON = Setting("--json", switch=True, rerun=False,
                   help="print a JSON summary instead of the report (with --dry-run: the estimate's raw numbers "
                        "instead of its table)")


@dataclass(kw_only=True)
class ImportConfig:
    """`memeval locomo import SOURCE`: the source file is the command's word, written before the flags."""

    source: str = flag("source", path=True, rerun=False, help="the answers file")
    format: str = flag("--format", choices=IMPORT_FORMATS,
                       help="memeval: answers.jsonl; mem0: Mem0 evaluation results JSON; jsonl: question/prediction; "
                            "evermemos: the EverMemOS framework's eval_results.json (`detailed_results`), its "
                            "recorded judgments kept as the judge evermemos_recorded (recorded, not re-run)")
    system: str = flag("--system", type=system_name, help="the name the imported answers carry in every table")
    data: str | None = flag(DATA, None, path=True,
                            help="LoCoMo file or directory the answers are matched against (default: the documented "
                                 "order)")
    out: str = flag(OUT, path=True, last=True, help="run directory to add the answers to")
    skip_invalid: bool = flag("--skip-invalid", False, switch=True,
                              help="leave malformed rows out (each reported, here and in the manifest) instead of "
                                   "refusing the file")
    from_system: str | None = flag("--from-system", None, metavar="NAME",
                                   help="--format memeval: the system of the answers file to import (required when "
                                        "it holds several)")
    judge_model: str | None = flag("--judge-model", None, metavar="MODEL",
                                   help="--format evermemos: the model that made the file's recorded judgments, when "
                                        "the file does not state it (default: \"not stated by the file\")")
    judge_prompt: str | None = flag("--judge-prompt", None, choices=("evermemos",),
                                    help="--format evermemos: the judge prompt the file's producer states its "
                                         "judgments were made with (evermemos: the framework's pinned prompts.yaml, "
                                         "temperature 0); with a stated judge model this lets a measured leniency be "
                                         "shown beside the recorded J (default: the prompt is not stated, and "
                                         "neither is its leniency)")
    json: bool = flag("--json", False, switch=True, rerun=False, help="print the matching report as JSON")

    def command_line(self) -> list[str]:
        """This import as the `memeval locomo import` command its manifest records."""
        return command_from(self, ["memeval", "locomo", "import", path_text(self.source)])


@dataclass(kw_only=True)
class TrustConfig:
    runs: list[str] = flag("runs", factory=list, path=True, rerun=False, nargs="*", metavar="RUN_DIR", cli_default=None,
                           help="`locomo run` or `locomo import` directories (with --published, none is needed)")
    published: bool = flag("--published", False, switch=True,
                           help="first import the LoCoMo audit's six published runs (four full-context EverMemOS "
                                "runs and the audit's two wrong-answer sets, with their recorded judgments) into "
                                "DIR/published/ and show them beside the runs; needs `memeval data fetch "
                                "locomo-audit`")
    audit_dir: str | None = flag("--audit-dir", None, path=True, metavar="DIR",
                                 help="where the fetched audit is (default: MEMEVAL_LOCOMO_AUDIT_DIR, else "
                                      "data/locomo-audit/)")
    ambiguous: str = flag("--ambiguous", "include", choices=("include", "drop"),
                          help="the audit's AMBIGUOUS questions under the corrected and excluded keys: include "
                               "(default) or drop")
    data: str | None = flag(DATA, None, path=True,
                            help="LoCoMo file or directory (default: the runs' own data, else the documented search "
                                 "order)")
    out: str = flag(OUT, path=True, last=True,
                    help="directory for trust.md, trust.json and figures/ (published runs under DIR/published/)")


@dataclass(kw_only=True)
class CalibrateConfig:
    """`memeval judge calibrate`, in the order its recorded command line writes the settings: `--judge`, `--sets`
    (always, as read) and `--out` first, the LLM backend last."""

    judge: str = flag("--judge", choices=CALIBRATING_JUDGES,
                      help="the judge to measure (its prompt and protocol as `locomo run --judge` sends it)")
    sets: str = flag("--sets", ",".join(ANSWER_SETS), always=True,
                     help="answer sets, comma-separated: specific_wrong (audit v1), vague_wrong (audit v2), gold (the "
                          "gold answer itself) (default: all three)")
    out: str | None = flag(OUT, None,
                           help="run directory (resumable: rerun to continue); refused with --recorded, which writes "
                                "nothing")
    judge_runs: int | None = flag("--judge-runs", None, type=bounded("--judge-runs"),
                                  help="judge runs per answer (default: the judge's own: binary 1, graded 10, "
                                       "evermemos 3)")
    questions: int | None = flag("--questions", None, type=bounded("--questions"), metavar="N",
                                 help="a seeded sample of N questions, stratified by category, the same in every set "
                                      "(default: all 1,540 non-adversarial questions)")
    data: str | None = flag(DATA, None, help="LoCoMo file or directory (default: the documented search order)")
    models: dict = flag(MODELS, factory=dict, models=("judge",))
    llm_backend: str = flag(BACKEND)
    recorded: bool = flag("--recorded", False, switch=True, rerun=False,
                          help="no model call: the rates from the judgments the audit recorded (gpt-4o-mini under "
                               "the EverMemOS prompts, three runs; `--judge evermemos` only)")
    restart: bool = flag(RESTART, False)
    progress: bool = flag(PROGRESS, True)
    json: bool = flag("--json", False, switch=True, rerun=False, help="print the measured rates as JSON lines")

    def command_line(self) -> list[str]:
        """This calibration as the `memeval judge calibrate` command its manifest records."""
        return command_from(self, ["memeval", "judge", "calibrate"])
