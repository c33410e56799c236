"""Bounds that say what is allowed and exit codes that mean what docs/layout.md says (issue 40, items 6 and 12):
every count flag has an upper bound named in its one-line refusal, a `--scheduler` that is not a Dask scheduler is
one line, `--out` naming a file is bad input (2), a full disk under the cache is the machine's (1), a package's
id and costs follow the documented rules, and `memeval score` with nothing scorable ends in `memeval: error:`."""

from __future__ import annotations

import argparse
import json
import re
import socket
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from memeval.commands.arguments import BOUNDS
from tests.alarms import deadline


def one_error_line(result, *fragments: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr
    assert lines and lines[-1].startswith(("memeval: error:", "memeval ")), result.stderr
    for fragment in fragments:
        assert fragment in lines[-1], lines[-1]
    return lines[-1]


# --- count flags ------------------------------------------------------------------------------------------------
TOO_MANY = [
    (["memaudit", "sweep", "small", "--budgets", "2", "--jobs", "10000", "--out", "OUT"], "--jobs"),
    (["memaudit", "sweep", "small", "--budgets", "2", "--n-seeds", str(10**12), "--out", "OUT"], "--n-seeds"),
    (["memaudit", "sweep", "small", "--budgets", "2", "--facts", "1000000", "--out", "OUT"], "--facts"),
    (["memaudit", "sweep", "small", "--budgets", "2", "--seed-start", str(2**64), "--out", "OUT"], "--seed-start"),
    (["memaudit", "generate", "small", "--distribution", "update_chain", "--count", str(10**9), "--output",
      "OUT/p.json"], "--count"),
    (["memaudit", "generate", "small", "--updates", "1000000", "--output", "OUT/p.json"], "--updates"),
    (["locomo", "run", "--k", "1000000", "--out", "OUT"], "--k"),
    (["locomo", "run", "--judge-runs", "100000", "--out", "OUT"], "--judge-runs"),
    (["locomo", "run", "--max-concurrency", "100000", "--out", "OUT"], "--max-concurrency"),
    (["longmemeval", "run", "--questions", str(10**9), "--out", "OUT"], "--questions"),
    (["graph80", "run", "--repeats", "1000000", "--out", "OUT"], "--repeats"),
    (["natural", "build", "--target", str(10**9), "--out", "OUT"], "--target"),
    (["serve-local", "--port", "70000"], "--port"),
    (["serve-local", "--threads", "100000"], "--threads"),
]


@pytest.mark.parametrize("argv, flag", TOO_MANY, ids=[flag for _, flag in TOO_MANY])
def test_a_count_past_its_bound_is_one_line_naming_what_is_allowed(argv, flag, capsys, tmp_path):
    """Refused by the parser, before any work (parsed only here: accepted, these would start the work): exit 2,
    the flag and its allowed range in the line."""
    from memeval.cli import build_parser

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([a.replace("OUT", str(out)) for a in argv])
    low, high, _ = BOUNDS[flag]
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert f"argument {flag}" in line and f"from {low} to {high:,}" in line, line
    assert re.search(r"got '\d+'$", line)
    assert not out.exists()


def test_every_integer_flag_of_every_command_is_bounded():
    """A new integer flag without an upper bound (argparse's `int`, or a lower bound alone) fails here; the one
    exception, --max-per-group, is clamped to its group's size where it is used."""
    from memeval.cli import build_parser
    from memeval.commands.arguments import non_negative_int, positive_int

    unbounded = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif action.type in (int, positive_int, non_negative_int) and "--max-per-group" not in action.option_strings:
                unbounded.append(f"{path} {'/'.join(action.option_strings)}")

    walk(build_parser(), "memeval")
    assert not unbounded, unbounded


def test_the_bounds_are_listed_in_the_docs():
    docs = (Path(__file__).parents[1] / "docs" / "layout.md").read_text()
    missing = [flag for flag, (_, high, _) in BOUNDS.items() if not re.search(rf"`{flag}` [^,;]*?{high:,}", docs)]
    assert not missing, missing


# --- a scheduler that is not a Dask scheduler -----------------------------------------------------------------------
@contextmanager
def listener(reply: bytes | None):
    """A TCP port on 127.0.0.1 that accepts and then sends `reply` (an HTTP server's) or nothing at all."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held, stop = [], threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if reply:
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


class Hung(BaseException):
    """Not an Exception: the code under test catches TimeoutError and OSError, and must not catch this."""


def hang_guard(seconds: int):
    """Turns a hang (the code before the fix waited forever on a silent port) into a failure."""
    return deadline(seconds, Hung)


@pytest.mark.parametrize("reply", [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", None], ids=["http", "silent"])
def test_a_scheduler_address_that_is_not_dask_is_one_line_and_nothing_written(reply, cli, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import memeval.memaudit.sweep as sweep

    monkeypatch.setattr(sweep, "SCHEDULER_TIMEOUT_S", 1)
    out = tmp_path / "sweep"
    with listener(reply) as port, hang_guard(60):
        result = cli("memaudit", "sweep", "small", "--budgets", "2", "--n-seeds", "1", "--backend", "dask",
                     "--scheduler", f"tcp://127.0.0.1:{port}", "--no-progress", "--out", out)
    assert result.returncode == 2
    one_error_line(result, "--scheduler", "no Dask scheduler answered")
    assert not out.exists()


# --- --out naming a file -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["memaudit", "sweep", "small", "--budgets", "2", "--n-seeds", "1", "--no-progress", "--out"],
    ["graph80", "generate", "--out"],
], ids=["sweep", "graph80"])
@pytest.mark.parametrize("below", [False, True], ids=["the-file", "under-the-file"])
def test_out_naming_a_file_is_bad_input_and_the_file_is_kept(argv, below, cli, tmp_path):
    existing = tmp_path / "notes.txt"
    existing.write_text("mine\n")
    result = cli(*argv, existing / "run" if below else existing)
    assert result.returncode == 2
    one_error_line(result, "--out", "is a file")
    assert existing.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


# --- packages: the id rule and the least cost -----------------------------------------------------------------------
def package_doc(package_id: str = "p1", cost: float = 1.0) -> dict:
    return {"schema": "memaudit.package/v1", "package_id": package_id, "budget": 2, "max_per_group": 1,
            "experiences": [{"id": "e0", "text": "", "time": 0}, {"id": "e1", "text": "", "time": 1}],
            "candidates": [{"id": "e0:f", "experience": "e0", "kind": "fact", "cost": cost, "text": "a"},
                           {"id": "e1:f", "experience": "e1", "kind": "fact", "cost": 1.0, "text": "b"}],
            "units": [{"id": "u0", "weight": 1.0, "kind": "fact"}, {"id": "u1", "weight": 1.0, "kind": "fact"}],
            "coverage": [{"candidate": "e0:f", "unit": "u0", "value": 1.0},
                         {"candidate": "e1:f", "unit": "u1", "value": 0.5}]}


@pytest.mark.parametrize("package_id", ["../escape", "a\nb", "café", "x/../../y", "-lead"])
@pytest.mark.parametrize("command", ["validate", "solve", "sweep natural"])
def test_a_package_id_against_the_id_rule_is_refused(package_id, command, cli, tmp_path):
    packages = tmp_path / "packages"
    packages.mkdir()
    path = packages / "p.json"
    path.write_text(json.dumps(package_doc(package_id)))
    out = tmp_path / "sweep"
    argv = {"validate": ["memaudit", "validate", path], "solve": ["memaudit", "solve", path, "--method", "greedy"],
            "sweep natural": ["memaudit", "sweep", "natural", "--packages", packages, "--budgets", "2",
                              "--no-progress", "--out", out]}[command]
    result = cli(*argv)
    assert result.returncode == 2
    one_error_line(result, "package_id", "not a safe id")
    assert not out.exists()


@pytest.mark.parametrize("cost", [5e-324, 1e-300, 1e-7])
def test_a_cost_below_the_least_is_refused_by_validate_and_solve(cost, cli, tmp_path):
    from memeval.memaudit.tolerance import MIN_COST

    path = tmp_path / "p.json"
    path.write_text(json.dumps(package_doc(cost=cost)))
    for argv in (["memaudit", "validate", path], ["memaudit", "solve", path, "--method", "density_only"],
                 ["memaudit", "solve", path, "--method", "greedy"]):
        result = cli(*argv)
        assert result.returncode == 2, result.stdout
        one_error_line(result, "candidates[e0:f].cost", f">= {MIN_COST:g}")


def test_the_least_cost_itself_solves(cli, tmp_path):
    from memeval.memaudit.tolerance import MIN_COST

    path = tmp_path / "p.json"
    path.write_text(json.dumps(package_doc(cost=MIN_COST)))
    for method in ("density_only", "greedy", "opt"):
        result = cli("memaudit", "solve", path, "--method", method, "--json", check=True)
        assert json.loads(result.stdout)["value"] == pytest.approx(1.5)


# --- a full disk under the response cache ---------------------------------------------------------------------------
def test_a_full_disk_under_the_cache_is_an_os_error(tmp_path):
    """SQLite's own SQLITE_FULL (max_page_count stands in for the disk): the machine's, not bad input."""
    import errno

    from memeval.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    cache.put("k0", {"a": 1}, {"text": "small"})
    conn = cache._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(OSError) as caught:
        cache.put("k1", {"a": 2}, {"text": "x" * 1_000_000})
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(cache.path)


def test_a_full_disk_under_the_cache_exits_1(cli, tmp_path, monkeypatch):
    from memeval.llm.cache import ResponseCache

    opened = ResponseCache._conn

    def full(self) -> sqlite3.Connection:  # the disk filled before the cache's tables could be written
        conn = opened(self)
        conn.execute("PRAGMA max_page_count = 1")
        return conn

    monkeypatch.setattr(ResponseCache, "_conn", full)
    result = cli("cache", "prune", "--older-than", "1", "--dir", tmp_path / "cache")
    assert result.returncode == 1
    one_error_line(result, "responses.sqlite", "ENOSPC", "free space")


# --- score: nothing scorable -----------------------------------------------------------------------------------------
def test_score_with_no_scorable_row_is_one_error_line_exit_2(cli, tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"prediction": "a", "answer": "a", "category": 9}\n[1, 2]\n')
    result = cli("score", path)
    assert result.returncode == 2
    line = one_error_line(result, str(path), "predictions", "none of its 2 rows could be scored")
    assert line.startswith("memeval: error: ") and result.stderr == line + "\n"
    assert result.stdout == ""


def test_score_with_some_bad_rows_still_scores_the_rest(cli, tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"prediction": "a", "answer": "a", "category": 1}\n{"prediction": 3}\n')
    result = cli("score", path)
    assert result.returncode == 0
    assert f"{path}:2: prediction: expected string" in result.stderr or f"{path}:2: category" in result.stderr
    assert "1 bad row(s) skipped" in result.stdout
