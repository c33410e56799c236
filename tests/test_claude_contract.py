"""The Claude API contract end to end: the real SDK against a loopback server that rejects what the real API
rejects (tests/fake_anthropic.py says where each rule comes from)."""

import json
import threading

import pytest

from memeval.benchmarks.locomo.task import LocomoRunConfig, estimate_run
from memeval.cli import main
from memeval.errors import InputError
from memeval.jsonl import read_rows
from memeval.llm import AnthropicBackend, APIRejected, LLMClient, LLMError, LLMRequest, ResponseCache
from memeval.llm.batch import api_custom_id, run_batch
from memeval.llm.profiles import PROFILES
from memeval.llm.settings import ModelSettings
from tests.fake_anthropic import MODELS, TEST_SECRET, FakeAnthropic, error, first_text


@pytest.fixture()
def server(monkeypatch, tmp_path):
    lock = threading.Lock()
    judged = [0]

    def responder(body):
        text = first_text(body)
        if "Answer:" in text:
            return "7 May 2023"
        with lock:
            judged[0] += 1
            n = judged[0]
        if n % 9 == 0:
            return "I would rather not grade this."  # malformed: a -1 run, never a guess
        return '{"score": 80, "explanation": "close"}'

    with FakeAnthropic(responder=responder) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        import memeval.llm.client as client_module

        monkeypatch.setattr(client_module.time, "sleep", lambda s: None)
        yield fake


def _raw_sdk(fake, version=None):
    import anthropic

    headers = {"anthropic-version": version} if version else None
    return anthropic.Anthropic(base_url=fake.url, max_retries=0, default_headers=headers)


def test_the_fake_holds_the_published_rules(server):
    """The double must reject what the API rejects, or every other test here proves nothing."""
    import anthropic

    hello = [{"role": "user", "content": "hi"}]
    sdk_default = _raw_sdk(server)
    ok = sdk_default.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=hello)
    assert ok.content[0].text and server.versions_sent()[-1] == "2026-10-21"  # SDK 2.x default version
    with pytest.raises(anthropic.BadRequestError, match="temperature: Extra inputs are not permitted"):
        sdk_default.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=hello,
                                    extra_body={"temperature": 1.0})  # even the default value
    legacy = _raw_sdk(server, "2023-06-01")
    assert legacy.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=hello,
                                  extra_body={"temperature": 0.5}).content
    with pytest.raises(anthropic.BadRequestError, match="deprecated for this model"):
        legacy.messages.create(model="claude-opus-4-7", max_tokens=5, messages=hello, extra_body={"temperature": 0})
    with pytest.raises(anthropic.NotFoundError) as missing:
        legacy.messages.create(model="claude-sonnet-4-7", max_tokens=5, messages=hello)
    assert missing.value.request_id and missing.value.type == "not_found_error"
    with pytest.raises(anthropic.BadRequestError, match="anthropic-version"):
        _raw_sdk(server, "2024-01-01").messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=hello)
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=server.url, api_key="sk-wrong", max_retries=0).messages.create(
            model="claude-sonnet-4-6", max_tokens=5, messages=hello)
    with pytest.raises(anthropic.BadRequestError, match="top_k: Extra inputs"):
        sdk_default.messages.count_tokens(model="claude-sonnet-4-6", messages=hello, extra_body={"top_k": 5})


def test_every_profile_is_a_model_the_api_knows():
    from tests.fake_openai import REASONING, SNAPSHOTS

    claude = {m: p for m, p in PROFILES.items() if p.provider == "anthropic"}
    openai_models = {m: p for m, p in PROFILES.items() if p.provider == "openai"}
    assert set(claude) <= set(MODELS) and set(openai_models) <= set(SNAPSHOTS)
    assert set(claude) | set(openai_models) == set(PROFILES)
    for model, p in openai_models.items():  # reasoning models refuse temperature and max_tokens
        assert p.sampling != model.startswith(REASONING)
        assert p.max_tokens_field == "max_completion_tokens" or not model.startswith(REASONING)
    assert PROFILES["gpt-4o-2024-08-06"].max_tokens_field == "max_tokens", "LongMemEval's judge sends max_tokens"
    for model, p in claude.items():
        assert p.sampling == (MODELS[model][0] == "any" and p.api_version == "2023-06-01"), model


def _request(model="claude-sonnet-4-6", temperature=0.5, role="judge"):
    return LLMRequest(model=model, messages=(("user", "hello"),), max_tokens=16, temperature=temperature,
                      role=role)


def test_version_and_sampling_per_model(server, tmp_path):
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path))
    client.complete(_request())
    assert server.received[-1]["temperature"] == 0.5 and server.versions_sent()[-1] == "2023-06-01"
    with pytest.raises(InputError, match="--sampling model-default"):
        client.complete(_request("claude-opus-4-7", 0.0, role=""))
    assert len(server.received) == 1, "refused before sending"
    default = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path),
                        ModelSettings(sampling="model-default"))
    default.complete(_request("claude-opus-4-7", 0.0, role=""))
    assert "temperature" not in server.received[-1] and server.versions_sent()[-1] == "2026-10-21"
    assert server.rejected == []


def test_role_models_and_unknown_ids(server, tmp_path):
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path),
                       ModelSettings(models={"judge": "claude-haiku-4-5"}))
    client.complete(_request())
    assert server.received[-1]["model"] == "claude-haiku-4-5"
    with pytest.raises(InputError, match="known: claude-haiku-4-5"):
        LLMClient(AnthropicBackend(timeout=5), None, ModelSettings(models={"answer": "claude-opus-9"}))
    with pytest.raises(InputError, match="unknown model id"):
        client.complete(_request("claude-3-opus", role=""))


def test_cache_key_carries_version_and_sampling_sent(tmp_path):
    protocol = LLMClient(None, None).resolve(_request())
    default = LLMClient(None, None, ModelSettings(sampling="model-default")).resolve(_request())
    assert protocol.key_material()["api_version"] == "2023-06-01" and protocol.temperature == 0.5
    assert default.temperature is None and default.key != protocol.key
    assert protocol.key_material()["key_schema"] == 2


def test_retry_headers_are_honoured(server, tmp_path):
    slept = []
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=slept.append)
    server.faults = [error(429, retry_after="7", retry_after_ms="250"), error(529, retry_after="2"), error(408)]
    assert client.complete(_request()).attempts == 4
    assert slept[:2] == [0.25, 2.0] and len(slept) == 3
    server.faults = [error(503, should_retry="false")]
    with pytest.raises(LLMError, match="not to retry"):
        client.complete(_request(temperature=0.4))
    assert client.fatal is None
    server.faults = [error(409, should_retry="true")]
    assert client.complete(_request(temperature=0.3)).attempts == 2


def _run(locomo_dir, out, *extra):
    return main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions",
                 "prototype", "--systems", "rag_turns", "--answerer", "claude", "--judge", "graded",
                 "--out", str(out), "--no-progress", "--json", *extra])


def test_prototype_run_holds_the_contract_through_faults(server, locomo_dir, tmp_path, capsys):
    server.faults = [error(429, "0"), error(500), error(529), error(429, retry_after_ms="10"), error(503)]
    out = tmp_path / "run"
    assert _run(locomo_dir, out) == 0
    answers, judgments = read_rows(out / "answers.jsonl"), read_rows(out / "judgments.jsonl")
    assert len(answers) == 20 and all(r["error"] is None for r in answers)
    assert len(judgments) == 20 and all(j["run_count"] + j["scores"].count(-1.0) == 10 for j in judgments)
    assert any(-1.0 in j["scores"] for j in judgments), "malformed replies are -1 runs"
    judge_bodies = [b for b in server.received if b.get("system")]
    assert {b["temperature"] for b in judge_bodies} == {0.5}
    assert server.rejected == []
    versions = {v for v in server.versions_sent()}
    assert versions == {"2023-06-01"}
    manifest = json.loads((out / "manifest.json").read_text())
    judge = manifest["llm"]["roles"]["judge"]
    assert (judge["model"], judge["api_version"], judge["temperature_sent"]) == ("claude-sonnet-4-6", "2023-06-01",
                                                                                 0.5)
    assert judge["first_request_id"].startswith("req_fake_") and manifest["llm"]["sdk_version"].startswith("2.")
    sent = len(server.received)
    assert _run(locomo_dir, tmp_path / "rerun") == 0
    assert len(server.received) == sent, "an identical rerun sends nothing"


def test_a_rejecting_server_stops_the_run_after_one_call(server, locomo_dir, tmp_path, capsys):
    server.faults = [error(400)] * 50
    out = tmp_path / "run"
    assert _run(locomo_dir, out) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "400 invalid_request_error: injected" in err[0]
    assert "request-id req_fake_" in err[0] and "claude-opus-4-6" in err[0] and "2023-06-01" in err[0]
    assert len(server.received) == 1
    assert read_rows(out / "answers.jsonl") == [] and read_rows(out / "judgments.jsonl") == []


def test_a_rejected_judge_keeps_the_answers_and_writes_no_judgment(server, locomo_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:3",
                 "--systems", "rag_turns", "--answerer", "claude", "--out", str(out), "--no-progress",
                 "--json"]) == 0
    server.faults = [error(401)] * 50
    assert _run(locomo_dir, out, "--questions", "first:3") == 1
    assert "401" in capsys.readouterr().err
    assert len(read_rows(out / "answers.jsonl")) == 3 and read_rows(out / "judgments.jsonl") == []


def test_sampling_refused_before_any_call(server, locomo_dir, tmp_path, capsys):
    code = _run(locomo_dir, tmp_path / "run", "--answer-model", "claude-opus-4-7")
    assert code == 2 and "--answer-model: claude-opus-4-7" in capsys.readouterr().err
    assert server.received == [] and not (tmp_path / "run" / "answers.jsonl").exists()
    assert _run(locomo_dir, tmp_path / "run", "--answer-model", "claude-opus-4-7", "--sampling",
                "model-default") == 0
    answers = [b for b in server.received if b["model"] == "claude-opus-4-7"]
    assert len(answers) == 20 and all("temperature" not in b for b in answers)
    judges = [b for b in server.received if b["model"] == "claude-sonnet-4-6"]
    assert judges and all("temperature" not in b for b in judges)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["llm"]["sampling"] == "model-default" and server.rejected == []
    assert any("model-default" in n for n in json.loads(capsys.readouterr().out.splitlines()[-1])["notes"])


def test_batch_items_pass_validation_and_rejections_stop(server, tmp_path):
    client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=lambda s: None)
    items = [(f"q{i}", _request(temperature=0.5 + i / 100)) for i in range(3)]
    results = run_batch(client, items, "judge", poll_interval_s=0, sleep=lambda s: None)
    assert all(r.text for r in results.values()) and server.rejected == []
    (batch,) = server.batches.values()
    assert batch["version"] == "2023-06-01"
    items = [(f"r{i}", _request(temperature=0.2 + i / 100)) for i in range(3)]
    server.batch_errored = {api_custom_id("r1"): "invalid_request_error"}
    with pytest.raises(APIRejected, match="batch"):
        run_batch(client, items, "judge2", poll_interval_s=0, sleep=lambda s: None)
    assert client.lookup(items[0][1]) is not None and client.lookup(items[1][1]) is None


def test_dry_run_counts_tokens_with_the_endpoint_once(server, locomo_dir, tmp_path):
    config = LocomoRunConfig(out=str(tmp_path / "run"), data=str(locomo_dir), conversations="conv-26",
                             questions="prototype", systems=["full_context"], answerer="claude_official")
    estimate = estimate_run(config)
    assert estimate.stages["answers"].token_count.startswith("exact") and len(server.count_requests) == 20
    assert server.received == [] and server.rejected == []
    assert estimate.stages["answers"].cache_read_tokens_est > 0.9 * estimate.stages["answers"].input_tokens_est
    again = estimate_run(config)
    assert len(server.count_requests) == 20 and again.stages["answers"] == estimate.stages["answers"]


def test_dry_run_without_a_key_says_it_estimates(locomo_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    estimate = estimate_run(LocomoRunConfig(out=str(tmp_path / "run"), data=str(locomo_dir),
                                            conversations="conv-26", questions="prototype",
                                            systems=["full_context"], answerer="claude"))
    assert estimate.stages["answers"].token_count == "estimate (4 characters a token)"
    assert "4 characters a token" in estimate.note


def test_doctor_checks_each_role_under_its_version(server, capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["role"] for c in report["checks"]] == ["answer", "judge", "extract"]
    assert all(c["ok"] and c["api_version"] == "2023-06-01" for c in report["checks"])
    assert [b.get("temperature") for b in server.received] == [0.0, 0.5, 0.0] and server.rejected == []
    assert sum(c["cost_usd"] for c in report["checks"]) < 0.01
    server.faults = [error(404)]
    assert main(["doctor", "--judge-model", "claude-opus-4-7"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "opus-4-7" in out and "anthropic-version 2026-10-21, no temperature" in out


def test_doctor_without_a_key_says_what_it_would_check(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["doctor"]) == 2, "nothing was checked"
    out = capsys.readouterr().out
    assert "No ANTHROPIC_API_KEY: nothing sent" in out and "export ANTHROPIC_API_KEY" in out and "claude-sonnet-4-6" in out


def test_unusable_judge_replies_are_minus_one_and_failed_calls_no_run():
    from memeval.llm import LLMResponse
    from memeval.scoring.judge import judgment_from_outcomes, parse_reply

    good = LLMResponse(text='{"score": 70, "explanation": "ok"}', model="m", stop_reason="end_turn")
    assert parse_reply("graded", good) == (70.0, None)
    for stop in ("max_tokens", "refusal"):
        score, reason = parse_reply("graded", LLMResponse(text='{"score": 70', model="m", stop_reason=stop))
        assert score == -1.0 and stop in reason
    assert judgment_from_outcomes("graded", [good, LLMError("gave up")]) is None
    judged = judgment_from_outcomes("graded", [good] * 5 + [LLMResponse(text="?", model="m")])
    assert judged.scores == [70.0] * 5 + [-1.0] and judged.mean == 70.0


def test_structured_output_only_where_the_model_has_it(server, tmp_path):
    from memeval.scoring.judge import graded_request

    for model, sampling in (("claude-sonnet-4-6", "protocol"), ("claude-sonnet-5-5", "model-default")):
        client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path),
                           ModelSettings(sampling=sampling, models={"judge": model}))
        client.complete(graded_request("q", "g", "p", 4))
    with_schema, without = server.received
    assert with_schema["output_config"]["format"]["schema"]["required"] == ["score", "explanation"]
    assert "output_config" not in without and "temperature" not in without
    assert server.versions_sent() == ["2023-06-01", "2026-10-21"] and server.rejected == []


def test_five_five_cache_reads_are_priced_at_the_october_rates():
    """Since 2026-10-07 a 5.5 cache read costs 0.05x input (Sonnet 5.5 $0.10, Opus 5.5 $0.20 per MTok), not the
    0.1x of earlier models; a full-context run is mostly cache reads, so the estimate follows it."""
    sonnet, opus = PROFILES["claude-sonnet-5-5"], PROFILES["claude-opus-5-5"]
    assert (sonnet.cache_read_usd_mtok, opus.cache_read_usd_mtok) == (0.10, 0.20)
    assert sonnet.cost_usd(0, 0, 0, 1_000_000) == pytest.approx(0.10)
