"""What the LLM layer says when something is off, as a new user met it (issue 44's trial): each message names
what is actually wrong, never a neighbouring cause."""

from __future__ import annotations

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
