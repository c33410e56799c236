"""Where the LoCoMo data is looked for, in a fixed and documented order."""

from __future__ import annotations

import os
from pathlib import Path

from memeval.errors import DataNotFoundError

FETCH_HINT = "memeval data fetch locomo --dest data/locomo"
ENV = "MEMEVAL_DATA_LOCOMO"


def project_root() -> Path:
    """The checkout holding this package (its parent has pyproject.toml), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def data_folder(explicit: str | Path | None, env: str, name: str) -> Path:
    """Where fetched or registered files of one kind live: the flag, then the environment variable `env`, then
    data/`name` of the checkout (git-ignored: data/*)."""
    if explicit:
        return Path(explicit)
    if os.environ.get(env):
        return Path(os.environ[env])
    return project_root() / "data" / name


def _has_data(path: Path) -> bool:
    return _missing(path) is None


def _missing(path: Path) -> str | None:
    """Why `path` holds no data (None: it may; the loader decides)."""
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return None if any(path.iterdir()) else "is an empty directory"
        return "is not a file or directory" if path.exists() else "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"


def candidate_locations(explicit: str | Path | None = None) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    if explicit:
        found.append(("--data", Path(explicit)))
    env = os.environ.get(ENV)
    if env:
        found.append((ENV, Path(env)))
    root = project_root()
    for base in dict.fromkeys([Path.cwd(), root]):
        found.append(("data/locomo", base / "data" / "locomo"))
    for base in dict.fromkeys([Path.cwd(), root]):
        found.append(("../shared/data/locomo", base.parent / "shared" / "data" / "locomo"))
    return found


def find_locomo(explicit: str | Path | None = None) -> Path:
    """--data, then MEMEVAL_DATA_LOCOMO, then data/locomo/, then ../shared/data/locomo/. A location the user named
    (the flag, or the variable when set and not empty) that holds nothing is an error, never passed over for data
    found elsewhere."""
    locations = candidate_locations(explicit)
    if explicit:
        path = Path(explicit)
        if not path.exists():
            raise DataNotFoundError(f"--data {path}: does not exist; fetch the data with `{FETCH_HINT}`")
        return path
    named = next((path for source, path in locations if source == ENV), None)
    problem = _missing(named) if named is not None else None
    if problem is not None:
        raise DataNotFoundError(f"{ENV}={named}: {problem}; point it at the LoCoMo data, unset it, or fetch the "
                                f"data with `{FETCH_HINT}`")
    for _, path in locations:
        if _has_data(path):
            return path
    tried = ", ".join(str(p) for _, p in locations)
    raise DataNotFoundError(f"no LoCoMo data found (looked in {tried}); pass --data PATH, set MEMEVAL_DATA_LOCOMO, "
                            f"or fetch it with `{FETCH_HINT}`")
