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

Notebooks — each is a parameters cell, calls into this module, and display:

- `notebook(name, globals())` → `Notebook(name, artifacts, figures_explicit)`: its first call; the parameters
  checked as above (one line, nothing created), then its configuration directory (`.artifacts`, one per
  configuration). `.save_figure(fig, name)` is the one way a notebook saves a figure: PDF, PNG (and the panels'
  JSON) in reports/figures/<notebook>/<configuration>/ (`.figure_dir()`), its caption shown;
  `.directory(explicit, default)` a run or sweep directory; `.write_metrics(metrics)` writes metrics.json and
  shows it as the closing table.
- `locomo_data(data_path=None)` → `LocomoData(source, conversations, report, stats)`;
  `locomo_figure(answers, judgments)` → (figure, caption); `import_answers(specs, out, data_path=None)`: other
  harnesses' answers into a LoCoMo run; `viewer_link(run_dir)` → a Markdown link to the run's viewer;
  `require_complete(result, allow_incomplete=False)`: stop on an incomplete run, or say it at the top.
- `natural_packages(source, directory, data_path=None, target=87, imported_stores=())` →
  `NaturalPackages(source, manifest, directory, packages, writers, data_path, unions)`: natural packages from
  LoCoMo or LongMemEval, with what differs between the two said once (`.writers`, `.joins_locomo`, `.without()`).
  `label_audit(packages, labels_csv, budgets)` → the rule labels against a filled audit frame, or None;
  `conversation_sizes(manifest, sweep_rows)` → conversation-scale packages' sizes and time to certified OPT.
- `graph80_profile_figure(corpus_dir)`; `longmemeval_path(data_path=None)`, `longmemeval_answers(run_dir)`;
  `audit_missing(audit_dir=None)` → None, or what a report says when the LoCoMo audit is not fetched.
- The report vocabulary by name, each imported on first use from the module that owns it (`_REPORTS` below):
  tables (`f1_table`, `j_table`, `ratio_table`, `natural_writer_table`, `comparison_table`, ...), figures with
  their captions (`budget_sweep_figure`, `validity_figure`, `natural_writers_figure`, `bridge_figure`, ...), and
  `shown_path`, `readable_frame`, `with_x100`.

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

__all__ = ["LocomoData", "LocomoRunConfig", "LongMemEvalConfig", "NaturalPackages", "Notebook", "StoredRun",
           "StudyConfig", "SweepConfig", "audit_missing", "check_parameters", "chosen_models", "conversation_sizes",
           "graph80_profile_figure", "import_answers", "label_audit", "load_run", "locomo_data", "locomo_figure",
           "longmemeval_answers", "longmemeval_path", "natural_packages", "notebook", "publish", "require_complete",
           "run_graph80", "run_locomo", "run_longmemeval", "show", "sweep", "trust", "viewer_link"]

_CONFIGS = {"LocomoRunConfig": "memeval.benchmarks.locomo.task", "LongMemEvalConfig": "memeval.benchmarks.longmemeval.task",
            "StudyConfig": "memeval.benchmarks.graph80.task", "SweepConfig": "memeval.memaudit.sweep"}
ROLES = ("answer", "judge", "extract")


def __getattr__(name: str) -> Any:
    if name in _CONFIGS:
        return getattr(importlib.import_module(_CONFIGS[name]), name)
    if name in _REPORTS:
        module, _, attribute = _REPORTS[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
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
    from memeval.llm.settings import ModelSettings

    config = _configured(StudyConfig, config, fields)
    config.validate()  # a bad setting is its one line before a client is made
    return run_study(config, checked_client(ModelSettings(llm, models or {}), role_temperatures(config), client))


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
    from memeval.answer_keys import answer_keys
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
    hooks = answer_keys(kind)
    if hooks is not None:
        answer_rows, judgment_rows = _keyed_rows(hooks, manifest, answer_rows, judgment_rows, key, ambiguous)
    elif key != "original" or ambiguous != "include":
        from memeval.engine.registry import title

        offered = ", ".join(title(k) for k in run_kinds() if answer_keys(k) is not None)
        raise InputError(rundir.manifest, "command", f"{kind!r}: an answer key applies to {offered} runs only")
    answers: dict[str, list] = {}
    for row in answer_rows:
        answers.setdefault(row.system, []).append(row)
    judgments: dict[str, dict[str, list]] = {}
    for row in judgment_rows:
        judgments.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
    directory = rundir.path
    return StoredRun(directory, kind, manifest, answers, judgments)


def _keyed_rows(hooks, manifest: dict, answers: list, judgments: list, key: str, ambiguous: str
                ) -> tuple[list, list]:
    """A run's rows under its benchmark's answer key (`hooks`: memeval.answer_keys.AnswerKeys), the key matched to
    the data the manifest names (the data memeval finds when that path is gone)."""
    from memeval.answer_keys import ORIGINAL

    if key == "original" and ambiguous == "include":
        return answers, ORIGINAL.judgments(judgments)
    keyed = hooks.for_run(manifest, key, ambiguous, {})
    return keyed.answers(answers), keyed.judgments(judgments, {a.sample_id: a.gold for a in answers})


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
    image, caption and Markdown, or what is missing); a str as Markdown; a PNG's Path as the image; a list or
    tuple item by item; anything else as IPython would."""
    from IPython.display import Image, Markdown, display

    if isinstance(obj, str):
        display(Markdown(obj))
        return
    if isinstance(obj, (list, tuple)):
        for item in obj:
            show(item, digits)
        return
    if isinstance(obj, Path) and obj.suffix == ".png":
        display(Image(filename=str(obj)))
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


# Reports: what a notebook shows, by name, imported on first use (see the module docstring's list).
_REPORTS = {
    "shown_path": "memeval.reports.summary:shown_path", "with_x100": "memeval.reports.summary:with_x100",
    "readable_frame": "memeval.reports.tables:readable_frame", "overall_mean": "memeval.scoring.aggregate:overall_mean",
    "incomplete_line": "memeval.rundir:incomplete_line", "read_rows": "memeval.jsonl:read_rows",
    "artifacts_root": "memeval.artifacts:artifacts_root", "figures_dir": "memeval.artifacts:figures_dir",
    "publication_metrics": "memeval.publication.publish:publication_metrics",
    # LoCoMo
    "f1_table": "memeval.benchmarks.locomo.tables:f1_table", "j_table": "memeval.benchmarks.locomo.tables:j_table",
    "latency_table": "memeval.benchmarks.locomo.tables:latency_table",
    "adversarial_table": "memeval.benchmarks.locomo.tables:adversarial_table",
    "EXTREMES_TIES": "memeval.benchmarks.locomo.tables:EXTREMES_TIES",
    "load_locomo_with_report": "memeval.benchmarks.locomo.data:load_locomo_with_report",
    "locomo_stats": "memeval.benchmarks.locomo.data:stats",
    "CATEGORY_COLUMNS": "memeval.benchmarks.locomo.data_tour:CATEGORY_COLUMNS",
    "category_table": "memeval.benchmarks.locomo.data_tour:category_table",
    "conversation_table": "memeval.benchmarks.locomo.data_tour:conversation_table",
    "quirk_table": "memeval.benchmarks.locomo.data_tour:quirk_table",
    "data_tour_figure": "memeval.benchmarks.locomo.data_tour:data_tour_figure",
    "category_counts": "memeval.benchmarks.locomo.report:category_counts",
    "prototype_table": "memeval.benchmarks.locomo.report:prototype_table",
    "per_question_table": "memeval.benchmarks.locomo.report:per_question_table",
    "evidence_recall_table": "memeval.benchmarks.locomo.report:evidence_recall_table",
    "recall_at_k_table": "memeval.benchmarks.locomo.report:recall_at_k_table",
    "recall_curve_means": "memeval.benchmarks.locomo.report:recall_curve_means",
    "f1_interval_table": "memeval.benchmarks.locomo.report:f1_interval_table",
    "paired_table": "memeval.benchmarks.locomo.report:paired_table",
    "judge_accounting_table": "memeval.benchmarks.locomo.report:judge_accounting_table",
    "extremes_table": "memeval.benchmarks.locomo.report:extremes_table",
    # MEMAUDIT
    "load_sweep_rows": "memeval.memaudit.sweep:load_sweep_rows",
    "STRESS_DISTRIBUTIONS": "memeval.memaudit.generators:STRESS_DISTRIBUTIONS",
    "ratio_table": "memeval.reports.memaudit:ratio_table",
    "invalidation_table": "memeval.reports.memaudit:invalidation_table",
    "published_comparison": "memeval.reports.memaudit:published_comparison",
    "certification_table": "memeval.reports.memaudit:certification_table",
    "heatmap_frame": "memeval.reports.memaudit:heatmap_frame", "frontier_gap": "memeval.reports.memaudit:frontier_gap",
    "vegetarian_package": "memeval.reports.memaudit:vegetarian_package",
    "memaudit_writer_table": "memeval.reports.memaudit:writer_table",
    # natural packages
    "PAPER_SOURCE": "memeval.reports.natural:PAPER_SOURCE",
    "reliability_table": "memeval.reports.natural:reliability_table",
    "natural_writer_table": "memeval.reports.natural:writer_table",
    "paper_comparison": "memeval.reports.natural:paper_comparison",
    "store_table": "memeval.reports.natural:store_table", "store_display": "memeval.reports.natural:store_display",
    "bottleneck_statements": "memeval.reports.natural:bottleneck_statements",
    "sensitivity_table": "memeval.reports.natural:sensitivity_table",
    "noise_display": "memeval.reports.natural:noise_display", "sizes_display": "memeval.reports.natural:sizes_display",
    "bridge_frame": "memeval.reports.natural:bridge_frame", "bridge_note": "memeval.reports.natural:bridge_note",
    "conversation_scope_metrics": "memeval.reports.natural:conversation_scope_metrics",
    "natural_metrics": "memeval.reports.natural:natural_metrics",
    "sensitivity": "memeval.natural.sensitivity:sensitivity",
    "write_audit_frame": "memeval.natural.audit:write_audit_frame",
    "bridge_pairs": "memeval.natural.bridge:bridge_pairs", "bridge_table": "memeval.natural.bridge:bridge_table",
    "build_longmemeval_directory": "memeval.benchmarks.longmemeval.natural_source:build_longmemeval_directory",
    "build_conversation_directory": "memeval.benchmarks.locomo.natural_build:build_conversation_directory",
    # graph80
    "write_corpus": "memeval.benchmarks.graph80.data:write_corpus",
    "comparison_table": "memeval.benchmarks.graph80.report:comparison_table",
    "published_reference": "memeval.benchmarks.graph80.report:published_reference",
    "diagnostics_table": "memeval.benchmarks.graph80.report:diagnostics_table",
    "stability_table": "memeval.benchmarks.graph80.report:stability_table",
    "extraction_table": "memeval.benchmarks.graph80.report:extraction_table",
    "lowest": "memeval.benchmarks.graph80.report:lowest",
    # LongMemEval
    "load_longmemeval": "memeval.benchmarks.longmemeval.data:load_longmemeval",
    "longmemeval_stats": "memeval.benchmarks.longmemeval.data:stats",
    "longmemeval_data_summary": "memeval.benchmarks.longmemeval.report:data_summary",
    # figures (publication/figures.py): a figure and its caption
    "budget_sweep_figure": "memeval.publication.figures:budget_sweep",
    "validity_figure": "memeval.publication.figures:validity",
    "natural_writers_figure": "memeval.publication.figures:natural_writers",
    "natural_stores_figure": "memeval.publication.figures:natural_stores",
    "bridge_figure": "memeval.publication.figures:bridge",
    "graph_study_figure": "memeval.publication.figures:graph_study",
    "longmemeval_recall_figure": "memeval.publication.figures:longmemeval_recall",
}


@dataclass(frozen=True)
class Notebook:
    """A notebook's run: its parameters checked, the directory its results go to (one per configuration, so a
    rerun with other parameters never touches another's), and where its own figures go."""

    name: str
    artifacts: Path  # the configuration directory (notebooks 00 and 07: the notebook's artifacts directory)
    figures_explicit: str | Path | None = None  # the `figures_dir` parameter

    def figure_dir(self) -> Path:
        """reports/figures/<notebook>/<configuration>/ (or under the `figures_dir` parameter), made here."""
        from memeval.artifacts import UNCONFIGURED, notebook_figures_dir

        configured = None if self.name in UNCONFIGURED else self.artifacts
        return notebook_figures_dir(self.figures_explicit, self.name, configured)

    def directory(self, explicit: str | Path | None, default: str) -> Path:
        """`explicit` (a `run_dir` or `sweep_dir` parameter) when given, else `default` in the configuration
        directory."""
        return Path(explicit) if explicit else self.artifacts / default

    def save_figure(self, fig: Any, name: str, caption: str | None = None) -> None:
        """`name`.pdf, .png (and .json, what each panel drew) in this configuration's figure directory, as the
        publication saves its own; prints where (as a report shows paths), then the caption in italics. Returns
        nothing, so a cell ending with it shows no repr."""
        from memeval.publication.style import save_figure
        from memeval.reports.summary import shown_path

        paths = save_figure(fig, name, self.figure_dir())
        print("figure:", *(shown_path(p) for p in paths))
        if caption:
            show(f"*{caption}*")

    def write_metrics(self, metrics: dict) -> None:
        """metrics.json in the configuration directory (what the publication and the tests read), then shown as
        the notebook's closing table."""
        from memeval.atomic import write_json_atomic
        from memeval.reports.summary import metrics_summary

        write_json_atomic(self.artifacts / "metrics.json", metrics)
        show(metrics_summary(metrics))


def notebook(name: str, namespace: dict) -> Notebook:
    """A notebook's first call, with its globals(): the parameters checked as the command line checks the same
    flags (a bad one is one line and creates nothing), the text papermill passed read in `namespace` itself as the
    value it spells (`"2,6"` → [2, 6]), then its configuration directory made under `artifacts_dir`."""
    from memeval.artifacts import UNCONFIGURED, artifacts_dir, notebook_parameters
    from memeval.notebook_config import configuration_dir
    from memeval.parameters import checked_parameters

    explicit = namespace.get("artifacts_dir")
    if name in UNCONFIGURED:
        given = {n: namespace[n] for n in notebook_parameters(name) if n in namespace}
        namespace.update(checked_parameters(name, given))
        directory = artifacts_dir(name, explicit)
    else:
        directory = configuration_dir(name, namespace, explicit)
    return Notebook(name, directory, namespace.get("figures_dir"))


def locomo_figure(answers: dict, judgments: dict) -> tuple:
    """(figure, caption): F1 and J per LoCoMo category of each system, as the publication's fig_locomo draws."""
    from memeval.benchmarks.locomo.categories import LOCOMO_CATEGORIES
    from memeval.publication import figures

    return figures.locomo(answers, judgments, LOCOMO_CATEGORIES)


@dataclass(frozen=True)
class LocomoData:
    """The LoCoMo file found and loaded: where, its conversations, what the loader repaired, and its counts."""

    source: Path
    conversations: list
    report: Any  # memeval.conversations.LoadReport
    stats: dict


def locomo_data(data_path: str | Path | None = None) -> LocomoData:
    """LoCoMo from `data_path` or the documented search order (memeval.data.paths.find_locomo)."""
    from memeval.benchmarks.locomo.data import load_locomo_with_report, stats
    from memeval.data.paths import find_locomo

    source = find_locomo(data_path)
    conversations, report = load_locomo_with_report(source)
    return LocomoData(source, conversations, report, stats(conversations))


def import_answers(specs: list[dict], out: str | Path, data_path: str | Path | None = None) -> list[str]:
    """Other harnesses' answers ({"source", "format", "system"} each) imported into run `out` beside the built-in
    systems, once: a system already imported there is left as it is. Returns (and prints) what each import said."""
    from memeval.benchmarks.locomo.imports import import_answers as imported
    from memeval.benchmarks.locomo.task import imported_systems

    said = []
    for spec in specs:
        if spec["system"] not in imported_systems(Path(out)):
            said.append(imported(spec["source"], spec["format"], spec["system"], Path(out), data_path))
            print(said[-1])
    return said


def require_complete(result: Any, allow_incomplete: bool = False) -> None:
    """Stop on a run a failed call, the budget or a plug-in left incomplete (its closing line), unless
    `allow_incomplete`: then say so at the top, since every table is over the rows that exist."""
    if result.complete:
        return
    if not allow_incomplete:
        raise RuntimeError(f"{result.closing_line()} (set allow_incomplete = True to report it anyway)")
    show(f"**{result.closing_line()}**: every table below is over the rows that exist.")


def viewer_link(run_dir: str | Path) -> str:
    """Write the run's per-question viewer (as `memeval view RUN_DIR`) and return a Markdown link to it, relative
    to the reports directory where the notebook's HTML is."""
    import os

    from memeval.artifacts import artifacts_root
    from memeval.reports.summary import shown_path
    from memeval.viewer import write_viewer

    viewer = write_viewer(run_dir)
    link = os.path.relpath(viewer, artifacts_root().parent)
    return (f"[Open the per-question viewer]({link}) (`{shown_path(viewer)}`; `memeval view RUN_DIR` writes "
            "the same page)")


@dataclass(frozen=True)
class NaturalPackages:
    """Natural MEMAUDIT packages built from one source: what differs between LoCoMo and LongMemEval, said once."""

    source: str  # "locomo" or "longmemeval"
    manifest: dict
    directory: Path
    packages: list
    writers: list[str]  # the writers a sweep of these packages runs (LongMemEval has no fact or summary candidates)
    data_path: str | Path | None
    unions: list[dict]  # what adding each imported store wrote (LoCoMo)

    @property
    def joins_locomo(self) -> bool:
        """Exported stores, the QA bridge and conversation-scale packages exist for LoCoMo packages only."""
        return self.source == "locomo"

    def without(self, what: str) -> str:
        """What the notebook says where a LongMemEval source has no `what` ("stores", "bridge", "conversations")."""
        return {"stores": "No exported stores for LongMemEval packages here (`memeval natural union --store` scores "
                          "your own).",
                "bridge": "The bridge joins LoCoMo QA runs; it is not drawn for LongMemEval packages.",
                "conversations": "Conversation-scale packages are built from LoCoMo only."}[what]


NATURAL_WRITERS = ["opt", "gvt", "estimated_gvt", "density_only", "greedy", "recency_raw", "fact_only",
                   "summary_only", "random"]


def natural_packages(source: str, directory: str | Path, data_path: str | Path | None = None, target: int = 87,
                     imported_stores: list[dict] = ()) -> NaturalPackages:
    """Build (or reuse) natural packages in `directory` from LoCoMo (`data_path` or the search order; other
    systems' exported stores added as union packages) or from a fetched LongMemEval file (`data_path` needed)."""
    from memeval.errors import InputError
    from memeval.natural.build import load_packages

    if source not in ("locomo", "longmemeval"):
        raise InputError("natural_packages", "source", f"{source!r}: expected locomo or longmemeval")
    directory = Path(directory)
    if source == "longmemeval":
        from memeval.benchmarks.longmemeval.natural_source import build_longmemeval_directory

        if not data_path:
            raise InputError("natural_packages", "data_path",
                             "source='longmemeval' needs data_path: the fetched LongMemEval file")
        manifest = build_longmemeval_directory(directory, data_path, target=target)
        writers = [w for w in NATURAL_WRITERS if w not in ("fact_only", "summary_only")]
        unions = []
    else:
        from memeval.benchmarks.locomo.natural_build import build_directory
        from memeval.natural.stores import union_from_store

        manifest = build_directory(directory, data_path, target=target)
        writers = list(NATURAL_WRITERS)
        unions = [union_from_store(directory, spec["store"], spec["format"], spec["system"], directory, data_path)
                  for spec in imported_stores]  # union packages beside the built-in stores; a sweep scores them all
    return NaturalPackages(source, manifest, directory, load_packages(directory), writers, data_path, unions)


def graph80_profile_figure(corpus_dir: str | Path) -> Any:
    """The first profile's person in the one-hop memory graph built from the corpus's gold triples."""
    from memeval.benchmarks.graph80.report import profile_figure
    from memeval.benchmarks.graph80.task import Graph80System, load_graph80
    from memeval.memory.base import SystemConfig

    documents, _, triples = load_graph80(Path(corpus_dir))
    system = Graph80System(SystemConfig("memory_graph", {"hops": 1}), documents, triples, "gold")
    return profile_figure(system.graph, documents[0]["title"].removeprefix("Profile: "))


def longmemeval_path(data_path: str | Path | None = None) -> Path:
    """The LongMemEval file: `data_path`, else where `memeval data fetch longmemeval --variant s` puts it."""
    from memeval.data.paths import project_root

    return Path(data_path) if data_path else project_root() / "data" / "longmemeval" / "longmemeval_s_cleaned.json"


def longmemeval_answers(run_dir: str | Path) -> list:
    """Every answer row a LongMemEval run wrote (its answers.jsonl), as records."""
    from memeval.benchmarks.longmemeval.task import LMEAnswerRow
    from memeval.records import read_records

    return read_records(Path(run_dir) / "answers.jsonl", LMEAnswerRow)


def audit_missing(audit_dir: str | Path | None = None) -> str | None:
    """None when the LoCoMo audit is fetched; else what a report says instead (where it looked, how to fetch)."""
    from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND, audit_path
    from memeval.benchmarks.locomo.audit.store import audit_dir as found_dir
    from memeval.reports.summary import shown_path

    if audit_path("errors", audit_dir) is not None:
        return None
    return (f"**The LoCoMo audit is not fetched** (looked in `{shown_path(found_dir(audit_dir))}`): fetch it with "
            f"`{FETCH_COMMAND}` and run this notebook again. Below are the runs on LoCoMo's original answer key only "
            "— no ceiling, no corrected or excluded key, no published runs.")


def label_audit(packages: list, labels_csv: str | Path | None, budgets: list) -> dict | None:
    """Rule labels against a filled audit frame (its verdict column): kappa, raw agreement and the re-scoring by
    budget; None without one."""
    if not labels_csv:
        return None
    from memeval.natural.audit import compare_sources, read_verdicts, rule_labels

    return compare_sources(packages, rule_labels(packages), read_verdicts(labels_csv), budgets)


def conversation_sizes(manifest: dict, sweep_rows: list) -> Any:
    """Conversation-scale packages' sizes (the build manifest's), with each one's median time to a certified OPT
    over the budgets swept."""
    import pandas as pd

    sizes = pd.DataFrame(manifest["sizes"]).T
    opt_rows = [r for r in sweep_rows if r.method == "opt"]
    sizes["time to certified OPT (s, median over budgets)"] = [
        float(pd.Series([r.runtime_s for r in opt_rows if r.package_id == pid]).median()) for pid in sizes.index]
    return sizes
