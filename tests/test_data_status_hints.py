"""`memeval data status` names, under every data set with a file missing or not checking out, the one command that
fetches it (the data set's declared name), and says nothing of one whose files are all in place."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from memeval.commands.data import data_sets


def _status(tmp_path: Path) -> list[str]:
    env = {**os.environ, "MEMEVAL_LOCOMO_PLUS_DIR": str(tmp_path / "plus"),
           "MEMEVAL_LOCOMO_AUDIT_DIR": str(tmp_path / "audit"), "MEMEVAL_PROTOCOLS_DIR": str(tmp_path / "protocols")}
    done = subprocess.run([sys.executable, "-m", "memeval", "data", "status"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_every_unfetched_data_set_gets_its_fetch_line(tmp_path):
    lines = _status(tmp_path)
    watched = {d.name: d for d in data_sets() if d.status}
    assert {"locomo-plus", "protocols", "locomo-audit"} <= set(watched)
    for name, declared in watched.items():
        hint = f"  {len(declared.files)} of {len(declared.files)} not usable; `memeval data fetch {name}` fetches them"
        assert lines.count(hint) == 1, (hint, lines)


def test_a_stored_file_that_is_not_the_pinned_one_gets_the_fetch_line_too(tmp_path):
    plus = next(d for d in data_sets() if d.name == "locomo-plus")
    folder = tmp_path / "plus"
    folder.mkdir()
    for file in plus.files:
        (folder / file.name).write_bytes(b"x")
        assert file.sha256 != hashlib.sha256(b"x").hexdigest()
    lines = _status(tmp_path)
    assert sum("not the pinned file" in line for line in lines) == len(plus.files)
    assert lines.count(f"  {len(plus.files)} of {len(plus.files)} not usable; `memeval data fetch locomo-plus` "
                       "fetches them") == 1
