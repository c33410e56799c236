"""Run manifests: what produced a results directory (code, packages, data, seeds, solvers)."""

from __future__ import annotations

import platform
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version

from memeval.data.paths import project_root

TRACKED_PACKAGES = ("memeval", "numpy", "scipy", "cvxpy", "highspy", "pandas", "nltk", "bm25s", "scikit-learn",
                    "networkx", "anthropic", "joblib")


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_root(), capture_output=True, text=True,
                             timeout=5)
        sha = out.stdout.strip()
        if not sha:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=project_root(),
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions(names=TRACKED_PACKAGES) -> dict[str, str | None]:
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def base_manifest(command_line: Sequence[str] | None = None, **extra) -> dict:
    """`command_line`: the equivalent `memeval ...` invocation of the resolved configuration (recorded with
    the process argv, see memeval/invocation.py)."""
    from memeval.invocation import invocation

    return {
        **(invocation(command_line) if command_line is not None else {}),
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_sha": git_sha(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "package_versions": package_versions(),
        **extra,
    }
