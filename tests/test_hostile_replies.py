"""Hostile servers, as a user meets them: `memeval locomo run` through the real SDK against tests/fake_anthropic.py
answering with replies larger than their cap, usage that is not a count, requests held past the timeout, and base
URLs carrying credentials. Each run ends with the exit code and closing line the docs promise (docs/llm.md,
"Bounds of a call"), releases its lock, and stores nothing bogus: no answer, no cache entry, no credential."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

URL_SECRET = "URLTOKEN-do-not-store-4242"


def _run(cli, locomo_dir, out: Path, *extra):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3",
               "--systems", "rag_turns", "--reader", "claude", "--out", out, "--no-progress", *extra)


@pytest.fixture()
def server(monkeypatch, tmp_path):
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(responder=lambda body: "Caroline") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


def _cached_replies(tmp_path: Path) -> int:
    path = tmp_path / "cache" / "responses.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("select count(*) from responses").fetchone()[0]


def _closing(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def _answers(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("size", [3 << 20, 20_000], ids=["body", "text"])
def test_an_oversized_reply_is_never_an_answer(size, server, locomo_dir, tmp_path, cli):
    """The issue's run: megabytes of text a reply (usage: 20 output tokens), stored as three answers, lock left."""
    server.responder = lambda body: "x" * size
    out = tmp_path / "run"
    result = _run(cli, locomo_dir, out, "--answer-max-tokens", "64")
    assert result.returncode == 4, result.stderr
    assert _closing(result).startswith("memeval: incomplete: 3 of 3 answers failed (InvalidReply)"), result.stderr
    assert "longer than its request's max_tokens can produce" in _closing(result) and "Traceback" not in result.stderr
    rows = _answers(out)
    assert all(r["prediction"] == "" and r["error"].startswith("InvalidReply: ") for r in rows), rows
    assert (out / "answers.jsonl").stat().st_size < 10_000 and not (out / ".memeval.lock").exists()
    assert _cached_replies(tmp_path) == 0
    server.responder = lambda body: "Caroline"  # a rerun asks again, and a sane reply completes the run
    assert _run(cli, locomo_dir, out, "--answer-max-tokens", "64").returncode == 0


def test_negative_usage_is_not_priced_against_the_budget(server, locomo_dir, tmp_path, cli):
    server.usage = {"output_tokens": -5_000_000}
    out = tmp_path / "run"
    result = _run(cli, locomo_dir, out, "--budget-usd", "1")
    assert result.returncode == 4 and "(InvalidReply)" in _closing(result), result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    spent = manifest["invocations"][-1]["llm"]
    assert manifest["complete"] is False and spent["cost_usd"] == 0 and spent["output_tokens"] == 0, spent
    assert all("usage.output_tokens is -5000000" in r["error"] for r in _answers(out))
    assert _cached_replies(tmp_path) == 0


def test_a_server_that_holds_every_request_fails_the_rows_within_the_timeout(server, locomo_dir, tmp_path, cli,
                                                                             monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_TIMEOUT_S", "0.3")
    server.latency_s = 1.0
    out = tmp_path / "run"
    result = _run(cli, locomo_dir, out, "--questions", "first:1")
    assert result.returncode == 4, result.stderr
    assert _closing(result).startswith("memeval: incomplete: 1 of 1 answers failed (TimedOut)"), result.stderr
    assert "MEMEVAL_LLM_TIMEOUT_S sets the seconds" in _closing(result)
    [row] = _answers(out)
    assert row["error"].startswith("TimedOut: gave up after 3 attempts") and "APITimeoutError" in row["error"], row
    assert "gave up after 3 attempts" in row["error"] and "APITimeoutError" in row["error"], row
    assert "MEMEVAL_LLM_TIMEOUT_S" in row["error"] and len(server.received) == 3
    assert not (out / ".memeval.lock").exists()


@pytest.mark.parametrize("value", ["soon", "0", "-5", "1e9"])
def test_a_bad_timeout_variable_is_one_line_and_nothing_is_written(value, server, locomo_dir, tmp_path, cli,
                                                                   monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_TIMEOUT_S", value)
    out = tmp_path / "run"
    result = _run(cli, locomo_dir, out)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "MEMEVAL_LLM_TIMEOUT_S" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and server.received == []


def _everything_written(*roots: Path) -> bytes:
    return b"".join(p.read_bytes() for root in roots if root.exists() for p in sorted(root.rglob("*")) if p.is_file())


def test_a_token_in_the_base_url_is_kept_out_of_every_file(server, locomo_dir, tmp_path, cli, monkeypatch):
    """`?token=` in ANTHROPIC_BASE_URL: the run works (the SDK is given the URL) and no file holds the token;
    a second token for the same endpoint resumes the same run from the cache."""
    out = tmp_path / "run"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{server.url}?token={URL_SECRET}")
    first = _run(cli, locomo_dir, out)
    assert first.returncode == 0, first.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert "token=<redacted>" in json.dumps(manifest), manifest["llm"]
    sent = len(server.received)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{server.url}?token=another-{URL_SECRET[::-1]}")
    again = _run(cli, locomo_dir, out)
    assert again.returncode == 0 and len(server.received) == sent, "the same endpoint: one run, one cache"
    written = _everything_written(out, tmp_path / "cache")
    assert URL_SECRET.encode() not in written and URL_SECRET[::-1].encode() not in written
    assert URL_SECRET not in first.stdout + first.stderr + again.stdout + again.stderr


def test_a_password_in_the_base_url_is_kept_out_of_the_error_line_and_the_manifest(server, locomo_dir, tmp_path,
                                                                                  cli, monkeypatch):
    """httpx sends a URL's user and password as Basic auth, which the API refuses (401): the one line and the
    manifest name the endpoint without them."""
    host = server.url.removeprefix("http://")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://proxy:{URL_SECRET}@{host}")
    out = tmp_path / "run"
    result = _run(cli, locomo_dir, out)
    assert result.returncode == 1 and "401" in result.stderr and URL_SECRET not in result.stdout + result.stderr
    assert URL_SECRET.encode() not in _everything_written(out, tmp_path / "cache")


def test_doctor_names_the_endpoint_without_its_token(server, cli, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{server.url}?token={URL_SECRET}")
    result = cli("doctor", "--json")
    assert json.loads(result.stdout)["endpoint"] == f"{server.url}?token=<redacted>", result.stdout
    assert URL_SECRET not in result.stdout + result.stderr
