"""Readers of stored results for the publication: every path comes from the artifact index
(memeval/artifacts.py), and a missing input raises MissingResults naming the notebook that writes it. A
benchmark's own readers (a LoCoMo run, the graph80 study) are in its folder's publication.py."""

from __future__ import annotations

import json
from pathlib import Path

from memeval.artifacts import ARTIFACTS, stored
from memeval.records import SweepRow, load_sweep_rows
from memeval.rundir import RunDir


class MissingResults(FileNotFoundError):
    pass


def need_input(path: Path, notebook: str) -> Path:
    if not path.exists():
        raise MissingResults(f"{path} is missing: execute notebook {notebook} first (make reproduce)")
    return path


def artifact(key: str, root: Path, *parts: str) -> Path:
    """The stored path of artifact `key` (and a file inside it), which must exist."""
    return need_input(stored(key, root).joinpath(*parts), ARTIFACTS[key].notebook)


def read_json(key: str, root: Path, name: str) -> dict:
    return json.loads(artifact(key, root, name).read_text())


def base_sweep_summary(root: Path) -> dict:
    return read_json("base_sweep", root, "summary.json")


def base_sweep_rows(root: Path) -> list[SweepRow]:
    return load_sweep_rows(artifact("base_sweep", root, "raw_results.jsonl"))


def answer_model(run: Path) -> str | None:
    """The answer model a run's manifest records (None for the extractive reader)."""
    path = RunDir(run).manifest
    if not path.is_file():
        return None
    roles = (json.loads(path.read_text()).get("llm") or {}).get("roles") or {}
    return (roles.get("answer") or {}).get("model")


def stress_summaries(root: Path) -> dict[str, dict]:
    """Notebook 04's sweep summaries by the distribution their manifests record (each with its `directory`)."""
    base = artifact("stress_sweeps", root)
    dirs = sorted(p.parent for p in base.glob("*/manifest.json") if (p.parent / "summary.json").is_file())
    if not dirs:
        raise MissingResults(f"no sweep under {base}: execute notebook {ARTIFACTS['stress_sweeps'].notebook} first")
    out = {}
    for d in dirs:
        config = json.loads(RunDir(d).manifest.read_text()).get("config", {})
        out[config.get("distribution")] = {**json.loads((d / "summary.json").read_text()), "directory": d}
    return out


def natural_summary(root: Path) -> dict:
    return read_json("natural_sweep", root, "summary.json")


def natural_raw_rows(root: Path) -> list[SweepRow]:
    return load_sweep_rows(artifact("natural_sweep", root, "raw_results.jsonl"))


def natural_qa_run(root: Path) -> Path:
    return artifact("natural_qa_run", root)
