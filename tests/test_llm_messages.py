"""What the LLM layer says when something is off, as a new user met it (issue 44's trial): each message names
what is actually wrong, never a neighbouring cause."""

from __future__ import annotations

import json

import pytest

from memeval.llm.client import make_client
from memeval.llm.settings import ModelSettings
from memeval.llm.types import LLMRequest


def _ask(role: str) -> LLMRequest:
    return LLMRequest(role=role, messages=(("user", "hi"),), max_tokens=5)


def test_a_role_with_no_model_and_no_default_is_a_programming_error_naming_the_roles(tmp_path, monkeypatch):
    replay = make_client("replay", cache_dir=str(tmp_path / "replay"))
    with pytest.raises(ValueError, match=r"role 'summarize'.*answer, judge, extract, embed"):
        replay.complete(_ask("summarize"))
    assert replay.resolve(LLMRequest(model="claude-sonnet-4-6", role="summarize", messages=(("user", "hi"),))).model \
        == "claude-sonnet-4-6", "a model the protocol pins for its own role still goes"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing is sent: refused while resolving
    local = make_client("local", cache_dir=str(tmp_path / "local"), settings=ModelSettings("local", models={"answer": "m"}))
    with pytest.raises(ValueError, match=r"role 'summarize'"):
        local.complete(_ask("summarize"))


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once this returns: a connection is refused


def test_a_dry_run_against_a_server_it_cannot_reach_says_so_and_still_estimates(cli, locomo_dir, tmp_path,
                                                                               monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3",
               "--systems", "rag_turns", "--reader", "claude", "--judge", "binary", "--llm", "local",
               "--answer-model", "x", "--judge-model", "x", "--dry-run", "--json", "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    estimate = json.loads(done.stdout)
    unreachable = f"the server at {url} could not be reached (ConnectionRefusedError)"
    assert estimate["answers"]["token_count"] == f"estimate (4 characters a token): {unreachable}"
    assert estimate["answers"]["to_send"] == 3 and estimate["answers"]["input_tokens_est"] > 0
    assert done.stderr.count(f"{unreachable}: prompts are estimated") == 1, done.stderr
    assert "offers no tokenizer" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()
