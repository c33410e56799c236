"""LoCoMo-Plus's judge: one call per answer at temperature 0 with the category's prompt (the benchmark's own when
fetched), a JSON label correct / partial / wrong scored 1 / 0.5 / 0 (stored ×100, so J reads as a percentage).

The label is the `label` of the JSON object in the reply (the whole reply, a fenced block, or the first object in
it that has a `label`). The benchmark's script scores a reply it cannot read as 0 and, failing JSON, looks for the
words "correct", "wrong", "partial" anywhere in the reply (so "incorrect" reads as correct); here such a reply is
unusable — no judgment is recorded and a rerun asks again — never a score."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from memeval.benchmarks.locomo_plus.config import JUDGE_NAME as NAME
from memeval.benchmarks.locomo_plus.prompts import LABELS, JudgePrompts
from memeval.engine.judge import Judge
from memeval.llm.json_reply import reply_json
from memeval.llm.types import LLMRequest
from memeval.records import JudgmentRow

TEMPERATURE = 0.0
MAX_TOKENS = 512  # the benchmark's judge cap
UNREADABLE = -1.0
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)


def parse_label(text: str) -> tuple[str | None, str]:
    """(label, reason) from a reply; label None when no JSON object with a known label is in it."""
    doc = reply_json(text)
    candidates = [doc] if isinstance(doc, dict) else []
    for match in _OBJECT.finditer(text):
        try:
            found = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(found, dict):
            candidates.append(found)
    for doc in candidates:
        label = doc.get("label")
        if isinstance(label, str):
            reason = doc.get("reason")
            label = label.strip().lower()
            return (label if label in LABELS else None), (reason.strip() if isinstance(reason, str) else "")
    return None, ""


class LocomoPlusJudge(Judge):
    """`evidence`: what the judge reads as evidence, by question id (LoCoMo's evidence turns, or the cue)."""

    name = NAME
    temperature = TEMPERATURE

    def __init__(self, prompts: JudgePrompts, evidence: Mapping[str, str]):
        self.prompts = prompts
        self.evidence = evidence

    def version(self) -> str:
        return self.prompts.version

    def prompt(self, answer) -> str:
        gold = "" if answer.gold is None else str(answer.gold)
        return self.prompts.template(answer.category).format(gold=gold, pred=answer.prediction or "",
                                                             evidence=self.evidence.get(answer.sample_id, ""))

    def requests(self, answer) -> list[LLMRequest]:
        return [LLMRequest(messages=(("user", self.prompt(answer)),),
                           max_tokens=MAX_TOKENS, temperature=TEMPERATURE, template_version=self.version(),
                           role=self.role)]

    def judgment(self, answer, replies: Sequence, model: str | None) -> JudgmentRow:
        reply = replies[0]
        label, reason = parse_label(reply.text)
        if reply.stop_reason in ("max_tokens", "refusal"):
            label = None
        score = UNREADABLE if label is None else 100.0 * LABELS[label]
        error = [] if label is not None else [f"no correct/partial/wrong label in the reply: {reply.text.strip()[:80]!r}"]
        return JudgmentRow(protocol=self.name, scores=[score], mean=None if label is None else score, std=None,
                           run_count=0 if label is None else 1, warning=None, errors=error,
                           explanations=[f"{label}: {reason}" if label else reply.text.strip()[:400]],
                           sample_id=answer.sample_id, conversation_id=answer.conversation_id,
                           category=answer.category, system=answer.system, prompt_version=self.version(),
                           judge_model=model)

    def unusable(self, judgment) -> str | None:
        return "no correct/partial/wrong label in the reply" if judgment.mean is None else None

    def identity(self, client) -> dict:
        return {**super().identity(client), "prompt_source": self.prompts.source}


def label_of(judgment) -> str | None:
    """The label a stored judgment holds (from its score)."""
    if judgment.mean is None:
        return None
    return next((k for k, v in LABELS.items() if 100.0 * v == judgment.mean), None)
