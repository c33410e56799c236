"""The OpenAI-compatible provider through the real `openai` SDK against the local fake (tests/fake_openai.py):
the request on the wire, cost, cache (provider and base URL in the key), the error policy (401, 404, quota, rate
limit), a local server at $0, routing beside Anthropic, and the anchors' own judges end to end — Mem0's binary
judge on gpt-4o-mini and LongMemEval's yes/no judge on gpt-4o-2024-08-06 — then from the cache at zero requests."""

import json
import re

import pytest

from memeval.errors import InputError
from memeval.llm import APIRejected, LLMError, LLMRequest
from memeval.llm.client import make_client
from memeval.llm.settings import ModelSettings
from memeval.records import read_records
from tests.fake_openai import TEST_KEY, FakeOpenAI, quota_exhausted, rate_limited, server_error, user_text


def _judge_request(text="Is Paris in France?", **kw):
    return LLMRequest(model="claude-sonnet-4-6", messages=(("user", text),), system="be brief", max_tokens=40,
                      temperature=0.0, template_version="t", role="judge", **kw)


def test_the_sdk_sends_a_chat_completion_priced_from_the_profile(fake_openai, tmp_path):
    client = make_client("openai", cache_dir=str(tmp_path), sleep=lambda s: None)
    response = client.complete(_judge_request())
    body = fake_openai.received[0]
    assert body == {"model": "gpt-4o-mini", "max_completion_tokens": 40, "temperature": 0.0,
                    "messages": [{"role": "system", "content": "be brief"},
                                 {"role": "user", "content": "Is Paris in France?"}]}
    headers = {k.lower(): v for k, v in fake_openai.headers[0].items()}
    assert headers["authorization"] == f"Bearer {TEST_KEY}" and fake_openai.rejected == []
    assert response.model == "gpt-4o-mini-2024-07-18", "the served snapshot is what the row records"
    assert response.request_id == "req_" + f"{1:032x}" and response.stop_reason == "end_turn"
    assert response.cost_usd == pytest.approx((response.input_tokens * 0.15 + response.output_tokens * 0.60) / 1e6)


def test_a_cached_rerun_sends_nothing_and_the_base_url_is_part_of_the_key(fake_openai, tmp_path, monkeypatch):
    make_client("openai", cache_dir=str(tmp_path)).complete(_judge_request())
    monkeypatch.delenv("OPENAI_API_KEY")
    replay = make_client("auto", cache_dir=str(tmp_path), settings=ModelSettings("auto", models={"judge": "gpt-4o-mini"}))
    assert replay.complete(_judge_request()).cached and replay.stats.requests_sent == 0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # another endpoint: another key
    other = make_client("auto", cache_dir=str(tmp_path), settings=ModelSettings("auto", models={"judge": "gpt-4o-mini"}))
    with pytest.raises(LLMError, match="replay: no cached response"):
        other.complete(_judge_request())
    assert len(fake_openai.received) == 1
    assert TEST_KEY not in "".join(p.read_text(errors="ignore") for p in tmp_path.rglob("*") if p.is_file())


def test_structured_judges_send_their_schema_and_every_such_prompt_says_json(fake_openai, tmp_path):
    from memeval.scoring.judge import BINARY_SCHEMA, binary_request, graded_request

    client = make_client("openai", cache_dir=str(tmp_path))
    for request in (binary_request("q?", "gold", "pred"), graded_request("q?", "gold", "pred", 1)):
        resolved = client.resolve(request)
        assert resolved.output_schema and resolved.json_format == "json_schema", "the schema is asked for"
        text = resolved.system + "".join(t for _, t in resolved.messages)
        assert "json" in text.lower(), "OpenAI refuses json_object mode unless the messages mention JSON"
    fake_openai.responder = lambda body: '{"reasoning": "same city", "label": "CORRECT"}'
    client.complete(binary_request("q?", "gold", "pred"))
    sent = fake_openai.received[-1]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True and fake_openai.rejected == []
    assert sent["json_schema"]["schema"] == json.loads(BINARY_SCHEMA)
    for mode, wire in (("json_object", {"type": "json_object"}), ("none", None)):
        other = make_client("openai", cache_dir=str(tmp_path), settings=ModelSettings("openai", response_format=mode))
        assert other.resolve(binary_request("q?", "gold", "pred")).key != client.resolve(
            binary_request("q?", "gold", "pred")).key, "another wire is another cache key"
        assert not other.complete(binary_request("q?", "gold", "pred")).cached
        assert fake_openai.received[-1].get("response_format") == wire and fake_openai.rejected == []


@pytest.mark.parametrize(("response_format", "message"), [
    ({"type": "xml"}, "Invalid value: 'xml'"),
    ({"type": "json_schema"}, "Missing required parameter: 'response_format.json_schema'"),
    ({"type": "json_schema", "json_schema": {"name": "a b", "schema": {"type": "object"}}},
     "string does not match pattern"),
    ({"type": "json_schema", "json_schema": {"name": "n" * 65, "schema": {"type": "object"}}}, "string too long"),
    ({"type": "json_schema", "json_schema": {"name": "n", "strict": True, "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}},
     "In context=(), 'additionalProperties' is required to be supplied and to be false"),
    ({"type": "json_schema", "json_schema": {"name": "n", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}, "b": {
            "type": "object", "additionalProperties": False, "properties": {"c": {"type": "string"}}}},
        "required": ["a", "b"]}}},
     "In context=('properties', 'b'), 'required' is required to be supplied and to be an array including every key "
     "in properties. Missing 'c'"),
    ({"type": "json_object"}, "'messages' must contain the word 'json'"),
])
def test_the_fake_refuses_what_openai_refuses_in_response_format(fake_openai, response_format, message):
    import openai

    sdk = openai.OpenAI(api_key=TEST_KEY, base_url=fake_openai.url, max_retries=0)
    with pytest.raises(openai.BadRequestError, match=re.escape(message)):
        sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                    response_format=response_format)


def test_every_schema_memeval_sends_is_strict_valid_and_a_reply_must_match_it(fake_openai):
    import openai

    from memeval.benchmarks.graph80.judge import THREE_DIM_SCHEMA
    from memeval.llm.wire import schema_name
    from memeval.memory.extraction import TRIPLES_SCHEMA
    from memeval.natural.audit import ADJUDICATION_SCHEMA
    from memeval.scoring.judge import BINARY_SCHEMA, GRADED_SCHEMA

    sdk = openai.OpenAI(api_key=TEST_KEY, base_url=fake_openai.url, max_retries=0)
    for schema, reply in ((BINARY_SCHEMA, '{"reasoning": "r", "label": "WRONG"}'),
                          (GRADED_SCHEMA, '{"score": 40, "explanation": "e"}'),
                          (TRIPLES_SCHEMA, '{"triples": [{"subject": "A", "relation": "r", "object": "B", '
                                           '"source": "D1:1"}]}'),
                          (THREE_DIM_SCHEMA, '{"entity": 0.5, "relation": 0, "no_wrong": 0.5}'),
                          (ADJUDICATION_SCHEMA, '{"value": 1, "reason": "r"}')):
        fake_openai.responder = lambda body, reply=reply: reply
        spec = {"name": schema_name(schema), "schema": json.loads(schema), "strict": True}
        done = sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "JSON"}],
                                           response_format={"type": "json_schema", "json_schema": spec})
        assert json.loads(done.choices[0].message.content) == json.loads(reply)
    fake_openai.responder = lambda body: '{"reasoning": "r", "label": "MAYBE"}'
    with pytest.raises(openai.BadRequestError, match="does not match json_schema"):
        sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "JSON"}],
                                    response_format={"type": "json_schema", "json_schema": {
                                        "name": "b", "schema": json.loads(BINARY_SCHEMA), "strict": True}})


@pytest.mark.parametrize("fault", [rate_limited("2"), rate_limited(None, "1500"), server_error(500),
                                   server_error(503)])
def test_rate_limits_and_server_errors_are_retried_honouring_retry_after(fake_openai, tmp_path, fault):
    fake_openai.faults = [fault, fault]
    slept = []
    client = make_client("openai", cache_dir=str(tmp_path), sleep=slept.append)
    response = client.complete(_judge_request())
    assert response.attempts == 3 and client.stats.retries == 2 and len(fake_openai.received) == 3
    if fault[1].get("retry-after") == "2":
        assert slept == [2.0, 2.0]
    if fault[1].get("retry-after-ms"):
        assert slept == [1.5, 1.5]


def test_an_exhausted_quota_stops_the_run_after_one_request(fake_openai, tmp_path):
    fake_openai.faults = [quota_exhausted()] * 3
    client = make_client("openai", cache_dir=str(tmp_path), sleep=lambda s: None)
    with pytest.raises(APIRejected) as rejected:
        client.complete(_judge_request())
    assert rejected.value.status == 429 and rejected.value.error_type == "insufficient_quota"
    assert "endpoint http://127.0.0.1" in rejected.value.one_line() and len(fake_openai.received) == 1
    with pytest.raises(APIRejected):
        client.complete(_judge_request("another"))
    assert len(fake_openai.received) == 1, "a stopped client sends nothing more"


def test_a_wrong_key_and_an_unknown_model_are_one_request_each(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0000")
    client = make_client("openai", cache_dir=str(tmp_path))
    with pytest.raises(APIRejected, match="invalid_api_key: Incorrect API key provided"):
        client.complete(_judge_request())
    assert "sk-wrong-key-0000" not in str(fake_openai.rejected)  # the fake masks it as OpenAI does
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    sent = len(fake_openai.received)
    local_name = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"judge": "gpt-4o-nonexistent"}))
    with pytest.raises(APIRejected, match="404 model_not_found: The model `gpt-4o-nonexistent` does not exist"):
        local_name.complete(_judge_request())
    assert len(fake_openai.received) == sent + 1


def test_a_local_server_is_priced_zero_takes_max_tokens_and_needs_its_url(tmp_path, monkeypatch):
    with FakeOpenAI(lambda body: "42", local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"judge": "qwen2.5:7b-instruct"}))
        response = client.complete(_judge_request())
        assert server.received[0]["model"] == "qwen2.5:7b-instruct" and server.received[0]["max_tokens"] == 40
        assert "max_completion_tokens" not in server.received[0] and response.cost_usd == 0.0
        assert client.endpoints == {"openai": "https://api.openai.com/v1", "local": server.url}, \
            "cloud OpenAI models keep OpenAI's URL in their cache keys while the base URL is the local server"
        with pytest.raises(InputError, match="--answer-model"):
            client.model_for("answer")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(LLMError, match="--llm local needs OPENAI_BASE_URL"):
        make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"judge": "qwen2.5:7b-instruct"}))


def test_two_clients_in_one_process_never_see_each_others_local_models(tmp_path, monkeypatch):
    """A client made for --llm local holds its local models itself (fixed when it is made): no other client in the
    process, and no lookup without a client, resolves them (before, `--llm local` declared them process-wide)."""
    import dataclasses

    from memeval.llm import profiles
    from memeval.llm.manifest import llm_manifest, role_identity

    with FakeOpenAI(lambda body: "42", local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        local = make_client("local", cache_dir=str(tmp_path / "local"), settings=ModelSettings("local", models={"judge": "qwen2.5:7b-instruct"}))
        other_local = make_client("local", cache_dir=str(tmp_path / "other"), settings=ModelSettings("local", models={"judge": "llama3.1:8b"}))
        monkeypatch.delenv("OPENAI_BASE_URL")
        cloud = make_client("replay", cache_dir=str(tmp_path / "cloud"))
        qwen = LLMRequest(model="qwen2.5:7b-instruct", messages=(("user", "hi"),), max_tokens=8)
        for client in (cloud, other_local):
            with pytest.raises(InputError, match="qwen2.5:7b-instruct: unknown model id"):
                client.resolve(qwen)
            with pytest.raises(InputError, match="unknown model id"):
                client.estimate([qwen])
        with pytest.raises(InputError, match="--judge-model: qwen2.5:7b-instruct: unknown model id"):
            make_client("replay", cache_dir=str(tmp_path / "cloud"), settings=ModelSettings("replay", models={"judge": "qwen2.5:7b-instruct"}))
        with pytest.raises(InputError, match="unknown model id"):
            profiles.profile("qwen2.5:7b-instruct")
        assert other_local.profile("llama3.1:8b").provider == "local"
        with pytest.raises(dataclasses.FrozenInstanceError):
            local.profile_table.local_models = frozenset()  # type: ignore[misc]

        # the local client itself is unaffected by the others: $0, max_tokens, its manifest says local
        response = local.complete(_judge_request())
        assert response.cost_usd == 0.0 and server.received[-1]["max_tokens"] == 40
        assert local.resolve(qwen).provider == "local" and local.estimate([qwen]).usd_est == 0.0
        judge = llm_manifest(local, {"judge": 0.0})["roles"]["judge"]
        assert judge["provider"] == "local" and judge["profile"]["input_usd_mtok"] == 0.0
        assert role_identity(local, "judge", 0.0)["endpoint"] == server.url
        assert llm_manifest(cloud, {"judge": 0.0})["roles"]["judge"]["provider"] == "anthropic"


def test_doctor_checks_local_models_on_the_local_server(cli, monkeypatch):
    models = ("--answer-model", "llama3.1:8b", "--judge-model", "qwen2.5:7b-instruct", "--extract-model",
              "llama3.1:8b")
    planned = cli("doctor", "--llm", "local", *models, "--json")
    assert planned.returncode == 2 and json.loads(planned.stdout)["missing"] == ["OPENAI_BASE_URL"]
    rows = json.loads(planned.stdout)["would_check"]
    assert [(r["provider"], r["usd_per_mtok"]) for r in rows] == [("local", [0.0, 0.0, 0.0, 0.0])] * 3
    with FakeOpenAI(lambda body: "ok", local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        checked = cli("doctor", "--llm", "local", *models, check=True)
        assert [b["model"] for b in server.received] == ["llama3.1:8b", "qwen2.5:7b-instruct", "llama3.1:8b"]
        assert all(b["max_tokens"] == 5 for b in server.received)
        assert "judge    qwen2.5:7b-instruct local API, temperature 0.5: ok" in checked.stdout


def test_one_client_routes_claude_and_openai_models_to_their_own_servers(fake, fake_openai, tmp_path):
    client = make_client("auto", cache_dir=str(tmp_path), settings=ModelSettings("auto", models={"judge": "gpt-4o-2024-08-06"}))
    answer = LLMRequest(model="claude-opus-4-6", messages=(("user", "hi"),), max_tokens=8, temperature=0.0,
                        role="answer")
    client.complete_many([answer, _judge_request()])
    assert [b["model"] for b in fake.received] == ["claude-opus-4-6"]
    assert [b["model"] for b in fake_openai.received] == ["gpt-4o-2024-08-06"]
    assert client.backend_name == "anthropic+openai"


def test_batch_mode_refuses_a_non_anthropic_judge(fake_openai, tmp_path):
    from memeval.llm.batch import run_batch

    client = make_client("openai", cache_dir=str(tmp_path))
    with pytest.raises(InputError, match="--judge-mode sync"):
        run_batch(client, [("a", _judge_request())], "t", poll_interval_s=0)
    assert fake_openai.received == []


def test_mem0_protocol_end_to_end_and_from_the_cache(fake_openai, locomo_dir, tmp_path, monkeypatch, cli):
    from memeval.records import load_judgments

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: '{"reasoning": "same", "label": "CORRECT"}'
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3", "--systems",
            "rag_turns", "--judge", "binary", "--judge-model", "gpt-4o-mini", "--llm", "openai", "--no-progress"]
    cli(*args, "--out", tmp_path / "run", check=True)
    bodies = fake_openai.received
    assert len(bodies) == 3 and fake_openai.rejected == []
    assert all(b["model"] == "gpt-4o-mini" and b["temperature"] == 0.0 and len(b["messages"]) == 1
               and b["messages"][0]["role"] == "user" and b["response_format"]["type"] == "json_schema"
               for b in bodies), "Mem0's call (one user message, temperature 0) with memeval's paraphrased prompt and its "\
        "schema (the published prompt keeps json_object: tests/test_protocols.py)"
    judged = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert len(judged) == 3 and all(j.protocol == "binary" and j.mean == 100.0 for j in judged)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["llm"]["roles"]["judge"]["provider"] == "openai"
    monkeypatch.delenv("OPENAI_API_KEY")
    cli(*args[:-3], "--no-progress", "--llm", "replay", "--out", tmp_path / "rerun", check=True)
    assert len(fake_openai.received) == 3, "the rerun is answered from the cache"
    assert [j.mean for j in load_judgments(tmp_path / "rerun" / "judgments.jsonl")] == [100.0] * 3


def test_longmemeval_protocol_end_to_end_with_an_llm_reader_and_from_the_cache(fake_openai, tmp_path, monkeypatch,
                                                                               cli):
    from memeval.benchmarks.longmemeval.task import LMEAnswerRow, LMEJudgmentRow
    from tests.test_longmemeval_data import instance

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user"), instance("q2_abs", "multi-session")]))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))

    def respond(body):
        text = user_text(body)
        if "Chat history excerpts" in text:
            return "You moved to Denver." if "Denver" in text else "I do not have that information."
        return "yes" if "Denver" in text.split("Model response")[-1] or "unanswerable" in text else "no"

    fake_openai.responder = respond
    args = ["longmemeval", "run", "--data", data, "--systems", "rag_turns", "--reader", "llm", "--answer-model",
            "gpt-4o-mini", "--judge", "longmemeval", "--judge-model", "gpt-4o-2024-08-06", "--no-progress"]
    result = cli(*args, "--llm", "openai", "--out", tmp_path / "run", check=True)
    answers = {r.question_id: r for r in read_records(tmp_path / "run" / "answers.jsonl", LMEAnswerRow)}
    assert answers["q1"].prediction == "You moved to Denver." and answers["q1"].answerer == "gpt-4o-mini-2024-07-18"
    judges = [b for b in fake_openai.received if b["model"] == "gpt-4o-2024-08-06"]
    assert len(judges) == 2 and all(b["temperature"] == 0.0 and b["max_tokens"] == 10 for b in judges)
    judged = read_records(tmp_path / "run" / "judgments.jsonl", LMEJudgmentRow)
    assert {j.judge_model for j in judged} == {"gpt-4o-2024-08-06"}
    assert "paraphrased prompts — not the published protocol" in result.stdout and "Zep" in result.stdout
    assert "the published protocol (" not in result.stdout, "LongMemEval's prompts were never fetched here"
    sent = len(fake_openai.received)
    monkeypatch.delenv("OPENAI_API_KEY")
    again = cli(*args, "--llm", "replay", "--out", tmp_path / "rerun", check=True)
    assert len(fake_openai.received) == sent and again.stdout.count("| rag_turns |") >= 1
    rerun = {r.question_id: r.label for r in read_records(tmp_path / "rerun" / "judgments.jsonl", LMEJudgmentRow)}
    assert rerun == {j.question_id: j.label for j in judged}


def test_longmemeval_dry_run_prices_full_context_without_caching_and_writes_nothing(tmp_path, cli):
    from tests.test_longmemeval_data import instance

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user")]))
    result = cli("longmemeval", "run", "--data", data, "--systems", "full_context", "--reader", "llm", "--llm",
                 "replay", "--dry-run", "--out", tmp_path / "run", check=True)
    assert "1 calls to send" in result.stdout and "Prompt caching does not help" in result.stdout
    assert not (tmp_path / "run").exists()


def test_doctor_checks_openai_roles_through_the_openai_api(fake_openai, cli):
    result = cli("doctor", "--llm", "openai", "--judge-model", "gpt-4o-2024-08-06")
    assert result.returncode == 0, result.stderr
    assert [b["model"] for b in fake_openai.received] == ["gpt-4o-mini", "gpt-4o-2024-08-06", "gpt-4o-mini"]
    assert "judge    gpt-4o-2024-08-06  openai API, temperature 0.5: ok" in result.stdout


def test_doctor_without_an_openai_key_sends_nothing_and_names_the_variable(cli):
    result = cli("doctor", "--llm", "openai")
    assert result.returncode == 2 and "No OPENAI_API_KEY: nothing sent" in result.stdout


def test_doctor_names_only_the_key_that_is_missing(cli, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-set")
    result = cli("doctor", "--answer-model", "claude-opus-4-6", "--judge-model", "gpt-4o-mini")
    assert result.returncode == 2 and "No OPENAI_API_KEY: nothing sent" in result.stdout
    assert "ANTHROPIC_API_KEY /" not in result.stdout and "export ANTHROPIC_API_KEY" not in result.stdout
    assert result.stdout.strip().endswith("then run `memeval doctor --answer-model claude-opus-4-6 --judge-model "
                                          "gpt-4o-mini` again."), result.stdout


def _raw_sdk(server, key=TEST_KEY):
    import openai

    return openai.OpenAI(api_key=key, base_url=server.url, max_retries=0)


def test_the_fake_rejects_what_the_real_service_rejects(fake_openai):
    """Each rule of tests/fake_openai.py, through the real SDK, with the body the SDK parses."""
    import openai

    sdk = _raw_sdk(fake_openai)
    hello = [{"role": "user", "content": "hello"}]
    cases = [
        (openai.BadRequestError, "must contain the word 'json'", None,
         dict(model="gpt-4o-mini", messages=hello, response_format={"type": "json_object"})),
        (openai.BadRequestError, "Unrecognized request argument supplied: top_k", None,
         dict(model="gpt-4o-mini", messages=hello, extra_body={"top_k": 5})),
        (openai.BadRequestError, "'max_tokens' is not supported with this model", "unsupported_parameter",
         dict(model="o3-mini", messages=hello, max_tokens=5)),
        (openai.BadRequestError, "Only the default \\(1\\) value is supported", "unsupported_value",
         dict(model="gpt-5-mini", messages=hello, temperature=0.0)),
        (openai.BadRequestError, "Expected a value <= 2", "decimal_above_max_value",
         dict(model="gpt-4o-mini", messages=hello, temperature=2.5)),
        (openai.BadRequestError, "'top_p' is not supported with this model", "unsupported_parameter",
         dict(model="gpt-5-mini", messages=hello, top_p=0.1)),
        (openai.BadRequestError, "Invalid 'top_p'", "decimal_above_max_value",
         dict(model="gpt-4o-mini", messages=hello, top_p=1.5)),
        (openai.BadRequestError, "Invalid value: 'robot'", "invalid_value",
         dict(model="gpt-4o-mini", messages=[{"role": "robot", "content": "hi"}])),
        (openai.NotFoundError, "The model `gpt-4o-nano-fake` does not exist", "model_not_found",
         dict(model="gpt-4o-nano-fake", messages=hello)),
    ]
    for error, message, code, kwargs in cases:
        with pytest.raises(error, match=message) as caught:
            sdk.chat.completions.create(**kwargs)
        assert caught.value.code == code and caught.value.request_id.startswith("req_")
    with pytest.raises(openai.AuthenticationError) as caught:
        _raw_sdk(fake_openai, "sk-wrong-0000").chat.completions.create(model="gpt-4o-mini", messages=hello)
    assert caught.value.code == "invalid_api_key"
    assert len(fake_openai.rejected) == len(cases) + 1
    fake_openai.responder = lambda body: '{"label": "CORRECT", "why": "same place"}'
    accepted = sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "reply in JSON"}],
                                           max_completion_tokens=2, temperature=0.0,
                                           response_format={"type": "json_object"})
    assert accepted.choices[0].finish_reason == "length" and accepted.model == "gpt-4o-mini-2024-07-18"


def test_a_rejected_call_stops_the_client_after_one_request(fake_openai, tmp_path):
    """A JSON-mode request whose prompt never says JSON: the real API's 400, one request, nothing cached."""
    client = make_client("openai", cache_dir=str(tmp_path))
    request = LLMRequest(messages=(("user", "label it"),), max_tokens=8, temperature=0.0, role="judge",
                         output_schema='{"type": "object"}', json_format="json_object")
    with pytest.raises(APIRejected, match="400 invalid_request_error: 'messages' must contain the word 'json'"):
        client.complete(request)
    with pytest.raises(APIRejected):
        client.complete(_judge_request())
    assert len(fake_openai.received) == 1 and client.cache.get(client.resolve(request).key) is None


def test_a_local_server_gets_the_schema_of_memevals_own_extractors_and_judges(tmp_path, monkeypatch):
    """--llm local used to drop the schema (a prompt-only request); now each of memeval's own JSON requests asks
    for it in the form --response-format names, and that form is part of the cache key."""
    from memeval.benchmarks.graph80.judge import three_dim_request
    from memeval.memory.extraction import Source, extraction_request

    question = {"question": "Who?", "answer": "Ana", "gold_entities": ["Ana"]}
    wanted = {"extract": '{"triples": []}', "judge": '{"entity": 0.5, "relation": 0.5, "no_wrong": 0.5}'}
    requests = [extraction_request([Source("D1:1", "Ana: hi")]), three_dim_request(question, "Ana", 0)]
    keys = set()
    with FakeOpenAI(lambda body: wanted["extract" if "triples" in user_text(body) else "judge"], local=True) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        for mode in ("json_schema", "json_object", "none"):
            client = make_client("local", cache_dir=str(tmp_path), settings=ModelSettings("local", models={"extract": "m", "judge": "m"}, response_format=mode))
            for request in requests:
                assert not client.complete(request).cached, "another wire is another cache key"
                sent = fake.received[-1].get("response_format")
                assert (sent or {}).get("type") == (None if mode == "none" else mode), sent
                keys.add(client.resolve(request).key)
        assert len(keys) == 6 and fake.rejected == []


def test_keys_of_requests_sent_as_before_are_unchanged():
    """Keys as computed before --response-format existed (memeval/llm/types.py at 9b6524a): a request without a
    schema, and one sent as json_object (Mem0's published judge), keep them; only json_schema is a new key."""
    common = dict(model="gpt-4o-mini", messages=(("user", "Label it as JSON."),), max_tokens=None, temperature=0.0,
                  template_version="t", role="judge", provider="openai", endpoint="https://api.openai.com/v1")
    schema = '{"type": "object"}'
    assert LLMRequest(**common).key == "f2dbcabb2b3fde299685cad8cf8b05b033fbbc97eb8bf6c9a5c6144ca7184006"
    before = "2e308bd79e00a9c26af338b445788161beac6a8100f39e735b5fe688f8a8ab1c"
    assert LLMRequest(**common, output_schema=schema, json_format="json_object").key == before
    assert LLMRequest(**common, output_schema=schema, json_format="json_schema").key != before


def test_the_response_format_is_part_of_a_judges_identity_and_the_manifest(fake_openai, tmp_path):
    from memeval.llm.manifest import llm_manifest
    from memeval.scoring.judge import BinaryJudge, GradedJudge

    ids = {}
    for mode in ("json_schema", "json_object", "none"):
        client = make_client("openai", cache_dir=str(tmp_path), settings=ModelSettings("openai", response_format=mode))
        ids[mode] = GradedJudge(1).identity(client)
        assert llm_manifest(client, {"judge": 0.5})["response_format"] == mode
    assert len({ids[m]["response_format"] for m in ids}) == 3
    replay = make_client("replay", cache_dir=str(tmp_path))
    assert "response_format" not in GradedJudge(1).identity(replay), "Anthropic's judges are unchanged"
    assert "response_format" in BinaryJudge(1, published=None).identity(make_client("openai", cache_dir=str(tmp_path)))
