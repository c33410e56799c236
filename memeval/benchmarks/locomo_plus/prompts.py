"""The judge's prompts: LoCoMo-Plus's own, read byte for byte from the fetched prompt.py (its PROMPT_TEMPLATES, read
as data with `ast`, never executed), else this project's paraphrase, marked so. And the Cognitive reader's prompt,
which is this project's: the benchmark answers from the whole conversation in one prompt, memeval from a memory
system's memories."""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from memeval.benchmarks.locomo_plus.categories import LOCOMO_PLUS_CATEGORIES
from memeval.benchmarks.locomo_plus.datasets import COMMIT, PATHS, PROMPTS_FILE, REPO, pinned
from memeval.data.fetch import sha256_file
from memeval.errors import InputError

PARAPHRASED = "paraphrased — not the published protocol"
# by the category names the benchmark keys its templates with; {gold}, {pred}, {evidence} filled by str.format
CATEGORY_NAMES = dict(LOCOMO_PLUS_CATEGORIES.names)
LABELS = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}


def _reply(labels: str) -> str:
    return 'Reply with one JSON object and nothing else: {{"label": "' + labels + '", "reason": "<one sentence>"}}\n'


def _fact(kind: str, rules: str, labels: str) -> str:
    return ("You grade an answer to a question about a long conversation (" + kind + ").\n\n"
            "Gold answer:\n{gold}\n\nAnswer to grade:\n{pred}\n\nConversation lines the gold answer rests on:\n"
            "{evidence}\n\n" + rules + "\n" + _reply(labels))


PARAPHRASED_JUDGE = {
    "multi-hop": _fact(
        "several facts combined",
        "correct: it names the same people, places and times as the gold answer. partial: the main fact is right "
        "but a detail is missing or slightly off. wrong: it contradicts the gold answer or invents facts.",
        "correct|partial|wrong"),
    "single-hop": _fact(
        "one stated fact",
        "correct: it states the gold answer's fact. partial: the main fact is right but incomplete. wrong: it states "
        "another fact or invents one.",
        "correct|partial|wrong"),
    "temporal": _fact(
        "a date, a duration or an order of events",
        "correct: the same date, duration or order as the gold answer (another way of writing it is fine). wrong: "
        "another date or duration, or the order reversed.",
        "correct|wrong"),
    "common-sense": _fact(
        "an inference that needs world knowledge",
        "correct: the reasoning holds and reaches the gold answer's conclusion. partial: mostly sound, with a vague "
        "or slightly different conclusion. wrong: the reasoning or conclusion contradicts the gold answer.",
        "correct|partial|wrong"),
    "adversarial": ("You grade an answer to a question the conversation gives no answer to: the question is built "
                    "to mislead.\n\nAnswer to grade:\n{pred}\n\ncorrect: the answer says the conversation does not "
                    "mention it or that it cannot be answered from it. wrong: it gives an answer anyway.\n"
                    + _reply("correct|wrong")),
    "Cognitive": ("You check whether a reply in a conversation shows memory of something said earlier.\n\n"
                  "What was said earlier:\n{evidence}\n\nThe reply:\n{pred}\n\ncorrect: the reply draws on, or is "
                  "plainly shaped by, what was said earlier. wrong: nothing in the reply connects to it.\n"
                  + _reply("correct|wrong")),
}

COGNITIVE_READER = (
    "You are {listener}. Below are memories of your earlier conversations with {speaker}, each with its date.\n\n"
    "{memories}\n\n"
    "Today ({date}) {speaker} says to you:\n{trigger}\n\n"
    "Answer {speaker} as {listener}, in at most three sentences. Where something from the earlier conversations "
    "bears on what {speaker} just said, let your answer show that you remember it.")
COGNITIVE_READER_VERSION = hashlib.sha256(COGNITIVE_READER.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class JudgePrompts:
    """The templates the judge fills, and whose they are."""

    templates: dict[str, str]
    source: str  # "<repo>@<commit>:<path>" for the benchmark's own, else PARAPHRASED

    @property
    def published(self) -> bool:
        return self.source != PARAPHRASED

    @property
    def version(self) -> str:
        blob = json.dumps(self.templates, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
        return ("published:" if self.published else "paraphrased:") + digest

    def template(self, category: int) -> str:
        return self.templates.get(CATEGORY_NAMES.get(category, ""), self.templates.get("default", ""))


def read_templates(text: str, where: str) -> dict[str, str]:
    """The PROMPT_TEMPLATES dict of a prompt.py, read as a literal (the file is never run)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise InputError(where, "PROMPT_TEMPLATES", f"not Python ({exc.msg}, line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROMPT_TEMPLATES"
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                break
            if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                missing = [n for n in CATEGORY_NAMES.values() if n not in value]
                if missing:
                    raise InputError(where, "PROMPT_TEMPLATES", f"no template for {', '.join(missing)}")
                return value
            break
    raise InputError(where, "PROMPT_TEMPLATES", "no literal dict of strings assigned to PROMPT_TEMPLATES")


def judge_prompts(directory: Path) -> JudgePrompts:
    """The benchmark's prompts when prompt.py was fetched into `directory` (the pinned file, else refused), else
    the paraphrase."""
    path = directory / PROMPTS_FILE
    if not path.is_file():
        return JudgePrompts(dict(PARAPHRASED_JUDGE), PARAPHRASED)
    expected = pinned(PROMPTS_FILE).sha256
    digest = sha256_file(path)
    if digest != expected:
        raise InputError(path, "sha256", f"not the pinned file ({REPO}@{COMMIT[:12]}:"
                         f"{PATHS[PROMPTS_FILE]}, sha256 {expected[:16]}…; got {digest[:16]}…); refetch with "
                         "`memeval data fetch locomo-plus` or remove it to judge with the paraphrased prompts")
    templates = read_templates(path.read_text(encoding="utf-8"), str(path))
    return JudgePrompts(templates, f"{REPO}@{COMMIT[:12]}:{PATHS[PROMPTS_FILE]}")
