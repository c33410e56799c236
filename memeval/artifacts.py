"""Where every notebook and command stores what: the one index of stored results.

Notebooks write under `<artifacts root>/<notebook>/<configuration>/...` (the root is reports/artifacts, or
DIR/artifacts under `memeval reproduce --out DIR`). Each configuration a notebook runs gets its own directory —
a readable name (`paper`, or the parameters that differ from the notebook's committed defaults) and a short
hash of all its parameters — so a rerun with other parameters never touches another configuration's results.
A parameter added to a notebook later (`ADDED_PARAMETERS`: the model choices) is hashed only when set away from
its default, so adding it renamed no existing directory.
The publication reads the paper's configuration (the notebook's committed defaults) when it exists, else the
newest configuration present, and says which. Folder names are only ever written from this index, never
decoded back into settings: what produced a directory is in its manifest.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from memeval.data.paths import project_root


@dataclass(frozen=True)
class Artifact:
    notebook: str  # the notebook that writes it
    path: str  # inside that notebook's artifacts directory ("" for the directory itself)
    what: str
    command: str  # the command that writes the same files
    overrides: dict = field(default_factory=dict)  # parameters that differ from the paper's configuration


ARTIFACTS: dict[str, Artifact] = {
    "prototype_run": Artifact("01_prototype_scoring", "run", "LoCoMo prototype run (20 questions of conv-26)",
                              "memeval locomo run --conversations conv-26 --questions prototype"),
    "locomo_run": Artifact("02_full_run", "run", "LoCoMo run with the extractive (no-LLM) reader",
                           "memeval locomo run"),
    "locomo_run_claude": Artifact("02_full_run", "run", "LoCoMo run with the Claude reader and judges",
                                  "memeval locomo run --reader claude --judge graded",
                                  overrides={"answerer": "claude", "judge": "graded"}),
    "base_sweep": Artifact("03_memaudit_small", "sweep", "MEMAUDIT-Small base sweep", "memeval memaudit sweep small"),
    "stress_sweeps": Artifact("04_memaudit_validity", "", "one sweep directory per stress distribution",
                              "memeval memaudit sweep small --distribution NAME"),
    "natural_packages": Artifact("05_memaudit_natural87", "packages", "LoCoMo-Natural-87 packages and unions",
                                 "memeval natural build"),
    "natural_sweep": Artifact("05_memaudit_natural87", "sweep", "natural packages swept",
                              "memeval memaudit sweep natural"),
    "natural_qa_run": Artifact("05_memaudit_natural87", "qa_run", "the offline QA run the bridge joins",
                               "memeval locomo run --systems observations,summaries,rag_turns"),
    "graph_corpus": Artifact("06_memory_graph_study", "graph80", "the graph80 corpus", "memeval graph80 generate"),
    "graph_study": Artifact("06_memory_graph_study", "run", "the graph80 study", "memeval graph80 run"),
    "publication": Artifact("07_publication", "", "publication metrics", "memeval publish"),
    "longmemeval_run": Artifact("08_longmemeval", "run", "LongMemEval run (data fetched by the user)",
                                "memeval longmemeval run"),
    "longmemeval_packages": Artifact("08_longmemeval", "packages", "natural packages from LongMemEval",
                                     "memeval natural build --source longmemeval"),
    "trust": Artifact("09_trust", "trust", "how far the table can be trusted (trust.md, trust.json; the audit's "
                      "published runs under published/)", "memeval locomo trust RUN_DIR --published --out DIR"),
}


NOT_CONFIGURATION = frozenset({"artifacts_dir", "figures_dir", "run_dir", "sweep_dir", "jobs", "allow_incomplete"})
UNCONFIGURED = frozenset({"00_data_tour", "07_publication"})  # they store no results of their own configuration

# Parameters a notebook gained after results were stored under its configuration names, with the default each
# was added at. They are part of the configuration (a model changes the results), but at that default they are
# left out of its hash, so every directory named before they existed keeps its name; set to anything else, they
# enter the hash and the readable name (`answer_model=claude-haiku-4-5-<hash>`). Notebook 08's answer_model,
# judge_model and llm were there from its start and are hashed like any other parameter.
ADDED_PARAMETERS: dict[str, dict[str, object]] = {
    notebook: {"llm": "auto", "answer_model": None, "judge_model": None, "extract_model": None}
    for notebook in ("01_prototype_scoring", "02_full_run", "06_memory_graph_study")
}


@lru_cache(maxsize=None)
def notebook_parameters(notebook: str) -> dict:
    """The committed defaults of a notebook's parameters cell (the paper's configuration), or {} when the
    notebook is not beside the package."""
    from memeval.data.paths import project_root

    path = project_root() / "notebooks" / f"{notebook}.ipynb"
    if not path.is_file():
        return {}
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        return {}
    values = {}
    for node in ast.parse("".join(cell["source"])).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def configuration_parameters(notebook: str, namespace: dict) -> dict:
    """The values in `namespace` (a notebook's globals) of the parameters that name its configuration."""
    names = [n for n in notebook_parameters(notebook) if n not in NOT_CONFIGURATION]
    return {n: namespace.get(n) for n in names}


def configuration_name(notebook: str, values: dict) -> str:
    """`paper-<hash>` for the committed defaults, else the differing parameters and the hash, e.g.
    `seeds=50,budgets=3+6-1f0c2a9b4e`."""
    from memeval.rundir import identity_hash

    paper = {n: v for n, v in notebook_parameters(notebook).items() if n not in NOT_CONFIGURATION}
    added = ADDED_PARAMETERS.get(notebook, {})
    digest = identity_hash({n: v for n, v in values.items() if not (n in added and v == added[n])})
    differing = [f"{n}={_short(values[n])}" for n in values if paper.get(n) != values[n]]
    readable = ",".join(differing) if differing else "paper"
    readable = re.sub(r"[^A-Za-z0-9=,._+-]", "_", readable)[:60].strip("_") or "config"
    return f"{readable}-{digest}"


def _short(value) -> str:
    if isinstance(value, (list, tuple)):
        return "+".join(_short(v) for v in value) if len(value) <= 4 else f"{len(value)}items"
    if isinstance(value, dict):
        return f"{len(value)}keys"
    return str(value)


def paper_configuration(notebook: str, overrides: dict | None = None) -> str:
    values = {n: v for n, v in notebook_parameters(notebook).items() if n not in NOT_CONFIGURATION}
    return configuration_name(notebook, {**values, **(overrides or {})})


def stored_configuration(key: str, root: str | Path | None = None) -> tuple[Path, str]:
    """(the configuration directory the publication reads for `key`, which one it is): the paper's when it
    exists, else the newest configuration that holds the artifact."""
    artifact = ARTIFACTS[key]
    base = artifacts_root(root) / artifact.notebook
    if artifact.notebook in UNCONFIGURED:
        return base, "unconfigured"
    paper = base / paper_configuration(artifact.notebook, artifact.overrides)
    if (paper / artifact.path).exists():
        return paper, "the paper's configuration (the notebook's defaults" + (
            ", with " + ", ".join(f"{k}={v}" for k, v in artifact.overrides.items()) if artifact.overrides else "") \
            + ")"
    if artifact.overrides:
        return paper, "absent"
    present = [d for d in base.glob("*-*") if d.is_dir() and (d / artifact.path).exists()
               and REPLACED_MARK not in d.name]
    if not present:
        return paper, "absent"
    newest = max(present, key=lambda d: (d / artifact.path).stat().st_mtime)
    return newest, f"not the paper's configuration: {newest.name} (the newest present)"


REPLACED_MARK = ".replaced-"


def stored(key: str, root: str | Path | None = None) -> Path:
    """Where artifact `key` lives under the artifacts root (see `stored_configuration`)."""
    return stored_configuration(key, root)[0] / ARTIFACTS[key].path


def figures_dir(explicit: str | Path | None = None) -> Path:
    path = Path(explicit or os.environ.get("MEMEVAL_FIGURES") or project_root() / "figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def notebook_figures_dir(explicit: str | Path | None = None, notebook: str | None = None,
                         configuration: str | Path | None = None) -> Path:
    """Where a notebook (00–06, 08) saves its own images: beside the reports (reports/figures, or `explicit`), so
    that figures/ holds only the publication set that notebook 07 and `memeval publish` write; and there in a
    directory per notebook and configuration (`configuration`: its configuration directory or that directory's
    name), like its results, so a rerun with other parameters never overwrites the paper configuration's images."""
    path = Path(explicit) if explicit else artifacts_root().parent / "figures"
    if notebook:
        path = path / notebook
        if configuration:
            path = path / Path(configuration).name
    path.mkdir(parents=True, exist_ok=True)
    return path


def artifacts_root(explicit: str | Path | None = None) -> Path:
    """Where notebooks keep their results: `memeval reproduce --out DIR` points it at DIR/artifacts."""
    return Path(explicit or os.environ.get("MEMEVAL_ARTIFACTS") or project_root() / "reports" / "artifacts")


def artifacts_dir(name: str, explicit: str | Path | None = None) -> Path:
    path = Path(explicit) if explicit else artifacts_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
