"""Where notebooks and commands put figures and small artifacts, and how metrics are written."""

from __future__ import annotations

import os
from pathlib import Path

from memeval.data.paths import project_root


def figures_dir(explicit: str | Path | None = None) -> Path:
    path = Path(explicit or os.environ.get("MEMEVAL_FIGURES") or project_root() / "figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def artifacts_root(explicit: str | Path | None = None) -> Path:
    """Where notebooks keep their results: `memeval reproduce --out DIR` points it at DIR/artifacts."""
    return Path(explicit or os.environ.get("MEMEVAL_ARTIFACTS") or project_root() / "reports" / "artifacts")


def artifacts_dir(name: str, explicit: str | Path | None = None) -> Path:
    path = Path(explicit) if explicit else artifacts_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


