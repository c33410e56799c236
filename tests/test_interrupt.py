"""Ctrl-C ends the process, not only the run: calls in flight on worker threads held the interpreter's exit until
their read timeouts ran out (two of 120 s in a trial), while `memeval ls` already showed the run as not running."""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def _ctrl_c_reaches_it() -> None:
    """In the child before it runs: Ctrl-C's default action, so the interpreter installs its KeyboardInterrupt
    handler. A shell starts a background job (`pytest ... &`) with SIGINT ignored, which the child would inherit and
    never be interrupted: these tests send the signal themselves, whatever started pytest."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_held_requests_ends_the_process_at_once(fake, locomo_dir, tmp_path):
    release = threading.Event()
    fake.responder = lambda body: (release.wait(300), "7 May 2023")[1]
    out = tmp_path / "run"
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                             "--conversations", "conv-26", "--questions", "first:4", "--systems", "rag_turns",
                             "--reader", "claude", "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_ctrl_c_reaches_it)
    try:
        deadline = time.monotonic() + 120
        while not fake.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake.received, "no request reached the server"
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)  # the held calls' read timeout is 120 s
        except subprocess.TimeoutExpired:
            raise AssertionError("still running 60 s after Ctrl-C: it waits for the calls in flight") from None
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "memeval: interrupted" in err and "Traceback" not in err
    assert not (out / ".memeval.lock").exists()
    assert json.loads((out / "manifest.json").read_text())["complete"] is False


# ---- --llm local: a CPU server holding one call for a minute ------------------------------------------------------
# The trial behind issue 42: one 24k-token call ran for minutes on `memeval serve-local`, and Ctrl-C took over 10 s
# to stop the run (the judge stage awaited its calls in flight). The fake server answers the first ANSWERED calls at
# once and holds every later one for a minute, as that server did.

import pytest  # noqa: E402

from tests.fake_openai import FakeOpenAI  # noqa: E402

HOLD_S = 60.0
STOP_WITHIN_S = 2.0


def _memeval_local(server, tmp_path, out, *extra) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(OPENAI_BASE_URL=server.url, MEMEVAL_CACHE_DIR=str(tmp_path / "cache"), MEMEVAL_PROGRESS="1")
    return subprocess.Popen([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(_locomo()),
                             "--conversations", "conv-26,conv-30", "--questions", "first:2", "--systems", "rag_turns",
                             "--reader", "claude", "--llm", "local", "--answer-model", "m", *extra, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_ctrl_c_reaches_it)


def _locomo():
    from tests.conftest import SHARED_LOCOMO

    return SHARED_LOCOMO


def _whole_lines(path) -> list[dict]:
    """Every line of a run's JSONL file parses and ends with its newline (nothing half-written)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"{path.name} ends in a torn line"
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _stop(server, tmp_path, signum, answered: int, *extra) -> tuple[subprocess.Popen, str, float]:
    """Start the run, wait until a held call is in flight, send `signum`; (process, stderr, seconds to exit)."""
    hold = threading.Event()
    server.responder = lambda body: (hold.wait(HOLD_S) if len(server.received) > answered else None, "7 May 2023")[1]
    proc = _memeval_local(server, tmp_path, tmp_path / "run", *extra)
    try:
        deadline = time.monotonic() + 120
        while len(server.received) <= answered and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(server.received) > answered, "no held call reached the server"
        time.sleep(1.0)  # the call is in flight, the run waits on it
        sent = time.monotonic()
        proc.send_signal(signum)
        try:
            _, err = proc.communicate(timeout=HOLD_S - 10)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {HOLD_S - 10:.0f} s after the signal") from None
        return proc, err, time.monotonic() - sent
    finally:
        hold.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "memeval: interrupted"),
                                                (signal.SIGTERM, 143, "memeval: terminated (SIGTERM)")])
def test_a_local_run_stops_within_two_seconds_whole_and_resumable(tmp_path, signum, code, said):
    with FakeOpenAI(local=True) as server:
        proc, err, took = _stop(server, tmp_path, signum, answered=2)
        assert proc.returncode == code, err
        assert took < STOP_WITHIN_S, f"{took:.1f} s from the signal to the exit"
        assert said in err and "Traceback" not in err, err
        out = tmp_path / "run"
        rows = _whole_lines(out / "answers.jsonl")
        assert [(r["conversation_id"], r["error"]) for r in rows] == [("conv-26", None)] * 2, \
            "conv-26's answers, back before the hold, were written; the dropped calls left no row behind"
        assert not (out / ".memeval.lock").exists()
        assert json.loads((out / "manifest.json").read_text())["complete"] is False
        first = len(server.received)

        server.responder = lambda body: "7 May 2023"
        rerun = _memeval_local(server, tmp_path, out)
        _, rerun_err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, rerun_err
    assert len(server.received) - first == 2, "the rerun sent only conv-30's two questions"
    assert len(_whole_lines(out / "answers.jsonl")) == 4
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def test_ctrl_c_in_the_judge_stage_does_not_wait_for_the_judge_calls_in_flight(tmp_path):
    with FakeOpenAI(local=True) as server:
        proc, err, took = _stop(server, tmp_path, signal.SIGINT, 4, "--judge", "binary", "--judge-model", "m")
    assert proc.returncode == 130, err
    assert took < STOP_WITHIN_S, f"{took:.1f} s from Ctrl-C to the exit (the judge calls were held {HOLD_S:.0f} s)"
    assert len(_whole_lines(tmp_path / "run" / "answers.jsonl")) == 4
    _whole_lines(tmp_path / "run" / "judgments.jsonl")
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["complete"] is False
