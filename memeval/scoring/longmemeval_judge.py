"""LongMemEval's judge protocol (`--judge longmemeval`, to be wired into LongMemEval runs): one yes/no call per
question at temperature 0 with at most 10 output tokens, the prompt chosen by question type, and the label true
when the lower-cased reply contains "yes" — the rule of the benchmark's own evaluation script, kept exactly (so
a reply such as "no, not yes" counts as yes there and here).

The prompt wording is this project's (versioned files under memeval/prompts/), with the benchmark's rules per
type: equivalence or all intermediate steps for single-session and multi-session questions; off-by-one counts of
days, weeks or months forgiven for temporal reasoning; the updated answer, even beside older information, for
knowledge updates; a rubric met by recalling and using the user's information for preferences; and for
abstention questions (`_abs`), recognising the question as unanswerable.
"""

from __future__ import annotations

from memeval.engine.judge import Judge
from memeval.llm.client import LLMRequest
from memeval.llm.profiles import ROLE_DEFAULTS
from memeval.prompts import load_prompt, prompt_hash
from memeval.records import LMEJudgmentRow

TEMPERATURE = 0.0
MAX_TOKENS = 10
PROMPT_BY_TYPE = {
    "single-session-user": "judge_longmemeval_standard",
    "single-session-assistant": "judge_longmemeval_standard",
    "multi-session": "judge_longmemeval_standard",
    "temporal-reasoning": "judge_longmemeval_temporal",
    "knowledge-update": "judge_longmemeval_update",
    "single-session-preference": "judge_longmemeval_preference",
}
ABSTENTION_PROMPT = "judge_longmemeval_abstention"


def prompt_name(question_id: str, question_type: str) -> str:
    if question_id.endswith("_abs"):
        return ABSTENTION_PROMPT
    if question_type not in PROMPT_BY_TYPE:
        raise ValueError(f"no LongMemEval judge prompt for question type {question_type!r}")
    return PROMPT_BY_TYPE[question_type]


def longmemeval_version() -> str:
    return prompt_hash(*sorted({*PROMPT_BY_TYPE.values(), ABSTENTION_PROMPT}))


def longmemeval_request(question_id: str, question_type: str, question: str, answer: str, response: str,
                        model: str | None = None) -> LLMRequest:
    name = prompt_name(question_id, question_type)
    text = load_prompt(name).format(question=question, answer=answer, response=response)
    return LLMRequest(model=model or ROLE_DEFAULTS["judge"], messages=(("user", text),), max_tokens=MAX_TOKENS,
                      temperature=TEMPERATURE, template_version=prompt_hash(name), role="judge")


def parse_longmemeval(reply: str) -> bool:
    return "yes" in reply.lower()


class LongMemEvalJudge(Judge):
    """One yes/no call per answer; the judgment row keeps the label and the reply's first 200 characters."""

    name = "longmemeval"
    temperature = TEMPERATURE

    def version(self) -> str:
        return longmemeval_version()

    def key(self, answer) -> tuple:
        return answer.key

    def requests(self, answer) -> list[LLMRequest]:
        return [longmemeval_request(answer.question_id, answer.question_type, answer.question, answer.answer,
                                    answer.prediction)]

    def judgment(self, answer, replies, model: str | None) -> LMEJudgmentRow:
        text = replies[0].text
        return LMEJudgmentRow(question_id=answer.question_id, question_type=answer.question_type,
                              abstention=answer.abstention, system=answer.system, protocol=self.name,
                              prompt_version=self.version(), label=parse_longmemeval(text), reply=text.strip()[:200],
                              judge_model=model)
