"""The one rule for every file memeval writes (`memeval/output_paths.py`, docs/layout.md "Files and flags"): a
regular file or nothing is replaced atomically; a FIFO or character device is written as a stream, its node kept; a
symlink's target is written, the link kept; `-` and /dev/stdout are standard output; /dev, /proc, /sys and
directories are refused in one line. Every case on nodes made in tmp_path: /dev is never touched (a path under it is
refused before any lookup, and a "device" is a tmp file the type check is told is one)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from memeval import output_paths
from memeval.atomic import atomic_open, write_text_atomic
from memeval.errors import InputError


class FifoReader:
    """Reads a FIFO to its end in a thread (a FIFO opened for writing waits for its reader)."""

    def __init__(self, path: Path):
        self.path, self.data = path, b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.path, "rb") as fh:
            self.data = fh.read()

    def result(self) -> bytes:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the FIFO's reader never got an end of file"
        return self.data


SYSTEM = ("/dev", "/proc", "/sys")


@pytest.fixture(autouse=True)
def no_system_writes(monkeypatch):
    """A net under every test here: a write opened or renamed under /dev, /proc or /sys fails the test before it
    happens, so a regression (or this file run against code without the rule, as root) cannot replace a node."""
    import builtins

    def guarded(path) -> None:
        text = os.path.abspath(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else ""
        if any(text == root or text.startswith(root + "/") for root in SYSTEM):
            raise AssertionError(f"tried to write {text}")

    real_open, real_os_open, real_replace = builtins.open, os.open, os.replace

    def open_(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            guarded(file)
        return real_open(file, mode, *args, **kwargs)

    def os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            guarded(path)
        return real_os_open(path, flags, *args, **kwargs)

    def replace(src, dst, *args, **kwargs):
        guarded(dst)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(os, "replace", replace)


def one_line_refusal(result, *needles: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("memeval: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def generated(text: str) -> dict:
    doc = json.loads(text)
    assert doc["schema"] == "memaudit.package/v1"
    return doc


# --- the rule, on the writer every command uses --------------------------------------------------------------
def test_a_regular_file_or_nothing_is_replaced_whole(tmp_path):
    path = tmp_path / "new" / "file.json"
    write_text_atomic(path, "one\n")
    old_inode = path.stat().st_ino
    write_text_atomic(path, "two\n")
    assert path.read_text() == "two\n" and path.stat().st_ino != old_inode  # renamed over, not rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["file.json"]


def test_a_symlink_to_a_file_writes_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "page.html"
    target.write_text("old")
    link = tmp_path / "page.html"
    link.symlink_to(target)
    chain = tmp_path / "chain.html"
    chain.symlink_to(link.name)  # relative, through another link
    write_text_atomic(chain, "new")
    assert link.is_symlink() and chain.is_symlink() and os.readlink(chain) == "page.html"
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.html", "page.html", "real"]


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "made" / "there.json")
    write_text_atomic(link, "{}\n")
    assert link.is_symlink() and (tmp_path / "made" / "there.json").read_text() == "{}\n"


def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    with atomic_open(fifo, "w", newline="") as fh:
        fh.write("a,b\r\n1,2\r\n")
    assert reader.result() == b"a,b\r\n1,2\r\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no pipe.tmp beside it


def test_a_symlink_to_a_fifo_writes_the_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "out.parquet"
    link.symlink_to(fifo)
    reader = FifoReader(fifo)
    with atomic_open(link, "wb") as fh:
        fh.write(b"\x00PAR1")
    assert reader.result() == b"\x00PAR1"
    assert link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.fixture()
def device(tmp_path, monkeypatch) -> Path:
    """A tmp file the type check reports as a character device (what /dev/full is), so no real device is used."""
    node = tmp_path / "device"
    node.write_bytes(b"")
    real = output_paths.file_type
    monkeypatch.setattr(output_paths, "file_type", lambda p: "device" if Path(p) == node else real(p))
    return node


def test_a_device_is_written_in_place_never_replaced(device):
    inode = device.stat().st_ino
    write_text_atomic(device, "streamed\n")
    assert device.stat().st_ino == inode and device.read_text() == "streamed\n"
    assert not device.with_name("device.tmp").exists()


def test_a_stream_gets_nothing_when_the_writer_fails(device):
    with pytest.raises(RuntimeError), atomic_open(device) as fh:
        fh.write("half")
        raise RuntimeError("the content failed")
    assert device.read_bytes() == b""


@pytest.mark.parametrize("path", ["/dev/full", "/dev/sda", "/proc/self/mem", "/sys/kernel/notes", "/dev"])
def test_system_paths_are_refused_before_any_lookup(path, monkeypatch):
    def no_lookup(*_):
        raise AssertionError("looked at the file system")

    monkeypatch.setattr(os.path, "islink", no_lookup)
    monkeypatch.setattr(os.path, "realpath", no_lookup)
    with pytest.raises(InputError, match="where memeval writes nothing"):
        output_paths.resolve(path)


def test_a_link_into_a_system_root_is_refused(tmp_path, monkeypatch):
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    (fake_dev / "full").write_text("node")
    monkeypatch.setattr(output_paths, "SYSTEM_ROOTS", (str(fake_dev),))
    (tmp_path / "out.json").symlink_to(fake_dev / "full")
    (tmp_path / "dir").symlink_to(fake_dev)  # a directory on the way that leads there
    for path in (tmp_path / "out.json", tmp_path / "dir" / "full"):
        with pytest.raises(InputError, match=f"under {fake_dev} \\(it leads to {fake_dev}/full\\)"):
            write_text_atomic(path, "x")
    assert (fake_dev / "full").read_text() == "node"
    assert (tmp_path / "out.json").is_symlink()


def test_a_directory_and_a_socket_are_refused(tmp_path):
    import socket

    (tmp_path / "d").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        write_text_atomic(tmp_path / "d", "x")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s"))
        with pytest.raises(InputError, match="is a socket"):
            write_text_atomic(tmp_path / "s", "x")


def test_a_symlink_loop_is_refused(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(InputError, match="symbolic links"):
        write_text_atomic(tmp_path / "a", "x")


# --- as a user types it ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/dev/full", "/dev/sda1", "/proc/1/environ", "/sys/power/state"])
def test_generate_refuses_a_system_path_in_one_line(cli, path):
    one_line_refusal(cli("memaudit", "generate", "small", "--output", path), path, "where memeval writes nothing")


def test_generate_refuses_a_directory_in_one_line(cli, tmp_path):
    (tmp_path / "d").mkdir()
    one_line_refusal(cli("memaudit", "generate", "small", "--output", tmp_path / "d"), "is a directory")
    assert list((tmp_path / "d").iterdir()) == []


def test_generate_to_standard_output(cli):
    result = cli("memaudit", "generate", "small", "--output", "-", check=True)
    assert generated(result.stdout)["package_id"] == "small-base-s0000"  # the notice went to stderr
    assert result.stderr.startswith("wrote - ")


@pytest.mark.parametrize(("path", "how"), [("-", "stdout"), ("/dev/stdout", "stdout"), ("/dev/stderr", "stderr"),
                                          ("/dev/null", "stream")])
def test_the_standard_streams_are_named_not_looked_up(path, how, monkeypatch):
    monkeypatch.setattr(os.path, "islink", lambda *_: pytest.fail("looked at the file system"))
    assert output_paths.resolve(path) == output_paths.Target(how, path)


def test_generate_into_a_fifo_through_a_symlink(cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "pkg.json").symlink_to(fifo)
    reader = FifoReader(fifo)
    cli("memaudit", "generate", "small", "--output", tmp_path / "pkg.json", check=True)
    assert generated(reader.result().decode())["package_id"] == "small-base-s0000"
    assert (tmp_path / "pkg.json").is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_refused_output_is_refused_before_the_work(cli, tmp_path, monkeypatch):
    import memeval.memaudit.generators as generators

    monkeypatch.setattr(generators, "generate", lambda *a: pytest.fail("generated before the output was checked"))
    one_line_refusal(cli("memaudit", "generate", "small", "--output", "/dev/full"))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, locomo_dir) -> Path:
    from memeval.cli import main

    out = tmp_path_factory.mktemp("output_paths") / "run"
    assert main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:2",
                 "--systems", "rag_turns", "--out", str(out), "--no-progress"]) == 0
    return out


def test_view_and_results_follow_the_rule(cli, small_run, tmp_path):
    fifo = tmp_path / "page"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    cli("view", small_run, "--output", fifo, check=True)
    assert b"<html" in reader.result()[:500].lower()
    target = tmp_path / "table.md"
    target.write_text("old")
    (tmp_path / "link.md").symlink_to(target)
    cli("results", small_run, "--output", tmp_path / "link.md", check=True)
    assert (tmp_path / "link.md").is_symlink() and "rag_turns" in target.read_text()
    for argv in (("view", small_run), ("results", small_run)):
        one_line_refusal(cli(*argv, "--output", "/dev/full"), "/dev/full")


def test_a_results_file_is_appended_only_as_a_regular_file(tmp_path, monkeypatch):
    from memeval.jsonl import JsonlWriter

    fifo = tmp_path / "answers.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        JsonlWriter(fifo)
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    (fake_dev / "shm").write_text("")
    monkeypatch.setattr(output_paths, "SYSTEM_ROOTS", (str(fake_dev),))
    (tmp_path / "judgments.jsonl").symlink_to(fake_dev / "shm")
    with pytest.raises(InputError, match="where memeval writes nothing"):
        JsonlWriter(tmp_path / "judgments.jsonl")
    assert (fake_dev / "shm").read_text() == ""
