"""Rules the fake servers hold beyond those test_claude_contract.py and test_openai_provider.py drive: each call goes
through the real SDK and must be refused (or taken) as the source cited beside the rule in the fake says."""

import pytest

from tests.fake_anthropic import TEST_SECRET, FakeAnthropic
from tests.fake_openai import TEST_KEY, FakeOpenAI

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


@pytest.fixture()
def gpt():
    import openai

    with FakeOpenAI() as fake:
        yield openai.OpenAI(base_url=fake.url, api_key=TEST_KEY, max_retries=0)


@pytest.mark.parametrize(("field", "value", "bound"), [("temperature", -0.5, ">= 0"), ("temperature", 2.5, "<= 2"),
                                                       ("top_p", -0.1, ">= 0"), ("top_p", 1.5, "<= 1")])
def test_gpt_sampling_outside_its_range_names_the_bound_crossed(gpt, field, value, bound):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        gpt.chat.completions.create(model="gpt-4o-mini", messages=HELLO, **{field: value})
    below = bound.startswith(">")
    assert f"Expected a value {bound}" in str(refused.value) and refused.value.param == field
    assert refused.value.code == ("decimal_below_min_value" if below else "decimal_above_max_value")
    assert ("below minimum" if below else "above maximum") in str(refused.value)


def test_gpt_without_model_or_messages_is_refused_as_the_api_words_it(gpt):
    import openai

    with pytest.raises(openai.BadRequestError, match="you must provide a model parameter"):
        gpt.chat.completions.create(model="", messages=HELLO)
    with pytest.raises(openai.BadRequestError, match="Invalid 'messages': empty array") as empty:
        gpt.chat.completions.create(model="gpt-4o-mini", messages=[])
    assert empty.value.param == "messages"


@pytest.mark.parametrize("field", ["max_completion_tokens", "max_tokens"])
def test_gpt_4o_output_cap_past_16384_is_refused(gpt, field):
    import openai

    with pytest.raises(openai.BadRequestError, match=f"{field} is too large: 32768. This model supports at most "
                                                     "16384 completion tokens") as refused:
        gpt.chat.completions.create(model="gpt-4o-mini", messages=HELLO, **{field: 32768})
    assert refused.value.param == field and refused.value.code is None
    assert gpt.chat.completions.create(model="gpt-4o", messages=HELLO, **{field: 16384}).choices


def test_gpt_4_1_mini_takes_32768_and_no_more(gpt):
    import openai

    assert gpt.chat.completions.create(model="gpt-4.1-mini", messages=HELLO, max_completion_tokens=32768).choices
    with pytest.raises(openai.BadRequestError, match="max_completion_tokens is too large: 32769. This model supports "
                                                     "at most 32768 completion tokens"):
        gpt.chat.completions.create(model="gpt-4.1-mini-2025-04-14", messages=HELLO, max_completion_tokens=32769)
