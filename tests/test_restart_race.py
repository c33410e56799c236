"""A live run is never moved by `--restart`, whatever the timing, and a lock whose owner is gone is taken over
whoever now has its pid. The race is made deterministic: the restarting run is held right before it moves the
directory while the other run starts and its first request is held by the fake server."""

import json
import subprocess
import sys
import threading
import time

from memeval import rundir
from memeval.cli import main


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != rundir.LOCK_NAME}


def test_restart_never_moves_a_run_that_started_while_it_was_checking(fake, locomo_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    hold = threading.Event()
    hold.set()
    fake.responder = lambda body: (hold.wait(120), "7 May 2023")[1]
    out = tmp_path / "run"
    base = [str(a) for a in ("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "2",
                             "--reader", "claude", "--no-progress", "--out", out)]
    assert main([*base, "--systems", "rag_turns"]) == 0
    before = _tree(out)

    hold.clear()
    at_move, go = threading.Event(), threading.Event()
    move_aside = rundir.move_aside

    def paused(*args, **kwargs):  # the restarting run has checked the directory and is about to move it
        at_move.set()
        go.wait(120)
        return move_aside(*args, **kwargs)

    monkeypatch.setattr(rundir, "move_aside", paused)
    restarted = []
    restarting = threading.Thread(target=lambda: restarted.append(
        main([*base, "--systems", "rag_turns,no_memory", "--restart"])))
    restarting.start()
    live = None
    try:
        assert at_move.wait(120)
        sent = len(fake.received)
        live = subprocess.Popen([sys.executable, "-m", "memeval", *base, "--systems", "rag_turns,no_memory"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(fake.received) == sent and live.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # until the other run is writing (its first request held) or was refused
    finally:
        go.set()
        hold.set()
        restarting.join(120)
        stderr = live.communicate(timeout=120)[1] if live else ""
    [moved] = [p for p in tmp_path.iterdir() if rundir.REPLACED in p.name]
    assert _tree(moved) == before, "nothing was written into the directory --restart moved"
    assert restarted == [0]
    assert live.returncode == 2 and f"another memeval is writing here (pid {__import__('os').getpid()}" in stderr, \
        stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and not (out / rundir.LOCK_NAME).exists()


def test_a_lock_whose_owner_died_is_taken_over_even_when_its_pid_is_reused(tmp_path, cli):
    out = tmp_path / "sweep"
    owner = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                              "from memeval.rundir import DirectoryLock\n"
                              f"DirectoryLock({str(out)!r}, 'memeval memaudit sweep small').acquire()\n"
                              "print('held', flush=True); time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    assert owner.stdout.readline().strip() == "held"
    sweep = ["memaudit", "sweep", "small", "--n-seeds", "1", "--budgets", "2", "--jobs", "1", "--no-progress",
             "--out", out]
    refused = cli(*sweep)
    assert refused.returncode == 2 and f"another memeval is writing here (pid {owner.pid}" in refused.stderr
    owner.kill()
    owner.wait()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # the dead owner's pid, reused
    try:
        lock = out / rundir.LOCK_NAME
        lock.write_text(json.dumps({**json.loads(lock.read_text()), "pid": other.pid}))
        taken = cli(*sweep)
    finally:
        other.kill()
        other.wait()
    assert taken.returncode == 0 and f"took over {lock} from a process that is gone" in taken.stderr, taken.stderr
    assert not lock.exists()


def test_a_natural_build_being_written_is_never_moved_by_restart(locomo_dir, tmp_path, monkeypatch):
    """`natural build` held no lock: a `--restart` (or a second build) while one was computing moved or
    interleaved with it. Now the build holds its directory's lock from start to last file."""
    from memeval.benchmarks.locomo import natural_build as build

    out = tmp_path / "packages"
    assert main(["natural", "build", "--data", str(locomo_dir), "--target", "2", "--no-union", "--no-progress",
                 "--out", str(out)]) == 0
    before = _tree(out)

    computing, go = threading.Event(), threading.Event()
    build_natural = build.build_natural

    def held(*args, **kwargs):  # the first build is computing its packages
        computing.set()
        go.wait(120)
        return build_natural(*args, **kwargs)

    monkeypatch.setattr(build, "build_natural", held)
    codes = []
    first = threading.Thread(target=lambda: codes.append(main(
        ["natural", "build", "--data", str(locomo_dir), "--target", "2", "--no-union", "--no-progress",
         "--out", str(out)])))
    first.start()
    try:
        assert computing.wait(60)
        second = subprocess.run([sys.executable, "-m", "memeval", "natural", "build", "--data", str(locomo_dir),
                                 "--target", "3", "--no-union", "--no-progress", "--restart", "--out", str(out)],
                                capture_output=True, text=True, timeout=120)
    finally:
        go.set()
        first.join(120)
    assert second.returncode == 2, second.stderr
    assert "another memeval is writing here" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.glob("packages.replaced-*"))
    assert codes == [0] and _tree(out) == before
