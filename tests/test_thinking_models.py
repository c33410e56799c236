"""Thinking models through the real SDK against the fake: the wire cap covers thinking plus the protocol's answer
cap, the answer is the text blocks only, a thinking setting the model rejects never goes out, a reply that spent its
cap thinking is no answer, and doctor says so (tests/fake_anthropic.py THINKING says where each rule comes from)."""

import anthropic
import pytest

from memeval.errors import InputError
from memeval.llm import AnthropicBackend, LLMClient, LLMRequest, ResponseCache
from memeval.llm.errors import UnusableReply
from memeval.llm.profiles import PROFILES, THINKING_TOKENS
from memeval.llm.settings import ModelSettings
from tests.fake_anthropic import ANSWER_TOKENS, THINKING, THOUGHT_TOKENS

HELLO = [{"role": "user", "content": "hi"}]


def _client(tmp_path):
    return LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path),
                     ModelSettings(sampling="model-default"), sleep=lambda s: None)


def _request(model, **kw):
    return LLMRequest(model=model, messages=(("user", "Where does Ana live?"),), max_tokens=64, temperature=0.0,
                      template_version="t", **kw)


def test_profiles_say_what_the_api_does_with_thinking():
    modes = {"off": "off", "on": "default", "always": "always"}
    for model, p in PROFILES.items():
        if p.provider != "anthropic":
            assert p.thinking_types == () and p.thinking_tokens == 0 and not p.thinks(""), model
            continue
        default, accepted, _ = THINKING[model]
        assert (p.thinking, p.thinking_types) == (modes[default], accepted), model
        assert p.thinking_refusal(p.thinking_sent) is None, f"{model}: its own setting would be a 400"
    sonnet, opus = PROFILES["claude-sonnet-5-5"], PROFILES["claude-opus-5-5"]
    assert not sonnet.thinks(sonnet.thinking_sent) and opus.thinks(opus.thinking_sent)


def test_the_fake_holds_the_thinking_rules(fake):
    sdk = anthropic.Anthropic(base_url=fake.url, max_retries=0)
    fake.responder = lambda body: "Lisbon"
    with pytest.raises(anthropic.BadRequestError, match='"thinking.type.disabled" is not supported.*effort'):
        sdk.messages.create(model="claude-opus-5-5", max_tokens=64, messages=HELLO, thinking={"type": "disabled"})
    with pytest.raises(anthropic.BadRequestError, match="between_tools"):
        sdk.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=HELLO, thinking={"type": "disabled"})
    with pytest.raises(anthropic.BadRequestError, match="greater than or equal to 1024"):
        sdk.messages.create(model="claude-haiku-4-5", max_tokens=4096, messages=HELLO,
                            thinking={"type": "enabled", "budget_tokens": 512})
    with pytest.raises(anthropic.BadRequestError, match="`max_tokens` must be greater than"):
        sdk.messages.create(model="claude-haiku-4-5", max_tokens=2048, messages=HELLO,
                            thinking={"type": "enabled", "budget_tokens": 2048})
    with pytest.raises(anthropic.BadRequestError, match="xhigh"):
        sdk.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=HELLO,
                            thinking={"type": "between_tools"}, output_config={"effort": "xhigh"})
    with pytest.raises(anthropic.BadRequestError, match="effort"):
        sdk.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=HELLO, output_config={"effort": "low"})

    budgeted = sdk.messages.create(model="claude-haiku-4-5", max_tokens=1100, messages=HELLO,
                                   thinking={"type": "enabled", "budget_tokens": 1024})
    assert [b.type for b in budgeted.content] == ["thinking", "text"] and budgeted.content[1].text == "Lisbon"
    assert budgeted.usage.output_tokens == THOUGHT_TOKENS + ANSWER_TOKENS, "thinking is counted as output"
    unasked = sdk.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=HELLO)
    assert [b.type for b in unasked.content] == ["thinking"] and unasked.stop_reason == "max_tokens"
    assert unasked.usage.output_tokens == 64, "thinking ate the whole cap: no text"
    off = sdk.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=HELLO, thinking={"type": "between_tools"})
    assert [b.type for b in off.content] == ["text"] and off.usage.output_tokens == ANSWER_TOKENS
    plain = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=HELLO)
    assert [b.type for b in plain.content] == ["text"], "no thinking unless asked"
    assert sdk.messages.count_tokens(model="claude-sonnet-5-5", messages=HELLO,
                                     thinking={"type": "between_tools"}).input_tokens > 0


def test_a_thinking_model_gets_its_answer_cap_plus_the_thinking_reserve(fake, tmp_path):
    client = _client(tmp_path)
    response = client.complete(_request("claude-opus-5-5"))
    body = fake.received[-1]
    assert body["max_tokens"] == 64 + THINKING_TOKENS and body["output_config"] == {"effort": "low"}
    assert "thinking" not in body, "Opus 5.5 thinks anyway; effort is its control"
    assert response.text == "echo: Where does Ana live?" and response.stop_reason == "end_turn"
    assert response.output_tokens == THOUGHT_TOKENS + ANSWER_TOKENS
    assert response.cost_usd == pytest.approx((response.input_tokens * 4 + response.output_tokens * 20) / 1e6)
    resolved = client.resolve(_request("claude-opus-5-5"))
    assert (resolved.max_tokens, resolved.max_tokens_sent) == (64, 64 + THINKING_TOKENS), "the protocol's cap stays"
    assert resolved.key_material()["thinking"] == {"type": "", "effort": "low", "max_tokens_sent": 64 + THINKING_TOKENS}
    assert client.lookup(_request("claude-opus-5-5")).text == response.text and fake.rejected == []


def test_sonnet_5_5_is_sent_between_tools_and_keeps_the_answer_cap(fake, tmp_path):
    response = _client(tmp_path).complete(_request("claude-sonnet-5-5"))
    body = fake.received[-1]
    assert body["thinking"] == {"type": "between_tools"} and body["max_tokens"] == 64 and "output_config" not in body
    assert response.text == "echo: Where does Ana live?" and response.output_tokens == ANSWER_TOKENS


def test_keys_of_requests_without_thinking_are_unchanged(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    client = LLMClient(None, None)
    resolved = client.resolve(LLMRequest(model="claude-sonnet-4-6", messages=(("user", "Where does Ana live?"),),
                                         system="be brief", max_tokens=64, temperature=0.0, template_version="t"))
    assert "thinking" not in resolved.key_material() and resolved.max_tokens_sent == 64
    # the key this request had before thinking existed: existing caches still hit
    assert resolved.key == "9f3c81f9e676ab58a7c0d54846d3c228efdce9da9f2ad16ada19924256b4346f"


def test_thinking_blocks_are_never_the_answer(fake, tmp_path):
    fake.responder = lambda body: {"text": "Lisbon", "redacted": True}
    response = _client(tmp_path).complete(_request("claude-opus-5-5"))
    assert response.text == "Lisbon"


def test_thinking_that_eats_the_cap_is_an_unusable_reply_and_its_tokens_are_paid(fake, tmp_path):
    fake.responder = lambda body: {"text": "Lisbon", "thinking_tokens": 10 * THINKING_TOKENS}
    client = _client(tmp_path)
    with pytest.raises(UnusableReply) as unusable:
        client.complete(_request("claude-opus-5-5"))
    assert unusable.value.reason == "empty reply (cut at max_tokens)"
    assert client.stats.output_tokens == 64 + THINKING_TOKENS, "every thinking token was billed"
    assert client.stats.cost_usd > (64 + THINKING_TOKENS) * 20 / 1e6 and client.lookup(_request("claude-opus-5-5")) is None


def test_a_thinking_setting_the_model_rejects_never_goes_out(fake, tmp_path):
    client = _client(tmp_path)
    with pytest.raises(InputError, match="always thinks"):
        client.complete(_request("claude-opus-5-5", thinking="disabled"))
    with pytest.raises(InputError, match="between_tools turns thinking off"):
        client.complete_many([_request("claude-sonnet-5-5", thinking="disabled")])
    with pytest.raises(InputError, match="takes no `thinking`"):
        client.resolve(LLMRequest(model="gpt-4o-mini", messages=(("user", "hi"),), thinking="adaptive"))
    assert fake.received == [] and fake.rejected == []


def test_doctor_fails_on_a_probe_that_only_thought(fake, cli):
    fake.responder = lambda body: {"text": "ok", "thinking_tokens": 10 * THINKING_TOKENS}
    done = cli("doctor", "--answer-model", "claude-opus-5-5")
    assert done.returncode == 1, done.stdout
    answer = next(line for line in done.stdout.splitlines() if line.startswith("answer"))
    assert "thinks (effort low, max_tokens 5 + 2048 for thinking): FAILED: no answer text" in answer
    assert "empty reply (cut at max_tokens)" in answer and "Every call of a run would fail the same way" in answer
    judge = next(line for line in done.stdout.splitlines() if line.startswith("judge"))
    assert ": ok (request" in judge, "a model that does not think answers the same responder"
    assert fake.received[0]["max_tokens"] == 5 + THINKING_TOKENS
    total = next(line for line in done.stdout.splitlines() if line.startswith("total $"))
    assert float(total.split()[1].strip("$;")) > (5 + THINKING_TOKENS) * 20 / 1e6, "the failed probe's cost counts"

    fake.responder = lambda body: "ok"
    assert cli("doctor", "--answer-model", "claude-opus-5-5", "--judge-model", "claude-sonnet-5-5").returncode == 0


def test_doctor_fails_on_an_empty_probe_from_a_model_without_a_reserve(fake, cli):
    fake.responder = lambda body: {"text": "", "stop_reason": "max_tokens"}
    done = cli("doctor", "--json")
    assert done.returncode == 1
    assert "no answer text (empty reply (cut at max_tokens)) from claude-" in done.stdout and "max_tokens 5 went without text" \
        in done.stdout


def test_the_manifest_records_what_each_role_sends_for_thinking():
    from memeval.llm.manifest import llm_manifest

    client = LLMClient(None, None,
                       ModelSettings(sampling="model-default", models={"answer": "claude-opus-5-5",
                                                                      "judge": "claude-sonnet-5-5"}))
    roles = llm_manifest(client, {"answer": 0.0, "judge": 0.5})["roles"]
    answer, judge = roles["answer"]["profile"], roles["judge"]["profile"]
    assert (answer["thinking"], answer["effort"], answer["thinking_tokens"]) == ("always", "low", THINKING_TOKENS)
    assert (judge["thinking"], judge["thinking_sent"]) == ("default", "between_tools")


def test_a_run_directory_identity_names_the_thinking_sent_and_only_where_sent():
    """Rows answered with thinking settings are not resumed under others; roles that send none keep the identity
    they had before thinking was modelled, so their directories still resume."""
    from memeval.llm.manifest import role_identity

    client = LLMClient(None, None,
                       ModelSettings(sampling="model-default", models={"answer": "claude-opus-5-5",
                                                                      "judge": "claude-sonnet-5-5",
                                                                      "extract": "claude-sonnet-4-6"}))
    assert role_identity(client, "answer", 0.0)["thinking"] == {"type": "", "effort": "low",
                                                                "reserve": THINKING_TOKENS}
    assert role_identity(client, "judge", 0.5)["thinking"] == {"type": "between_tools", "effort": "", "reserve": 0}
    assert "thinking" not in role_identity(client, "extract", 0.0)
