"""`memeval ls` with no folder looks where runs are: the notebooks' artifacts and ./runs (where the README's
`--out runs/...` puts them); finding nothing there, it says which folder to name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _ls(cwd: Path) -> str:
    env = {**os.environ, "MEMEVAL_ARTIFACTS": str(cwd / "artifacts")}
    done = subprocess.run([sys.executable, "-m", "memeval", "ls"], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ls_without_a_folder_lists_the_runs_under_runs(tmp_path):
    run = tmp_path / "runs" / "mine"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"command": "locomo run", "complete": True}))
    shown = _ls(tmp_path)
    assert "runs/mine" in shown and "locomo run" in shown, shown


def test_ls_finding_nothing_says_which_folder_to_name(tmp_path):
    shown = _ls(tmp_path)
    assert shown.startswith("no results (no manifest.json) under ") and "artifacts" in shown
    assert shown.rstrip().endswith("name the folder your runs are in: memeval ls runs/"), shown
