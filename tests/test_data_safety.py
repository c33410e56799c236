"""Readers never write: a corrupt line is refused as FILE:LINE, a torn tail is left out in memory only, and a reader
beside a writer loses nothing. Only the writer that owns a file cuts a torn tail away."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from memeval.errors import InputError
from memeval.jsonl import JsonlWriter, read_rows


def _run(cli, locomo_dir, out):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:5", "--out", out,
               "--no-progress")


def test_a_corrupt_middle_line_is_refused_by_every_reader_and_the_file_is_untouched(locomo_dir, tmp_path, cli):
    out = tmp_path / "run"
    assert _run(cli, locomo_dir, out).returncode == 0
    path = out / "answers.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 5
    corrupt = b"".join([lines[0], b'{"sample_id": "conv-26:q0001", oops\n', *lines[2:]])
    path.write_bytes(corrupt)
    manifest = (out / "manifest.json").read_bytes()
    rerun = ("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:5", "--out", out,
             "--no-progress")
    for command in (("view", out, "--output", tmp_path / "v.html"), ("results", out), rerun):
        result = cli(*command)
        assert result.returncode == 2, command
        assert f"{path}:2: line: not valid JSON" in result.stderr, (command, result.stderr)
        assert len([x for x in result.stderr.splitlines() if x.strip()]) == 1
        assert path.read_bytes() == corrupt, f"{command[0]} changed the file"
        assert (out / "manifest.json").read_bytes() == manifest, f"{command[0]} claimed the directory it refused"


def test_a_torn_tail_is_dropped_in_memory_by_readers_and_cut_only_by_the_writer(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3')
    assert read_rows(path) == [{"a": 1}, {"a": 2}]
    assert path.read_bytes().endswith(b'{"a": 3'), "a reader never writes"
    with JsonlWriter(path) as writer:
        writer.write([{"a": 4}])
    assert read_rows(path) == [{"a": 1}, {"a": 2}, {"a": 4}]


def test_a_torn_tail_in_a_read_only_directory_still_reads(tmp_path):
    import os

    path = tmp_path / "ro" / "rows.jsonl"
    path.parent.mkdir()
    path.write_bytes(b'{"a": 1}\n{"a"')
    os.chmod(path.parent, 0o555)
    os.chmod(path, 0o444)
    try:
        assert read_rows(path) == [{"a": 1}]
        assert path.read_bytes() == b'{"a": 1}\n{"a"', "read-only or not (root may write anyway), a reader never cuts"
    finally:
        os.chmod(path.parent, 0o755)
        os.chmod(path, 0o644)


@pytest.mark.parametrize("content", [b'[1, 2]\n', b'"text"\n'])
def test_lines_that_are_not_objects_are_refused_with_their_line(tmp_path, content):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n' + content)
    with pytest.raises(InputError, match=rf"{path}:2: line: expected a JSON object"):
        read_rows(path)


def test_a_reader_in_a_loop_beside_a_writer_loses_nothing(tmp_path):
    """The reported loss: a reader that repaired a torn tail truncated the line the writer was writing. A writer
    process appends 3,000 rows in small flushes while this process reads in a loop."""
    path = tmp_path / "answers.jsonl"
    script = (
        "import sys\nfrom memeval.jsonl import JsonlWriter\n"
        "with JsonlWriter(sys.argv[1]) as w:\n"
        "    for i in range(0, 3000, 7):\n"
        "        w.write({'i': j, 'pad': 'x' * (j % 97)} for j in range(i, min(i + 7, 3000)))\n"
    )
    seen: list[int] = []
    stop = threading.Event()

    def read_loop():
        while not stop.is_set():
            seen.append(len(read_rows(path)))

    reader = threading.Thread(target=read_loop)
    reader.start()
    try:
        subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=120)
    finally:
        time.sleep(0.05)
        stop.set()
        reader.join()
    rows = read_rows(path)
    assert [r["i"] for r in rows] == list(range(3000))
    assert seen == sorted(seen), "a reader saw rows disappear"
    assert len(seen) > 5, "the reader ran beside the writer"


@pytest.mark.slow
def test_two_writers_on_one_out_the_second_refuses_naming_the_first(tmp_path):
    """Two real processes, one --out: the reported case wrote duplicate rows and widened intervals."""
    import json

    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "memeval", "memaudit", "sweep", "small", "--n-seeds", "400", "--budgets", "1,2,4,8,16",
            "--jobs", "1", "--out", str(out), "--no-progress"]
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out / ".memeval.lock").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first.poll() is None, "the first sweep finished before the second could start: give it more work"
        second = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert [line for line in second.stderr.splitlines() if line.strip()] == [
            line for line in second.stderr.splitlines() if f"another memeval is writing here (pid {first.pid}" in line]
    finally:
        assert first.wait(timeout=300) == 0, first.stderr.read()
    rows = read_rows(out / "raw_results.jsonl")
    keys = [(r["package_id"], r["budget"], r["method"]) for r in rows]
    assert len(keys) == len(set(keys)) == 400 * 5 * 10
    assert json.loads((out / "summary.json").read_text())["row_count"] == 400 * 5 * 10
