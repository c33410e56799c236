"""The JSON a resolved request becomes on the wire (pure), shared by the sync, batch and token-count paths so
they cannot drift apart."""

from __future__ import annotations

import hashlib
import json

RESPONSE_FORMATS = ("json_schema", "json_object", "none")  # --response-format: what memeval's own JSON requests send


def message_content(text: str, cache_prefix_chars: int, splits: tuple[int, ...] = ()) -> str | list[dict]:
    """A plain string, or text blocks with the long shared prefix marked for prompt caching — one block, or one
    per piece when the prefix is written in pieces (`splits`); the model reads the same characters either way."""
    if cache_prefix_chars <= 0 or cache_prefix_chars > len(text):
        return text
    cuts = [0, *(s for s in splits if 0 < s < cache_prefix_chars), cache_prefix_chars]
    blocks = [{"type": "text", "text": text[a:b], "cache_control": {"type": "ephemeral"}}
              for a, b in zip(cuts, cuts[1:], strict=False)]
    rest = text[cache_prefix_chars:]
    return [*blocks, {"type": "text", "text": rest}] if rest else blocks


def request_body(request) -> dict:
    """Messages API body of a resolved `LLMRequest` (no `temperature` key unless one is to be sent). Thinking counts
    toward `max_tokens`, so the cap sent is the answer cap plus the thinking reserved; a budget (`enabled`) is
    that reserve, which keeps it below `max_tokens` as the API requires."""
    messages = []
    for index, (role, text) in enumerate(request.messages):
        prefix = request.cache_prefix_chars if index == 0 and role == "user" else 0
        splits = request.cache_splits if prefix else ()
        messages.append({"role": role, "content": message_content(text, prefix, splits)})
    body: dict = {"model": request.model, "max_tokens": request.max_tokens_sent, "messages": messages}
    if request.system:
        body["system"] = request.system
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.thinking:
        body["thinking"] = {"type": request.thinking}
        if request.thinking == "enabled":
            body["thinking"]["budget_tokens"] = request.thinking_tokens
    if request.output_schema:
        body["output_config"] = {"format": {"type": "json_schema", "schema": json.loads(request.output_schema)}}
    if request.effort:
        body.setdefault("output_config", {})["effort"] = request.effort
    return body


def count_tokens_body(request) -> dict:
    """Token counting takes the prompt and the settings that shape it (thinking, output_config) — no max_tokens,
    no sampling."""
    body = request_body(request)
    return {k: v for k, v in body.items() if k in ("model", "messages", "system", "output_config", "thinking")}


def openai_body(request, max_tokens_field: str = "max_completion_tokens") -> dict:
    """Chat-completions body of a resolved `LLMRequest`: the system prompt as a leading system message, plain
    string contents (OpenAI caches prefixes by itself, so no cache markers), the output cap under the field the
    profile names, and for a request that wants structured output its `response_format`: the schema itself
    (Structured Outputs, strict) under json_schema, else json_object (JSON mode: Mem0's judge call)."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages += [{"role": role, "content": text} for role, text in request.messages]
    body: dict = {"model": request.model, "messages": messages}
    if request.max_tokens is not None:  # the cap is optional in Chat Completions; Mem0's judge sets none
        body[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.output_schema and request.json_format == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": schema_name(request.output_schema), "schema": json.loads(request.output_schema), "strict": True}}
    elif request.output_schema or request.response_format:
        body["response_format"] = {"type": request.response_format or "json_object"}
    return body


def schema_name(schema: str) -> str:
    """The `json_schema.name` of a schema: the same schema always gets the same name, within OpenAI's rule
    (a-z, A-Z, 0-9, `_`, `-`, at most 64 characters: openai SDK types/shared_params/response_format_json_schema.py)."""
    return "memeval_" + hashlib.sha256(schema.encode("utf-8")).hexdigest()[:16]
