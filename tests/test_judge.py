import pytest

from memeval.engine.judging import judge_stage
from memeval.llm import LLMClient, ResponseCache
from memeval.llm.client import AnthropicBackend, make_client
from memeval.qa.answer import Memory, answer_request, extractive_answer
from memeval.records import AnswerRow, JudgmentRow, read_records
from memeval.scoring.judge import graded_request, parse_binary, parse_graded
from memeval.scoring.judges import JUDGES
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, error
from tests.scripted import ScriptedBackend


def _answer(prediction: str, category: int = 4, n: int = 0, system: str = "s") -> AnswerRow:
    return AnswerRow(sample_id=f"conv-1:q{n:04d}", conversation_id="conv-1", category=category, question="q",
                     gold="g", prediction=prediction, system=system, answerer="extractive", k=None, f1=0.0,
                     evidence_ids=[], evidence_recall=None, recall_curve=None, retrieved_ids=[],
                     latency_search_s=0.0, latency_total_s=0.0, context_tokens=0, error=None)


def _judge(client, answers, protocol, tmp_path, runs, name="j.jsonl") -> tuple[dict, list[JudgmentRow]]:
    path = tmp_path / name
    done = {r.key for r in read_records(path, JudgmentRow)}
    counts = judge_stage(JUDGES[protocol](runs), answers, done, client, path)
    return counts.model_dump(), read_records(path, JudgmentRow)


def test_graded_prompt_carries_everything():
    req = graded_request("When did Caroline go?", "7 May 2023", "May 2023", 2, repeat_index=3)
    text = req.system + req.messages[0][1]
    for part in ("When did Caroline go?", "7 May 2023", "May 2023", "temporal (2)", "exact date"):
        assert part in text
    assert (req.model, req.role, req.temperature, req.max_tokens, req.repeat_index) == ("", "judge", 0.5, 256, 3)
    assert make_client("replay").resolve(req).model == "claude-sonnet-4-6", "the judge role's default model"


@pytest.mark.parametrize(
    "text, score",
    [('{"score": 85, "explanation": "ok"}', 85.0), ('Sure! {"score": 40, "explanation": "x"}', -1.0),
     ('```json\n{"score": 85, "explanation": "ok"}\n```', 85.0), ('{"explanation": "ok", "score": 60}\n', 60.0),
     ("I would give this 72 out of 100.", -1.0), ("On a scale of 0-100, I would give this 85.", -1.0),
     ('{"score": "high"} no numbers here', -1.0), ('{"score": 140, "explanation": "x"}', -1.0),
     ('{"score": true}', -1.0), ('{"score": 0}', 0.0), ('["score", 50]', -1.0), ("", -1.0), ("{not json", -1.0)],
)
def test_parse_graded(text, score):
    assert parse_graded(text)[0] == score


# Mem0's rule, by hand: json.loads of the stripped reply (or of a ``` fence's inside), then ["label"] == "CORRECT".
# None: Mem0's script would raise there, so the reply is an unusable judgment (-1), never a label.
MEM0_REPLY_SHAPES = [
    ('{"label": "CORRECT"}', 1.0),
    ('{"label": "WRONG"}', 0.0),
    ('  {"label": "CORRECT"}\n', 1.0),
    ('```json\n{"label": "CORRECT"}\n```', 1.0),
    ('```\n{"label": "WRONG"}\n```', 0.0),
    ('Here it is:\n```json\n{"label": "CORRECT"}\n```\nDone.', 1.0),
    ('{"label": "correct"}', 0.0),  # case-sensitive equality
    ('{"label": "Correct"}', 0.0),
    ('{"label": " CORRECT"}', 0.0),
    ('{"label": "CORRECT", "reasoning": "same date"}', 1.0),
    ('{"reasoning": "same date", "label": "WRONG"}', 0.0),
    ('{"label": "INCORRECT"}', 0.0),
    ('{"label": true}', 0.0),
    ('{"label": null}', 0.0),
    ('{"label": ["CORRECT"]}', 0.0),
    ('{"label": "CORRECT", "label": "WRONG"}', 0.0),  # json.loads keeps the last duplicate key
    ('{"Label": "CORRECT"}', None),  # KeyError
    ('{"answer": "CORRECT"}', None),
    ('{}', None),
    ('The answer matches. {"label": "CORRECT"}', None),  # prose before the JSON: not JSON
    ('{"label": "CORRECT"} trailing', None),
    ('CORRECT', None),
    ('It is WRONG', None),
    ('', None),
    ('"CORRECT"', None),  # a JSON string has no ["label"]
    ('["CORRECT"]', None),
    ('null', None),
    ('42', None),
    ("{'label': 'CORRECT'}", None),  # single quotes are not JSON
    ('{"label": "CORRECT",}', None),
    ('```json\n{"label": "CORRECT"', None),  # an unclosed fence is parsed whole
    ('```json\n{"label": "WRONG"}\n``` and ```json\n{"label": "CORRECT"}\n```', 0.0),  # the first fence
]


@pytest.mark.parametrize(("reply", "expected"), MEM0_REPLY_SHAPES)
def test_binary_labels_follow_mem0s_rule(reply, expected):
    score, error = parse_binary(reply)
    if expected is None:
        assert score == -1.0 and error.startswith("unusable under Mem0's rule")
    else:
        assert (score, error) == (expected, None)


def test_graded_runs_mean_std_and_failures(tmp_path):
    scores = iter([70, 72, 68, 71, 73, 69, 70, 72, 71, 70])
    by_repeat = {}

    def responder(request):
        if request.repeat_index not in by_repeat:
            by_repeat[request.repeat_index] = next(scores)
        return f'{{"score": {by_repeat[request.repeat_index]}, "explanation": "."}}'

    counts, rows = _judge(LLMClient(ScriptedBackend(responder), ResponseCache(tmp_path)), [_answer("p")], "graded",
                          tmp_path, runs=10)
    [result] = rows
    assert counts["written"] == 1 and result.protocol == "graded" and result.sample_id == "conv-1:q0000"
    assert result.explanations == ["."] * 10
    assert sorted(result.scores) == sorted([70, 72, 68, 71, 73, 69, 70, 72, 71, 70])
    assert result.mean == pytest.approx(70.6) and result.std == pytest.approx(1.5055, abs=1e-4)
    assert result.run_count == 10 and result.warning is None

    def flaky(request):
        return "garbage" if request.repeat_index in (2, 7) else '{"score": 50}'

    _, [partial] = _judge(LLMClient(ScriptedBackend(flaky), None), [_answer("p2")], "graded", tmp_path, 10, "b")
    assert partial.run_count == 8 and partial.scores.count(-1.0) == 2 and partial.mean == 50.0
    broken = LLMClient(ScriptedBackend(lambda r: "garbage" if r.repeat_index > 2 else '{"score": 60}'), None)
    _, [mostly_broken] = _judge(broken, [_answer("p3")], "graded", tmp_path, 10, "c")
    assert mostly_broken.run_count == 3 and "3 of 10" in mostly_broken.warning


def test_binary_skips_category_5_and_stores_percent(tmp_path):
    backend = ScriptedBackend(lambda r: '{"reasoning": ".", "label": "CORRECT"}')
    answers = [_answer("p", category=5, n=0), _answer("p", category=1, n=1)]
    counts, rows = _judge(LLMClient(backend, None), answers, "binary", tmp_path, runs=1)
    assert counts["to_judge"] == 1 and len(backend.sent) == 1
    assert [(r.sample_id, r.mean, r.scores) for r in rows] == [("conv-1:q0001", 100.0, [100.0])]


def test_failed_call_writes_no_judgment_and_a_rerun_fills_it(tmp_path):
    from memeval.llm.errors import TransientError

    backend = ScriptedBackend(lambda r: '{"score": 40, "explanation": "."}',
                              failures=[TransientError("overloaded", retry=False)])
    client = LLMClient(backend, ResponseCache(tmp_path / "cache"), sleep=lambda s: None)
    counts, rows = _judge(client, [_answer("p", n=0), _answer("p", n=1)], "graded", tmp_path, runs=1)
    assert counts["skipped_failed"] == 1 and counts["written"] == 1 and len(rows) == 1
    counts, rows = _judge(client, [_answer("p", n=0), _answer("p", n=1)], "graded", tmp_path, runs=1)
    assert counts["written"] == 1 and counts["already_done"] == 1 and len(rows) == 2
    assert {r.mean for r in rows} == {40.0}


def test_judge_through_real_sdk_survives_faults(monkeypatch, tmp_path):
    with FakeAnthropic(responder=lambda body: '{"score": 90, "explanation": "matches"}') as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.faults = [error(429, retry_after="0"), error(529), error(500)]
        client = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path), sleep=lambda s: None)
        _, [result] = _judge(client, [_answer("Paris")], "graded", tmp_path, runs=4)
        assert result.scores == [90.0] * 4 and len(fake.received) == 7
        assert all(b["temperature"] == 0.5 and b["model"] == "claude-sonnet-4-6" and b["max_tokens"] == 256
                   and b["output_config"]["format"]["type"] == "json_schema" for b in fake.received)
        assert set(fake.versions_sent()) == {"2023-06-01"} and fake.rejected == []
        again = LLMClient(AnthropicBackend(timeout=5), ResponseCache(tmp_path))
        _, [cached] = _judge(again, [_answer("Paris")], "graded", tmp_path, runs=4, name="again.jsonl")
        assert cached.scores == [90.0] * 4 and len(fake.received) == 7  # cached: nothing sent


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
    assert "category" not in text.lower() and req.temperature == 0.0 and (req.model, req.role) == ("", "answer")
    assert make_client("replay").resolve(req).model == "claude-opus-4-6", "the answer role's default model"


def test_each_own_json_prompt_asks_for_what_its_parser_reads():
    """memeval's own prompts ask for a reply that is one JSON object; a reply obeying them parses (fenced too),
    while prose around the JSON — what the old binary prompt asked for — is not read."""
    from memeval.benchmarks.graph80.judge import parse_three_dim
    from memeval.natural.audit import parse_adjudication
    from memeval.prompts import load_prompt
    from memeval.scoring.judge import binary_request

    prompt = binary_request("q?", "gold", "pred").messages[0][1]
    assert "Reply with only a JSON object, nothing before or after it" in prompt and "First give" not in prompt
    assert 'two keys: "reasoning"' in prompt and '"label", which is "CORRECT" or "WRONG"' in prompt
    for example, label in (('{"reasoning": "Same date.", "label": "CORRECT"}', 1.0),
                           ('{"reasoning": "Another city.", "label": "WRONG"}', 0.0)):
        assert parse_binary(example) == (label, None)
    assert parse_binary('The answer matches the gold. {"label": "CORRECT"}')[0] == -1.0
    assert "Reply with a JSON object only" in load_prompt("judge_graded_system")
    assert parse_graded('{"score": 70, "explanation": "close"}') == (70.0, None)
    assert parse_graded('I would say {"score": 70, "explanation": "close"}')[0] == -1.0
    assert "Reply with JSON only" in load_prompt("judge_three_dim")
    assert parse_three_dim('```json\n{"entity": 0.5, "relation": 0.5, "no_wrong": 0}\n```') == pytest.approx(2 / 3)
    assert parse_three_dim('Scores: {"entity": 0.5, "relation": 0.5, "no_wrong": 0}') is None
    assert "Reply with JSON only" in load_prompt("adjudicate_cell")
    assert parse_adjudication('{"value": 0.5, "reason": "part"}') == (0.5, "part")
    assert parse_adjudication('Label: {"value": 1, "reason": "all"}')[0] is None
