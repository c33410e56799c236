"""`--judge evermemos`: the EverMemOS / EverCore evaluation framework's LLM judge, the harness most memory systems
publish LoCoMo results through (its src/evaluators/llm_judge.py at the pinned commit).

With the framework's prompts fetched (`memeval data fetch protocols`) the call is the framework's: a system and a
user message (both stripped, as its `get_prompt` strips them), temperature 0, no output cap, three runs a question,
gpt-4o-mini as its LoCoMo config names; adversarial questions (category 5) are not judged, as its LoCoMo config
filters them. Without them this project's own wording is sent and labelled paraphrased.

A run is CORRECT when the JSON `label` it holds, stripped and upper-cased, is "CORRECT", any other label WRONG.
The framework counts a run it cannot read (empty, no JSON, no label, a label that is not text) as WRONG; here such a
run is unusable: it is never a score, its reason says how the framework would have counted it, and a question
with no usable run gets no judgment (a rerun asks again).
"""

from __future__ import annotations

import json
import re

from memeval.llm.client import LLMError, LLMRequest
from memeval.prompts import load_prompt, prompt_hash
from memeval.protocols import store as protocol_store
from memeval.protocols.store import StoredProtocol
from memeval.records import JudgeOutcome
from memeval.scoring.aggregate import run_statistics
from memeval.scoring.judge import FAILURE, UNUSABLE_STOPS, LocomoJudge, reply_explanation

PROTOCOL = "evermemos_prompts"
TEMPERATURE = 0.0
RUNS = 3  # llm_judge.py `num_runs` default, and config/datasets/locomo.yaml
COUNTED_WRONG = "EverMemOS counts this run WRONG"
PARAPHRASED_PROMPTS = ("judge_evermemos_system", "judge_evermemos_user")

# where the framework looks for the JSON, in its order: a ``` block holding one {...}, then a flat {...} with a
# string "label", else the whole reply
_IN_FENCE = re.compile(r"```(?:json)?\s*({[^`]*})\s*```", re.DOTALL)
_FLAT_LABEL = re.compile(r'{[^{}]*"label"\s*:\s*"[^"]*"[^{}]*}')


def published() -> StoredProtocol | None:
    return protocol_store.load(PROTOCOL)


def paraphrased_version() -> str:
    return prompt_hash(*PARAPHRASED_PROMPTS)


def judge_messages(question: str, gold: str, prediction: str, fetched: StoredProtocol | None) -> tuple[str, str]:
    """(system, user) as the framework fills them: `format(question=, golden_answer=, generated_answer=)`."""
    if fetched is not None:
        system, user = fetched.templates["judge_system"], fetched.templates["judge_user"]
    else:
        system, user = (load_prompt(name).strip() for name in PARAPHRASED_PROMPTS)
    return system, user.format(question=question, golden_answer=gold, generated_answer=prediction)


def judge_request(question: str, gold: str, prediction: str, repeat_index: int = 0,
                  fetched: StoredProtocol | None = None) -> LLMRequest:
    system, user = judge_messages(question, gold, prediction, fetched)
    return LLMRequest(system=system, messages=(("user", user),), max_tokens=None,
                      temperature=TEMPERATURE, template_version=fetched.version if fetched else paraphrased_version(),
                      repeat_index=repeat_index, role="judge", empty_ok=True)  # an empty reply is read, as there


def json_part(reply: str) -> str:
    fenced = _IN_FENCE.search(reply)
    if fenced:
        return fenced.group(1).strip()
    flat = _FLAT_LABEL.search(reply)
    return flat.group(0) if flat else reply.strip()


def parse_label(reply: str | None) -> tuple[float, str | None]:
    """1.0 CORRECT, 0.0 WRONG, or -1 with why the run is unusable (each case the framework counts WRONG)."""
    if not reply:
        return FAILURE, f"empty reply ({COUNTED_WRONG})"
    part = json_part(reply)
    if not part:
        return FAILURE, f"no JSON in the reply ({COUNTED_WRONG})"
    try:
        doc = json.loads(part)
    except (ValueError, RecursionError):
        return FAILURE, f"not JSON ({COUNTED_WRONG}): {reply.strip()[:80]!r}"
    if not isinstance(doc, dict):
        return FAILURE, f"JSON but not an object ({COUNTED_WRONG}): {reply.strip()[:80]!r}"
    label = doc.get("label", "")
    if not label:
        return FAILURE, f"no label ({COUNTED_WRONG}): {reply.strip()[:80]!r}"
    if not isinstance(label, str):
        return FAILURE, f"a label that is not text ({COUNTED_WRONG}): {label!r}"[:160]
    return (1.0 if label.strip().upper() == "CORRECT" else 0.0), None


class EverMemOSJudge(LocomoJudge):
    """The framework's judge: `runs` calls per answer (default 3), per-run labels kept in order (judgment_1..N)."""

    name = "evermemos"
    unusable_reason = f"no JSON label in any run; {COUNTED_WRONG.replace('this run', 'each')}"
    temperature = TEMPERATURE

    def __init__(self, runs: int = RUNS, fetched: StoredProtocol | None | bool = True):
        super().__init__(runs)
        self.fetched = published() if fetched is True else fetched or None

    def version(self) -> str:
        return self.fetched.version if self.fetched else paraphrased_version()

    def accepts(self, answer) -> bool:
        return answer.category != 5

    def request(self, answer, gold: str, repeat: int) -> LLMRequest:
        return judge_request(answer.question, gold, answer.prediction, repeat, self.fetched)

    def outcome(self, replies) -> JudgeOutcome | None:
        if any(isinstance(r, LLMError) for r in replies):
            return None
        results = [(FAILURE, f"reply stopped by {r.stop_reason}, not read")
                   if r.stop_reason in UNUSABLE_STOPS else parse_label(r.text) for r in replies]
        scores = [100.0 * s if s >= 0 else FAILURE for s, _ in results]
        stats = run_statistics(scores, min_successes=1)
        return JudgeOutcome(protocol=self.name, scores=scores, mean=stats["mean"], std=stats["std"],
                            run_count=stats["run_count"], warning=stats["warning"],
                            errors=[e for _, e in results if e], explanations=[reply_explanation(r.text)
                                                                               for r in replies])

    def identity(self, client) -> dict:
        from memeval.protocols.status import judge_status, setting_problem

        found = super().identity(client)
        problem = setting_problem(client) or (f"{self.runs} judge runs a question, not the framework's {RUNS}"
                                              if self.runs != RUNS else None)
        return {**found, "prompt_source": self.fetched.origin if self.fetched else "paraphrased",
                "protocol_status": judge_status(self.name, found.get("model"), self.version(), problem)}


def judge(runs: int | None = None) -> EverMemOSJudge:
    """The judge `--judge evermemos` names: `runs` calls per answer, else the framework's 3."""
    return EverMemOSJudge(RUNS if runs is None else runs)
