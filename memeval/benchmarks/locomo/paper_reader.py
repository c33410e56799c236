"""The LoCoMo paper's reader setting, `locomo_official` (locomo-eval.md §5), for comparing with that paper's rows.

What the reader is given is rendered per session under a `DATE:` line, turns as `Speaker said, "text"` (plus
` and shared <caption>.`); it answers with a short phrase in the conversation's words. Unlike this project's
memory prompt it sees the question's category, as the paper's setting did: temporal questions get a date hint
and adversarial ones become a two-option choice (the distractor or "not mentioned") in an order seeded by the
sample id. That is the leak the spec warns of, kept on purpose for comparability and named in every row.

With the paper's own prompts fetched (`memeval data fetch protocols`: `QA_PROMPT`, `QA_PROMPT_CAT_5`,
`CONV_START_PROMPT`, the category-2 hint and the category-5 choice of task_eval/evaluate_claude.py) the request is
the paper's, byte for byte in its layout: the opening line naming both speakers, every session as `\nDATE: ...
\nCONVERSATION:\n` and its turns (`Speaker said, "text"`, ` [shares caption]` for a shared image, one line
each), one blank-line pair per session after the last, then the question prompt; 50 output tokens, no temperature
(the paper's `run_claude` sets none); a category-5 reply read by the paper's rule (`get_cat_5_answer`). What the
released data cannot say is decided here and named: its turns hold `text` and `img_url` where the script reads
`clean_text` and `img_file` (so a caption is shared only where `img_url` names an image), most category-5 items
hold only `adversarial_answer` where the script reads `answer` (offered in its place; `answer` wherever present),
the speakers' order comes from a Python set in the script (this uses speaker a, then b), and the choice order
there is unseeded (here seeded by the sample id).
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Sequence

from memeval.conversations import QA, Conversation, Turn
from memeval.llm.client import LLMRequest
from memeval.memory.base import MemoryItem
from memeval.prompts import format_through, prompt_hash
from memeval.protocols.store import StoredProtocol

OFFICIAL_PROMPTS = ("answer_locomo_official", "answer_locomo_official_choice")
NOT_MENTIONED_OPTION = "Not mentioned in the conversation"
DATE_HINT = " Give the date using the DATE lines of the conversation; an approximate date is fine."
_TURN_KINDS = ("turn", "chunk")
_BARE_LETTER = re.compile(r"\(?([ab])\)?[.:]?", re.IGNORECASE)
_LETTER_THEN_TEXT = re.compile(r"\(?([ab])\)\s", re.IGNORECASE)  # "(b) text" or "b) text", not "a cat"


def official_turn(turn: Turn) -> str:
    line = f'{turn.speaker} said, "{turn.text}"'
    return line + (f" and shared {turn.blip_caption}." if turn.blip_caption else "")


def session_lines(conversation: Conversation, items: Sequence[MemoryItem], turn_line, missing_date: str = ""
                  ) -> list[tuple[str, list[str]]]:
    """(date, lines) per session in conversation order. Turn and chunk items become their source turns (each once,
    in dialogue order, written by `turn_line`); other memories (observations, summaries, triples) keep their text,
    after the session's turns, under the session of their first source turn (or their own date)."""
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
                        (turn.position, turn_line(turn)))
        else:
            session = sources[0].session if sources else 10**6
            blocks.setdefault((session, dates.get(session, item.time or missing_date)), []).append(
                (10**6 + rank, item.text))
    return [(date, [text for _, text in sorted(lines, key=lambda line: line[0])])
            for (_, date), lines in sorted(blocks.items(), key=lambda kv: kv[0])]


def render_official_context(conversation: Conversation, items: Sequence[MemoryItem]) -> str:
    """Sessions in conversation order under `DATE:` lines (see `session_lines`)."""
    parts = [f"DATE: {date}\nCONVERSATION:\n" + "\n".join(lines)
             for date, lines in session_lines(conversation, items, official_turn)]
    return "\n\n".join(parts) or "(nothing retrieved)"


def category_5_offer(qa: QA) -> str:
    """The option beside "not mentioned": the item's `answer`, which the paper's script reads (two released items
    hold both it and an `adversarial_answer`), else the `adversarial_answer` most released items hold alone."""
    return qa.answer if qa.answer is not None else qa.adversarial_answer or ""


def choice_options(qa: QA) -> tuple[str, str]:
    """The distractor and "not mentioned", in an order fixed by the sample id (not by run or process)."""
    options = [NOT_MENTIONED_OPTION, category_5_offer(qa)]
    random.Random(zlib.crc32(qa.sample_id.encode())).shuffle(options)
    return options[0], options[1]


def official_question(qa: QA) -> str:
    if qa.category == 2:
        return qa.question + DATE_HINT
    if qa.category == 5:
        a, b = choice_options(qa)
        return f"{qa.question} Select the correct answer: (a) {a} (b) {b}."
    return qa.question


def official_request(conversation: Conversation, qa: QA, items: Sequence[MemoryItem],
                     max_tokens: int = 64, cache_context: bool = False) -> LLMRequest:
    """`cache_context`: every question of the conversation gets the same context (full context), so the
    prompt through the context — the same in both templates — is marked for prompt caching: one cache per
    conversation, whatever the question's category."""
    name = OFFICIAL_PROMPTS[1] if qa.category == 5 else OFFICIAL_PROMPTS[0]
    prompt, prefix = format_through(name, "context", speaker_a=conversation.speaker_a,
                                  speaker_b=conversation.speaker_b,
                                  context=render_official_context(conversation, items),
                                  question=official_question(qa))
    return LLMRequest(messages=(("user", prompt),), max_tokens=max_tokens, temperature=0.0,
                      template_version=prompt_hash(*OFFICIAL_PROMPTS), role="answer",
                      cache_prefix_chars=prefix if cache_context else 0)


def paper_protocol() -> StoredProtocol | None:
    """The paper's fetched prompts (data/protocols/locomo_reader.json), or None: this project's wording then."""
    from memeval.protocols import store

    return store.load("locomo_reader")


PAPER_MAX_TOKENS = 50  # evaluate_claude.py: PER_QA_TOKEN_BUDGET, the whole answer budget at batch size 1


def paper_turn(turn: Turn) -> str:
    line = f'{turn.speaker} said, "{turn.text}"'
    return line + (f" [shares {turn.blip_caption}]" if turn.img_url and turn.blip_caption else "")


def render_paper_context(conversation: Conversation, items: Sequence[MemoryItem]) -> str:
    """The paper's layout of what the reader is given. Full context is the paper's own setting (every session);
    for a memory system the same layout holds the sessions its items come from (see `session_lines`), each line
    ended by a newline, and one blank-line pair per session after the last, as the paper's loop leaves them."""
    blocks = [f"\nDATE: {date}\nCONVERSATION:\n" + "".join(line + "\n" for line in lines)
              for date, lines in session_lines(conversation, items, paper_turn)]
    return "".join(blocks) + "\n\n" * len(blocks)


def paper_question(qa: QA, published: StoredProtocol) -> str:
    t = published.templates
    if qa.category == 2:
        return qa.question + t["date_hint"]
    if qa.category == 5:
        return qa.question + t["choice"].format(*paper_options(qa, published))
    return qa.question


def paper_options(qa: QA, published: StoredProtocol) -> tuple[str, str]:
    options = [published.templates["not_mentioned"], category_5_offer(qa)]
    random.Random(zlib.crc32(qa.sample_id.encode())).shuffle(options)
    return options[0], options[1]


def paper_request(conversation: Conversation, qa: QA, items: Sequence[MemoryItem],
                  published: StoredProtocol, cache_context: bool = False) -> LLMRequest:
    """`cache_context`: every question gets the same context (full context), so the text before the question
    prompt — the same for every category — is marked for prompt caching (the bytes sent are the same)."""
    t = published.templates
    start = t["conversation_start"].format(conversation.speaker_a, conversation.speaker_b)
    context = start + render_paper_context(conversation, items) + "\n\n"
    question = (t["qa_choice"] if qa.category == 5 else t["qa"]).format(paper_question(qa, published))
    return LLMRequest(messages=(("user", context + question),), max_tokens=PAPER_MAX_TOKENS,
                      temperature=None, template_version=published.version, role="answer",
                      cache_prefix_chars=len(context) if cache_context else 0)


def paper_prediction(qa: QA, reply: str, published: StoredProtocol) -> str:
    """The paper's `get_cat_5_answer` for category 5 (a one-character reply holding "a" is option a, else b; a
    three-character one holding "(a)" is a, else b; anything else kept lower-cased), then stripped."""
    if qa.category != 5:
        return reply.strip()
    said = reply.strip().lower()
    a, b = paper_options(qa, published)
    if len(said) == 1:
        return (a if "a" in said else b).strip()
    if len(said) == 3:
        return (a if "(a)" in said else b).strip()
    return said.strip()


def official_prediction(qa: QA, reply: str) -> str:
    """An option letter ("b", "(a)", "b) ...") becomes the option's text; anything else is kept."""
    reply = reply.strip()
    match = (_BARE_LETTER.fullmatch(reply) or _LETTER_THEN_TEXT.match(reply)) if qa.category == 5 else None
    if match is None:
        return reply
    a, b = choice_options(qa)
    return a if match.group(1).lower() == "a" else b
