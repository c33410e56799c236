"""Fit before sending: a request to a server the user runs (`--llm local`, or `openai` with its own OPENAI_BASE_URL)
is checked against the server's context window before it goes, so a prompt that cannot fit fails its own row at
once (DoesNotFit, never "rerun to retry"), not one 400 at a time and never by stopping the other systems.

The window is learned once per client and server: `GET {root}/props` (llama.cpp's server and memeval's launcher:
`default_generation_settings.n_ctx`, else `n_ctx`), else vLLM's `GET {base}/models` (`data[].max_model_len` of the
model), else `--context-tokens N`, else unknown (said once on stderr: nothing is checked). A prompt is counted with
the server's own tokenizer: llama.cpp's shape (`POST {root}/apply-template` {"messages"} → {"prompt"}, then
`POST {root}/tokenize` {"content"} → {"tokens"}), else vLLM's (`POST {root}/tokenize` {"model", "messages"} →
{"count"}), else estimated at 4 characters a token plus ESTIMATE_MARGIN (said once). `root` is the base URL without
its trailing `/v1`. Shapes: llama.cpp tools/server/README.md ("POST /tokenize", "POST /apply-template", "GET
/props"); vLLM's OpenAI-compatible server docs ("Tokenizer API": /tokenize, /detokenize; /v1/models' max_model_len).

A prompt whose UTF-8 bytes, plus TEMPLATE_SLACK for the chat template's own tokens, plus the reply cap fit in the
window is not counted at all: a token of these tokenizers covers at least one byte. Counts are kept per prompt text
in memory, so a prompt is counted once per run.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from memeval.llm import tokenizers
from memeval.llm.endpoints import base_url_for
from memeval.llm.errors import DoesNotFit

CONTEXT_FLAG = "--context-tokens"
ESTIMATE_MARGIN_PERCENT = 25  # an estimated prompt is taken this much longer: small vocabularies cut text finer
TEMPLATE_SLACK = 128  # tokens a chat template may add (role markers, a default system line) ...
TEMPLATE_SLACK_PER_MESSAGE = 16  # ... and per message
PROBE_TIMEOUT_S = 10.0
# An unknown window is said once a request might not fit in this many tokens: `memeval serve-local`'s default, the
# smallest window memeval starts a server with; shorter requests fit any server this is used with.
QUIET_WINDOW = 4096
REMEDY = "serve a longer context (memeval serve-local --n-ctx) or use another system"


@dataclass(frozen=True)
class Window:
    """The tokens one request may hold (prompt plus reply) and where that was read."""

    tokens: int
    source: str


@dataclass(frozen=True)
class Count:
    tokens: int
    how: str  # "the server's tokenizer", or the estimate's wording
    by_server: bool = False  # counted by the server's own tokenizer (not estimated)


# ---- pure ------------------------------------------------------------------------------------------------------

def root_of(base_url: str) -> str:
    """The server root of an OpenAI-compatible base URL: `http://host:8000/v1` → `http://host:8000`."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def chat_messages(request) -> list[dict]:
    """The messages a resolved request sends (the system prompt as a leading system message)."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    return messages + [{"role": role, "content": text} for role, text in request.messages]


def surely_fits(messages: Sequence[dict], reply_tokens: int, window: int) -> bool:
    """Whether the messages fit without counting: every token covers at least one byte of text."""
    size = sum(len(str(m.get("content") or "").encode("utf-8", "surrogatepass")) for m in messages)
    return size + TEMPLATE_SLACK + TEMPLATE_SLACK_PER_MESSAGE * len(messages) + reply_tokens <= window


def estimated(messages: Sequence[dict], why: str = "the server offers no tokenizer") -> Count:
    text = "".join(str(m.get("content") or "") for m in messages)
    tokens = tokenizers.estimate_tokens(text) * (100 + ESTIMATE_MARGIN_PERCENT) // 100
    tokens += TEMPLATE_SLACK_PER_MESSAGE * len(messages)
    return Count(tokens, f"estimated at {tokenizers.CHARS_PER_TOKEN} characters a token plus "
                         f"{ESTIMATE_MARGIN_PERCENT}%: {why}")


def unreachable(exc: OSError) -> str:
    """The class of what kept a server from answering at all (urllib wraps it: ConnectionRefusedError, not
    URLError)."""
    reason = getattr(exc, "reason", None)
    return type(reason if isinstance(reason, BaseException) else exc).__name__


def misfit(count: Count, reply_tokens: int, window: Window, where: str) -> DoesNotFit | None:
    """DoesNotFit when the prompt's tokens plus the reply cap exceed the window, else None."""
    needed = count.tokens + reply_tokens
    if needed <= window.tokens:
        return None
    return DoesNotFit(f"needs {needed:,} tokens ({count.tokens:,} prompt, {count.how}, + {reply_tokens:,} reply cap), "
                      f"more than the {window.tokens:,}-token context of the server at {where} ({window.source}); "
                      f"not sent, and a rerun fails the same way: {REMEDY}", needed, window.tokens)


# The servers' own words for a prompt past the window (a 400): OpenAI's and vLLM's, and llama-cpp-python's
# formatting of its ValueError (llama_cpp/server/errors.py `context_length_exceeded`, 0.3.36: "This model's maximum
# context length is {} tokens. However, you requested {} tokens ..."); llama-cpp-python's raw ValueError
# (llama_cpp/llama.py: "Requested tokens ({}) exceed context window of {}"); llama.cpp's server
# (`exceed_context_size_error`: "the request exceeds the available context size", with n_prompt_tokens and n_ctx).
_MAXIMUM = re.compile(r"maximum context length is (\d+) tokens.*?requested (\d+) tokens", re.I | re.S)
_REQUESTED = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")
CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})


def server_misfit(status: int, message: str, body: dict, where: str) -> DoesNotFit | None:
    """The server's own refusal of a prompt past its window as DoesNotFit (None: another error)."""
    if status != 400:
        return None
    code = str(body.get("code") or "")
    kind = str(body.get("type") or "")
    needed = held = None
    if m := _MAXIMUM.search(message):
        held, needed = int(m.group(1)), int(m.group(2))
    elif m := _REQUESTED.search(message):
        needed, held = int(m.group(1)), int(m.group(2))
    elif code in CONTEXT_CODES or kind in CONTEXT_CODES or "exceeds the available context size" in message:
        n_prompt, n_ctx = body.get("n_prompt_tokens"), body.get("n_ctx")
        needed = n_prompt if isinstance(n_prompt, int) else None
        held = n_ctx if isinstance(n_ctx, int) else None
    else:
        return None
    said = " ".join(message.split())[:300]
    head = (f"needs {needed:,} tokens, more than the {held:,}-token context of the server at {where}"
            if needed is not None and held is not None else f"does not fit the context of the server at {where}")
    return DoesNotFit(f"{head} (its 400: {said}); a rerun fails the same way: {REMEDY}", needed, held)


_NUMBERS = re.compile(r"needs ([\d,]+) tokens.*?the ([\d,]+)-token context")
_LARGEST = re.compile(r"refused before any call: its largest (\w+) prompt")


def does_not_fit(error: str | None) -> bool:
    """Whether a row's recorded error is DoesNotFit (its own, or its ingestion's)."""
    return bool(error) and (error.startswith("DoesNotFit:") or error.startswith("ingest failed: DoesNotFit:"))


def misfit_kind(error: str) -> str:
    """What a DoesNotFit row could not send: "extraction" (the prompt that builds a system's memory: its ingestion,
    or an up-front refusal of its extraction prompt) or "reader" (the prompt that answers)."""
    if error.startswith("ingest failed:"):
        return "extraction"
    refused = _LARGEST.search(error)
    return "extraction" if refused and refused.group(1) == "extraction" else "reader"


def fit_advice(rows: Sequence[tuple[str | None, str | None]], others: int = 0) -> str | None:
    """The closing line's remedy for (system, error) rows that do not fit (None when none): per system, which of its
    prompts did not fit (reader or extraction), for how many answers, the largest need, against the server's
    window; `others`: the run's other failed rows, which a rerun may still fix."""
    groups: dict[tuple[str | None, str], list[str]] = {}
    for system, error in rows:
        if does_not_fit(error):
            groups.setdefault((system, misfit_kind(error)), []).append(error)
    if not groups:
        return None
    helds = [int(m.group(2).replace(",", "")) for errors in groups.values() for m in map(_NUMBERS.search, errors)
             if m]
    parts = []
    for (system, kind), errors in groups.items():
        needs = [int(m.group(1).replace(",", "")) for m in map(_NUMBERS.search, errors) if m]
        n = len(errors)
        answers = f"{n:,} answer{'' if n == 1 else 's'}" + (" left without a memory" if kind == "extraction" else "")
        largest = f", largest needs {max(needs):,} tokens" if needs else ""
        parts.append((f"{system}'s " if system else "") + f"{kind} prompts ({answers}{largest})")
    window = f"{min(helds):,}-token context" if helds else "context"
    tail = f"; rerun to retry the other {others:,} failed" if others else ""
    return f"what does not fit the server's {window}: {' and '.join(parts)}; a rerun fails the same way: {REMEDY}{tail}"


# ---- the server ------------------------------------------------------------------------------------------------

class ServerProbe:
    """JSON over HTTP to one server's root (urllib: no SDK route exists for these endpoints)."""

    def __init__(self, base_url: str, key: str | None = None, timeout_s: float = PROBE_TIMEOUT_S):
        self.base_url = base_url.rstrip("/")
        self.root = root_of(self.base_url)
        self.key = key
        self.timeout_s = timeout_s

    def get(self, url: str, timeout_s: float | None = None):
        return self._call(urllib.request.Request(url, method="GET"), timeout_s)

    def post(self, url: str, body: dict, timeout_s: float | None = None):
        data = json.dumps(body).encode()
        return self._call(urllib.request.Request(url, data=data, method="POST",
                                                 headers={"content-type": "application/json"}), timeout_s)

    def _call(self, request: urllib.request.Request, timeout_s: float | None):
        """The reply's JSON, or None when the server has no such endpoint or answered something else; OSError
        when it could not be reached."""
        if self.key:
            request.add_header("authorization", f"Bearer {self.key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s or self.timeout_s) as reply:  # noqa: S310
                raw = reply.read(1 << 24)
        except urllib.error.HTTPError:
            return None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    def window(self, model: str) -> Window | None:
        props = self.props()
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            for value in ((settings or {}).get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")):
                if _count(value):
                    return Window(value, "GET /props")
        models = self.get(self.base_url + "/models")
        data = models.get("data") if isinstance(models, dict) else None
        if isinstance(data, list):
            entries = [e for e in data if isinstance(e, dict)]
            mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
            if mine and _count(mine[0].get("max_model_len")):
                return Window(mine[0]["max_model_len"], "GET /v1/models max_model_len")
        return None

    def props(self):
        """GET /props once (llama.cpp's server and memeval's launcher; None elsewhere)."""
        if not hasattr(self, "_props"):
            self._props = self.get(self.root + "/props")
        return self._props

    def slots(self) -> int | None:
        """Requests the server works on at once: `total_slots` of GET /props (llama.cpp's server: its -np;
        memeval's launcher: 1), None when it does not say."""
        props = self.props()
        slots = props.get("total_slots") if isinstance(props, dict) else None
        return slots if _count(slots) else None

    def llama_cpp_count(self, messages: list[dict], timeout_s: float) -> int | None:
        templated = self.post(self.root + "/apply-template", {"messages": messages}, timeout_s)
        prompt = templated.get("prompt") if isinstance(templated, dict) else None
        if not isinstance(prompt, str):
            return None
        tokens = self.post(self.root + "/tokenize", {"content": prompt}, timeout_s)
        tokens = tokens.get("tokens") if isinstance(tokens, dict) else None
        return len(tokens) if isinstance(tokens, list) else None

    def vllm_count(self, model: str, messages: list[dict], timeout_s: float) -> int | None:
        counted = self.post(self.root + "/tokenize", {"model": model, "messages": messages}, timeout_s)
        count = counted.get("count") if isinstance(counted, dict) else None
        return count if _count(count, zero=True) else None


def _count(value, zero: bool = False) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and (value >= 0 if zero else value > 0)


class _Server:
    """What one client knows of one server: its window (learned once), its tokenizer's shape, its counts."""

    def __init__(self, probe: ServerProbe):
        self.probe = probe
        self.window: Window | None = None
        self.slots: int | None = None  # requests it works on at once, when it says (GET /props total_slots)
        self.learned = False
        self.shape: str | None = None  # "llama.cpp", "vllm", "none"; None: not found out yet
        self.unreachable: str | None = None  # the error class of the last attempt that reached nothing
        self.counts: dict[str, Count] = {}
        self.lock = threading.Lock()


class FitCheck:
    """Per client: `check(request)` raises DoesNotFit for a resolved request that cannot fit its server's window;
    requests to Anthropic's or OpenAI's own API, and those of a backend that sends nothing, are not checked."""

    def __init__(self, client, context_tokens: int | None = None, say=None):
        self.client = client
        self.context_tokens = context_tokens
        self.say = say or (lambda line: print(f"memeval: note: {line}", file=sys.stderr))
        self._servers: dict[str, _Server] = {}
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def checks_role(self, role: str) -> bool:
        """Whether `role`'s requests go to a user's server, whose window this check reads."""
        model = self.client.models.get(role)
        if not model:
            return False
        provider = self.client.profile(model).provider
        return provider in ("local", "openai") and not self.client.endpoint_is_default(provider)

    def applies(self, request) -> bool:
        provider = request.provider
        if provider not in ("local", "openai") or self.client.endpoint_is_default(provider):
            return False
        return getattr(self.client.backend_for(provider), "sends_requests", True) and bool(self._base_url(provider))

    def check(self, request) -> None:
        problem = self.misfit(request)
        if problem is not None:
            raise problem

    def misfit(self, request) -> DoesNotFit | None:
        """DoesNotFit when `request` (resolved) cannot fit, None when it can or nothing is known to check it by."""
        if not self.applies(request):
            return None
        server = self._server(request.provider)
        window = self._window(server, request)
        reply = request.max_tokens_sent or 0
        messages = chat_messages(request)
        if window is None:
            if not surely_fits(messages, reply, QUIET_WINDOW):  # only a request that might not fit needs the note
                self._once(f"window:{server.probe.base_url}", f"the server at "
                           f"{self.client.endpoint(request.provider)} does not report its context window (no GET "
                           f"/props, no max_model_len in GET /v1/models) and {CONTEXT_FLAG} was not given: requests "
                           "are not checked against it before sending")
            return None
        if surely_fits(messages, reply, window.tokens):
            return None
        return misfit(self.count(server, request, messages), reply, window, self.client.endpoint(request.provider))

    def measure(self, request) -> tuple[Count, Window | None]:
        """A resolved request's prompt tokens, counted by its server where it can be (else estimated), and the
        server's window (None: unknown, or not a user's server): the dry run's "largest prompt"."""
        messages = chat_messages(request)
        if not self.applies(request):
            text = "".join(str(m["content"]) for m in messages)
            return Count(tokenizers.estimate_tokens(text, request.model),
                         f"estimated ({tokenizers.estimate_note([request.model])})"), None
        server = self._server(request.provider)
        window = self._window(server, request)
        return self.count(server, request, messages), window

    def server_tokens(self, request) -> int | None:
        """A resolved request's prompt tokens by its server's own tokenizer (a dry run's stage counts); None when
        it does not go to a user's server or that server offers no tokenizer memeval reads."""
        if not self.applies(request):
            return None
        count = self.count(self._server(request.provider), request, chat_messages(request))
        return count.tokens if count.by_server else None

    def count(self, server: _Server, request, messages: list[dict]) -> Count:
        key = hashlib.sha256(json.dumps([request.model, messages]).encode("utf-8", "surrogatepass")).hexdigest()
        with server.lock:
            hit = server.counts.get(key)
        if hit is not None:
            return hit
        counted = self._counted(server, request, messages)
        with server.lock:
            server.counts[key] = counted
        return counted

    def _counted(self, server: _Server, request, messages: list[dict]) -> Count:
        from memeval.llm.bounds import read_timeout_s

        timeout = read_timeout_s(request.provider)  # a busy one-request-at-a-time server answers after its reply
        probe = server.probe
        try:
            for shape in (server.shape,) if server.shape else ("llama.cpp", "vllm"):
                if shape == "llama.cpp":
                    tokens = probe.llama_cpp_count(messages, timeout)
                elif shape == "vllm":
                    tokens = probe.vllm_count(request.model, messages, timeout)
                else:
                    break
                if tokens is not None:
                    server.shape, server.unreachable = shape, None
                    return Count(tokens, f"by the server's tokenizer ({shape} /tokenize)", by_server=True)
            server.shape, server.unreachable = "none", None
        except OSError as exc:  # unreachable for now: this prompt is estimated, the shape found out on a later one
            server.unreachable = unreachable(exc)
            self._once(f"unreachable:{probe.base_url}", f"{self.unreachable_line(request)}: prompts are estimated at "
                       f"{tokenizers.CHARS_PER_TOKEN} characters a token plus {ESTIMATE_MARGIN_PERCENT}% before "
                       "sending")
            return estimated(messages, f"the server could not be reached ({server.unreachable})")
        self._once(f"tokenizer:{probe.base_url}", f"the server at {self.client.endpoint(request.provider)} offers no "
                   "tokenizer memeval reads (llama.cpp's /apply-template and /tokenize, or vLLM's /tokenize): prompts "
                   f"are estimated at {tokenizers.CHARS_PER_TOKEN} characters a token plus {ESTIMATE_MARGIN_PERCENT}% "
                   "before sending")
        return estimated(messages)

    def unreachable_line(self, request) -> str | None:
        """'the server at URL could not be reached (ConnectionRefusedError)' when the last attempt to count one of
        `request`'s server's prompts reached nothing (None: it answered, or was not tried)."""
        if not self.applies(request):
            return None
        cls = self._server(request.provider).unreachable
        return f"the server at {self.client.endpoint(request.provider)} could not be reached ({cls})" if cls else None

    def window(self, request) -> Window | None:
        """The window of `request`'s server (None: not checked)."""
        return self._window(self._server(request.provider), request) if self.applies(request) else None

    def _window(self, server: _Server, request) -> Window | None:
        with server.lock:
            if not server.learned:
                try:
                    server.window = server.probe.window(request.model)
                    server.slots = server.probe.slots()
                except OSError:
                    server.window = None
                if server.window is None and self.context_tokens:
                    server.window = Window(self.context_tokens, CONTEXT_FLAG)
                server.learned = True
            return server.window

    def slots(self, request) -> int | None:
        """How many requests `request`'s server works on at once, when it says (None: unknown or not checked)."""
        if not self.applies(request):
            return None
        server = self._server(request.provider)
        self._window(server, request)
        return server.slots

    def _server(self, provider: str) -> _Server:
        import os

        url = self._base_url(provider)
        with self._lock:
            if url not in self._servers:
                self._servers[url] = _Server(ServerProbe(url, os.environ.get("OPENAI_API_KEY") or None))
            return self._servers[url]

    @staticmethod
    def _base_url(provider: str) -> str:
        return base_url_for(provider)

    def _once(self, key: str, line: str) -> None:
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        self.say(line)
