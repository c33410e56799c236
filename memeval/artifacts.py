"""Where every notebook and command stores what: the one index of stored results.

Notebooks write under `<artifacts root>/<notebook>/...` (the root is reports/artifacts, or DIR/artifacts under
`memeval reproduce --out DIR`); the publication reads the same paths from here. Folder names are only ever
written from this index, never decoded back into settings: what produced a directory is in its manifest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memeval.data.paths import project_root


@dataclass(frozen=True)
class Artifact:
    notebook: str  # the notebook that writes it
    path: str  # inside that notebook's artifacts directory ("" for the directory itself)
    what: str
    command: str  # the command that writes the same files


ARTIFACTS: dict[str, Artifact] = {
    "prototype_run": Artifact("01_prototype_scoring", "run", "LoCoMo prototype run (20 questions of conv-26)",
                              "memeval locomo run --conversations conv-26 --questions prototype"),
    "locomo_run": Artifact("02_full_run", "run", "LoCoMo run with the extractive (no-LLM) reader",
                           "memeval locomo run"),
    "locomo_run_claude": Artifact("02_full_run", "run_claude", "LoCoMo run with the Claude reader and judges",
                                  "memeval locomo run --answerer claude --judge graded"),
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
}


def reader_run(answerer: str) -> str:
    """The run directory name notebooks 01 and 02 use per reader: one reader per run directory."""
    return "run" if answerer == "extractive" else f"run_{answerer}"


def stored(key: str, root: str | Path | None = None) -> Path:
    """Where artifact `key` lives under the artifacts root."""
    artifact = ARTIFACTS[key]
    return artifacts_root(root) / artifact.notebook / artifact.path


def figures_dir(explicit: str | Path | None = None) -> Path:
    path = Path(explicit or os.environ.get("MEMEVAL_FIGURES") or project_root() / "figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def notebook_figures_dir(explicit: str | Path | None = None) -> Path:
    """Where notebooks 00–06 save their own images: beside the reports (reports/figures), so that figures/
    holds only the publication set that notebook 07 and `memeval publish` write."""
    path = Path(explicit) if explicit else artifacts_root().parent / "figures"
    path.mkdir(parents=True, exist_ok=True)
    return path


def artifacts_root(explicit: str | Path | None = None) -> Path:
    """Where notebooks keep their results: `memeval reproduce --out DIR` points it at DIR/artifacts."""
    return Path(explicit or os.environ.get("MEMEVAL_ARTIFACTS") or project_root() / "reports" / "artifacts")


def artifacts_dir(name: str, explicit: str | Path | None = None) -> Path:
    path = Path(explicit) if explicit else artifacts_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
