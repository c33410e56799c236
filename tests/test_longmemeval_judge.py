"""LongMemEval's judge protocol: the prompt each question type gets, the call's parameters, and the label rule."""

import pytest

from memeval.benchmarks.longmemeval.judge import (
    MAX_TOKENS,
    longmemeval_request,
    longmemeval_version,
    parse_longmemeval,
    prompt_name,
)
from memeval.prompts import load_prompt


@pytest.mark.parametrize("qid, qtype, prompt, rule", [
    ("q1", "single-session-user", "judge_longmemeval_standard", "every intermediate step"),
    ("q2", "multi-session", "judge_longmemeval_standard", "only part of what"),
    ("q3", "temporal-reasoning", "judge_longmemeval_temporal", "off-by-one"),
    ("q4", "knowledge-update", "judge_longmemeval_update", "even if it also mentions earlier"),
    ("q5", "single-session-preference", "judge_longmemeval_preference", "does not need to cover every point"),
    ("q6_abs", "temporal-reasoning", "judge_longmemeval_abstention", "unanswerable"),
    ("q7_abs_2", "multi-session", "judge_longmemeval_abstention", "unanswerable"),  # `_abs` inside: the benchmark's test
])
def test_each_type_gets_its_rules(qid, qtype, prompt, rule):
    assert prompt_name(qid, qtype) == prompt and rule in load_prompt(prompt)
    request = longmemeval_request(qid, qtype, "How many days?", "19 days", "About 18 days.")
    text = request.messages[0][1]
    assert "How many days?" in text and "19 days" in text and "About 18 days." in text
    assert (request.temperature, request.max_tokens, request.role, request.system) == (0.0, MAX_TOKENS, "judge", "")
    assert text.rstrip().endswith("Reply with yes or no only.")


def test_the_label_is_the_official_substring_rule():
    assert parse_longmemeval("Yes") and parse_longmemeval(" yes.") and not parse_longmemeval("No")
    assert parse_longmemeval("no, not yes"), "kept exactly as the benchmark's script decides"
    assert not parse_longmemeval("")


def test_unknown_types_are_refused_and_the_version_names_every_prompt():
    with pytest.raises(ValueError, match="no LongMemEval judge prompt"):
        prompt_name("q", "trivia")
    assert len(longmemeval_version()) == 16
