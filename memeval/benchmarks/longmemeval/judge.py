"""LongMemEval's judge protocol (`--judge longmemeval`): one yes/no call per question at temperature 0 with at
most 10 output tokens, the prompt chosen by question type (`'_abs' in question_id`: the abstention prompt), and the
label true when the lower-cased reply contains "yes" — the rule of the benchmark's own evaluation script, kept
exactly (so a reply such as "no, not yes" counts as yes there and here, and an empty reply as no: the script
strips the reply and labels it, empty or not; src/evaluation/evaluate_qa.py at the pinned commit). Empty replies are
counted (`empty_replies`), and the report and manifest say how many were labelled no that way.

With the benchmark's prompts fetched (`memeval data fetch protocols`) they are sent byte for byte, filled in
positionally as its script fills them (question, answer, response); without them this project's own wording is used
(versioned files under memeval/prompts/), and every output says "paraphrased prompts — not the published protocol".
"""

from __future__ import annotations

from memeval.engine.judge import Judge
from memeval.llm.client import LLMRequest
from memeval.prompts import load_prompt, prompt_hash
from memeval.protocols import store as protocol_store
from memeval.protocols.store import StoredProtocol
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
    if "_abs" in question_id:
        return ABSTENTION_PROMPT
    if question_type not in PROMPT_BY_TYPE:
        raise ValueError(f"no LongMemEval judge prompt for question type {question_type!r}")
    return PROMPT_BY_TYPE[question_type]


def longmemeval_version() -> str:
    return prompt_hash(*sorted({*PROMPT_BY_TYPE.values(), ABSTENTION_PROMPT}))


def longmemeval_request(question_id: str, question_type: str, question: str, answer: str, response: str,
                        published: StoredProtocol | None = None) -> LLMRequest:
    name = prompt_name(question_id, question_type)
    if published is not None:
        template = published.templates["abstention" if name == ABSTENTION_PROMPT else question_type]
        text, version = template.format(question, answer, response), published.version
    else:
        text = load_prompt(name).format(question=question, answer=answer, response=response)
        version = prompt_hash(name)
    return LLMRequest(messages=(("user", text),), max_tokens=MAX_TOKENS,
                      temperature=TEMPERATURE, template_version=version, role="judge",
                      truncation_ok=True, empty_ok=True)  # the benchmark reads its 10-token reply whole, cut or empty


def parse_longmemeval(reply: str) -> bool:
    return "yes" in reply.lower()


def empty_replies(judgments) -> int:
    """The `longmemeval` judgments whose reply was empty (labelled no by the benchmark's rule)."""
    return sum(1 for j in judgments if j.protocol == LongMemEvalJudge.name and not j.reply)


class LongMemEvalJudge(Judge):
    """One yes/no call per answer; the judgment row keeps the label and the reply's first 200 characters."""

    name = "longmemeval"
    temperature = TEMPERATURE

    def __init__(self, published: StoredProtocol | None | bool = True):
        """`published`: the benchmark's fetched prompts (default: whatever data/protocols/ holds, else none)."""
        self.published = protocol_store.load("longmemeval_judge") if published is True else published or None

    def version(self) -> str:
        return self.published.version if self.published else longmemeval_version()

    def identity(self, client) -> dict:
        from memeval.protocols.status import judge_status, setting_problem

        found = super().identity(client)
        return {**found, "prompt_source": self.published.origin if self.published else "paraphrased",
                "protocol_status": judge_status(self.name, found.get("model"), self.version(),
                                                  setting_problem(client))}

    def key(self, answer) -> tuple:
        return answer.key

    def requests(self, answer) -> list[LLMRequest]:
        return [longmemeval_request(answer.question_id, answer.question_type, answer.question, answer.answer,
                                    answer.prediction, published=self.published)]

    def judgment(self, answer, replies, model: str | None) -> LMEJudgmentRow:
        text = replies[0].text
        return LMEJudgmentRow(question_id=answer.question_id, question_type=answer.question_type,
                              abstention=answer.abstention, system=answer.system, protocol=self.name,
                              prompt_version=self.version(), label=parse_longmemeval(text), reply=text.strip()[:200],
                              judge_model=model)
