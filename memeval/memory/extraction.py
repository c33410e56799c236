"""Triple extraction: an LLM backend (temperature 0, objective facts only, the triples as a JSON object's list, with
its schema for models and servers that enforce one; cached through the client) and a gold backend (a dataset's own
triples: the perfect-extraction ablation).

Parsing is pure and strict: the reply is the JSON object the prompt asks for (memeval/llm/json_reply.py); any item
of its list that is not an object with string subject/relation/object is dropped and counted, never repaired into a
guess. A reply without that list is no extraction: the system fails its ingest (UnusableExtraction) rather than
answer from a graph that silently lacks the chunk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memeval.llm.client import LLMClient, LLMError, LLMRequest
from memeval.llm.json_reply import reply_json
from memeval.prompts import load_prompt, prompt_hash

EXTRACTION_TEMPERATURE = 0.0
EXTRACTION_MAX_TOKENS = 1024
_STRING = {"type": "string"}
# what the prompt asks for, closed and every key required (OpenAI's strict Structured Outputs take no other)
TRIPLES_SCHEMA = json.dumps({"type": "object", "additionalProperties": False, "required": ["triples"], "properties": {
    "triples": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["subject", "relation", "object", "source"],
        "properties": {"subject": _STRING, "relation": _STRING, "object": _STRING, "source": _STRING}}}}})


class UnusableExtraction(LLMError):
    """A reply that ended by itself but holds no JSON array of triples. It is cached like any finished reply, so a
    rerun replays it and fails the same way; another model (or prompt) is another extraction."""


@dataclass(frozen=True)
class Source:
    """One unit of source text a fact can cite (a LoCoMo turn, a graph80 paragraph)."""

    id: str
    text: str
    time: str = ""  # ISO date for ordering


@dataclass(frozen=True)
class ExtractedFact:
    subject: str
    relation: str
    object: str
    source_id: str


def extraction_request(sources: Sequence[Source], model: str = "",
                       max_tokens: int = EXTRACTION_MAX_TOKENS) -> LLMRequest:
    text = "\n".join(f"[{s.id}] ({s.time}) {s.text}" for s in sources)
    return LLMRequest(model=model, messages=(("user", load_prompt("extract_triples").format(text=text)),),
                      max_tokens=max_tokens, temperature=EXTRACTION_TEMPERATURE,
                      template_version=prompt_hash("extract_triples"), role="extract", output_schema=TRIPLES_SCHEMA)


def triple_list(text: str) -> list | None:
    """The list of triples a reply holds: the reply is a JSON object with a `triples` list, as the prompt asks
    (None otherwise)."""
    doc = reply_json(text)
    data = doc.get("triples") if isinstance(doc, dict) else None
    return data if isinstance(data, list) else None


def parse_triples(text: str, sources: Sequence[Source]) -> tuple[list[ExtractedFact], int]:
    """(facts, dropped). A fact citing no known source of the chunk is attributed to the chunk's first
    source only if the chunk has one source; otherwise it is dropped (its evidence would be a guess)."""
    data = triple_list(text)
    if data is None:
        return [], (1 if text.strip() else 0)
    known = {s.id for s in sources}
    facts, dropped = [], 0
    for item in data:
        if not isinstance(item, dict):
            dropped += 1
            continue
        parts = [item.get(k) for k in ("subject", "relation", "object")]
        if not all(isinstance(p, str) and p.strip() for p in parts):
            dropped += 1
            continue
        source = str(item.get("source", "")).strip().strip("[]")
        if source not in known:
            if len(sources) != 1:
                dropped += 1
                continue
            source = sources[0].id
        facts.append(ExtractedFact(parts[0].strip(), parts[1].strip(), parts[2].strip(), source))
    return facts, dropped


def extract_llm(client: LLMClient, chunks: Sequence[Sequence[Source]], model: str = "",
                max_tokens: int = EXTRACTION_MAX_TOKENS) -> tuple[list[ExtractedFact], dict]:
    """Every chunk through the client (cache first); raises the first LLMError (a reply without a JSON array
    included) so a system without an LLM, or with one that does not extract, fails loudly instead of ingesting an
    empty or partial graph."""
    outcomes = client.complete_many([extraction_request(chunk, model, max_tokens) for chunk in chunks])
    facts, dropped = [], 0
    for chunk, out in zip(chunks, outcomes, strict=True):
        if isinstance(out, LLMError):
            raise out
        if triple_list(out.text) is None:
            raise UnusableExtraction(f"no JSON array of triples (a JSON object {{\"triples\": [...]}}) in the "
                                     f"extraction of {chunk[0].id}..{chunk[-1].id} from "
                                     f"{out.model}: {out.text.strip()[:80]!r}; the reply is cached, so a rerun "
                                     "fails the same way")
        got, bad = parse_triples(out.text, chunk)
        facts += got
        dropped += bad
    return facts, {"chunks": len(chunks), "facts": len(facts), "dropped": dropped}
