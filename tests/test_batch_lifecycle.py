"""Saved batch ids that outlive their batch (deleted, archived, expired) are forgotten with one line and their
requests sent again; transient errors keep them. Driven through the real SDK against tests/fake_anthropic.py, and
`memeval cache batches` as a process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from memeval.llm import AnthropicBackend, LLMClient, LLMError, LLMRequest, ResponseCache
from memeval.llm.batch import api_custom_id, run_batch
from tests.fake_anthropic import error

DAY = 24 * 3600
MEMEVAL = Path(sys.executable).parent / "memeval"
TRACEBACK = "Traceback (most recent call last)"


def _items(n=4):
    return [(f"conv-26:q{i:04d}:rag_turns:r0",
             LLMRequest(model="claude-sonnet-4-6", messages=(("user", f"question {i}"),), system="grade",
                        max_tokens=256, temperature=0.5, template_version="g1"))
            for i in range(n)]


def _client(tmp_path, max_retries=6):
    return LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), max_retries=max_retries,
                     sleep=lambda s: None)


def _run(tmp_path, notes=None, **kwargs):
    kwargs.setdefault("poll_interval_s", 0)
    return run_batch(_client(tmp_path, kwargs.pop("max_retries", 6)), _items(), "judge", sleep=lambda s: None,
                     notify=(notes.append if notes is not None else lambda line: None), **kwargs)


def _leave_running(fake, tmp_path) -> str:
    """A run killed while its batch was processing: the id is saved, nothing answered yet."""
    fake.batch_polls_before_end = 3
    with pytest.raises(LLMError, match="rerun to resume"):
        _run(tmp_path, timeout_s=0)
    (batch_id,) = [s.batch_id for s in ResponseCache(tmp_path).saved_batches()]
    return batch_id


def _saved_long_ago(tmp_path, hours=2) -> None:
    """Move every saved id's timestamp back, as if the killed run was hours ago."""
    with sqlite3.connect(tmp_path / "responses.sqlite") as conn:
        conn.execute("UPDATE batches SET created = datetime(created, ?)", (f"-{hours} hours",))


def _answered(results) -> dict[str, str]:
    return {label: r.text for label, r in results.items() if not isinstance(r, Exception)}


ECHOES = {label: f"echo: {request.messages[0][1]}" for label, request in _items()}


def test_a_deleted_batch_is_forgotten_and_its_requests_go_into_a_new_batch(fake, tmp_path):
    stale = _leave_running(fake, tmp_path)
    fake.delete_batch(stale)
    _saved_long_ago(tmp_path)
    notes = []
    results = _run(tmp_path, notes)
    assert _answered(results) == ECHOES
    assert len(fake.batches) == 2 and len(fake.batches["msgbatch_fake_2"]["requests"]) == 4
    (note,) = notes
    assert stale in note and "404" in note and "4 uncached requests are sent again in a new batch" in note
    assert ResponseCache(tmp_path).saved_batches() == []
    assert fake.rejected == []
    again = _run(tmp_path)
    assert len(fake.batches) == 2 and all(r.cached for r in again.values())


def test_a_404_soon_after_saving_is_the_api_catching_up_and_keeps_the_id(fake, tmp_path):
    young = _leave_running(fake, tmp_path)
    fake.delete_batch(young)  # what the API answers for minutes after create (anthropic-sdk-python#1432)
    with pytest.raises(LLMError, match=f"batch {young} still not found yet"):
        _run(tmp_path, timeout_s=0)
    assert [s.batch_id for s in ResponseCache(tmp_path).saved_batches()] == [young]
    assert len(fake.batches) == 1, "resubmitted on a 404 that may be transient"


def test_an_archived_batch_is_forgotten_instead_of_the_sdks_bare_error(fake, tmp_path):
    archived = _leave_running(fake, tmp_path)
    sdk = anthropic.Anthropic()
    while sdk.messages.batches.retrieve(archived).processing_status != "ended":
        pass
    fake.backdate(archived, 30 * DAY)
    batch = sdk.messages.batches.retrieve(archived)
    assert batch.archived_at is not None and batch.results_url is None and batch.request_counts.succeeded == 4
    with pytest.raises(anthropic.AnthropicError, match="No `results_url`"):  # what used to reach the user
        sdk.messages.batches.results(archived)
    notes = []
    results = _run(tmp_path, notes)
    assert _answered(results) == ECHOES
    (note,) = notes
    assert archived in note and "archived on" in note and "sent again in a new batch" in note
    assert ResponseCache(tmp_path).saved_batches() == [] and len(fake.batches) == 2


def test_a_batch_whose_every_request_expired_is_sent_again_in_the_same_run(fake, tmp_path):
    expired = _leave_running(fake, tmp_path)
    fake.backdate(expired, DAY + 60)  # 24 hours and still processing: every request expires
    notes = []
    results = _run(tmp_path, notes)
    assert _answered(results) == ECHOES
    (note,) = notes
    assert expired in note and "expired" in note
    assert len(fake.batches) == 2


def test_a_batch_that_expires_while_polled_fails_its_rows_and_the_next_run_resends_them(fake, tmp_path):
    fake.batch_polls_before_end = 3
    notes = []

    def a_day_passes(update):
        fake.backdate(update["batch_id"], DAY + 60)

    results = _run(tmp_path, notes, progress=a_day_passes)
    assert all(isinstance(r, LLMError) and "the next run sends this request again" in str(r)
               for r in results.values()), results
    (note,) = notes
    assert "msgbatch_fake_1" in note and "fail for now" in note
    assert ResponseCache(tmp_path).saved_batches() == []
    assert _answered(_run(tmp_path)) == ECHOES and len(fake.batches) == 2


@pytest.mark.parametrize("status", [429, 500, 529])
def test_transient_errors_on_a_saved_batch_keep_its_id(fake, tmp_path, status):
    saved = _leave_running(fake, tmp_path)
    _saved_long_ago(tmp_path, hours=24 * 40)
    fake.batch_faults["retrieve"] = [error(status)] * 3
    with pytest.raises(LLMError, match=f"batch retrieve: gave up after 3 attempts: {status}"):
        _run(tmp_path, max_retries=2)
    assert [s.batch_id for s in ResponseCache(tmp_path).saved_batches()] == [saved]
    results = _run(tmp_path)
    assert _answered(results) == ECHOES
    assert len(fake.batches) == 1, "resubmitted instead of resuming after a transient error"


def test_a_results_404_on_a_recent_batch_is_retried_not_forgotten(fake, tmp_path):
    fake.batch_faults["results"] = [error(404)] * 2  # results() 404 just after ended (anthropic-sdk-python#1432)
    results = _run(tmp_path, max_retries=3)
    assert _answered(results) == ECHOES and len(fake.batches) == 1
    fake.batch_faults["results"] = [error(404)] * 5
    with pytest.raises(LLMError, match="batch results: gave up"):
        run_batch(_client(tmp_path, max_retries=1), _items(6)[4:] + _items(4), "judge", poll_interval_s=0,
                  sleep=lambda s: None)
    assert [s.batch_id for s in ResponseCache(tmp_path).saved_batches()] == ["msgbatch_fake_2"]


def test_the_fake_refuses_to_delete_a_batch_still_processing(fake, tmp_path):
    batch_id = _leave_running(fake, tmp_path)
    sdk = anthropic.Anthropic()
    with pytest.raises(anthropic.BadRequestError, match="finished processing"):
        sdk.messages.batches.delete(batch_id)
    while sdk.messages.batches.retrieve(batch_id).processing_status != "ended":
        pass
    assert sdk.messages.batches.delete(batch_id).type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        sdk.messages.batches.retrieve(batch_id)


# --- memeval cache batches, as a process ---------------------------------------------------------------------


def _memeval(tmp_path, *args, online=False):
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path)}
    if not online:
        env.pop("ANTHROPIC_API_KEY", None)
        env.pop("ANTHROPIC_BASE_URL", None)
    return subprocess.run([str(MEMEVAL), "cache", "batches", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_list_works_offline_from_the_cache_alone(fake, tmp_path):
    batch_id = _leave_running(fake, tmp_path)
    fake.server.shutdown()  # no API to ask
    proc = _memeval(tmp_path, "list")
    assert proc.returncode == 0, proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if batch_id in line]
    assert "| judge |" in row and "| 4 |" in row and "not checked" in row
    listed = json.loads(_memeval(tmp_path, "list", "--json").stdout)
    assert [(b["run"], b["batch_id"], b["requests"], b["status"]) for b in listed] == [("judge", batch_id, 4, None)]
    assert listed[0]["saved_utc"] == ResponseCache(tmp_path).saved_batches()[0].saved_utc


def test_list_check_asks_the_api(fake, tmp_path):
    running = _leave_running(fake, tmp_path)
    deleted = _leave_running(fake, tmp_path / "other")
    fake.delete_batch(deleted)
    with sqlite3.connect(tmp_path / "other" / "responses.sqlite") as conn:
        row = conn.execute("SELECT name, batch_id, custom_ids FROM batches").fetchone()
    cache = ResponseCache(tmp_path)
    cache.save_batch(row[0].replace("judge", "judge-old"), row[1], json.loads(row[2]))
    _saved_long_ago(tmp_path, hours=48)
    proc = _memeval(tmp_path, "list", "--check", "--json", online=True)
    assert proc.returncode == 0, proc.stderr
    status = {b["batch_id"]: b["status"] for b in json.loads(proc.stdout)}
    assert status[running].startswith("in_progress (4 processing)")
    assert status[deleted].startswith("gone: the API answers 404 not_found_error")
    assert {s.batch_id for s in cache.saved_batches()} == {running, deleted}, "--check forgot something"


def test_forget_removes_the_id_and_the_next_run_sends_a_new_batch(fake, tmp_path):
    batch_id = _leave_running(fake, tmp_path)
    proc = _memeval(tmp_path, "forget", batch_id)
    assert proc.returncode == 0, proc.stderr
    assert batch_id in proc.stdout and "4 requests" in proc.stdout
    assert ResponseCache(tmp_path).saved_batches() == []
    assert _answered(_run(tmp_path)) == ECHOES and len(fake.batches) == 2


def test_forget_an_unknown_id_is_one_line_and_exit_2(fake, tmp_path):
    kept = _leave_running(fake, tmp_path)
    proc = _memeval(tmp_path, "forget", "msgbatch_unknown")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("memeval: error: msgbatch_unknown")
    assert TRACEBACK not in proc.stderr
    assert [s.batch_id for s in ResponseCache(tmp_path).saved_batches()] == [kept]


def test_no_cache_is_listed_as_empty_and_never_created(tmp_path):
    where = tmp_path / "none"
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(where)}
    listed = subprocess.run([str(MEMEVAL), "cache", "batches", "list"], capture_output=True, text=True, env=env,
                            timeout=120)
    forgot = subprocess.run([str(MEMEVAL), "cache", "batches", "forget", "msgbatch_x"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert listed.returncode == 0 and "no saved batches" in listed.stdout
    assert forgot.returncode == 2 and forgot.stderr.count("\n") == 1 and TRACEBACK not in forgot.stderr
    assert not where.exists()


@pytest.mark.parametrize("args", [["--help"], ["list", "--help"], ["forget", "--help"]])
def test_help_at_every_level(tmp_path, args):
    proc = _memeval(tmp_path, *args)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: memeval cache batches")
    assert proc.stderr == ""


def test_list_check_needs_a_key_and_says_so_in_one_line(fake, tmp_path):
    _leave_running(fake, tmp_path)
    proc = _memeval(tmp_path, "list", "--check")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "ANTHROPIC_API_KEY" in proc.stderr
    assert api_custom_id("conv-26:q0000:rag_turns:r0") in ResponseCache(tmp_path).saved_batches()[0].custom_ids
