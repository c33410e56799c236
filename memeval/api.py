"""memeval's public facade: what a notebook or a script needs, from one module (`from memeval import api`).

Runs — each takes its config object, or the config's fields as keywords, or both (keywords replace fields):

- `run_locomo(config, client=None, **fields)` → `RunResult`: a LoCoMo run (`LocomoRunConfig`; `memeval locomo run`).
- `run_longmemeval(config, client=None, **fields)`: a LongMemEval run (`LongMemEvalConfig`;
  `memeval longmemeval run`); returns what memeval.benchmarks.longmemeval.task.run_longmemeval returns.
- `run_graph80(config, client=None, llm="auto", models=None, **fields)` → dict: the memory-graph study
  (`StudyConfig`; `memeval graph80 run`), its LLM client made here, and checked, when a role calls a model.
- `sweep(config, out)` → dict: a MEMAUDIT sweep (`SweepConfig`; `memeval memaudit sweep`); a natural sweep scores
  union packages by pruning rule, as `memeval memaudit sweep natural` does.
- `chosen_models(answer=None, judge=None, extract=None)` → a config's `models` (role → model id), None (the
  project's default for the role) left out.
- `check_parameters(notebook, values)` → the values of a notebook's parameters checked as the command line checks
  the same flags, text read as the value it spells (`"2,6"` → [2, 6]); a bad one raises one line
  (memeval.parameters; every notebook's first cell does this before creating its configuration directory).

Results:

- `load_run(dir)` → `StoredRun`: a stored run's answers, judgments and manifest, as typed records, for any task in
  the registry (LoCoMo, LongMemEval, graph80); a task of your own is read with its records and `memeval.records`.
- `publish(*names, root=None, out=None)` → list of `Published`: publication figures and tables from stored results
  (`memeval publish`; no names: all of them).
- `trust(runs, out, audit_dir=None, data=None, ambiguous="include", published=False)` → dict: how far LoCoMo
  tables can be trusted (`memeval locomo trust`): trust.md, trust.json and figures in `out`; `published` imports
  the LoCoMo audit's published runs first (memeval/benchmarks/locomo/trust.py).
- `show(obj)`: in a notebook, a table as the publication prints it (a DataFrame), a published figure or table, or
  Markdown text.

The config classes (`LocomoRunConfig`, `LongMemEvalConfig`, `StudyConfig`, `SweepConfig`) are importable from here
too; like the runners they are imported on first use, so `import memeval.api` stays light.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memeval.benchmarks.graph80.task import StudyConfig
    from memeval.benchmarks.locomo.task import LocomoRunConfig
    from memeval.benchmarks.longmemeval.task import LongMemEvalConfig
    from memeval.llm.client import LLMClient
    from memeval.memaudit.sweep import PackageScorer, SweepConfig
    from memeval.publication.publish import Published
    from memeval.records import RunResult

__all__ = ["LocomoRunConfig", "LongMemEvalConfig", "StoredRun", "StudyConfig", "SweepConfig", "check_parameters",
           "chosen_models", "load_run", "publish", "run_graph80", "run_locomo", "run_longmemeval", "show", "sweep",
           "trust"]

_CONFIGS = {"LocomoRunConfig": "memeval.benchmarks.locomo.task", "LongMemEvalConfig": "memeval.benchmarks.longmemeval.task",
            "StudyConfig": "memeval.benchmarks.graph80.task", "SweepConfig": "memeval.memaudit.sweep"}
ROLES = ("answer", "judge", "extract")


def __getattr__(name: str) -> Any:
    if name in _CONFIGS:
        return getattr(importlib.import_module(_CONFIGS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _configured(cls: type, config: Any, fields: dict) -> Any:
    if config is None:
        return cls(**fields)
    return dataclasses.replace(config, **fields) if fields else config


def chosen_models(answer: str | None = None, judge: str | None = None, extract: str | None = None) -> dict[str, str]:
    """role → model id for the roles given a model; the others keep the project's defaults (memeval.llm.profiles)."""
    return {role: model for role, model in zip(ROLES, (answer, judge, extract), strict=True) if model}


def check_parameters(notebook: str, values: dict) -> dict:
    """A notebook's parameters as the notebook will use them, checked through the command line's own flags."""
    from memeval.parameters import checked_parameters

    return checked_parameters(notebook, values)


def run_locomo(config: LocomoRunConfig | None = None, /, client: LLMClient | None = None, **fields) -> RunResult:
    """A LoCoMo run (resumable; see memeval.benchmarks.locomo.task), e.g. `run_locomo(out="runs/p", conversations="conv-26",
    questions="prototype", progress=False)`."""
    from memeval.benchmarks.locomo.task import LocomoRunConfig
    from memeval.benchmarks.locomo.task import run_locomo as run

    return run(_configured(LocomoRunConfig, config, fields), client)


def run_longmemeval(config: LongMemEvalConfig | None = None, /, client: LLMClient | None = None, **fields) -> Any:
    """A LongMemEval run over a fetched data file (see memeval.benchmarks.longmemeval.task); returns its outcome."""
    from memeval.benchmarks.longmemeval.task import LongMemEvalConfig
    from memeval.benchmarks.longmemeval.task import run_longmemeval as run

    return run(_configured(LongMemEvalConfig, config, fields), client)


def run_graph80(config: StudyConfig | None = None, /, client: LLMClient | None = None, llm: str = "auto",
                models: dict | None = None, **fields) -> dict:
    """The graph80 study (see memeval.benchmarks.graph80.task); returns its summary. Without `client`, one is made on the
    `llm` backend with `models` (see `chosen_models`) when the extractor, reader or judge calls a model, and
    each role's model is checked against its protocol's temperature before any call, as `memeval graph80 run`
    does."""
    from memeval.benchmarks.graph80.task import StudyConfig, role_temperatures, run_study
    from memeval.llm.client import checked_client

    config = _configured(StudyConfig, config, fields)
    return run_study(config, checked_client(llm, role_temperatures(config), client, models=dict(models or {})))


def sweep(config: SweepConfig, out: str | Path, progress: bool = True, restart: bool = False,
          scorer: PackageScorer | None = None) -> dict:
    """Run (or resume) a MEMAUDIT sweep into `out` (see memeval.memaudit.sweep.run_sweep); returns its summary.
    A natural sweep (`kind="natural"`) scores union packages by pruning rule unless another scorer is given."""
    from memeval.memaudit.sweep import run_sweep

    if scorer is None and config.kind == "natural":
        from memeval.natural.sweep import UnionAwareScorer

        scorer = UnionAwareScorer()
    return run_sweep(config, out, progress, scorer=scorer, restart=restart)


@dataclass(frozen=True)
class StoredRun:
    """A stored run: answers by system (the latest row per question; a failed one keeps its `error`) and
    judgments by protocol and system (the latest per question), as the run's records; and its manifest."""

    directory: Path
    kind: str  # the manifest's command: a task kind (memeval.engine.registry.run_kinds)
    manifest: dict
    answers: dict[str, list]  # system → the task's answer records
    judgments: dict[str, dict[str, list]]  # protocol → system → the task's judgment records

    @property
    def systems(self) -> list[str]:
        return list(self.answers)

    @property
    def complete(self) -> bool | None:
        """What the manifest says (None when it does not say)."""
        return self.manifest.get("complete")


def load_run(directory: str | Path, key: str = "original", ambiguous: str = "include") -> StoredRun:
    """The answers, judgments and manifest of a run directory of a registered task (LoCoMo, LongMemEval, graph80;
    sweeps: memeval.memaudit.sweep.load_sweep_rows; several runs and sweeps as one table:
    memeval.reports.results.collect). A LoCoMo run's rows are under the answer `key` (original, corrected or
    excluded; `ambiguous`: include or drop the audit's AMBIGUOUS questions; memeval/benchmarks/locomo/keyed.py): F1 and
    evidence recall against the key's gold and citations, one judgment per question and protocol under that key,
    the questions it leaves out left out."""
    from memeval.engine.registry import run_kinds, task_class
    from memeval.errors import InputError
    from memeval.invocation import load_manifest
    from memeval.records import latest, read_records
    from memeval.rundir import MANIFEST, RunDir

    rundir = RunDir(directory)
    if not rundir.manifest.is_file():
        raise InputError(directory, MANIFEST, "not found: expected a run directory (" + ", ".join(run_kinds()) + ")")
    manifest = load_manifest(rundir.manifest)
    kind = manifest.get("command")
    try:
        task = task_class(kind)
    except KeyError:
        raise InputError(rundir.manifest, "command", f"{kind!r}: load_run reads {', '.join(run_kinds())} directories "
                         "(a sweep's rows: memeval.memaudit.sweep.load_sweep_rows)") from None
    answer_rows = list(latest(read_records(rundir.answers, task.answer_record), lambda r: r.key).values())
    judgment_rows = list(latest(read_records(rundir.judgments, task.judgment_record), lambda r: r.key).values())
    if kind == "locomo run":
        answer_rows, judgment_rows = _keyed_rows(manifest, answer_rows, judgment_rows, key, ambiguous)
    elif key != "original" or ambiguous != "include":
        raise InputError(rundir.manifest, "command", f"{kind!r}: an answer key applies to LoCoMo runs only")
    answers: dict[str, list] = {}
    for row in answer_rows:
        answers.setdefault(row.system, []).append(row)
    judgments: dict[str, dict[str, list]] = {}
    for row in judgment_rows:
        judgments.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
    directory = rundir.path
    return StoredRun(directory, kind, manifest, answers, judgments)


def _keyed_rows(manifest: dict, answers: list, judgments: list, key: str, ambiguous: str) -> tuple[list, list]:
    """A LoCoMo run's rows under the answer key, its audit matched to the data the manifest names (the data memeval
    finds when that path is gone)."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo.keyed import key_evidence, keyed_answers, keyed_judgments, resolve_key
    from memeval.data.paths import find_locomo

    if key == "original" and ambiguous == "include":
        return answers, keyed_judgments(judgments, None)
    data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    recorded = data.get("path") if isinstance(data.get("path"), str) else None
    path = Path(recorded) if recorded and Path(recorded).exists() else find_locomo(None)
    answer_key, audit = resolve_key(key, ambiguous, load_locomo(path))
    return (keyed_answers(answers, answer_key, key_evidence(answer_key, audit)),
            keyed_judgments(judgments, answer_key, {a.sample_id: a.gold for a in answers}))


def publish(*names: str, root: str | Path | None = None, out: str | Path | None = None) -> list[Published]:
    """Write publication figures (`fig_...`) and tables (`tab_...`) from the stored results under `root` (default
    reports/artifacts) into `out` (default figures/); no names: every one, as `memeval publish`. Each result says
    what was written, or which notebook to run first when an input is missing."""
    from memeval.artifacts import artifacts_root, figures_dir
    from memeval.publication.publish import publish_all, publish_named

    root, out = artifacts_root(root), figures_dir(out)
    if not names:
        return publish_all(root, out)
    return [publish_named(name, root, out) for name in names]


def trust(runs: list[str | Path], out: str | Path, audit_dir: str | Path | None = None,
          data: str | Path | None = None, ambiguous: str = "include", published: bool = False,
          figures_dir: str | Path | None = None) -> dict:
    """The trust section of `runs` (and, with `published`, the LoCoMo audit's published runs) written to `out`, as
    `memeval locomo trust` writes it: {"report", "document", "figures", "figure_problems", "trust"}."""
    from memeval.benchmarks.locomo.trust import write_trust

    return write_trust(runs, out, audit_dir, data, ambiguous, published, figures_dir)


def show(obj: Any, digits: int = 3) -> None:
    """Display in a notebook: a DataFrame (or Series) as the publication prints tables — budgets and ids as
    written, values to `digits` decimals, "–" for missing, no bare index; a `Published` figure or table (its
    image, caption and Markdown, or what is missing); a str as Markdown; a list or tuple item by item; anything
    else as IPython would."""
    from IPython.display import Image, Markdown, display

    if isinstance(obj, str):
        display(Markdown(obj))
        return
    if isinstance(obj, (list, tuple)):
        for item in obj:
            show(item, digits)
        return
    import pandas as pd

    if isinstance(obj, (pd.DataFrame, pd.Series)):
        from memeval.publication.tables import frame_markdown

        display(Markdown(frame_markdown(obj.to_frame() if isinstance(obj, pd.Series) else obj, digits)))
        return
    from memeval.publication.publish import Published

    if not isinstance(obj, Published):
        display(obj)
    elif obj.status == "missing":
        display(Markdown(f"**{obj.name} not written** — {obj.message}"))
    else:
        for path in obj.paths:
            if path.endswith(".png"):
                display(Image(filename=path))
        body = f"\n\n{obj.markdown}" if obj.markdown else ""
        display(Markdown(f"*{obj.name}.* {obj.caption}{body}"))
