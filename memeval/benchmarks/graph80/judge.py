"""The graph study's three-dimension judge: entity, relation and no-wrong-claim, each 0 or 0.5, summed over 1.5,
one call per answer and repeat; a reply that does not parse scores None (left out of every mean, never 0) and
the row says why."""

from __future__ import annotations

import json
from collections.abc import Mapping

from memeval.engine.judge import Judge
from memeval.llm.client import LLMRequest
from memeval.llm.json_reply import reply_json
from memeval.prompts import load_prompt, prompt_hash
from memeval.records import Graph80JudgmentRow

JUDGE_TEMPERATURE = 0.0
_HALF = {"type": "number", "enum": [0, 0.5]}
# the object the prompt asks for, closed and every key required (OpenAI's strict Structured Outputs take no other)
THREE_DIM_SCHEMA = json.dumps({"type": "object", "additionalProperties": False,
                               "required": ["entity", "relation", "no_wrong"],
                               "properties": {"entity": _HALF, "relation": _HALF, "no_wrong": _HALF}})


def three_dim_request(question: Mapping, prediction: str, repeat: int) -> LLMRequest:
    prompt = load_prompt("judge_three_dim").format(question=question["question"], gold=question["answer"],
                                                   entities=", ".join(question["gold_entities"]),
                                                   prediction=prediction)
    return LLMRequest(messages=(("user", prompt),), max_tokens=200, temperature=JUDGE_TEMPERATURE,
                      template_version=prompt_hash("judge_three_dim"), repeat_index=repeat, role="judge",
                      output_schema=THREE_DIM_SCHEMA)


def parse_three_dim(text: str) -> float | None:
    """entity + relation + no_wrong, each 0 or 0.5, over 1.5 → 0..1; None unless the reply is the JSON object the
    prompt asks for (memeval/llm/json_reply.py)."""
    doc = reply_json(text)
    parts = [doc.get(k) for k in ("entity", "relation", "no_wrong")] if isinstance(doc, dict) else [None]
    if not all(p in (0, 0.5) and not isinstance(p, bool) for p in parts):
        return None
    return sum(parts) / 1.5


class ThreeDimJudge(Judge):
    """Judges graph80 answers; it reads each question's gold entities from the corpus it was given."""

    name = "three_dim"
    temperature = JUDGE_TEMPERATURE
    own_schema = True

    def __init__(self, questions: Mapping[str, Mapping]):
        self.questions = questions

    def version(self) -> str:
        return prompt_hash("judge_three_dim")

    def requests(self, answer) -> list[LLMRequest]:
        return [three_dim_request(self.questions[answer.question_id], answer.prediction, answer.repeat)]

    def judgment(self, answer, replies, model: str | None) -> Graph80JudgmentRow:
        text = replies[0].text
        score = parse_three_dim(text)
        error = None if score is not None else (f"no JSON with entity, relation and no_wrong each 0 or 0.5 "
                                                f"(the reply is cached; a rerun reads it again): {text.strip()[:80]!r}")
        return Graph80JudgmentRow(question_id=answer.question_id, system=answer.system, repeat=answer.repeat,
                                  protocol=self.name, prompt_version=self.version(), score=score,
                                  judge_model=model, error=error)
