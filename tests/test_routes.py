"""A dry run says where its requests will go (issue 42): one line a provider with the base URL as recorded (no user,
password or query value), what set it, and the models sent there with their roles; a provider whose replies can
only come from the cache says why nothing is sent."""

from __future__ import annotations

import json

from memeval.commands.estimates import estimate_table
from memeval.llm.client import LLMRequest, make_client
from memeval.llm.routes import route_lines
from memeval.llm.settings import ModelSettings
from memeval.llm.types import RunEstimate

ARGS = ("locomo", "run", "--conversations", "conv-26", "--questions", "first:2", "--systems", "rag_turns",
        "--reader", "claude", "--judge", "binary", "--no-progress", "--dry-run")


def _requests(*roles) -> list[LLMRequest]:
    return [LLMRequest(model="", messages=(("user", f"{role} {i}"),), max_tokens=8, temperature=0.0,
                       template_version="t", role=role) for i, role in enumerate(roles)]


def test_a_local_server_is_named_by_its_url_without_credentials(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://me:hunter2@127.0.0.1:8000/v1?token=sk-SECRET")
    client = make_client("local", str(tmp_path / "cache"), settings=ModelSettings("local", models={"answer": "smollm2-135m", "judge": "smollm2-135m", "extract": "gemma3-270m"}))
    stage = client.estimate(_requests("answer", "judge", "answer", "extract"))
    lines = route_lines(RunEstimate({"answers": stage}, 0.0, "").routes)
    assert lines == ["requests go to http://127.0.0.1:8000/v1?token=<redacted> (--llm local, OPENAI_BASE_URL), "
                     "model smollm2-135m for answer, judge; model gemma3-270m for extract"]
    assert "hunter2" not in json.dumps(stage.as_dict()) and "sk-SECRET" not in json.dumps(stage.as_dict())


def test_each_provider_gets_its_line_and_one_without_a_key_says_it_sends_nothing(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = make_client("auto", str(tmp_path / "cache"), settings=ModelSettings("auto", models={"answer": "claude-opus-4-6",
                                                                  "judge": "gpt-4o-mini"}))
    answers = client.estimate(_requests("answer"))
    judge = client.estimate(_requests("judge"))
    lines = route_lines(RunEstimate({"answers": answers, "judge": judge}, 0.0, "").routes)
    assert lines == ["requests go nowhere (cache only: no ANTHROPIC_API_KEY): model claude-opus-4-6 for answer; "
                     "calls not in the cache fail",
                     "requests go to https://api.openai.com/v1 (OpenAI's API), model gpt-4o-mini for judge"]


def test_under_llm_local_a_cloud_openai_model_is_cache_only(monkeypatch, tmp_path):
    """A request that names OpenAI's own model (not one of the roles the user named for the local server)."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = make_client("local", str(tmp_path / "cache"), settings=ModelSettings("local", models={"answer": "smollm2-135m"}))
    pinned = LLMRequest(model="gpt-4o-mini", messages=(("user", "x"),), max_tokens=8, temperature=0.0,
                        template_version="t")
    lines = route_lines(RunEstimate({"s": client.estimate([*_requests("answer"), pinned])}, 0.0, "").routes)
    assert lines[1] == ("requests go nowhere (cache only: under --llm local OPENAI_BASE_URL is the local server's): "
                        "model gpt-4o-mini for other; calls not in the cache fail"), lines


def test_a_fully_cached_stage_goes_nowhere(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    client = make_client("local", str(tmp_path / "cache"), settings=ModelSettings("local", models={"answer": "smollm2-135m"}))
    assert client.estimate([]).routes == ()
    assert "requests go nowhere: every call is answered from the cache" in \
        estimate_table(RunEstimate({"answers": client.estimate([])}, 0.0, "note"))


def test_the_dry_run_prints_where_requests_go_and_json_keeps_it(fake, locomo_dir, tmp_path, cli):
    """`fake`: a loopback Anthropic API behind ANTHROPIC_BASE_URL (it counts tokens; nothing is sent)."""
    out = tmp_path / "run"
    printed = cli(*ARGS, "--data", locomo_dir, "--out", out, check=True).stdout
    assert f"requests go to {fake.url} (ANTHROPIC_BASE_URL), model claude-opus-4-6 for answer; model " \
           "claude-sonnet-4-6 for judge" in printed, printed
    raw = json.loads(cli(*ARGS, "--data", locomo_dir, "--out", out, "--json", check=True).stdout)
    assert raw["requests_go_to"] == [{"provider": "anthropic", "url": fake.url, "via": "ANTHROPIC_BASE_URL",
                                      "models": {"claude-opus-4-6": ["answer"], "claude-sonnet-4-6": ["judge"]}}]
    assert fake.received == [] and not out.exists()


def test_doctor_says_where_its_probes_went(monkeypatch, cli):
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url.replace("http://", "http://me:hunter2@"))
        done = cli("doctor", "--llm", "local", "--answer-model", "smollm2-135m", "--judge-model", "smollm2-135m",
                   "--extract-model", "smollm2-135m", check=True)
    assert f"requests go to {server.url} (--llm local, OPENAI_BASE_URL), model smollm2-135m for answer, judge, " \
           "extract" in done.stdout.splitlines(), done.stdout
    assert len(server.received) == 3 and "hunter2" not in done.stdout
