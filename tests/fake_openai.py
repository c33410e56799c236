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
- A request without a model is 400 "you must provide a model parameter", invalid_request_error, param and code null
  (bodies quoted in lss233/kirara-ai#800 and danielmiessler/Fabric#239). An empty `messages` is 400 "Invalid
  'messages': empty array. Expected an array with minimum length 1, but got an empty array instead." (the text
  quoted in danny-avila/LibreChat#10408, 2025-11; it was "[] is too short - 'messages'" in 2023, run-llama/
  llama_index#9373); param `messages` here, the body's param and code not read.
- Message roles are those of the SDK's `ChatCompletionMessageParam` union (system, developer, user, assistant,
  tool, function: openai 3.60 `types/chat/chat_completion_message_param.py`).
- `temperature` lies in [0, 2] (the SDK's own docstring, `types/chat/completion_create_params.py`). Reasoning
  models (o-series, gpt-5) take only the default: 400 `unsupported_value`, "Unsupported value: 'temperature' does
  not support 0.5 with this model. Only the default (1) value is supported." (body quoted in leafo/lua-openai#12,
  BeehiveInnovations/pal-mcp-server#78), and refuse `max_tokens`: 400 `unsupported_parameter` (the SDK's
  docstring: max_tokens "is not compatible with o-series models"; simonw/llm#724).
- gpt-4o and gpt-4o-mini write at most 16,384 tokens a reply, gpt-4.1-mini 32,768: a larger
  `max_completion_tokens` or `max_tokens` is 400 "<field> is too large: N. This model supports at most <cap>
  completion tokens, whereas you provided N." (the body quoted for gpt-4o in enoch3712/ExtractThinker#346;
  gpt-4o-mini's 16,384 in langgenius/dify#6474 and qgrail/obsidian-ai-assistant#40; the whole error object, param
  the field and code null, for gpt-3.5-turbo-1106 in ChatGPTNextWeb/NextChat#3195). gpt-4.1-mini's 32,768: the
  model tables of vercel.com/ai-gateway/models/gpt-4.1-mini-fast (linking platform.openai.com/docs/models/
  gpt-4.1-mini) and LiteLLM's (gist ei-grad/9a7c000f, `max_output_tokens`); its snapshot gpt-4.1-mini-2025-04-14
  (the SDK's `ChatModel`, openai 3.63 types/shared/chat_model.py). The reasoning models' caps are not held here.
- `top_p` (nucleus sampling; the SDK's docstring: "0.1 means only the tokens comprising the top 10% probability
  mass") is refused here outside [0, 1] (the bound is the docstring's meaning; that 400's own text was not found,
  so the temperature message's form is used). A value under 0 (either field) gets the same form turned round,
  "decimal below minimum value. Expected a value >= 0", code `decimal_below_min_value` (its own text not read). Reasoning models refuse it: 400 `unsupported_parameter`,
  "Unsupported parameter: 'top_p' is not supported with this model." (bodies quoted in aandrew-me/tgpt#333 for
  o1-preview and HIllya51/LunaTranslator#1842 for gpt-5).
- `response_format: {"type": "json_object"}` needs the word "json" in the messages, else 400 (the API's own check,
  simonw/llm#373; the JSON-mode docs: "you must also instruct the model to produce JSON"). The message text here
  is the one widely quoted for that 400.
- `response_format.type` is one of text, json_object, json_schema (openai 3.63 `types/shared_params/
  response_format_{text,json_object,json_schema}.py`, the `ResponseFormat` union of completion_create_params.py);
  another is 400 `invalid_value` in the form of the role check above. json_schema needs a `json_schema` object
  whose `name` "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"
  (response_format_json_schema.py); a name outside that is 400 "Invalid 'response_format.json_schema.name': string
  does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'." (the body OpenAI gives a
  tool name outside the same pattern: Vortiago/mcp-azure-devops#30, hackers365/xiaozhi-esp32-server-golang#268),
  and one too long the "string too long" form of that message. The SDK leaves `schema` optional; the fake refuses
  a json_schema without one (its reply has nothing to match; memeval never sends one), a rule of this fake only.
- `strict: true` takes a subset of JSON Schema (the SDK's docstring of `strict`, pointing to the Structured Outputs
  guide): every object must set `additionalProperties: false` and list every key of `properties` in `required`,
  nested objects included. Violations are 400 invalid_request_error, param `response_format`: "Invalid schema for
  response_format 'NAME': In context=(), 'additionalProperties' is required to be supplied and to be false."
  (dottxt-ai/outlines#844, moeru-ai/xsai#202, with the context as a path such as ('properties', 'x')) and "...
  In context=(), 'required' is required to be supplied and to be an array including every key in properties.
  Missing 'k'." (the text as logged in public repositories' error notes and tests; both rules stated in
  trycompai/comp#2792 and scaleway/docs-content b33aef9). The guide's "root must be an object" rule is refused in
  the same form (its own text was not read).
- A valid json_schema request is answered with the scripted reply only when it is JSON that matches the schema
  once the keys the schema does not name are left out (what a server that enforces the schema would write); a
  script that does not match is a 400 `fake_script_error` naming why, so a test cannot pass on a reply no
  enforcing server gives.
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
    "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
    "gpt-4.1-mini-2025-04-14": "gpt-4.1-mini-2025-04-14",
}
REASONING = ("o1", "o3", "o4", "gpt-5")
OUTPUT_CAPS = {"gpt-4o-mini-2024-07-18": 16384, "gpt-4o-2024-08-06": 16384,  # snapshot → most tokens a reply
               "gpt-4.1-mini-2025-04-14": 32768}
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
        # a local server's context window and tokenizer (see SERVER ROUTES below): None serves neither
        self.n_ctx: int | None = None
        self.shape = "llama.cpp"  # which server's routes: "llama.cpp" (/props, /apply-template, /tokenize), "vllm"
        self.counted: list[dict] = []  # bodies of /apply-template and /tokenize requests
        # llama.cpp's /props `total_slots` (its -np; memeval's launcher says 1): None leaves it out
        self.total_slots: int | None = None
        self.working = 0  # completions being worked on now, and the most at once
        self.most_at_once = 0
        fake = self

        class Handler(JsonHandler):
            def do_POST(self):
                request_id = fake._request_id()
                body = self.read_json()
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                if self.path.split("?")[0].rstrip("/") == "/v1/embeddings":
                    return fake._embeddings_call(self, body, request_id)
                route = fake._server_route("POST", self.path, body)
                if route is not None:
                    return self.send_json(*route)
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    return self.send_json(Rejection(404, f"Invalid URL (POST {self.path})").body(), 404,
                                          {"x-request-id": request_id})
                fake._answer(self, body, request_id, fake.received,
                             lambda: fake._completion(body, fake._validate(body), request_id))

            def do_GET(self):
                route = fake._server_route("GET", self.path, {})
                if route is None:
                    route = (Rejection(404, f"Invalid URL (GET {self.path})").body(), 404)
                self.send_json(*route)

        self.serve(Handler, "/v1")

    # SERVER ROUTES of a local server (`local=True` with `n_ctx` set), in the shapes memeval/llm/fit.py reads:
    # - llama.cpp's server (tools/server/README.md, and memeval's launcher serves the same): `GET /props` holds
    #   `default_generation_settings.n_ctx`; `POST /apply-template` {"messages"} → {"prompt"}: the chat template's
    #   text; `POST /tokenize` {"content"} → {"tokens": [ids]}.
    # - vLLM (its OpenAI-compatible server docs, "Tokenizer API"; `GET /v1/models` entries carry `max_model_len`):
    #   `POST /tokenize` {"model", "messages"} → {"count", "max_model_len", "tokens"}; no /props, no /apply-template.
    # The template here is ChatML's (`<|im_start|>ROLE\nTEXT<|im_end|>\n`, then `<|im_start|>assistant\n`) and a
    # token is a whitespace-separated word of it: a fake tokenizer, but the one its completions are held to.
    # A chat prompt of n_ctx tokens or more is refused as llama-cpp-python refuses it: its ValueError "Requested
    # tokens (N) exceed context window of M" (llama_cpp/llama.py `_create_completion`, 0.3.36), formatted by
    # llama_cpp/server/errors.py `context_length_exceeded` into a 400 invalid_request_error, param messages, code
    # context_length_exceeded, "This model's maximum context length is M tokens. However, you requested T tokens (N in
    # the messages, C in the completion). Please reduce the length of the messages or completion."; a shorter
    # prompt whose reply cap runs past the window gets its cap cut to the room left (llama.py, "Truncate max_tokens").
    def _server_route(self, method: str, path: str, body: dict) -> tuple[dict, int] | None:
        path = path.split("?")[0].rstrip("/")
        if not self.local or self.n_ctx is None:
            return None
        if method == "GET" and path == "/props" and self.shape == "llama.cpp":
            props = {"default_generation_settings": {"n_ctx": self.n_ctx}, "n_ctx": self.n_ctx}
            return props | ({"total_slots": self.total_slots} if self.total_slots is not None else {}), 200
        if method == "GET" and path == "/v1/models":
            entry = {"id": "served", "object": "model", "owned_by": "fake"}
            return {"object": "list", "data": [{**entry, "max_model_len": self.n_ctx} if self.shape == "vllm"
                                               else entry]}, 200
        if method != "POST" or path not in ("/apply-template", "/tokenize"):
            return None
        if self.shape == "llama.cpp" and path == "/apply-template":
            answer = {"prompt": chat_template(body.get("messages") or [])}
        elif self.shape == "llama.cpp":
            answer = {"tokens": word_tokens(str(body.get("content", "")))}
        elif path == "/tokenize" and isinstance(body.get("messages"), list):
            tokens = word_tokens(chat_template(body["messages"]))
            answer = {"count": len(tokens), "max_model_len": self.n_ctx, "tokens": tokens}
        else:
            return None
        with self._lock:
            self.counted.append(body)
        return answer, 200

    def _fit(self, body: dict, cap: int | None) -> int | None:
        """The reply cap left once the prompt is in the window; a prompt that fills it is refused (see above)."""
        if not self.local or self.n_ctx is None:
            return cap
        prompt = len(word_tokens(chat_template(body.get("messages") or [])))
        if prompt >= self.n_ctx:
            raise Rejection(400, f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                                 f"{prompt + (cap or 0)} tokens ({prompt} in the messages, {cap} in the completion). "
                                 "Please reduce the length of the messages or completion.", param="messages",
                            code="context_length_exceeded")
        return cap if cap is not None and cap + prompt < self.n_ctx else self.n_ctx - prompt

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
            raise Rejection(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                                 "empty array instead.", param="messages")
        for i, m in enumerate(messages):
            if m.get("role") not in ROLES:
                raise Rejection(400, f"Invalid value: '{m.get('role')}'. Supported values are: 'system', "
                                     "'assistant', 'user', 'function', 'tool', and 'developer'.",
                                param=f"messages[{i}].role", code="invalid_value")
        reasoning = not self.local and model.startswith(REASONING)
        if "max_tokens" in body and reasoning:
            raise Rejection(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                 "'max_completion_tokens' instead.", param="max_tokens", code="unsupported_parameter")
        cap = None if self.local else OUTPUT_CAPS.get(snapshot)
        for field in ("max_completion_tokens", "max_tokens"):
            asked = body.get(field)
            if cap is not None and isinstance(asked, int) and asked > cap:
                raise Rejection(400, f"{field} is too large: {asked}. This model supports at most {cap} completion "
                                     f"tokens, whereas you provided {asked}.", param=field)
        if "temperature" in body and body["temperature"] is not None:
            t = body["temperature"]
            if not isinstance(t, (int, float)) or not 0 <= t <= 2:
                raise _out_of_range("temperature", t, 0, 2)
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
                raise _out_of_range("top_p", p, 0, 1)
        fmt = (body.get("response_format") or {}).get("type")
        if "response_format" in body and fmt not in RESPONSE_FORMAT_TYPES:
            raise Rejection(400, f"Invalid value: '{fmt}'. Supported values are: 'text', 'json_object', and "
                                 "'json_schema'.", param="response_format.type", code="invalid_value")
        if fmt == "json_object" and "json" not in _prompt(body).lower():
            raise Rejection(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of "
                                 "type 'json_object'.", param="messages")
        if fmt == "json_schema":
            _check_json_schema(body["response_format"].get("json_schema"))
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
        with self._lock:
            self.working += 1
            self.most_at_once = max(self.most_at_once, self.working)
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
        finally:
            with self._lock:
                self.working -= 1
        text = self.responder(body)
        spec = (body.get("response_format") or {}).get("json_schema") if \
            (body.get("response_format") or {}).get("type") == "json_schema" else None
        if spec is not None:
            text = _schema_reply(text, spec)
        cap = self._fit(body, body.get("max_completion_tokens") or body.get("max_tokens"))
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

RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema")
SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
SCHEMA_NAME_MAX = 64


def _out_of_range(field: str, value, low: float, high: float) -> Rejection:
    below = isinstance(value, (int, float)) and value < low
    side, bound = ("below minimum", f">= {low}") if below else ("above maximum", f"<= {high}")
    return Rejection(400, f"Invalid '{field}': decimal {side} value. Expected a value {bound}, but got {value} "
                          "instead.", param=field, code="decimal_below_min_value" if below else "decimal_above_max_value")


def _check_json_schema(spec) -> None:
    if not isinstance(spec, dict):
        raise Rejection(400, "Missing required parameter: 'response_format.json_schema'.",
                        param="response_format.json_schema", code="missing_required_parameter")
    name = spec.get("name")
    if not isinstance(name, str):
        raise Rejection(400, "Missing required parameter: 'response_format.json_schema.name'.",
                        param="response_format.json_schema.name", code="missing_required_parameter")
    if len(name) > SCHEMA_NAME_MAX:
        raise Rejection(400, f"Invalid 'response_format.json_schema.name': string too long. Expected a string with "
                             f"maximum length {SCHEMA_NAME_MAX}, but got a string with length {len(name)} instead.",
                        param="response_format.json_schema.name", code="string_above_max_length")
    if not SCHEMA_NAME.match(name):
        raise Rejection(400, "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a "
                             "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                        param="response_format.json_schema.name", code="invalid_value")
    schema = spec.get("schema")
    if not isinstance(schema, dict):
        raise Rejection(400, "Missing required parameter: 'response_format.json_schema.schema' (fake_openai's rule).",
                        param="response_format.json_schema.schema", code="missing_required_parameter")
    if spec.get("strict"):
        if schema.get("type") != "object":
            raise Rejection(400, f"Invalid schema for response_format '{name}': schema must be a JSON Schema of "
                                 "'type: \"object\"', got 'type: \"{schema.get('type')}\"'.", param="response_format")
        _check_strict(schema, name, ())


def _check_strict(schema: dict, name: str, context: tuple) -> None:
    """Every object node of a strict schema closes itself and requires every property it names."""
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            raise Rejection(400, f"Invalid schema for response_format '{name}': In context={context!r}, "
                                 "'additionalProperties' is required to be supplied and to be false.",
                            param="response_format")
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        for key in schema.get("properties") or {}:
            if key not in required:
                raise Rejection(400, f"Invalid schema for response_format '{name}': In context={context!r}, "
                                     "'required' is required to be supplied and to be an array including every key "
                                     f"in properties. Missing '{key}'.", param="response_format")
        for key, sub in (schema.get("properties") or {}).items():
            _check_strict(sub, name, (*context, "properties", key))
    if isinstance(schema.get("items"), dict):
        _check_strict(schema["items"], name, (*context, "items"))


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _conform(value, schema: dict, where: str):
    """`value` as a server enforcing `schema` could have written it (keys the schema does not name left out), or
    ValueError saying where it cannot be."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    ok = not kinds or any(
        (isinstance(value, int) and not isinstance(value, bool)) if k == "integer" else
        (isinstance(value, (int, float)) and not isinstance(value, bool)) if k == "number" else
        isinstance(value, _TYPES.get(k, object)) for k in kinds)
    if not ok:
        raise ValueError(f"{where or 'the reply'} is {type(value).__name__}, the schema wants {kinds}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{where or 'the reply'} is {value!r}, not one of {schema['enum']}")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        missing = [k for k in schema.get("required") or [] if k not in value]
        if missing:
            raise ValueError(f"{where or 'the reply'} lacks {missing}")
        return {k: _conform(v, properties[k], f"{where}.{k}") for k, v in value.items() if k in properties}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_conform(v, schema["items"], f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _schema_reply(text: str, spec: dict) -> str:
    import json

    try:
        shaped = _conform(json.loads(text), spec["schema"], "")
    except ValueError as exc:  # json.JSONDecodeError included
        raise Rejection(400, f"fake_openai: the scripted reply {text[:60]!r} does not match json_schema "
                             f"{spec['name']!r} ({exc}); a server enforcing the schema never writes it",
                        kind="fake_script_error") from None
    return text if shaped == json.loads(text) else json.dumps(shaped)


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


def chat_template(messages: list) -> str:
    """ChatML's prompt of chat messages (the fake's template; see SERVER ROUTES)."""
    return "".join(f"<|im_start|>{m.get('role')}\n{m.get('content')}<|im_end|>\n" for m in messages) \
        + "<|im_start|>assistant\n"


def word_tokens(text: str) -> list[int]:
    """The fake's tokenizer: one id per whitespace-separated word."""
    return [int.from_bytes(hashlib.blake2b(w.encode(), digest_size=3).digest(), "little") for w in text.split()]


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
