"""`mem0`: the Mem0 library itself (`mem0ai`, its open-source `Memory`) as a memory system, every model call it
makes answered by the run's client — so the cache, the budget, rate limits, the dry run and `--llm local` apply.

How it is fed is how Mem0's own LoCoMo harness fed its platform (mem0 evaluation/src/memzero/add.py, retired in
mem0ai/mem0@9315e3036): one Mem0 user per speaker (`Caroline_conv-26`), every session's turns as messages
"Speaker: text" — the speaker's own as `user`, the other's as `assistant` — added two messages at a time with
`metadata={"timestamp": <the session's date>}`; a question searches each speaker's memories (top_k=10 each, the
harness's), speaker A's results then B's. Mem0's LLM, embedder and prompts are the library's own; memeval only
routes the calls:
- the LLM (`generate_response`) is the `extract` role (`--extract-model`), sent with Mem0's own defaults for an
  OpenAI-compatible model (temperature 0.1, top_p 0.1, max_tokens 2,000, `response_format` json_object as Mem0 asks)
  and for an Anthropic model what Mem0's Anthropic LLM sends (temperature only, no response format);
- the embedder is the `embed` role (`--embed-model`), each text with its newlines turned into spaces and a batch
  in one call, as Mem0's OpenAI embedder does;
- the vector store is Qdrant in memory, in this process; Mem0's history database is in memory too.
Mem0's objects built for its own OpenAI clients point at a closed local port, so a call that escaped the routing
would fail here instead of reaching a service (none does: the tests count every request on the wire).

Three things are pinned so that a rerun rebuilds the same store and sends nothing: telemetry is off
(MEM0_TELEMETRY=False, its home in memeval's cache directory unless MEM0_DIR is set); Mem0's clock reads the
session's date while that session is added (Mem0 writes today's date into every extraction prompt as the
"Observation Date"/"Current Date" and into `created_at`; on the conversation's clock the prompt is the same on every
day and relative dates resolve to the conversation's time — Mem0's platform takes a `timestamp` for this, its OSS
`Memory` does not); and memory ids come from a generator seeded by the conversation, not uuid4 (ids break ties
in Qdrant's ranking, so random ids could reorder the "Existing Memories" Mem0 shows its LLM).

What the run measures is Mem0 OSS 2.2.1 as installed: hybrid search's BM25 needs `fastembed` and its entity
boost needs spaCy with `en_core_web_sm`; without them Mem0 falls back to semantic search, and `mem0_signals()` says
which were active. Each memory's source turns are the turns of the add call that wrote it (Mem0 also reads up to
10 earlier messages as context), so evidence recall is counted as for every other system.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from memeval.conversations import Conversation
from memeval.errors import InputError
from memeval.memory.base import MemoryItem, count_parameter

SUPPORTED_MEM0 = "2.2.1"  # the version whose internals (clock, ids, prompt builder) are pinned below
INSTALL_HINT = f"pip install 'memeval[mem0]' (mem0ai=={SUPPORTED_MEM0})"
HARNESS_TOP_K = 10  # Mem0's LoCoMo harness searched top_k=10 per speaker
HARNESS_BATCH = 2  # and added two messages per call
# Mem0's BaseLlmConfig defaults (mem0/configs/llms/base.py), sent by its OpenAI LLM to a non-reasoning model
MEM0_TEMPERATURE = 0.1
MEM0_TOP_P = 0.1
MEM0_MAX_TOKENS = 2000
MEM0_SEARCH_THRESHOLD = 0.1  # Memory.search's default since 2.0.0
SOURCE_KEY = "memeval_turns"  # metadata: the turns of the add call that wrote the memory
UNROUTED = "http://127.0.0.1:9/unrouted"  # the closed port Mem0's own clients are built against
LOG = logging.getLogger("memeval.mem0")


def load_mem0():
    """Import mem0 with telemetry off and its home in memeval's cache; refuse another version or telemetry on."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if "MEM0_DIR" not in os.environ:
        from memeval.llm.cache import default_cache_dir

        os.environ["MEM0_DIR"] = str(default_cache_dir() / "mem0-home")
    try:
        import mem0  # noqa: F401
        from mem0.memory import telemetry
    except ImportError as exc:
        raise InputError("mem0ai", "package", f"not installed ({' '.join(str(exc).split())}): {INSTALL_HINT}") \
            from None
    version = importlib.metadata.version("mem0ai")
    if version != SUPPORTED_MEM0:
        raise InputError("mem0ai", "version", f"{version} is installed; memeval's mem0 system is built for "
                         f"{SUPPORTED_MEM0} (its clock, ids and prompt builder are pinned): {INSTALL_HINT}")
    if telemetry.MEM0_TELEMETRY:
        raise InputError("MEM0_TELEMETRY", "environment", "is on; memeval runs Mem0 with telemetry off (unset it "
                         "or set it to False)")
    import mem0.memory.main as main

    return main


def mem0_signals() -> dict:
    """Which of Mem0's search signals this installation has: semantic always; BM25 with fastembed; entity boost
    with spaCy and en_core_web_sm."""
    import importlib.util

    spacy = importlib.util.find_spec("spacy") is not None
    model = spacy and importlib.util.find_spec("en_core_web_sm") is not None
    return {"semantic": True, "bm25": importlib.util.find_spec("fastembed") is not None, "entities": bool(model)}


@dataclass(frozen=True)
class AddCall:
    """One `Memory.add` the harness makes: two consecutive messages of one session, seen from one speaker."""

    user_id: str
    session: int
    date_time: str
    date: datetime | None  # the session's date as its loader read `date_time`
    messages: tuple[tuple[str, str], ...]  # (role, content)
    turn_ids: tuple[str, ...]


def user_id(speaker: str, conversation: Conversation) -> str:
    return f"{'_'.join(speaker.split())}_{conversation.sample_id}"


def add_calls(conversation: Conversation, batch: int = HARNESS_BATCH) -> list[AddCall]:
    """Every add call ingesting `conversation`, in order: per session, speaker A's batches then speaker B's (the
    harness ran the two in parallel threads; their stores are separate, so the order between them changes
    nothing)."""
    a, b = conversation.speaker_a, conversation.speaker_b
    calls = []
    for index, session in enumerate(conversation.sessions, start=1):
        for speaker in (a, b):
            messages = [("user" if turn.speaker == speaker else "assistant", f"{turn.speaker}: {turn.text}")
                        for turn in session.turns]
            ids = [turn.dia_id for turn in session.turns]
            for start in range(0, len(messages), batch):
                calls.append(AddCall(user_id(speaker, conversation), index, session.date_time, session.date,
                                     tuple(messages[start:start + batch]), tuple(ids[start:start + batch])))
    return calls


def session_clock(call: AddCall) -> datetime:
    """The instant Mem0's clock reads while a session is added: the session's date and time, taken as UTC."""
    if call.date is None:
        raise InputError(call.user_id, f"session {call.session} date_time", f"{call.date_time!r} is not a date its "
                         "loader could read; Mem0's clock cannot be set to it")
    return call.date.replace(tzinfo=timezone.utc)


@contextlib.contextmanager
def pinned(main_module, instant: datetime, ids: Iterator[uuid.UUID]):
    """Mem0's `datetime.now` and `uuid.uuid4` read `instant` and `ids` while inside (the modules' own names are
    rebound, this thread only uses them: ingestion is sequential)."""
    import mem0.configs.prompts as prompts

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return instant if tz is None else instant.astimezone(tz)

    class Ids:
        def __getattr__(self, name):
            return getattr(uuid, name)

        @staticmethod
        def uuid4():
            return next(ids)

    saved = (main_module.datetime, prompts.datetime, main_module.uuid)
    main_module.datetime, prompts.datetime, main_module.uuid = Clock, Clock, Ids()
    try:
        yield
    finally:
        main_module.datetime, prompts.datetime, main_module.uuid = saved


def seeded_ids(seed: str) -> Iterator[uuid.UUID]:
    """uuid5 of the seed and a counter: the same ids, in the same order, on every run."""
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"memeval:mem0:{seed}")
    n = 0
    while True:
        yield uuid.uuid5(namespace, str(n))
        n += 1


class RoutedLLM:
    """Mem0's LLM interface answered by memeval's client under the `extract` role (see the module docstring)."""

    def __init__(self, client, max_tokens: int = MEM0_MAX_TOKENS):
        self.client = client
        self.max_tokens = max_tokens

    def request(self, messages: Sequence[dict], response_format=None):
        from memeval.llm.types import LLMRequest

        system = "\n".join(m["content"] for m in messages if m.get("role") == "system")
        rest = tuple((m["role"], m["content"]) for m in messages if m.get("role") != "system")
        provider = self.client.profile(self.client.model_for("extract")).provider
        openai_wire = provider != "anthropic"  # Mem0's Anthropic LLM sends temperature alone, no response format
        wanted = (response_format or {}).get("type", "") if isinstance(response_format, dict) else ""
        if response_format and not wanted:
            raise NotImplementedError(f"Mem0 asked for response_format {response_format!r}, which memeval does not "
                                      "route")
        return LLMRequest(messages=rest, system=system,
                          max_tokens=self.max_tokens, temperature=MEM0_TEMPERATURE,
                          top_p=MEM0_TOP_P if openai_wire else None, role="extract",
                          template_version=f"mem0ai {SUPPORTED_MEM0}",
                          response_format=wanted if openai_wire else "")

    def generate_response(self, messages, response_format=None, tools=None, tool_choice="auto", **kwargs):
        if tools or kwargs:
            raise NotImplementedError(f"Mem0 asked for {'tools' if tools else sorted(kwargs)}, which memeval does not "
                                      f"route (mem0ai {SUPPORTED_MEM0}'s add path asks for none)")
        return self.client.complete(self.request(messages, response_format)).text


class RoutedEmbedder:
    """Mem0's embedder interface answered by memeval's client under the `embed` role."""

    def __init__(self, client, dimensions: int | None = None):
        self.client = client
        self.dimensions = dimensions

    def embed(self, text, memory_action=None):
        return self.embed_batch([text], memory_action)[0]

    def embed_batch(self, texts, memory_action="add"):
        cleaned = [text.replace("\n", " ") for text in texts]
        return [row.tolist() for row in self.client.embed(cleaned, self.dimensions)]


def _ingest_summary(ingests: list) -> str:
    """The run's ingestions in a sentence: add calls, memories kept, and what Mem0 logged most (a store of 0
    memories is then explained, e.g. replies Mem0 could not parse)."""
    calls = sum(r.add_calls for r in ingests)
    kept = sum(r.memories for r in ingests)
    logged: dict[str, int] = {}
    for record in ingests:
        for message, n in record.library_log.items():
            logged[message] = logged.get(message, 0) + n
    top = sorted(logged.items(), key=lambda kv: -kv[1])[:3]
    return (f" Mem0 made {calls} add calls over {len(ingests)} conversation(s) and kept {kept} memories"
            + ("; it logged " + "; ".join(f"{n}x \"{m}\"" for m, n in top) if top else "") + ".")


def _unwrapped(exc: BaseException) -> BaseException:
    """The client's own error where Mem0 wrapped it ('LLM extraction failed: ...'): memeval's errors (an API
    rejection, a budget, a cache miss with no backend) keep their meaning and their one-line message."""
    seen = exc
    while seen is not None:
        if type(seen).__module__.startswith("memeval."):
            return seen
        seen = seen.__cause__ or seen.__context__
    return exc


class Mem0System:
    """See the module docstring. `top_k`: memories per speaker a question retrieves; `batch`: messages per add
    call; `threshold`: Mem0's search threshold; `max_tokens`: Mem0's LLM output cap; `dimensions`: sent to
    embedding models that take it."""

    name = "mem0"
    needs_llm = True
    needs_embeddings = True
    ranked = False  # its own top_k per speaker is the memory, whatever the run's --k
    planned_requests_exact = False  # its later extraction prompts hold stand-ins for its own memories

    extract_temperature = MEM0_TEMPERATURE

    @staticmethod
    def library_identity() -> dict:
        """What a run records of the library: its version, the SHA-256 of the extraction prompt it sends, and which
        search signals this installation has (a run with BM25 is another run)."""
        import hashlib

        load_mem0()
        from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT

        return {"library": f"mem0ai {importlib.metadata.version('mem0ai')}",
                "extraction_prompt_sha256": hashlib.sha256(ADDITIVE_EXTRACTION_PROMPT.encode()).hexdigest(),
                "signals": mem0_signals()}

    @staticmethod
    def run_note(label: str, client, ingests: list | None = None, refused: bool = False) -> str:
        """`refused`: the run refused it before any call (its prompts do not fit the server's context)."""
        if not ingests and refused:
            return (f"{label}: the mem0ai library {SUPPORTED_MEM0}; refused before any call, as its prompts do not "
                    "fit the server's context (the refusal above says by how much), so no conversation was ingested "
                    "and no store was written.")
        if not ingests:
            return (f"{label}: the mem0ai library {SUPPORTED_MEM0}; no conversation was ingested in this run (see the "
                    "rows' errors: without a key or a local server nothing is sent), so no store was written.")
        signals = mem0_signals()
        off = [why for name, why in (("bm25", "BM25 (needs fastembed)"),
                                     ("entities", "entity boost (needs spaCy and en_core_web_sm)")) if not signals[name]]
        extract = client.model_for("extract") if client is not None else "the extract role's model"
        embed = client.model_for("embed") if client is not None else "the embed role's model"
        return (f"{label}: the mem0ai library {SUPPORTED_MEM0} (open-source Memory, Qdrant in memory) fed as Mem0's "
                "LoCoMo harness fed its platform (two messages an add, one Mem0 user per speaker, top_k=10 per "
                f"speaker); its LLM calls went to {extract} and its embeddings to {embed} through memeval's client, "
                "and its clock read each session's date while that session was added. Search signals off here: "
                f"{', '.join(off) or 'none'}. Answers come from this run's reader, not Mem0's answer prompt. Its "
                f"store is stores/{label}.json (Mem0's own get_all, for `memeval natural union --format mem0`)."
                + _ingest_summary(ingests))

    def __init__(self, top_k: int = HARNESS_TOP_K, batch: int = HARNESS_BATCH,
                 threshold: float = MEM0_SEARCH_THRESHOLD, max_tokens: int = MEM0_MAX_TOKENS,
                 dimensions: int | None = None):
        self.top_k = count_parameter("top_k", top_k)
        self.batch = count_parameter("batch", batch)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be a number in [0, 1] (Mem0's own rule), got {threshold!r}")
        self.threshold = float(threshold)
        self.max_tokens = count_parameter("max_tokens", max_tokens)
        self.dimensions = count_parameter("dimensions", dimensions, allow_none=True)
        load_mem0()  # not installed, another version, telemetry on: one line before anything runs
        self.fixed_k = 2 * self.top_k
        self.client = None
        self.memory = None
        self.users: tuple[str, ...] = ()
        self.conversation_id = ""
        self.add_calls = 0
        self.warnings: dict[str, int] = {}

    def _client(self):
        if self.client is None:
            from memeval.llm.client import make_client

            self.client = make_client("auto")
        return self.client

    def _new_memory(self, main, dimensions: int):
        from mem0.configs.base import MemoryConfig
        from qdrant_client import QdrantClient

        unrouted = {"api_key": "memeval-routes-this-call", "openai_base_url": UNROUTED}
        config = MemoryConfig(
            vector_store={"provider": "qdrant", "config": {"collection_name": "memeval", "embedding_model_dims":
                                                         dimensions, "client": QdrantClient(location=":memory:")}},
            llm={"provider": "openai", "config": {**unrouted, "model": "unrouted"}},
            embedder={"provider": "openai", "config": {**unrouted, "embedding_dims": dimensions}},
            history_db_path=":memory:")
        with self._quiet():
            memory = main.Memory(config)
        memory.llm = RoutedLLM(self._client(), self.max_tokens)
        memory.embedding_model = RoutedEmbedder(self._client(), self.dimensions)
        return memory

    @contextlib.contextmanager
    def _quiet(self):
        """Mem0's warnings (spaCy missing, BM25 off, Qdrant's local-mode notes) counted into `self.warnings` for
        the run's notes, not printed per call."""
        counts = self.warnings

        class Count(logging.Handler):
            def emit(self, record):
                if record.levelno >= logging.WARNING:
                    key = " ".join(record.getMessage().split())[:160]
                    counts[key] = counts.get(key, 0) + 1

        logger = logging.getLogger("mem0")
        handler, propagate = Count(), logger.propagate
        logger.addHandler(handler)
        logger.propagate = False
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                yield
        finally:
            logger.removeHandler(handler)
            logger.propagate = propagate
        for warning in caught:
            key = " ".join(str(warning.message).split())[:160]
            counts[key] = counts.get(key, 0) + 1

    # The dry run: what ingesting and searching would send, built with Mem0's own prompt builder. Two things are
    # not known before Mem0 runs and stand in here: the "Existing Memories" of each extraction prompt (up to 10
    # found by search; here the user's previous up to 10 new-message texts, memories being about as long) and the
    # memories each call extracts (here one per message of the user's own, about the message's length).
    def planned_requests(self, conversation: Conversation) -> list:
        main = load_mem0()
        from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT, generate_additive_extraction_prompt

        llm = RoutedLLM(self._client(), self.max_tokens)
        seen: dict[str, list[dict]] = {}
        written: dict[str, list[str]] = {}
        requests = []
        for call in add_calls(conversation, self.batch):
            messages = [{"role": r, "content": c} for r, c in call.messages]
            with pinned(main, session_clock(call), seeded_ids("plan")):
                prompt = generate_additive_extraction_prompt(
                    existing_memories=[{"id": str(i), "text": t}
                                       for i, t in enumerate(written.get(call.user_id, [])[-10:])],
                    new_messages=main.parse_messages(messages), last_k_messages=seen.get(call.user_id, [])[-10:],
                    custom_instructions=None)
            requests.append(llm.request([{"role": "system", "content": ADDITIVE_EXTRACTION_PROMPT},
                                         {"role": "user", "content": prompt}], {"type": "json_object"}))
            seen.setdefault(call.user_id, []).extend({"role": r, "content": c, "name": None} for r, c in call.messages)
            written.setdefault(call.user_id, []).extend(c for r, c in call.messages if r == "user")
        return requests

    def planned_embeddings(self, conversation: Conversation, questions) -> list[list[str]]:
        """Per add call: the new messages (Mem0's search for existing memories), then the memories it writes (stand-
        ins: the user's own messages); per question: the question (the second speaker's search is a cache hit)."""
        main = load_mem0()
        calls = []
        for call in add_calls(conversation, self.batch):
            parsed = main.parse_messages([{"role": r, "content": c} for r, c in call.messages])
            calls.append([parsed.replace("\n", " ")])
            own = [c.replace("\n", " ") for r, c in call.messages if r == "user"]
            if own:
                calls.append(own)
        return calls + [[qa.question.replace("\n", " ")] for qa in questions]

    def planned_memories(self, conversation: Conversation) -> list[MemoryItem]:
        """Stand-ins for what a question retrieves, for the dry run's reader prompts: the first 2 x top_k messages,
        as memories."""
        turns = [t for s in conversation.sessions for t in s.turns][: self.fixed_k]
        return [MemoryItem(f"{t.speaker}: {t.text}", 0.0, (t.dia_id,), "", "mem0") for t in turns]

    def ingest(self, conversation: Conversation) -> None:
        main = load_mem0()
        calls = add_calls(conversation, self.batch)
        self.conversation_id = conversation.sample_id
        self.users = tuple(dict.fromkeys(c.user_id for c in calls)) or \
            (user_id(conversation.speaker_a, conversation), user_id(conversation.speaker_b, conversation))
        embedder = RoutedEmbedder(self._client(), self.dimensions)
        first = calls[0] if calls else None
        # the first text Mem0 embeds, embedded here first to size the collection (the same call: a cache hit then)
        probe = main.parse_messages([{"role": r, "content": c} for r, c in first.messages]) if first else "probe"
        self.memory = self._new_memory(main, len(embedder.embed(probe)))
        ids = seeded_ids(conversation.sample_id)
        self.add_calls = 0
        for call in calls:
            metadata = {"timestamp": call.date_time, SOURCE_KEY: list(call.turn_ids)}
            with self._quiet(), pinned(main, session_clock(call), ids):
                try:
                    self.memory.add([{"role": r, "content": c} for r, c in call.messages], user_id=call.user_id,
                                    metadata=metadata)
                except Exception as exc:  # noqa: BLE001 — the client's own error, where Mem0 wrapped one
                    cause = _unwrapped(exc)
                    if cause is exc:
                        raise
                    raise cause from None
            self.add_calls += 1

    def _search(self, question: str, user: str) -> list[dict]:
        with self._quiet():
            try:
                found = self.memory.search(question, top_k=self.top_k, filters={"user_id": user},
                                           threshold=self.threshold)
            except Exception as exc:  # noqa: BLE001
                cause = _unwrapped(exc)
                if cause is exc:
                    raise
                raise cause from None
        return found.get("results", []) if isinstance(found, dict) else list(found)

    def search(self, question: str, k: int) -> list[MemoryItem]:
        if self.memory is None:
            return []
        return [self._item(hit) for user in self.users for hit in self._search(question, user)]

    @staticmethod
    def _item(hit: dict) -> MemoryItem:
        metadata = hit.get("metadata") or {}
        sources = metadata.get(SOURCE_KEY) or []
        return MemoryItem(str(hit.get("memory", "")), float(hit.get("score") or 0.0),
                          tuple(s for s in sources if isinstance(s, str)), str(metadata.get("timestamp") or ""),
                          "mem0")

    def native_store(self) -> list[dict]:
        """What Mem0's `get_all()` returns for both speakers (Mem0's own export, `natural union --format mem0`)."""
        if self.memory is None:
            return []
        out = []
        for user in self.users:
            with self._quiet():
                got = self.memory.get_all(filters={"user_id": user}, top_k=100_000)
            out += got.get("results", []) if isinstance(got, dict) else list(got)
        return out

    def ingest_record(self, label: str, store: list[dict]):
        """The typed record of this ingestion, given the store `native_store` returned (kept beside it:
        stores/<label>.ingest.jsonl)."""
        from memeval.records import StoreIngest

        return StoreIngest(conversation_id=self.conversation_id, system=label, add_calls=self.add_calls,
                           memories=len(store), library_log=dict(self.warnings))

    def export(self) -> list[MemoryItem]:
        return [self._item(hit) for hit in self.native_store()]
