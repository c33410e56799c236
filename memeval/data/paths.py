"""Where the LoCoMo data is looked for, in a fixed and documented order."""

from __future__ import annotations

import os
from pathlib import Path

from memeval.errors import DataNotFoundError

FETCH_HINT = "memeval data fetch locomo --dest data/locomo"


def project_root() -> Path:
    """The checkout holding this package (its parent has pyproject.toml), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def _has_data(path: Path) -> bool:
    if path.is_file():
        return True
    return path.is_dir() and any(path.iterdir())


def candidate_locations(explicit: str | Path | None = None) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    if explicit:
        found.append(("--data", Path(explicit)))
    env = os.environ.get("MEMEVAL_DATA_LOCOMO")
    if env:
        found.append(("MEMEVAL_DATA_LOCOMO", Path(env)))
    root = project_root()
    for base in dict.fromkeys([Path.cwd(), root]):
        found.append(("data/locomo", base / "data" / "locomo"))
    for base in dict.fromkeys([Path.cwd(), root]):
        found.append(("../shared/data/locomo", base.parent / "shared" / "data" / "locomo"))
    return found


def find_locomo(explicit: str | Path | None = None) -> Path:
    """--data, then MEMEVAL_DATA_LOCOMO, then data/locomo/, then ../shared/data/locomo/."""
    locations = candidate_locations(explicit)
    if explicit:
        path = Path(explicit)
        if not path.exists():
            raise DataNotFoundError(f"--data {path}: does not exist; fetch the data with `{FETCH_HINT}`")
        return path
    for _, path in locations:
        if _has_data(path):
            return path
    tried = ", ".join(str(p) for _, p in locations)
    raise DataNotFoundError(f"no LoCoMo data found (looked in {tried}); pass --data PATH, set MEMEVAL_DATA_LOCOMO, "
                            f"or fetch it with `{FETCH_HINT}`")
