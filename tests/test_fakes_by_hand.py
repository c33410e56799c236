"""The fake servers started as a user starts them (`python -m tests.fake_anthropic`, `python -m tests.fake_openai`,
from the repository root), their printed exports given to `memeval` in another process: one real SDK call each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MEMEVAL = Path(sys.executable).with_name("memeval")


def _start(module: str, *flags: str) -> tuple[subprocess.Popen, dict[str, str], list[str]]:
    """The fake as a subprocess; the variables its `export` lines name, and every line it printed."""
    fake = subprocess.Popen([sys.executable, "-m", module, *flags], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    for line in fake.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("then "):
            break
    exports = dict(line.strip().removeprefix("export ").split("=", 1) for line in lines
                   if line.strip().startswith("export "))
    return fake, exports, lines


def _stop(fake: subprocess.Popen) -> int:
    fake.terminate()
    return fake.wait(timeout=30)


def _locomo(tmp_path: Path, env_vars: dict[str, str], *flags) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(env_vars, MEMEVAL_CACHE_DIR=str(tmp_path / "cache"), MEMEVAL_PROGRESS="0")
    return subprocess.run([str(MEMEVAL), "locomo", "run", "--conversations", "conv-26", "--questions", "first:1",
                           "--systems", "rag_turns", "--reader", "claude", *flags, "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("module, flags, names", [
    ("tests.fake_anthropic", (), ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]),
    ("tests.fake_openai", ("--llm", "openai"), ["OPENAI_BASE_URL", "OPENAI_API_KEY"]),
])
def test_a_fake_started_by_hand_answers_a_run(module, flags, names, tmp_path, locomo_dir):
    fake, exports, printed = _start(module, "--reply", "7 May 2023")
    try:
        assert sorted(exports) == sorted(names), printed
        assert exports[names[0]].startswith("http://127.0.0.1:"), "only the loopback interface"
        done = _locomo(tmp_path, {**exports, "MEMEVAL_DATA_LOCOMO": str(locomo_dir)}, *flags)
        assert done.returncode == 0, done.stderr
    finally:
        assert _stop(fake) == 0, "stopped by a signal, it closes its socket and exits 0"
    answers = [json.loads(line) for line in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    assert [a["prediction"] for a in answers] == ["7 May 2023"] and answers[0]["error"] is None


def test_the_port_is_checked_and_a_taken_port_is_one_line(tmp_path):
    fake, exports, _ = _start("tests.fake_anthropic")
    try:
        port = exports["ANTHROPIC_BASE_URL"].rsplit(":", 1)[1]
        taken = subprocess.run([sys.executable, "-m", "tests.fake_openai", "--port", port], cwd=ROOT,
                               capture_output=True, text=True, timeout=60)
    finally:
        _stop(fake)
    assert taken.returncode == 2 and taken.stderr.strip().splitlines() == [
        f"python -m tests.fake_openai: error: cannot listen on 127.0.0.1:{port}: Address already in use"]
    bad = subprocess.run([sys.executable, "-m", "tests.fake_openai", "--port", "70000"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "expected 0-65535" in bad.stderr
