"""Rules the fake servers hold beyond those test_claude_contract.py and test_openai_provider.py drive: each call goes
through the real SDK and must be refused (or taken) as the source cited beside the rule in the fake says."""

import pytest

from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

HELLO = [{"role": "user", "content": "hi"}]


@pytest.fixture()
def claude():
    import anthropic

    with FakeAnthropic() as fake:
        yield fake, anthropic.Anthropic(base_url=fake.url, api_key=TEST_SECRET, max_retries=0,
                                        default_headers={"anthropic-version": "2023-06-01"})


@pytest.mark.parametrize("value", [1.5, -0.1, -1])
def test_claude_temperature_outside_zero_to_one_is_refused(claude, value):
    import anthropic

    fake, sdk = claude
    with pytest.raises(anthropic.BadRequestError, match=r"temperature: range: 0\.\.1"):
        sdk.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=HELLO, extra_body={"temperature": value})
    assert sdk.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=HELLO,
                               extra_body={"temperature": 1}).content
    assert fake.rejected[-1][0] == 400


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-4-6"])
def test_claude_temperature_and_top_p_together_are_refused(claude, model):
    import anthropic

    _, sdk = claude
    with pytest.raises(anthropic.BadRequestError, match="cannot both be specified"):
        sdk.messages.create(model=model, max_tokens=5, messages=HELLO, extra_body={"temperature": 0, "top_p": 0.9})
    assert sdk.messages.create(model=model, max_tokens=5, messages=HELLO, extra_body={"top_p": 0.9}).content


def test_claude_max_tokens_zero_warms_the_cache_and_a_negative_one_is_refused(claude):
    import anthropic

    fake, sdk = claude
    long = [{"role": "user", "content": [{"type": "text", "text": "x" * 9000, "cache_control": {"type": "ephemeral"}}]}]
    warmed = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=0, messages=long)
    assert warmed.content == [] and warmed.usage.output_tokens == 0 and warmed.usage.cache_creation_input_tokens > 0
    assert sdk.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=long).usage.cache_read_input_tokens
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        sdk.messages.create(model="claude-sonnet-4-6", max_tokens=-1, messages=HELLO)
