"""A resumed run's bar counts the rows an earlier run finished but leaves them out of its rate: a rerun with every
question done shows `?q/s`, never every earlier row over a millisecond (a trial saw "508400 q/s")."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from memeval.progress import ProgressBar

RATE = re.compile(r"([\d.?]+)q/s")


def test_a_bar_with_everything_done_before_shows_the_count_and_no_rate(capsys, monkeypatch):
    monkeypatch.setenv("MEMEVAL_PROGRESS", "1")
    with ProgressBar(40, "answers", "q", done=40):
        pass
    shown = capsys.readouterr().err
    assert "40/40" in shown
    assert set(RATE.findall(shown)) == {"?"}, shown


def test_a_rerun_with_every_question_answered_shows_no_rate(locomo_dir, tmp_path):
    env = {**os.environ, "MEMEVAL_PROGRESS": "1", "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26",
            "--questions", "first:6", "--systems", "no_memory", "--out", str(tmp_path / "run")]
    runs = [subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    first, again = (RATE.findall(r.stderr.replace("\r", "\n")) for r in runs)
    assert any(rate != "?" for rate in first), runs[0].stderr  # the bar is drawn and a rate shown when work is done
    assert again and set(again) == {"?"}, runs[1].stderr
