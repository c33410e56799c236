"""A local OpenAI-compatible chat-completions server on 127.0.0.1 for driving the real `openai` SDK in tests. It
holds the contract as published, independently of memeval's own model table, and rejects what the real service
rejects. Each rule and where it was read (2026-12-03):

- Authentication is `Authorization: Bearer <key>`; a missing or wrong key is 401 with code `invalid_api_key`,
  "Incorrect API key provided: ..." (OpenAI's error-codes guide, help.openai.com article 6891839, "401 -
  Incorrect API key provided"). With `local=True` it behaves like vLLM / Ollama started without a key: any key,
  any model name.
- Error bodies are {"error": {"message", "type", "param", "code"}} with an `x-request-id` header: the SDK reads
  `x-request-id` into `APIStatusError.request_id` and the `error` object into code/param/type
  (openai 3.60 `_client.py` `_make_status_error`, `_exceptions.py` `APIError`).
- An unknown model is 404 `model_not_found`, "The model `X` does not exist or you do not have access to it."
  (portkey.ai/error-library/access-error-10503 and model-access-error-10537 quote the body).
- An unknown body field is 400 "Unrecognized request argument supplied: X", type invalid_request_error, param and
  code null (bodies quoted in davidmigloz/langchain_dart#712 and coroot/coroot#698). The known fields are the
  keyword arguments of the SDK's `chat.completions.create` (openai 3.60 `resources/chat/completions`).
- Message roles are those of the SDK's `ChatCompletionMessageParam` union (system, developer, user, assistant,
  tool, function: openai 3.60 `types/chat/chat_completion_message_param.py`).
- `temperature` lies in [0, 2] (the SDK's own docstring, `types/chat/completion_create_params.py`). Reasoning
  models (o-series, gpt-5) take only the default: 400 `unsupported_value`, "Unsupported value: 'temperature' does
  not support 0.5 with this model. Only the default (1) value is supported." (body quoted in leafo/lua-openai#12,
  BeehiveInnovations/pal-mcp-server#78), and refuse `max_tokens`: 400 `unsupported_parameter` (the SDK's
  docstring: max_tokens "is not compatible with o-series models"; simonw/llm#724).
- `top_p` (nucleus sampling; the SDK's docstring: "0.1 means only the tokens comprising the top 10% probability
  mass") is refused here outside [0, 1] (the bound is the docstring's meaning; that 400's own text was not found,
  so the temperature message's form is used). Reasoning models refuse it: 400 `unsupported_parameter`,
  "Unsupported parameter: 'top_p' is not supported with this model." (bodies quoted in aandrew-me/tgpt#333 for
  o1-preview and HIllya51/LunaTranslator#1842 for gpt-5).
- `response_format: {"type": "json_object"}` needs the word "json" in the messages, else 400 (the API's own check,
  simonw/llm#373; the JSON-mode docs: "you must also instruct the model to produce JSON"). The message text here
  is the one widely quoted for that 400.
- 429 comes in two kinds (error-codes guide): a rate limit (`rate_limit_exceeded`, with `retry-after` /
  `retry-after-ms`, which the SDK honours up to 120 s: openai 3.60 `_base_client.py`, `_constants.py`
  MAX_RETRY_AFTER_DELAY) and an exhausted quota (`insufficient_quota`, "You exceeded your current quota, please
  check your plan and billing details"; retrying does not help).
- Responses are `chat.completion` objects whose `model` is the dated snapshot served (gpt-4o-mini has the one
  snapshot gpt-4o-mini-2024-07-18, openai/openai-openapi#292; gpt-4o points to gpt-4o-2024-08-06,
  anomalyco/models.dev#231), `finish_reason` `length` when the output cap cut the reply, and usage with
  `prompt_tokens_details.cached_tokens`: nothing is cached below 1,024 prompt tokens (OpenAI's "Prompt Caching
  201" cookbook, as distilled at skills.sh/archive228/lab-skills/prompt-cache-optimization); the 128-token steps
  follow the prompt-caching guide as remembered, not re-read here. Tokens here are characters/4.

`POST /v1/embeddings` (read 2026-12-05):
- Known fields are the keyword arguments of the SDK's `embeddings.create` (model, input, dimensions,
  encoding_format, user: openai 3.63 `resources/embeddings.py`); another is 400 "Unrecognized request argument
  supplied: X", as for chat.
- Models and their vector lengths: text-embedding-3-small 1536, text-embedding-3-large 3072, text-embedding-ada-002
  1536 (docs.praison.ai/docs/embeddings/providers/openai; llamaindex ALL_OPENAI_EMBEDDING_MODELS); any other id is
  404 `model_not_found` with the chat message above (the text for an embeddings request was not read; a chat
  model named here is treated the same). With `local=True` any id, 256-dimensional vectors.
- `input` is a string or an array of strings (token arrays are not served here). An empty string, alone or in an
  array, is 400 invalid_request_error "'$.input' is invalid. Please check the API reference:
  https://platform.openai.com/docs/api-reference.", param and code null (body quoted in aryn-ai/sycamore#943;
  openai/openai-python#576 for one inside an array; the API reference: input "cannot be an empty string"). An
  empty array gets the same 400 here: its own body was not found.
- At most 2,048 inputs, 8,192 tokens an input, 300,000 tokens summed over a request (the SDK 3.63 docstring of
  `input`, quoting the API reference). Past 8,192: 400 invalid_request_error "This model's maximum context length
  is 8192 tokens, however you requested N tokens (N in your prompt; 0 for the completion). Please reduce your
  prompt; or completion length." (text-embedding-3-small, pingcap/autoflow#265; sbintuitions/JMTEB#15). Past
  300,000: 400 with type and code `max_tokens_per_request`, "Requested N tokens, max 300000 tokens per request"
  (OpenDataBox/CrackSQL#27). Past 2,048 inputs: 400 invalid_request_error with the `'$.input' is invalid` text (the
  limit is sourced, this body is not: none was found).
- `dimensions` on text-embedding-ada-002 is 400 "This model does not support specifying dimensions." (body in
  SciPhi-AI/R2R#768 and sbintuitions/JMTEB#14; the SDK: "Only supported in text-embedding-3 and later models").
- `encoding_format` is "float" (JSON numbers) or "base64" (little-endian float32 bytes: the SDK's own decoder,
  openai/lib/_parsing/_embeddings.py, reads them with dtype float32); the reply is a `list` of `embedding`
  objects with `index`, the model id, and usage {prompt_tokens, total_tokens}.
Vectors are a hashed bag of words (each word of three or more letters, a few dozen function words left out, adds ±1
at a hashed position, then unit length): deterministic, and texts sharing words are near, so retrieval over them
means something (conv-26, chunks of 128 tokens, top 2: evidence recall 0.29 at 256 dimensions, 0.33 at 1536).
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import re
import time

import numpy as np
from openai.resources.chat.completions import Completions
from openai.resources.embeddings import Embeddings

from tests.loopback import JsonHandler, LoopbackServer

TEST_KEY = "sk-proj-test-SECRET-do-not-store-9876543210"
SNAPSHOTS = {  # model id → snapshot served
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "gpt-4o-mini-2024-07-18": "gpt-4o-mini-2024-07-18",
    "gpt-4o": "gpt-4o-2024-08-06",
    "gpt-4o-2024-08-06": "gpt-4o-2024-08-06",
    "o3-mini": "o3-mini-2025-01-31",
    "gpt-5-mini": "gpt-5-mini-2025-08-07",
}
REASONING = ("o1", "o3", "o4", "gpt-5")
FIELDS = frozenset(p for p in inspect.signature(Completions.create).parameters  # the API's request fields
                   if p not in ("self", "extra_headers", "extra_query", "extra_body", "timeout"))
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
EMBEDDING_FIELDS = frozenset(p for p in inspect.signature(Embeddings.create).parameters
                             if p not in ("self", "extra_headers", "extra_query", "extra_body", "timeout"))
EMBEDDING_MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
NO_DIMENSIONS = ("text-embedding-ada-002",)
LOCAL_DIMENSIONS = 256
MAX_INPUTS, MAX_INPUT_TOKENS, MAX_REQUEST_TOKENS = 2048, 8192, 300_000
INVALID_INPUT = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
_WORD = re.compile(r"[a-z0-9]{3,}")
_STOP = frozenset("the and you what did does for are was were that this with have has had how when who where which why "
                  "your about from they them their she her his him its been not but can will would".split())
CACHE_MIN, CACHE_STEP = 1024, 128


class Rejection(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.param = status, message, kind, code, param

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _prompt(body: dict) -> str:
    return "".join(str(m.get("content", "")) for m in body.get("messages", []))


class FakeOpenAI(LoopbackServer):
    def __init__(self, responder=None, local: bool = False):
        self.responder = responder or (lambda body: "ok")
        self.local = local
        self.faults: list[tuple] = []  # (status, headers, body): the next calls, either endpoint
        self.chat_faults: list[tuple] = []  # the same, for chat completions only (before `faults`)
        self.received: list[dict] = []
        self.headers: list[dict] = []
        self.rejected: list[tuple[int, str]] = []
        self.prefixes: set[str] = set()
        self.embedded: list[dict] = []  # bodies of /v1/embeddings requests (rejected ones too)
        self.usage: dict = {}  # fields laid over every completion's `usage` (a broken or hostile server)
        self.latency_s = 0.0  # how long a completion takes to come back (a CPU server over a long prompt)
        fake = self

        class Handler(JsonHandler):
            def do_POST(self):
                request_id = fake._request_id()
                body = self.read_json()
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                if self.path.split("?")[0].rstrip("/") == "/v1/embeddings":
                    return fake._embeddings_call(self, body, request_id)
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    return self.send_json(Rejection(404, f"Invalid URL (POST {self.path})").body(), 404,
                                          {"x-request-id": request_id})
                fake._answer(self, body, request_id, fake.received,
                             lambda: fake._completion(body, fake._validate(body), request_id))

        self.serve(Handler, "/v1")

    def _embeddings_call(self, handler, body: dict, request_id: str) -> None:
        self._answer(handler, body, request_id, self.embedded, lambda: self._embeddings(body))

    def _answer(self, handler, body: dict, request_id: str, log: list, reply) -> None:
        """One endpoint's call: logged, a queued fault first, then the key and the endpoint's own rules (`reply`
        raises Rejection) — the same order for chat completions and embeddings."""
        with self._lock:
            log.append(body)
            chat = log is self.received
            fault = self.chat_faults.pop(0) if chat and self.chat_faults else \
                self.faults.pop(0) if self.faults else None
        if fault:
            status, headers, payload = fault
            return handler.send_json(payload, status, {**headers, "x-request-id": request_id})
        try:
            self._check_key(handler.headers)
            answer = reply()
        except Rejection as r:
            with self._lock:
                self.rejected.append((r.status, r.message))
            return handler.send_json(r.body(), r.status, {"x-request-id": request_id})
        handler.send_json(answer, headers={"x-request-id": request_id})

    def _embeddings(self, body: dict) -> dict:
        for name in body:
            if name not in EMBEDDING_FIELDS:
                raise Rejection(400, f"Unrecognized request argument supplied: {name}")
        model = body.get("model")
        if not model:
            raise Rejection(400, "you must provide a model parameter")
        width = LOCAL_DIMENSIONS if self.local else EMBEDDING_MODELS.get(model)
        if width is None:
            raise Rejection(404, f"The model `{model}` does not exist or you do not have access to it.",
                            code="model_not_found")
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or len(texts) > MAX_INPUTS or not all(
                isinstance(t, str) and t for t in texts):
            raise Rejection(400, INVALID_INPUT)
        counts = [_tokens(t) for t in texts]
        if max(counts) > MAX_INPUT_TOKENS:
            n = max(counts)
            raise Rejection(400, f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, however you "
                                 f"requested {n} tokens ({n} in your prompt; 0 for the completion). Please reduce "
                                 "your prompt; or completion length.")
        if sum(counts) > MAX_REQUEST_TOKENS:
            raise Rejection(400, f"Requested {sum(counts)} tokens, max {MAX_REQUEST_TOKENS} tokens per request",
                            kind="max_tokens_per_request", code="max_tokens_per_request")
        dimensions = body.get("dimensions")
        if dimensions is not None:
            if not self.local and model in NO_DIMENSIONS:
                raise Rejection(400, "This model does not support specifying dimensions.")
            if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
                raise Rejection(400, f"Invalid 'dimensions': expected a positive integer, got {dimensions!r}.",
                                param="dimensions")
            width = dimensions
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            raise Rejection(400, f"Invalid value: '{fmt}'. Supported values are: 'float' and 'base64'.",
                            param="encoding_format", code="invalid_value")
        data = []
        for i, text in enumerate(texts):
            vector = bag_of_words(text, width)
            shown = base64.b64encode(vector.astype("<f4").tobytes()).decode() if fmt == "base64" else \
                [float(v) for v in vector]
            data.append({"object": "embedding", "index": i, "embedding": shown})
        return {"object": "list", "data": data, "model": model,
                "usage": {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}}

    def _request_id(self) -> str:
        return f"req_{self.next_number():032x}"

    def _check_key(self, headers) -> None:
        if self.local:
            return
        key = (headers.get("authorization") or "").removeprefix("Bearer ")
        if key != TEST_KEY:
            shown = f"{key[:3]}*****{key[-4:]}" if key else ""
            raise Rejection(401, f"Incorrect API key provided: {shown}. You can find your API key at "
                                 "https://platform.openai.com/account/api-keys.", code="invalid_api_key")

    def _validate(self, body: dict) -> str:
        for name in body:
            if name not in FIELDS:
                raise Rejection(400, f"Unrecognized request argument supplied: {name}")
        model = body.get("model")
        if not model:
            raise Rejection(400, "you must provide a model parameter")
        snapshot = model if self.local else SNAPSHOTS.get(model)
        if snapshot is None:
            raise Rejection(404, f"The model `{model}` does not exist or you do not have access to it.",
                            code="model_not_found")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Rejection(400, "[] is too short - 'messages'", param="messages")
        for i, m in enumerate(messages):
            if m.get("role") not in ROLES:
                raise Rejection(400, f"Invalid value: '{m.get('role')}'. Supported values are: 'system', "
                                     "'assistant', 'user', 'function', 'tool', and 'developer'.",
                                param=f"messages[{i}].role", code="invalid_value")
        reasoning = not self.local and model.startswith(REASONING)
        if "max_tokens" in body and reasoning:
            raise Rejection(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                 "'max_completion_tokens' instead.", param="max_tokens", code="unsupported_parameter")
        if "temperature" in body and body["temperature"] is not None:
            t = body["temperature"]
            if not isinstance(t, (int, float)) or not 0 <= t <= 2:
                raise Rejection(400, f"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, "
                                     f"but got {t} instead.", param="temperature", code="decimal_above_max_value")
            if reasoning and t != 1:
                raise Rejection(400, f"Unsupported value: 'temperature' does not support {t} with this model. Only "
                                     "the default (1) value is supported.", param="temperature",
                                code="unsupported_value")
        if body.get("top_p") is not None:
            p = body["top_p"]
            if reasoning:
                raise Rejection(400, "Unsupported parameter: 'top_p' is not supported with this model.",
                                param="top_p", code="unsupported_parameter")
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                raise Rejection(400, f"Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got "
                                     f"{p} instead.", param="top_p", code="decimal_above_max_value")
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_object" and "json" not in _prompt(body).lower():
            raise Rejection(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of "
                                 "type 'json_object'.", param="messages")
        return snapshot

    def _cached_tokens(self, prompt: str) -> int:
        total = _tokens(prompt)
        if total < CACHE_MIN:
            return 0
        steps = [n for n in range(CACHE_MIN, total + 1, CACHE_STEP)]
        with self._lock:
            hit = max((n for n in steps if prompt[: 4 * n] in self.prefixes), default=0)
            self.prefixes.update(prompt[: 4 * n] for n in steps)
        return hit

    def _completion(self, body: dict, snapshot: str, request_id: str) -> dict:
        if self.latency_s:
            time.sleep(self.latency_s)
        text = self.responder(body)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        finish = "stop"
        if cap is not None and _tokens(text) > cap:
            text, finish = text[: 4 * cap], "length"
        prompt = _prompt(body)
        prompt_tokens = _tokens(prompt)
        return {
            "id": f"chatcmpl-{request_id[-12:]}", "object": "chat.completion", "created": int(time.time()),
            "model": snapshot, "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": _tokens(text),
                      "total_tokens": prompt_tokens + _tokens(text),
                      "prompt_tokens_details": {"cached_tokens": self._cached_tokens(prompt), "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}, **self.usage},
        }

def rate_limited(retry_after: str | None = "1", retry_after_ms: str | None = None) -> tuple:
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return (429, headers, Rejection(429, "Rate limit reached for gpt-4o-mini in organization org-fake on requests "
                                         "per min (RPM): Limit 3, Used 3, Requested 1.", kind="requests",
                                    code="rate_limit_exceeded").body())


def quota_exhausted() -> tuple:
    return (429, {}, Rejection(429, "You exceeded your current quota, please check your plan and billing details.",
                               kind="insufficient_quota", code="insufficient_quota").body())


def server_error(status: int = 500) -> tuple:
    return (status, {}, Rejection(status, "The server had an error while processing your request.",
                                  kind="server_error").body())


def user_text(body: dict) -> str:
    return "".join(m["content"] for m in body["messages"] if m["role"] == "user")


def bag_of_words(text: str, width: int) -> np.ndarray:
    """The fake's embedding: ±1 per content word (three letters or more) at a hashed position, unit length; a text
    without such a word gets the first axis."""
    vector = np.zeros(width, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % width] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return vector / norm


def main(argv=None) -> int:
    """OPENAI_BASE_URL is where memeval's OpenAI backend sends (memeval/llm/openai_backend.py, `endpoint_for`):
    `--llm openai` with the test key, or with `--local` any key and model, as `--llm local` expects."""
    from tests.loopback import serve_by_hand

    def options(parser):
        parser.add_argument("--local", dest="fake_options", action="store_const", const={"local": True},
                            default={}, help="behave like vLLM or Ollama started without a key: any key, any model "
                                             "(for --llm local)")

    def env(server, args):
        if args.fake_options:
            return {"OPENAI_BASE_URL": server.url}
        return {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": TEST_KEY}

    return serve_by_hand(FakeOpenAI, "fake OpenAI chat-completions and embeddings API", argv, env, options,
                         then=lambda args: "then pass --llm local and name each role's model (--answer-model "
                                           "ANY)" if args.fake_options else "then pass --llm openai")


if __name__ == "__main__":
    raise SystemExit(main())
