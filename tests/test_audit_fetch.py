"""`memeval data fetch locomo-audit`: from a folder in the repository's layout (with or without its folder around
it), from loose files matched by hash, a partial set, a wrong hash refused with nothing written, and the download
(a server on 127.0.0.1, and offline). The files are the made-up audit of tests/audit_sample.py, pinned by hash."""

import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memeval.benchmarks.locomo.audit import fetch
from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_FILES, AUDIT_REPO
from memeval.benchmarks.locomo.audit.store import AUDIT_ENV, audit_path
from tests.audit_sample import audit_bytes, pin, write_layout


@pytest.fixture()
def files(monkeypatch, tmp_path):
    made = audit_bytes()
    pin(monkeypatch, made)
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "stored"))
    return made


def stored(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_folder_in_repository_layout_is_stored_byte_for_byte(files, tmp_path, cli):
    write_layout(tmp_path / "clone" / "locomo-audit", files)
    done = cli("data", "fetch", "locomo-audit", "--source", tmp_path / "clone")
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path / "stored") == {AUDIT_FILES[name].path: data for name, data in files.items()}
    assert done.stdout.strip().splitlines()[-1].startswith(f"10 of 10 files of {AUDIT_REPO}@{AUDIT_COMMIT[:12]}")
    assert done.stderr == ""
    assert audit_path("fc_gpt-4.1-mini-cot") == tmp_path / "stored" / AUDIT_FILES["fc_gpt-4.1-mini-cot"].path


def test_loose_files_are_matched_by_hash_whatever_their_name(files, tmp_path, cli):
    loose = tmp_path / "downloads"
    loose.mkdir()
    for name, data in files.items():
        if name.startswith("fc_"):
            own = tmp_path / name
            own.mkdir()
            (own / "eval_results.json").write_bytes(data)  # four files of one name, passed one by one
        else:
            (loose / f"copy of {name}.json").write_bytes(data)
    (loose / "notes.json").write_text("{}")  # not an audit file, and not named like one: passed over
    fc = [arg for name in files if name.startswith("fc_") for arg in ("--source", tmp_path / name / "eval_results.json")]
    done = cli("data", "fetch", "locomo-audit", "--source", loose, *fc, "--dest", tmp_path / "d")
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path / "d") == {AUDIT_FILES[name].path: data for name, data in files.items()}


def test_a_wrong_hash_is_refused_naming_file_and_hashes_with_nothing_written(files, tmp_path, cli):
    write_layout(tmp_path / "clone", files)
    changed = tmp_path / "clone" / AUDIT_FILES["v2_scored"].path
    changed.write_bytes(files["v2_scored"] + b" ")
    refused = cli("data", "fetch", "locomo-audit", "--source", tmp_path / "clone")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"{changed}: sha256: expected {AUDIT_FILES['v2_scored'].sha256}" in refused.stderr
    assert "got " in refused.stderr and "nothing written" in refused.stderr
    assert not (tmp_path / "stored").exists()

    one = tmp_path / "eval_results.json"
    one.write_text("[]")
    named = cli("data", "fetch", "locomo-audit", "--source", one)
    assert named.returncode == 2 and AUDIT_FILES["fc_gpt-4o-mini-cot"].sha256 in named.stderr
    assert not (tmp_path / "stored").exists()


def test_a_partial_set_is_stored_and_what_is_missing_is_said(files, tmp_path, cli):
    some = {name: files[name] for name in ("errors", "answer_key")}
    write_layout(tmp_path / "part", some)
    first = cli("data", "fetch", "locomo-audit", "--source", tmp_path / "part")
    assert first.returncode == 0, first.stderr
    assert "2 of 10 files" in first.stdout
    assert first.stderr.splitlines() == [f"still missing: {f.name} ({f.path})" for f in AUDIT_FILES.values()
                                         if f.name not in some]
    write_layout(tmp_path / "rest", {name: data for name, data in files.items() if name not in some})
    second = cli("data", "fetch", "locomo-audit", "--source", tmp_path / "rest")
    assert second.returncode == 0 and "10 of 10 files" in second.stdout and second.stderr == ""
    assert len(stored(tmp_path / "stored")) == 10

    empty = tmp_path / "empty"
    empty.mkdir()
    none = cli("data", "fetch", "locomo-audit", "--source", empty, "--dest", tmp_path / "other")
    assert none.returncode == 2 and "holds none of the audit's files" in none.stderr
    assert not (tmp_path / "other").exists()


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture()
def served(files, tmp_path, monkeypatch):
    root = write_layout(tmp_path / "site" / AUDIT_REPO / AUDIT_COMMIT, files)
    handler = partial(Quiet, directory=str(tmp_path / "site"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(fetch, "RAW_BASE", f"http://127.0.0.1:{server.server_address[1]}")
    yield root
    server.shutdown()
    server.server_close()


def test_without_source_each_file_is_downloaded_at_the_pinned_commit(served, files, tmp_path, cli):
    done = cli("data", "fetch", "locomo-audit")
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path / "stored") == {AUDIT_FILES[name].path: data for name, data in files.items()}


def test_offline_the_one_line_names_what_to_fetch_and_from_where(files, tmp_path, cli, monkeypatch):
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused, as offline
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(fetch, "RAW_BASE", f"http://127.0.0.1:{port}")
    failed = cli("data", "fetch", "locomo-audit")
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1
    assert f"github.com/{AUDIT_REPO} at commit {AUDIT_COMMIT}" in failed.stderr
    assert all(f.path in failed.stderr for f in AUDIT_FILES.values())
    assert "--source FOLDER" in failed.stderr and "nothing written" in failed.stderr
    assert not (tmp_path / "stored").exists()


def test_one_file_missing_from_the_server_writes_nothing(served, tmp_path, cli):
    (served / AUDIT_FILES["fc_gpt-4o-mini-cot"].path).unlink()
    failed = cli("data", "fetch", "locomo-audit")
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1
    assert "fc-baseline/results/gpt-4o-mini-cot/eval_results.json: download: failed (" in failed.stderr
    assert not (tmp_path / "stored").exists()


def test_data_status_says_what_is_stored_missing_or_edited(files, tmp_path, cli, monkeypatch):
    monkeypatch.setenv("MEMEVAL_PROTOCOLS_DIR", str(tmp_path / "protocols"))
    write_layout(tmp_path / "part", {"errors": files["errors"], "v1_scored": files["v1_scored"]})
    cli("data", "fetch", "locomo-audit", "--source", tmp_path / "part", check=True)
    (tmp_path / "stored" / AUDIT_FILES["v1_scored"].path).write_bytes(b"{}")
    status = cli("data", "status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert "  errors: stored, SHA-256 verified — errors.json" in lines
    assert "  answer_key: not fetched — ap-baseline/answer_key.json" in lines
    edited = next(line for line in lines if line.startswith("  v1_scored: "))
    assert edited.startswith(f"  v1_scored: refused: not {AUDIT_FILES['v1_scored'].origin}")
    assert lines[-1] == "  9 of 10 not usable; `memeval data fetch locomo-audit` fetches them"
    assert "  mem0_judge: not fetched (paraphrased) — " in status.stdout
