"""Ctrl-C ends the process, not only the run: calls in flight on worker threads held the interpreter's exit until
their read timeouts ran out (two of 120 s in a trial), while `memeval ls` already showed the run as not running."""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def test_ctrl_c_during_held_requests_ends_the_process_at_once(fake, locomo_dir, tmp_path):
    release = threading.Event()
    fake.responder = lambda body: (release.wait(300), "7 May 2023")[1]
    out = tmp_path / "run"
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                             "--conversations", "conv-26", "--questions", "first:4", "--systems", "rag_turns",
                             "--reader", "claude", "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
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
