"""Readers. `extractive` needs no LLM: the retrieved sentence with the most stemmed-token overlap with the
question (question words removed) — a classical baseline, labelled as such everywhere. `claude` uses the
answer prompt of locomo-eval.md §5 and never sees the question's category."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memeval.llm.client import LLMRequest
from memeval.prompts import format_split, prompt_hash
from memeval.scoring.f1 import stem

ANSWER_TEMPERATURE = 0.0
ANSWER_MAX_TOKENS = 64  # the memory prompt asks for a short answer; `--answer-max-tokens` overrides it
EXTRACTIVE_LABEL = "extractive (no LLM)"
QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how is are was were do does did the a an of to in on at for "
    "and or with about from by has have had be been her his their them they she he it its that this".split()
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_SPEAKER_LABEL = re.compile(r"^[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?: ")


@dataclass(frozen=True)
class Memory:
    text: str
    time: str = ""
    source_ids: tuple[str, ...] = ()


def content_stems(text: str) -> set[str]:
    return {stem(w.lower()) for w in _WORD.findall(text) if w.lower() not in QUESTION_WORDS}


@lru_cache(maxsize=400_000)
def _sentences(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Sentences of one memory with their content stems; memories repeat across questions, so cached."""
    out = []
    for line in text.split("\n"):
        for sentence in _SENTENCE.split(line):
            if sentence.strip():
                out.append((sentence.strip(), frozenset(content_stems(sentence))))
    return tuple(out)


def extractive_answer(question: str, memories: Sequence[Memory], max_words: int = 30) -> str:
    """Best-overlapping sentence, ties to the higher-ranked memory; 'not mentioned' when nothing overlaps.
    The answer drops a leading speaker label ("Caroline: ") and keeps at most `max_words` words."""
    wanted = frozenset(content_stems(question))
    best, best_score = "", 0
    for memory in memories:
        for sentence, stems in _sentences(memory.text):
            score = len(wanted & stems)
            if score > best_score:
                best, best_score = sentence, score
    if not best:
        return "not mentioned"
    words = _SPEAKER_LABEL.sub("", best).split()
    return " ".join(words[:max_words])


def render_memories(memories: Sequence[Memory]) -> str:
    return "\n".join(f"- [{m.time}] {m.text}" if m.time else f"- {m.text}" for m in memories) or "(none)"


def answer_request(question: str, memories: Sequence[Memory], cache_context: bool = False,
                   repeat: int = 0) -> LLMRequest:
    """`cache_context`: the memories are the same for every question of the conversation (full context), so
    the part of the prompt before the question is marked for prompt caching. `repeat`: a study asking the same
    question again wants a new call, not the cached first reply."""
    prompt, prefix = format_split("answer_memory", "question", memories=render_memories(memories),
                                  question=question)
    return LLMRequest(messages=(("user", prompt),), max_tokens=ANSWER_MAX_TOKENS,
                      temperature=ANSWER_TEMPERATURE, template_version=prompt_hash("answer_memory"), role="answer",
                      cache_prefix_chars=prefix if cache_context else 0, repeat_index=repeat)
