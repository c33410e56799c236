import pytest

from memeval.llm import LLMClient, ResponseCache, ScriptedBackend
from memeval.llm.client import AnthropicBackend
from memeval.qa.answer import Memory, answer_request, extractive_answer
from memeval.scoring.judge import (
    graded_request,
    judge_binary,
    judge_graded,
    parse_binary,
    parse_graded,
)
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, error


def test_graded_prompt_carries_everything():
    req = graded_request("When did Caroline go?", "7 May 2023", "May 2023", 2, repeat_index=3)
    text = req.system + req.messages[0][1]
    for part in ("When did Caroline go?", "7 May 2023", "May 2023", "temporal (2)", "exact date"):
        assert part in text
    assert (req.model, req.temperature, req.max_tokens, req.repeat_index) == ("claude-sonnet-4-6", 0.5, 256, 3)


@pytest.mark.parametrize(
    "text, score",
    [('{"score": 85, "explanation": "ok"}', 85.0), ('Sure! {"score": 40, "explanation": "x"}', 40.0),
     ("I would give this 72 out of 100.", 72.0), ('{"score": "high"} no numbers here', -1.0), ("", -1.0),
     ("{not json", -1.0)],
)
def test_parse_graded(text, score):
    assert parse_graded(text)[0] == score


def test_parse_binary():
    assert parse_binary('The answer matches. {"label": "CORRECT"}')[0] == 1.0
    assert parse_binary('Different date. {"label": "WRONG"}')[0] == 0.0
    assert parse_binary("It is WRONG")[0] == 0.0
    assert parse_binary("no idea")[0] == -1.0


def test_graded_runs_mean_std_and_failures(tmp_path):
    scores = iter([70, 72, 68, 71, 73, 69, 70, 72, 71, 70])
    by_repeat = {}

    def responder(request):
        if request.repeat_index not in by_repeat:
            by_repeat[request.repeat_index] = next(scores)
        return f'{{"score": {by_repeat[request.repeat_index]}, "explanation": "."}}'

    client = LLMClient(ScriptedBackend(responder), ResponseCache(tmp_path))
    result = judge_graded(client, "q", "g", "p", 4)
    assert sorted(result.scores) == sorted([70, 72, 68, 71, 73, 69, 70, 72, 71, 70])
    assert result.mean == pytest.approx(70.6) and result.std == pytest.approx(1.5055, abs=1e-4)
    assert result.run_count == 10 and result.warning is None

    def flaky(request):
        return "garbage" if request.repeat_index in (2, 7) else '{"score": 50}'

    partial = judge_graded(LLMClient(ScriptedBackend(flaky), None), "q", "g", "p2", 4)
    assert partial.run_count == 8 and partial.scores.count(-1.0) == 2 and partial.mean == 50.0
    mostly_broken = judge_graded(LLMClient(ScriptedBackend(lambda r: "garbage" if r.repeat_index > 2 else "60"), None),
                                 "q", "g", "p3", 4)
    assert mostly_broken.run_count == 3 and "3 of 10" in mostly_broken.warning


def test_binary_skips_category_5():
    client = LLMClient(ScriptedBackend(lambda r: '{"label": "CORRECT"}'), None)
    assert judge_binary(client, "q", "g", "p", 5) is None
    assert judge_binary(client, "q", "g", "p", 1).mean == 100.0


def test_judge_through_real_sdk_survives_faults(monkeypatch, tmp_path):
    with FakeAnthropic(responder=lambda body: '{"score": 90, "explanation": "matches"}') as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.faults = [error(429, retry_after="0"), error(529), error(500)]
        client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=lambda s: None)
        result = judge_graded(client, "Where?", "Paris", "Paris", 4, runs=4, in_flight=3)
        assert result.scores == [90.0] * 4 and len(fake.received) == 7
        assert all(b["temperature"] == 0.5 and b["model"] == "claude-sonnet-4-6" and b["max_tokens"] == 256
                   and b["output_config"]["format"]["type"] == "json_schema" for b in fake.received)
        assert set(fake.versions_sent()) == {"2023-06-01"} and fake.rejected == []
        again = judge_graded(LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path)), "Where?", "Paris",
                             "Paris", 4, runs=4)
        assert again.scores == [90.0] * 4 and len(fake.received) == 7  # cached: nothing sent


def test_extractive_reader():
    memories = [Memory("Caroline went hiking. She loves painting sunsets.", "8 May 2023"),
                Memory("Melanie bought a new car last week.", "9 May 2023")]
    assert extractive_answer("What does Caroline love painting?", memories) == "She loves painting sunsets."
    assert extractive_answer("What did Melanie buy?", memories) == "Melanie bought a new car last week."
    assert extractive_answer("Zebra?", memories) == "not mentioned"


def test_answer_prompt_never_sees_category():
    req = answer_request("When did X happen?", [Memory("X happened", "1 May 2023")])
    text = req.messages[0][1]
    assert "[1 May 2023] X happened" in text and "not mentioned" in text
    assert "category" not in text.lower() and req.temperature == 0.0 and req.model == "claude-opus-4-6"
