"""Operational failures are one line on stderr and a non-zero exit, never a traceback, and leave nothing
half-written: unreadable manifests (results, view, ls, import), plug-ins that raise while loading, an unreachable
Dask scheduler, an endpoint answering 200 with a page that is not JSON, a damaged response cache, a read-only
output directory and a full disk (both simulated: tests run as root, where permissions do not bite)."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rows import answer_row


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _one_line(result, code: int, *needles: str) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert len(_lines(result.stderr)) == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("memeval: error: "), result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


BAD_MANIFESTS = [("{torn", "not valid JSON"), ("[1, 2]", "expected a JSON object, got list"),
                 ('"a string"', "expected a JSON object, got str")]


# ---- manifests that cannot be read ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, needle", BAD_MANIFESTS)
def test_results_names_an_unreadable_manifest(text, needle, tmp_path, cli):
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "manifest.json").write_text(text)
    result = cli("results", tmp_path / "sweep", "--out", tmp_path / "table")
    _one_line(result, 2, str(tmp_path / "sweep" / "manifest.json"), needle)
    assert not (tmp_path / "table").exists()


@pytest.mark.parametrize("text, needle", BAD_MANIFESTS)
def test_view_names_an_unreadable_manifest(text, needle, tmp_path, cli):
    run = tmp_path / "run"
    run.mkdir()
    (run / "answers.jsonl").write_text(json.dumps(answer_row("conv-26:q0000")) + "\n")
    (run / "manifest.json").write_text(text)
    _one_line(cli("view", run), 2, str(run / "manifest.json"), needle)
    assert not (run / "view.html").exists()


def test_ls_lists_the_tree_and_reports_what_it_skipped(tmp_path, cli):
    good = tmp_path / "tree" / "good"
    good.mkdir(parents=True)
    (good / "manifest.json").write_text(json.dumps({"command": "memaudit sweep", "complete": True,
                                                    "command_line": "memeval memaudit sweep small --out good"}))
    for name, (text, _) in zip(("torn", "listed", "text"), BAD_MANIFESTS, strict=True):
        (tmp_path / "tree" / name).mkdir()
        (tmp_path / "tree" / name / "manifest.json").write_text(text)
    for extra in (("--long",), ("--json",)):  # --long: the whole path and the command under each line
        result = cli("ls", tmp_path / "tree", *extra)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert str(good) in result.stdout and "memeval memaudit sweep small" in result.stdout
        notes = _lines(result.stderr)
        assert len(notes) == 3 and all(n.startswith("memeval: note: skipped ") for n in notes)
        for name, (_, needle) in zip(("torn", "listed", "text"), BAD_MANIFESTS, strict=True):
            assert any(str(tmp_path / "tree" / name / "manifest.json") in n and needle in n for n in notes)
        assert "torn" not in result.stdout and "listed" not in result.stdout
    assert len(json.loads(cli("ls", tmp_path / "tree", "--json").stdout)) == 1


def test_ls_of_a_missing_directory_is_an_error(tmp_path, cli):
    _one_line(cli("ls", tmp_path / "nowhere"), 2, str(tmp_path / "nowhere"), "not found")
    (tmp_path / "file").write_text("x")
    _one_line(cli("ls", tmp_path / "file"), 2, "not a directory")


@pytest.mark.parametrize("manifest, needle", [
    ("{torn", "not valid JSON"), ("[1]", "expected a JSON object"),
    (json.dumps({"command": "locomo run", "imported": ["x"]}), "imported: expected an object, got list"),
    (json.dumps({"command": "locomo run", "invocations": "x"}), "invocations: expected a list, got str"),
])
def test_import_into_a_directory_with_an_unreadable_manifest_writes_nothing(manifest, needle, conversations,
                                                                            locomo_dir, tmp_path, cli):
    qa = conversations[0].qa[0]
    source = tmp_path / "answers.jsonl"
    source.write_text(json.dumps({"sample_id": qa.sample_id, "question": qa.question, "prediction": "x"}) + "\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text(manifest)
    before = _tree(out)
    result = cli("locomo", "import", source, "--format", "jsonl", "--system", "ext", "--data", locomo_dir,
                 "--out", out)
    _one_line(result, 2, str(out / "manifest.json"), needle)
    assert _tree(out) == before


# ---- plug-ins that raise while being loaded -------------------------------------------------------------------

PLUGINS = {
    "raises_on_import": ("raise RuntimeError('no config file\\nat /etc/plugin')\n", "Factory",
                         "importing module 'raises_on_import' raised RuntimeError: no config file at /etc/plugin"),
    "exits_on_import": ("import sys\nsys.exit(3)\n", "Factory", "importing module 'exits_on_import' raised SystemExit"),
    "raises_in_factory": ("class Factory:\n    def __init__(self):\n        raise RuntimeError('no server')\n",
                          "Factory", "building the system raised RuntimeError: no server"),
    "keyerror_in_factory": ("def make():\n    return {}['store']\n", "make",
                            "building the system raised KeyError: 'store'"),
}


@pytest.mark.parametrize("module", sorted(PLUGINS))
def test_a_plugin_that_raises_while_loading_is_one_line(module, locomo_dir, tmp_path, cli, monkeypatch):
    source, attr, needle = PLUGINS[module]
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    out = tmp_path / "run"
    result = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2",
                 "--systems", f"{module}:{attr}", "--out", out, "--no-progress")
    _one_line(result, 2, f"--systems: {module}:{attr}", needle)
    assert not out.exists()


# ---- an unreachable Dask scheduler ----------------------------------------------------------------------------

def test_an_unreachable_scheduler_is_one_line_and_nothing_is_written(tmp_path, cli, monkeypatch):
    pytest.importorskip("distributed")
    from memeval.memaudit import sweep

    monkeypatch.setattr(sweep, "SCHEDULER_TIMEOUT_S", 2, raising=False)
    result = cli("memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "2", "--methods", "opt,gvt",
                 "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1", "--out", tmp_path / "sweep",
                 "--no-progress")
    _one_line(result, 2, "--scheduler: tcp://127.0.0.1:1", "no Dask scheduler answered")
    assert not (tmp_path / "sweep").exists()


# ---- an endpoint answering 200 with something that is not JSON -------------------------------------------------

@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/json"])
def test_a_200_reply_that_is_not_json_stops_the_run_in_one_line(content_type, locomo_dir, tmp_path, cli,
                                                                 monkeypatch):
    """Through the real SDK: a gateway page where ANTHROPIC_BASE_URL points (tests/fake_anthropic.py not_json)."""
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, not_json

    out = tmp_path / "run"
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic() as server:
        server.faults += [not_json(content_type)] * 5
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        result = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3",
                     "--systems", "rag_turns", "--reader", "claude", "--out", out, "--no-progress")
        assert len(server.received) == 1, "the same request would get the same page: nothing more is sent"
    _one_line(result, 1, "200 invalid_response", server.url, "ANTHROPIC_BASE_URL")
    rows = (out / "answers.jsonl").read_text() if (out / "answers.jsonl").exists() else ""
    assert rows == "" and json.loads((out / "manifest.json").read_text())["complete"] is False


def test_a_200_reply_that_is_other_json_on_an_openai_wire_stops_the_run_in_one_line(locomo_dir, tmp_path, cli,
                                                                                     monkeypatch):
    """A gateway that answers any path with its own JSON (`{"id": ...}`, no choices): the SDK parses it into a
    completion without choices, which crashed in response_from_completion with a traceback."""
    from tests.fake_openai import FakeOpenAI

    out = tmp_path / "run"
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenAI(lambda body: "ok", local=True) as server:
        server.chat_faults += [(200, {}, {"id": "gw-1", "status": "ok"})] * 5
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        result = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3",
                     "--systems", "rag_turns", "--reader", "claude", "--llm", "local", "--answer-model", "foo",
                     "--out", out, "--no-progress")
        assert len(server.received) == 1, "the same request would get the same JSON: nothing more is sent"
    _one_line(result, 1, "200 invalid_response", "not a chat completion", "OPENAI_BASE_URL")
    rows = (out / "answers.jsonl").read_text() if (out / "answers.jsonl").exists() else ""
    assert rows == "" and json.loads((out / "manifest.json").read_text())["complete"] is False


# ---- a damaged response cache ---------------------------------------------------------------------------------

def test_a_damaged_cache_says_how_to_move_it_aside(locomo_dir, tmp_path, cli, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "responses.sqlite").write_bytes(b"this is not a SQLite database " * 300)
    _one_line(cli("cache", "stats", "--dir", cache), 2, str(cache / "responses.sqlite"), "file is not a database")
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(cache))
    out = tmp_path / "run"
    args = ("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
            "rag_turns", "--reader", "claude", "--llm", "replay", "--out", out, "--no-progress")
    result = cli(*args)
    _one_line(result, 2, str(cache / "responses.sqlite"), "move it aside with `")
    assert not out.exists()
    command = result.stderr.split("`")[1]  # the command the line gives, run as given
    subprocess.run(command, shell=True, check=True)
    assert (cache / "corrupt" / "responses.sqlite").exists() and not (cache / "responses.sqlite").exists()
    assert cli("cache", "stats", "--dir", cache).returncode == 0


# ---- a read-only output directory and a full disk -------------------------------------------------------------

def _read_only(monkeypatch, root: Path) -> None:
    """Writes under `root` fail as on a read-only file system (EROFS); reads still work."""
    root = str(root)
    real_mkdir, real_open, real_io_open = os.mkdir, os.open, io.open

    def under(path) -> bool:
        return isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)).startswith(root)

    def refuse(path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def mkdir(path, *args, **kwargs):
        if under(path) and not os.path.isdir(path):
            refuse(path)
        return real_mkdir(path, *args, **kwargs)

    def os_open(path, flags, *args, **kwargs):
        if under(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def io_open(file, mode="r", *args, **kwargs):
        if under(file) and any(c in mode for c in "wax+"):
            refuse(file)
        return real_io_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr("builtins.open", io_open)


SMALL = ("memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "2,4", "--methods", "opt,gvt", "--jobs", "1",
         "--no-progress")


def test_a_read_only_output_directory_is_named_in_one_line(tmp_path, cli, monkeypatch):
    (tmp_path / "ro").mkdir()
    _read_only(monkeypatch, tmp_path / "ro")
    result = cli(*SMALL, "--out", tmp_path / "ro" / "sweep")
    _one_line(result, 2, str(tmp_path / "ro" / "sweep"), "Read-only file system (EROFS)", "use another --out")
    monkeypatch.undo()
    assert not (tmp_path / "ro" / "sweep").exists()


def test_a_full_disk_names_the_file_and_a_rerun_resumes(tmp_path, cli, monkeypatch):
    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    out = tmp_path / "sweep"
    monkeypatch.setattr(os, "fsync", no_space)
    result = cli(*SMALL, "--out", out)
    _one_line(result, 1, str(out / "raw_results.jsonl"), "No space left on device (ENOSPC)", "rerun")
    monkeypatch.undo()
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
    assert not (out / "summary.json").exists(), "no summary of rows that were not stored"
    resumed = cli(*SMALL, "--out", out, check=True)
    assert "12 rows" in resumed.stdout and json.loads((out / "manifest.json").read_text())["complete"] is True


def test_a_whole_file_write_on_a_full_disk_leaves_nothing_beside_it(tmp_path, monkeypatch):
    from memeval import atomic

    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real_open = open

    def full_open(path, mode="r", *args, **kwargs):
        real_open(path, mode, *args, **kwargs).close()  # the temporary file exists, as on a real disk
        return Full()

    monkeypatch.setattr(atomic, "open", full_open, raising=False)
    with pytest.raises(OSError) as caught:
        atomic.write_json_atomic(tmp_path / "summary.json", {"rows": []})
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(tmp_path / "summary.json")
    assert list(tmp_path.iterdir()) == []


def test_the_process_exit_code_and_stderr_of_an_os_error(tmp_path):
    """Across the process boundary too: the exit code and one line, no traceback."""
    code = ("import errno, os, sys; from memeval import cli; "
            "os.fsync = lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))); "
            f"sys.exit(cli.main({[*SMALL, '--out', str(tmp_path / 'sweep')]!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert proc.returncode == 1 and len(_lines(proc.stderr)) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "raw_results.jsonl: No space left on device" in proc.stderr


# ---- a server that is not there ---------------------------------------------------------------------------------

def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_connection_error_names_the_url_it_was_sent_to(provider):
    """Through the real SDKs against a closed port: "Connection error." alone does not say OPENAI_BASE_URL is
    wrong; the user and password a proxy URL may carry never appear."""
    from memeval.llm.client import classify_sdk_error
    from memeval.llm.openai_backend import classify_openai_error

    port = _closed_port()
    base = f"http://user:hunter2@127.0.0.1:{port}"
    if provider == "anthropic":
        import anthropic

        sdk = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0, timeout=5)
        call = lambda: sdk.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])  # noqa: E731
        classify, path = classify_sdk_error, "/v1/messages"
    else:
        import openai

        sdk = openai.OpenAI(api_key="k", base_url=base + "/v1", max_retries=0, timeout=5)
        call = lambda: sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])  # noqa: E731
        classify, path = classify_openai_error, "/v1/chat/completions"
    with pytest.raises(Exception) as raised:
        call()
    message = str(classify(raised.value, None))
    assert f"(http://127.0.0.1:{port}{path})" in message, message
    assert "hunter2" not in message and "user" not in message
