"""Bounded input (`memeval/input_files.py`, docs/layout.md "Files and flags"): every input a user names is a regular
file once symlinks are followed — a FIFO, device, socket or directory is refused in one line before it is opened
for reading — and no larger than its kind's limit (MEMEVAL_MAX_<KIND>_MIB), read no further than the limit + 1
byte. Every node is made in tmp_path; a "device" is a tmp file the stat is told is one (never /dev)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import stat
import threading
from pathlib import Path

import pytest

from memeval import input_files
from memeval.errors import InputError
from memeval.input_files import MIB, read_input, read_stream


class FifoWriter:
    """Feeds a FIFO whenever a reader opens it, so code that wrongly reads it fails the test instead of hanging."""

    def __init__(self, path: Path, data: bytes = b"[]"):
        self.path, self.data, self.stop, self.fed = path, data, threading.Event(), 0
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self):
        while not self.stop.wait(0.01):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while nobody reads it
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    continue
                return
            try:
                os.write(fd, self.data)
                self.fed += 1
            except OSError:
                pass
            finally:
                os.close(fd)

    def close(self) -> int:
        self.stop.set()
        self.thread.join(timeout=10)
        return self.fed


@pytest.fixture()
def fifo(tmp_path):
    path = tmp_path / "input.json"
    os.mkfifo(path)
    writer = FifoWriter(path)
    yield path
    assert writer.close() == 0, "the FIFO was opened for reading"


def one_line(result, *needles: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("memeval: error: ") and "Traceback" not in result.stderr, \
        result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def commands(path: Path, tmp_path: Path) -> dict[str, list]:
    """Every command that reads a file the user names, reading `path`."""
    return {
        "data stats": ["data", "stats", path],
        "data stats longmemeval": ["data", "stats", "--dataset", "longmemeval", path],
        "locomo run --data": ["locomo", "run", "--data", path, "--systems", "rag_turns", "--out", tmp_path / "run",
                              "--no-progress"],
        "score": ["score", path],
        "memaudit validate": ["memaudit", "validate", path],
        "locomo import": ["locomo", "import", path, "--format", "jsonl", "--system", "mine", "--out",
                          tmp_path / "imp"],
        "data fetch --source": ["data", "fetch", "locomo", "--source", path, "--sha256", "0" * 64, "--dest",
                                tmp_path / "dest"],
        "data fetch file://": ["data", "fetch", "locomo", "--source", f"file://{path}", "--sha256", "0" * 64,
                               "--dest", tmp_path / "dest"],
    }


@pytest.mark.parametrize("command", list(commands(Path("x"), Path("t"))))
def test_a_fifo_is_refused_without_waiting_for_a_writer(command, fifo, tmp_path, cli):
    one_line(cli(*commands(fifo, tmp_path)[command]), str(fifo), "a FIFO, not a regular file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.json"]  # nothing written


@pytest.mark.parametrize("command", ["data stats", "locomo run --data", "score", "memaudit validate"])
def test_a_symlink_to_a_fifo_or_a_socket_is_refused(command, fifo, tmp_path, cli):
    link = tmp_path / "link.json"
    link.symlink_to(fifo)
    one_line(cli(*commands(link, tmp_path)[command]), str(link), "a FIFO")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        link.unlink()
        link.symlink_to(tmp_path / "sock")
        one_line(cli(*commands(link, tmp_path)[command]), str(link), "a socket")


@pytest.fixture()
def device(tmp_path, monkeypatch) -> Path:
    """A tmp file that stat reports as a character device (what /dev/zero is); reading it fails the test."""
    node = tmp_path / "zero.zip"
    node.write_bytes(b"")
    real_stat = os.stat

    class Device:
        def __init__(self, st):
            self._st = st
            self.st_mode = stat.S_IFCHR | 0o666

        def __getattr__(self, name):
            return getattr(self._st, name)

    def fake_stat(path, *args, **kwargs):
        st = real_stat(path, *args, **kwargs)
        return Device(st) if os.path.realpath(path) == str(node) else st

    monkeypatch.setattr(input_files.os, "stat", fake_stat)
    monkeypatch.setattr(input_files.os, "open", lambda *a, **k: pytest.fail("opened a device for reading"))
    return node


@pytest.mark.parametrize("command", ["data stats", "locomo run --data", "score"])
def test_a_device_and_a_symlinked_zip_device_are_refused(command, device, tmp_path, cli):
    one_line(cli(*commands(device, tmp_path)[command]), "a character device, not a regular file")
    link = tmp_path / "data.zip"
    link.symlink_to(device)
    one_line(cli(*commands(link, tmp_path)[command]), str(link), "a character device")


def test_a_directory_where_a_file_is_read_is_refused(tmp_path, cli):
    (tmp_path / "d.json").mkdir()
    one_line(cli("score", tmp_path / "d.json"), "a directory, not a regular file")
    one_line(cli("memaudit", "validate", tmp_path / "d.json"), "a directory, not a regular file")


def test_the_store_of_natural_union_is_bounded(fifo, tmp_path, monkeypatch):
    from memeval.natural.stores import read_store

    with pytest.raises(InputError, match="a FIFO, not a regular file"):
        read_store(fifo, "memeval", [])
    big = tmp_path / "store.json"
    big.write_text(json.dumps({"conv-26": [{"text": "x" * MIB}]}))
    monkeypatch.setenv("MEMEVAL_MAX_STORE_MIB", "1")
    with pytest.raises(InputError, match="over the 1 MiB limit for a memory store \\(raise it with "
                                         "MEMEVAL_MAX_STORE_MIB\\)"):
        read_store(big, "memeval", [])


# --- the limits --------------------------------------------------------------------------------------------------
def padded_locomo(locomo_dir: Path, tmp_path: Path, mib: float) -> Path:
    """conv-26's file padded with whitespace to about `mib` MiB (whitespace: still valid JSON)."""
    text = (locomo_dir / "locomo10_v2" / "26.json").read_text()
    path = tmp_path / "26.json"
    path.write_text(text + " " * max(0, int(mib * MIB) - len(text)))
    return path


def test_an_input_over_its_limit_is_refused_and_the_variable_raises_it(locomo_dir, tmp_path, cli, monkeypatch):
    path = padded_locomo(locomo_dir, tmp_path, 2)
    monkeypatch.setenv("MEMEVAL_MAX_LOCOMO_MIB", "1")
    one_line(cli("data", "stats", path), str(path), f"{path.stat().st_size:,} bytes, over the 1 MiB limit for a "
             "LoCoMo JSON (raise it with MEMEVAL_MAX_LOCOMO_MIB)")
    link = tmp_path / "link.json"
    link.symlink_to(path)  # a symlink to a regular file is read like the file
    one_line(cli("data", "stats", link), "over the 1 MiB limit")
    monkeypatch.setenv("MEMEVAL_MAX_LOCOMO_MIB", "3")
    assert cli("data", "stats", link, "--json").returncode == 0


def test_a_zip_is_bounded_as_a_whole(locomo_dir, tmp_path, cli, monkeypatch):
    archive = tmp_path / "locomo10.zip"
    shutil.copy(locomo_dir / "locomo10.zip", archive)
    monkeypatch.setenv("MEMEVAL_MAX_ZIP_MIB", "1")
    if archive.stat().st_size <= MIB:  # pad it: a zip's trailing comment may hold anything
        import zipfile

        with zipfile.ZipFile(archive, "a") as zf:
            zf.comment = b" " * 65535
        with open(archive, "ab") as fh:
            fh.write(b"\0" * (MIB + 1 - archive.stat().st_size))
    one_line(cli("data", "stats", archive), str(archive), "over the 1 MiB limit for a zip archive")


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5"])
def test_a_bad_limit_variable_is_one_line(value, locomo_dir, tmp_path, cli, monkeypatch):
    monkeypatch.setenv("MEMEVAL_MAX_PREDICTIONS_MIB", value)
    (tmp_path / "p.jsonl").write_text("{}\n")
    one_line(cli("score", tmp_path / "p.jsonl"), "MEMEVAL_MAX_PREDICTIONS_MIB: environment: expected a whole number")


def test_every_kind_has_a_documented_limit_and_variable():
    layout = (Path(__file__).resolve().parents[1] / "docs" / "layout.md").read_text()
    for kind, (mib, _) in input_files.LIMITS.items():
        assert f"`{input_files.env_name(kind)}`" in layout, kind
        assert f"{mib:,} MiB" in layout or f"{mib // 1024} GiB" in layout, kind


class Endless:
    """A stream that never ends (a download of /dev/zero); counts what was asked of it."""

    def __init__(self):
        self.asked = []

    def read(self, n: int = -1) -> bytes:
        assert n >= 0, "an unbounded read"
        self.asked.append(n)
        return b"\0" * n


def test_a_read_never_asks_for_more_than_the_limit_plus_one(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_MAX_LOCOMO_MIB", "1")
    stream = Endless()
    with pytest.raises(InputError, match="over 1,048,576 bytes, over the 1 MiB limit"):
        read_stream(stream, "http://127.0.0.1/locomo10.json", "locomo")
    assert stream.asked == [MIB + 1]
    path = tmp_path / "grows.json"
    path.write_bytes(b"x" * 10)
    monkeypatch.setattr(input_files.os, "fstat", lambda fd: os.stat_result((stat.S_IFREG | 0o644,) + (0,) * 9))
    path.write_bytes(b"x" * (MIB + 5))  # the size checked before reading said 0: the read itself stops
    with pytest.raises(InputError, match="over the 1 MiB limit"):
        read_input(path, "locomo")
