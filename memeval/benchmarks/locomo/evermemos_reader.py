"""Readers `evermemos_mem0`, `evermemos_memos`, `evermemos_cot`: the EverMemOS evaluation framework's answer prompts
(`answer_prompt_mem0`, `answer_prompt_memos`, `answer_prompt_cot` of its config/prompts.yaml), so a published
configuration can be re-run with one thing changed.

As the framework sends them (src/adapters/online_base.py `answer`, memory_layer's `LLMProvider.generate`): the
template as stored, filled with `.format(context=, question=)`, one user message, temperature 0, the output cap of
its system configs (`llm.max_tokens: 32768`); the reply cut after its first "FINAL ANSWER:" (the text up to a
second one, if any) and stripped. The context is memeval's: the memories the system retrieved, one a line with
their dates (the framework's adapters each lay out their own system's search results). Without the fetched file
this project's paraphrases of the three prompts are sent, and every note says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.llm.client import LLMRequest
from memeval.prompts import load_prompt, prompt_hash
from memeval.protocols.store import StoredProtocol

PROTOCOL = "evermemos_prompts"
READERS = {"evermemos_mem0": "mem0", "evermemos_memos": "memos", "evermemos_cot": "cot"}
MAX_TOKENS = 32768  # config/systems/{mem0,memos,memu,zep}.yaml `llm.max_tokens`
MAX_TOKENS_FROM = "the evermemos_* readers (the EverMemOS framework's `llm.max_tokens`, set for its gpt-4.1-mini)"
TEMPERATURE = 0.0  # online_base.py: `generate(prompt=prompt, temperature=0)`
MARKER = "FINAL ANSWER:"


def published() -> StoredProtocol | None:
    from memeval.protocols import store

    return store.load(PROTOCOL)


def paraphrased_prompt(reader: str) -> str:
    return f"answer_evermemos_{READERS[reader]}"


def template(reader: str, fetched: StoredProtocol | None) -> str:
    return fetched.templates[f"answer_{READERS[reader]}"] if fetched else load_prompt(paraphrased_prompt(reader))


def version(reader: str, fetched: StoredProtocol | None) -> str:
    return fetched.version if fetched else prompt_hash(paraphrased_prompt(reader))


def reader_request(reader: str, question: str, context: str, fetched: StoredProtocol | None,
                   cache_context: bool = False) -> LLMRequest:
    """`cache_context`: every question gets the same context (full context), so the prompt before the question,
    which holds it, is marked for prompt caching (the bytes sent are the same)."""
    text = template(reader, fetched)
    prompt = text.format(context=context, question=question)
    prefix = 0
    if cache_context and text.find("{context}") < text.find("{question}"):
        prefix = len(text[: text.index("{question}")].format(context=context))
    return LLMRequest(messages=(("user", prompt),), max_tokens=MAX_TOKENS, temperature=TEMPERATURE,
                      template_version=version(reader, fetched), role="answer", cache_prefix_chars=prefix,
                      max_tokens_from=MAX_TOKENS_FROM)


def prediction(reply: str) -> str:
    """online_base.py's cleaning: the part after the first "FINAL ANSWER:" (up to the next), else the reply; stripped.
    An empty result is what the framework returns once its retries come back empty."""
    if MARKER in reply:
        return reply.split(MARKER)[1].strip()
    return reply.strip()


def reader_requests(reader: str, searched: Sequence, render, shared: bool) -> list[LLMRequest]:
    """One request per (question, ranked items, items used, search s) of `searched`; `render(items)` is the
    context memeval gives the reader."""
    fetched = published()
    return [reader_request(reader, qa.question, render(used), fetched, cache_context=shared)
            for qa, _, used, _ in searched]


def reader_note(reader: str, model: str) -> str:
    fetched = published()
    if fetched is None:
        return (f"Reader: {reader}, the EverMemOS framework's `answer_prompt_{READERS[reader]}` in this project's "
                "wording — paraphrased prompts, not the published protocol; `memeval data fetch protocols` fetches "
                "the framework's own.")
    return (f"Reader: {model} with the EverMemOS framework's `answer_prompt_{READERS[reader]}` byte for byte "
            f"({fetched.origin}), one user message, temperature 0, {MAX_TOKENS} output tokens, the reply read after "
            "its \"FINAL ANSWER:\"; the context is memeval's retrieved memories, one a line with their dates (the "
            "framework's adapters lay out their own systems' results); its system configs name gpt-4.1-mini as the "
            "reader.")
