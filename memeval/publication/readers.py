"""Readers of stored results for the publication: every path comes from the artifact index
(memeval/artifacts.py), and a missing input raises MissingResults naming the notebook that writes it."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from memeval.artifacts import ARTIFACTS, stored
from memeval.records import AnswerRow, JudgmentRow, SweepRow, read_records
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
    return read_records(artifact("base_sweep", root, "raw_results.jsonl"), SweepRow)


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
    return read_records(artifact("natural_sweep", root, "raw_results.jsonl"), SweepRow)


def natural_qa_run(root: Path) -> Path:
    return artifact("natural_qa_run", root)


def graph_study_summary(root: Path) -> dict:
    return read_json("graph_study", root, "summary.json")


def _final_answers(path: Path) -> list[AnswerRow]:
    """answers.jsonl read once per version of the file (a full run's is tens of MB and every LoCoMo figure and
    table reads it)."""
    stat = path.stat()
    return _final_answers_cached(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _final_answers_cached(path: str, mtime_ns: int, size: int) -> list[AnswerRow]:
    from memeval.records import load_answers

    return load_answers(Path(path))


def locomo_run_dir(root: Path) -> Path:
    """The judged (Claude-reader) run of notebook 02 when it holds any answer, else the offline run (a judged
    run whose every call failed — no key and no cache — is no result to publish)."""
    judged = stored("locomo_run_claude", root)
    if RunDir(judged).answers.exists() and any(r.final for r in _final_answers(RunDir(judged).answers)):
        return judged
    return stored("locomo_run", root)


def locomo_answers(run: Path) -> dict[str, list[AnswerRow]]:
    """The latest answer row per question of a stored LoCoMo run, by system."""
    by_system: dict[str, list[AnswerRow]] = {}
    for row in _final_answers(need_input(RunDir(run).answers, ARTIFACTS["locomo_run"].notebook)):
        by_system.setdefault(row.system, []).append(row)
    return by_system


def locomo_judgments(run: Path) -> dict[str, dict[str, list[JudgmentRow]]]:
    """protocol → system → one judgment per question (a run may hold graded and binary judgments side by
    side: they are never pooled)."""
    from memeval.records import load_judgments

    out: dict[str, dict[str, list[JudgmentRow]]] = {}
    for row in load_judgments(RunDir(run).judgments):
        out.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
    return out
