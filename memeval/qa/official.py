"""The LoCoMo paper's reader setting, `locomo_official` (locomo-eval.md §5), for comparing with that paper's rows.

What the reader is given is rendered per session under a `DATE:` line, turns as `Speaker said, "text"` (plus
` and shared <caption>.`); it answers with a short phrase in the conversation's words. Unlike this project's
memory prompt it sees the question's category, as the paper's setting did: temporal questions get a date hint
and adversarial ones become a two-option choice (the distractor or "not mentioned") in an order seeded by the
sample id. That is the leak the spec warns of, kept on purpose for comparability and named in every row.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Sequence

from memeval.data.locomo import QA, Conversation, Turn
from memeval.llm.client import LLMRequest
from memeval.memory.base import MemoryItem
from memeval.prompts import format_split, prompt_hash

OFFICIAL_PROMPTS = ("answer_locomo_official", "answer_locomo_official_choice")
NOT_MENTIONED_OPTION = "Not mentioned in the conversation"
DATE_HINT = " Give the date using the DATE lines of the conversation; an approximate date is fine."
_TURN_KINDS = ("turn", "chunk")
_BARE_LETTER = re.compile(r"\(?([ab])\)?[.:]?", re.IGNORECASE)
_LETTER_THEN_TEXT = re.compile(r"\(?([ab])\)\s", re.IGNORECASE)  # "(b) text" or "b) text", not "a cat"


def official_turn(turn: Turn) -> str:
    line = f'{turn.speaker} said, "{turn.text}"'
    return line + (f" and shared {turn.blip_caption}." if turn.blip_caption else "")


def render_official_context(conversation: Conversation, items: Sequence[MemoryItem]) -> str:
    """Sessions in conversation order, turns in dialogue order. Turn and chunk items become their source
    turns (each once); other memories (observations, summaries, triples) keep their text, after the
    session's turns, under the session of their first source turn (or their own date)."""
    turns = {t.dia_id: t for t in conversation.turns}
    dates = {s.index: s.date_time for s in conversation.sessions}
    blocks: dict[tuple, list[tuple[int, str]]] = {}
    seen: set[str] = set()
    for rank, item in enumerate(items):
        sources = [turns[i] for i in item.source_ids if i in turns]
        if item.kind in _TURN_KINDS and sources:
            for turn in sources:
                if turn.dia_id not in seen:
                    seen.add(turn.dia_id)
                    blocks.setdefault((turn.session, dates.get(turn.session, item.time)), []).append(
                        (turn.position, official_turn(turn)))
        else:
            session = sources[0].session if sources else 10**6
            date = dates.get(session, item.time)
            blocks.setdefault((session, date), []).append((10**6 + rank, item.text))
    parts = []
    for (_, date), lines in sorted(blocks.items(), key=lambda kv: kv[0]):
        body = "\n".join(text for _, text in sorted(lines, key=lambda line: line[0]))
        parts.append(f"DATE: {date}\nCONVERSATION:\n{body}")
    return "\n\n".join(parts) or "(nothing retrieved)"


def choice_options(qa: QA) -> tuple[str, str]:
    """The distractor and "not mentioned", in an order fixed by the sample id (not by run or process)."""
    distractor = qa.adversarial_answer or qa.answer or ""
    options = [NOT_MENTIONED_OPTION, distractor]
    random.Random(zlib.crc32(qa.sample_id.encode())).shuffle(options)
    return options[0], options[1]


def official_question(qa: QA) -> str:
    if qa.category == 2:
        return qa.question + DATE_HINT
    if qa.category == 5:
        a, b = choice_options(qa)
        return f"{qa.question} Select the correct answer: (a) {a} (b) {b}."
    return qa.question


def official_request(conversation: Conversation, qa: QA, items: Sequence[MemoryItem], model: str,
                     max_tokens: int = 64, cache_context: bool = False) -> LLMRequest:
    """`cache_context`: every question of the conversation gets the same context (full context), so the
    prompt up to the question is marked for prompt caching."""
    name = OFFICIAL_PROMPTS[1] if qa.category == 5 else OFFICIAL_PROMPTS[0]
    prompt, prefix = format_split(name, "question", speaker_a=conversation.speaker_a,
                                  speaker_b=conversation.speaker_b,
                                  context=render_official_context(conversation, items),
                                  question=official_question(qa))
    return LLMRequest(model=model, messages=(("user", prompt),), max_tokens=max_tokens, temperature=0.0,
                      template_version=prompt_hash(*OFFICIAL_PROMPTS), role="answer",
                      cache_prefix_chars=prefix if cache_context else 0)


def official_prediction(qa: QA, reply: str) -> str:
    """An option letter ("b", "(a)", "b) ...") becomes the option's text; anything else is kept."""
    reply = reply.strip()
    match = (_BARE_LETTER.fullmatch(reply) or _LETTER_THEN_TEXT.match(reply)) if qa.category == 5 else None
    if match is None:
        return reply
    a, b = choice_options(qa)
    return a if match.group(1).lower() == "a" else b
