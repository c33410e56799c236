"""LLM judges: `graded` (0-100, repeated runs, category-aware) and `binary` (the Mem0 paper's CORRECT/WRONG).

`binary` sends Mem0's own prompt byte for byte when it has been fetched (`memeval data fetch protocols`), with
Mem0's parameters (JSON mode, temperature 0, no output cap); otherwise this project's wording, labelled
paraphrased. Either way a reply is labelled by Mem0's rule: the JSON `label` equal to "CORRECT" is correct, any
other label wrong, and a reply whose JSON cannot be read is an unusable judgment (counted, never a label).

Request building and parsing are pure; the only I/O is the client call, so a judged run reproduces from the
cache at zero cost. A -1 run means only that a successful reply could not be used (unparseable, out of
range, cut at max_tokens, or a refusal); a call that failed is no run at all, and the caller writes no
judgment for the question so that a rerun retries it. On models with structured outputs both judges ask
for a JSON schema (Anthropic: `output_config.format`; OpenAI-compatible servers: `response_format` as
--response-format names it); the range check stays here. This project's prompts ask for exactly the JSON their
parsers read: the reply is one JSON object (a ``` fence around it is read too), never prose around it.
"""

from __future__ import annotations

import json
import re

from memeval.categories import CategorySet
from memeval.engine.judge import Judge
from memeval.llm.client import LLMError, LLMRequest, LLMResponse
from memeval.llm.json_reply import FENCED, reply_json
from memeval.prompts import load_prompt, prompt_hash
from memeval.protocols import store as protocol_store
from memeval.protocols.store import StoredProtocol
from memeval.records import JudgeOutcome, JudgmentRow
from memeval.scoring.aggregate import run_statistics

GRADED_TEMPERATURE = 0.5
GRADED_MAX_TOKENS = 256
GRADED_RUNS = 10
GRADED_IN_FLIGHT = 3
BINARY_TEMPERATURE = 0.0
FAILURE = -1.0
UNUSABLE_STOPS = ("max_tokens", "refusal")
# the score before the explanation, as the prompt asks: a server that enforces the schema writes properties in this
# order, so a reply that runs long loses words of its explanation, not its score
GRADED_SCHEMA = json.dumps({"type": "object", "additionalProperties": False, "required": ["score", "explanation"],
                            "properties": {"score": {"type": "integer"}, "explanation": {"type": "string"}}})
# reasoning before the label, as the prompt asks: a server that enforces the schema writes properties in this order
BINARY_SCHEMA = json.dumps({"type": "object", "additionalProperties": False, "required": ["reasoning", "label"],
                            "properties": {"reasoning": {"type": "string"},
                                           "label": {"type": "string", "enum": ["CORRECT", "WRONG"]}}})
# Mem0's prompt asks for the label alone; where a model takes a schema it gets one with that key only (on OpenAI it
# is sent as json_object mode, as Mem0 sends, whatever --response-format says)
MEM0_LABEL_SCHEMA = json.dumps({"type": "object", "additionalProperties": False, "required": ["label"],
                                "properties": {"label": {"type": "string"}}}, sort_keys=True)

def default_categories() -> CategorySet:
    """The categories of the run kind whose answer rows these judges grade unless a task gives its own, from the
    registrations (memeval.engine.registry.default_answer_kind)."""
    from memeval.engine.registry import categories, default_answer_kind

    return categories(default_answer_kind())


def graded_version() -> str:
    return prompt_hash("judge_graded_system", "judge_graded_user")


def binary_version() -> str:
    return prompt_hash("judge_binary")


def graded_request(question: str, gold: str, prediction: str, category: int, repeat_index: int = 0,
                   categories: CategorySet | None = None) -> LLMRequest:
    """`categories`: the set naming `category` and its guidance (default: `default_categories()`)."""
    categories = categories if categories is not None else default_categories()
    user = load_prompt("judge_graded_user").format(
        category_name=categories.label(category), category_guidance=categories.guidance[category],
        question=question, gold=gold, prediction=prediction,
    )
    return LLMRequest(system=load_prompt("judge_graded_system"), messages=(("user", user),),
                      max_tokens=GRADED_MAX_TOKENS, temperature=GRADED_TEMPERATURE,
                      template_version=graded_version(), repeat_index=repeat_index, role="judge",
                      output_schema=GRADED_SCHEMA)


def parse_graded(text: str) -> tuple[float, str | None]:
    """The requested shape only: the reply is a JSON object (memeval/llm/json_reply.py) whose `score` is a number in
    0..100. Anything else is unusable (-1 with the reason) — never a number picked out of prose, where "On a scale
    of 0-100, I would give this 85" would read as 0."""
    doc = reply_json(text)
    value = doc.get("score") if isinstance(doc, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 100:
        return float(value), None
    return FAILURE, f"not a JSON object with a score in 0..100: {text.strip()[:80]!r}"


def reply_explanation(text: str, limit: int = 400) -> str:
    """What a judge said about its score: the JSON `explanation` (graded) or `reasoning` (binary), else the reply
    itself, cut to `limit` characters (kept for reading, never parsed again)."""
    match = re.search(r"\{.*\}", text, re.S)
    if match:
        try:
            doc = json.loads(match.group(0))
            said = doc.get("explanation") or doc.get("reasoning")
            if isinstance(said, str):
                return said.strip()[:limit]
        except (json.JSONDecodeError, AttributeError):
            pass
    return text.strip()[:limit]


def parse_reply(protocol: str, response: LLMResponse) -> tuple[float, str | None]:
    if response.stop_reason in UNUSABLE_STOPS:
        return FAILURE, f"reply stopped by {response.stop_reason}"
    return (parse_graded if protocol == "graded" else parse_binary)(response.text)


def judgment_from_outcomes(protocol: str, outcomes) -> JudgeOutcome | None:
    """Successful responses → one JudgeOutcome, or None when any call failed (no judgment is recorded; a rerun
    retries the failed runs while the others come from the cache). An unusable reply is -1 and is dropped
    from the mean. Binary labels are stored as 100 (CORRECT) / 0 (WRONG) so J reads as a percentage."""
    if any(isinstance(o, LLMError) for o in outcomes):
        return None
    results = [parse_reply(protocol, o) for o in outcomes]
    if protocol == "binary":
        results = [(100.0 * s if s >= 0 else FAILURE, e) for s, e in results]
    scores = [s for s, _ in results]
    stats = run_statistics(scores, min_successes=5 if protocol == "graded" else 1)
    return JudgeOutcome(protocol=protocol, scores=scores, mean=stats["mean"], std=stats["std"],
                        run_count=stats["run_count"], warning=stats["warning"], errors=[e for _, e in results if e],
                        explanations=[reply_explanation(o.text) for o in outcomes])


def binary_request(question: str, gold: str, prediction: str, repeat_index: int = 0,
                   published: StoredProtocol | None = None) -> LLMRequest:
    """Mem0's prompt filled in as its script fills it (`.format(question=, gold_answer=, generated_answer=)`) when
    fetched, else this project's; no output cap either way, as Mem0 sets none (Anthropic gets its required one)."""
    if published is not None:
        prompt = published.templates["accuracy"].format(question=question, gold_answer=gold,
                                                        generated_answer=prediction)
        version, schema, wire = published.version, MEM0_LABEL_SCHEMA, "json_object"
    else:
        prompt = load_prompt("judge_binary").format(question=question, gold=gold, prediction=prediction)
        version, schema, wire = binary_version(), BINARY_SCHEMA, ""
    return LLMRequest(messages=(("user", prompt),), max_tokens=None,
                      temperature=BINARY_TEMPERATURE, template_version=version, repeat_index=repeat_index,
                      role="judge", output_schema=schema, json_format=wire)


def parse_binary(text: str) -> tuple[float, str | None]:
    """Mem0's label rule (evaluation/metrics/llm_judge.py with mem0/memory/utils.py `extract_json`, at the pinned
    commit): the stripped reply, or the inside of its first ``` fence, parsed as JSON; its `label` equal to
    "CORRECT" is 1, any other value 0 (case-sensitive: "correct" is 0). Where Mem0's script would stop with an
    exception (not JSON, no `label`, not an object) the reply is unusable: -1 with the reason, never a label."""
    body = text.strip()
    fenced = FENCED.search(body)
    try:
        label = json.loads(fenced.group(1) if fenced else body)["label"]
    except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        return FAILURE, f"unusable under Mem0's rule ({type(exc).__name__}): {body[:80]!r}"
    return (1.0 if label == "CORRECT" else 0.0), None


def answer_key_of(answer) -> str:
    """The answer key whose gold an answer row carries ("original" unless memeval/benchmarks/locomo/keyed.py replaced it)."""
    return getattr(answer, "answer_key", "original")


class LocomoJudge(Judge):
    """The graded and binary judges as the engine runs them: `runs` calls per answer, one judgment row."""

    batchable = True

    def __init__(self, runs: int, categories: CategorySet | None = None):
        self.runs = runs
        self._categories = categories

    @property
    def categories(self) -> CategorySet:
        """The categories of the rows judged: the task's, else `default_categories()`."""
        return self._categories if self._categories is not None else default_categories()

    def requests(self, answer) -> list[LLMRequest]:
        gold = "" if answer.gold is None else str(answer.gold)
        return [self.request(answer, gold, i) for i in range(self.runs)]

    def request(self, answer, gold: str, repeat: int) -> LLMRequest:
        raise NotImplementedError

    def outcome(self, replies) -> JudgeOutcome | None:
        """The replies read under this judge's label rule (None: a call failed)."""
        return judgment_from_outcomes(self.name, replies)

    def judgment(self, answer, replies, model: str | None) -> JudgmentRow:
        outcome = self.outcome(replies)
        return JudgmentRow(sample_id=answer.sample_id, conversation_id=answer.conversation_id,
                           category=answer.category, system=answer.system, prompt_version=self.version(),
                           judge_model=model, answer_key=answer_key_of(answer), **outcome.model_dump())

    def key(self, answer) -> tuple:
        """A row judged against a corrected gold (memeval/benchmarks/locomo/keyed.py) is a judgment of its own."""
        base = (*answer.key, self.name)
        key = answer_key_of(answer)
        return base if key == "original" else (*base, key)

    unusable_reason: str  # what a judgment without one usable run lacked

    def unusable(self, judgment) -> str | None:
        return self.unusable_reason if judgment.mean is None else None

    def unusable_replies(self, judgment) -> list[int]:
        return [i for i, score in enumerate(judgment.scores) if score < 0]

    def identity(self, client) -> dict:
        from memeval.llm.manifest import role_identity

        return {**role_identity(client, self.role, self.temperature, self.own_schema), "runs": self.runs,
                "prompt_version": self.version()}

    own_schema = True


class GradedJudge(LocomoJudge):
    """0-100, category-aware, `runs` samples at temperature 0.5 (the mean is the score)."""

    name = "graded"
    unusable_reason = "no JSON score in 0..100 in any reply"
    temperature = GRADED_TEMPERATURE
    in_flight = GRADED_IN_FLIGHT

    def version(self) -> str:
        return graded_version()

    def request(self, answer, gold: str, repeat: int) -> LLMRequest:
        return graded_request(answer.question, gold, answer.prediction, answer.category, repeat, self.categories)


class BinaryJudge(LocomoJudge):
    """The Mem0 paper's CORRECT/WRONG; like that paper, the categories scored apart (LoCoMo's adversarial 5) are
    not judged.
    `published`: Mem0's fetched prompt (default: whatever `memeval data fetch protocols` stored, else none)."""

    name = "binary"
    unusable_reason = "no CORRECT/WRONG label in the reply"
    temperature = BINARY_TEMPERATURE

    def __init__(self, runs: int, published: StoredProtocol | None | bool = True,
                 categories: CategorySet | None = None):
        super().__init__(runs, categories)
        self.published = protocol_store.load("mem0_judge") if published is True else published or None

    def version(self) -> str:
        return self.published.version if self.published else binary_version()

    def accepts(self, answer) -> bool:
        return not self.categories.is_apart(answer.category)

    @property
    def own_schema(self) -> bool:  # Mem0's published call keeps its own json_object
        return self.published is None

    def request(self, answer, gold: str, repeat: int) -> LLMRequest:
        return binary_request(answer.question, gold, answer.prediction, repeat, self.published)

    def identity(self, client) -> dict:
        from memeval.protocols.status import judge_status, setting_problem

        found = super().identity(client)
        return {**found, "prompt_source": self.published.origin if self.published else "paraphrased",
                "protocol_status": judge_status(self.name, found.get("model"), self.version(),
                                                  setting_problem(client))}
