"""One run loop: a QA run, a MEMAUDIT sweep, a LoCoMo import and a natural build hold their directories through
`engine.directory.run_directory`, so a live writer, `--restart` and an interrupted run read the same whatever the
command. Before, the sweep, the import and the build each wrote their own lock, restart and manifest steps."""

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from memeval import rundir
from memeval.engine.directory import run_directory
from memeval.errors import InputError
from memeval.rundir import Identity

HOLDER = ("import sys; from pathlib import Path; from memeval.rundir import DirectoryLock; "
          "DirectoryLock(Path(sys.argv[1]), 'memeval holder').acquire(); print('held', flush=True); sys.stdin.read()")


def _commands(locomo_dir, conversations, tmp_path) -> dict[str, list]:
    qa = conversations[0].qa[0]
    answers = tmp_path / "outside.jsonl"
    answers.write_text(json.dumps({"sample_id": qa.sample_id, "question": qa.question, "prediction": "x"}) + "\n")
    return {
        "locomo run": ["locomo", "run", "--data", locomo_dir, "--conversations", conversations[0].sample_id,
                       "--questions", "2", "--systems", "no_memory", "--no-progress"],
        "memaudit sweep": ["memaudit", "sweep", "small", "--distribution", "base", "--n-seeds", "1", "--budgets", "2",
                           "--methods", "greedy", "--jobs", "1", "--no-progress"],
        "locomo import": ["locomo", "import", answers, "--format", "jsonl", "--system", "outside", "--data",
                          locomo_dir],
        "natural build": ["natural", "build", "--data", locomo_dir, "--target", "2", "--no-union", "--no-progress"],
    }


def test_a_live_writer_refuses_every_command_in_the_same_line(cli, locomo_dir, conversations, tmp_path):
    seen = {}
    for name, argv in _commands(locomo_dir, conversations, tmp_path).items():
        out = tmp_path / name.replace(" ", "_")
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            result = cli(*argv, "--out", out)
            assert [p.name for p in out.iterdir()] == [rundir.LOCK_NAME], f"{name} wrote into a held directory"
        finally:
            holder.stdin.close()
            holder.wait(30)
        assert result.returncode == 2, (name, result.stderr)
        [line] = result.stderr.strip().splitlines()
        seen[name] = re.sub(r"\(pid \d+, (.*) since \S+\)", r"(pid P, \1 since T)", line.replace(str(out), "OUT"))
    assert len(set(seen.values())) == 1, seen
    assert re.fullmatch(r"memeval: error: OUT: lock: another memeval is writing here \(pid P, 'memeval holder', "
                        r"since T\); wait for it or use another --out", seen["locomo run"]), seen["locomo run"]


@pytest.mark.parametrize("name", ["locomo run", "memaudit sweep", "natural build"])
def test_restart_moves_the_old_directory_aside_and_says_so_alike(name, cli, locomo_dir, conversations, tmp_path):
    argv = _commands(locomo_dir, conversations, tmp_path)[name]
    out = tmp_path / "out"
    cli(*argv, "--out", out, check=True)
    before = sorted(p.name for p in out.iterdir())
    again = cli(*argv, "--restart", "--out", out, check=True)
    [moved] = [p for p in tmp_path.iterdir() if rundir.REPLACED in p.name]
    assert f"memeval: note: --restart moved the previous contents of {out} to {moved}" in again.stderr.splitlines()
    assert sorted(p.name for p in moved.iterdir()) == before
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
    assert not (out / rundir.LOCK_NAME).exists() and not (moved / rundir.LOCK_NAME).exists()


def _notes(folder):
    """A user's folder that is not a run: what a command given it as --out must leave exactly as it was."""
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "todo.md").write_text("- read the paper\n")
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("name", ["locomo run", "memaudit sweep", "locomo import", "natural build"])
def test_a_folder_memeval_did_not_write_is_refused_by_every_command_alike(name, restart, cli, locomo_dir,
                                                                          conversations, tmp_path):
    """A new user's `--out notes/`: before, the run's files were written beside notes.txt, and `--restart` moved
    the notes too (to notes.replaced-<UTC>). Now the same line for every command, exit 2, the folder untouched and
    never moved."""
    if restart and name == "locomo import":
        pytest.skip("locomo import has no --restart")
    argv = _commands(locomo_dir, conversations, tmp_path)[name]
    out = tmp_path / "notes"
    before = _notes(out)
    result = cli(*argv, *(["--restart"] if restart else []), "--out", out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "the command wrote into the user's folder"
    assert not [p for p in tmp_path.iterdir() if rundir.REPLACED in p.name], "the user's folder was moved"
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"memeval: error: {out}: --out: not a memeval results directory (holds notes.txt, todo.md): choose a new or "
        "empty folder" + ("; --restart moves only a folder memeval wrote" if restart else "")]


def test_an_empty_folder_and_the_commands_own_directory_are_taken(cli, locomo_dir, conversations, tmp_path):
    """What the refusal leaves open: a folder holding nothing (or only .gitkeep, as reports/ does) is written
    into, and a rerun into its own directory resumes; `locomo import` adds to an existing run directory."""
    commands = _commands(locomo_dir, conversations, tmp_path)
    for name, argv in commands.items():
        out = tmp_path / name.replace(" ", "_")
        out.mkdir()
        (out / ".gitkeep").write_text("")
        cli(*argv, "--out", out, check=True)
        assert (out / "manifest.json").exists() and (out / ".gitkeep").exists()
        if name != "locomo import":  # importing one system twice is refused by design (another --system)
            cli(*argv, "--out", out, check=True)
    run = tmp_path / "locomo_run"
    cli(*commands["locomo import"], "--out", run, check=True)
    assert "outside" in (run / "answers.jsonl").read_text()


def test_a_commands_own_marks_decide_what_it_takes(tmp_path):
    """`memeval reproduce` names its own files (reports/ may hold only what the notebooks wrote there)."""
    out = tmp_path / "reports"
    out.mkdir()
    (out / "artifacts").mkdir()
    with pytest.raises(InputError, match=r"not a memeval results directory \(holds artifacts\)"):
        with run_directory(out, "memeval test"):
            pytest.fail("the work ran in a folder memeval did not write")
    with run_directory(out, "memeval test", own=("artifacts",)) as held:
        assert held.path == out
    (out / "a").write_text("")
    (out / "b").write_text("")
    (out / "c").write_text("")
    with pytest.raises(InputError, match=r"\(holds a, artifacts, 2 others\): choose a new or empty folder$"):
        with run_directory(out, "memeval test", restart=False):
            pass
    assert sorted(p.name for p in out.iterdir()) == ["a", "artifacts", "b", "c"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match=r"file: --out: is a file, not a folder"), run_directory(tmp_path / "file",
                                                                                               "memeval test"):
        pass


def _held(out, identity, **kwargs):
    return run_directory(out, "memeval test", identity, kind="test run", command_line=["memeval", "test"],
                         config={"n": identity.fixed["n"]}, **kwargs)


def test_an_interrupted_claim_stays_incomplete_and_unlocked(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt), _held(out, Identity("test run", {"n": 1})):
        assert (out / rundir.LOCK_NAME).exists()
        raise KeyboardInterrupt
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["identity"]["fixed"] == {"n": 1}
    assert not (out / rundir.LOCK_NAME).exists()
    assert rundir.status(out, manifest) == "incomplete"

    with _held(out, Identity("test run", {"n": 1})) as held:  # the same run resumes, then finishes
        written = held.finish({"rows": {"requested": 2, "missing": 1, "packages": 1, "reason": "r"}}, rows=1)
    assert list(written)[-4:] == ["rows", "identity", "complete", "missing"]
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
    with _held(out, Identity("test run", {"n": 1})) as held:
        held.finish({}, rows=2)
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def test_a_fresh_claim_refused_before_any_byte_leaves_nothing_but_work_is_kept(tmp_path):
    """A refusal found after the claim (the first request resolved) undoes a fresh claim that wrote nothing, so
    the corrected command takes the same --out; a claim holding a written row, or one resumed, stays."""
    out = tmp_path / "runs" / "a"
    with pytest.raises(InputError, match="cap"), _held(out, Identity("test run", {"n": 1})):
        (out / "answers.jsonl").touch()
        (out / "stores").mkdir()
        (out / "stores" / "empty.jsonl").touch()
        raise InputError("--answer-model", "m", "cap")
    assert not (tmp_path / "runs").exists()
    with _held(out, Identity("test run", {"n": 2})) as held:  # other settings: taken, nothing stood in the way
        assert held.claim.previous is None

    kept = tmp_path / "kept"
    with pytest.raises(InputError), _held(kept, Identity("test run", {"n": 1})):
        (kept / "answers.jsonl").write_text("{}\n")
        raise InputError("--answer-model", "m", "cap")
    assert json.loads((kept / "manifest.json").read_text())["complete"] is False
    assert (kept / "answers.jsonl").read_text() == "{}\n"

    resumed = tmp_path / "resumed"
    with _held(resumed, Identity("test run", {"n": 1})) as held:
        held.finish({})
    with pytest.raises(InputError), _held(resumed, Identity("test run", {"n": 1})):
        raise InputError("--answer-model", "m", "cap")
    assert json.loads((resumed / "manifest.json").read_text())["identity"]["fixed"] == {"n": 1}


def test_another_identity_is_refused_unless_restart_and_a_refusal_leaves_nothing(tmp_path):
    out = tmp_path / "run"
    with _held(out, Identity("test run", {"n": 1})) as held:
        held.finish({})
    kept = (out / "manifest.json").read_bytes()
    with pytest.raises(InputError, match=r"identity: this directory holds a test run with other settings "
                                         r"\(n: 1 here, 2 asked\); use another --out, or --restart"):
        with _held(out, Identity("test run", {"n": 2})):
            pytest.fail("the work ran in a directory holding another identity")
    assert (out / "manifest.json").read_bytes() == kept and not (out / rundir.LOCK_NAME).exists()

    with _held(out, Identity("test run", {"n": 2}), restart=True) as held:
        assert held.claim.moved_to is not None and held.claim.moved_to.name.startswith("run" + rundir.REPLACED)
    assert (held.claim.moved_to / "manifest.json").read_bytes() == kept

    fresh = tmp_path / "a" / "b" / "c"  # nothing of it existed: a failed command leaves none of it behind
    with pytest.raises(InputError), run_directory(fresh, "memeval test"):
        raise InputError(fresh, "data", "refused")
    assert not (tmp_path / "a").exists()


def test_a_sweep_stopped_by_sigterm_ends_as_a_run_does(tmp_path):
    """As `locomo run` (tests/test_interrupt.py): exit 143, one line, no lock left, the manifest incomplete."""
    out = tmp_path / "sweep"
    proc = subprocess.Popen([sys.executable, "-m", "memeval", "memaudit", "sweep", "small", "--distribution", "base",
                             "--n-seeds", "20000", "--budgets", "2,4,6", "--jobs", "1", "--no-progress", "--out",
                             str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        rows = out / "raw_results.jsonl"
        while (not rows.exists() or not rows.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert rows.exists() and rows.stat().st_size, "the sweep wrote no row"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["memeval: terminated (SIGTERM)"]
    assert not (out / rundir.LOCK_NAME).exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and rundir.status(out, manifest) == "incomplete"
