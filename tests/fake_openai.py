"""A local OpenAI-compatible chat-completions server on 127.0.0.1 for driving the real `openai` SDK in tests. It
holds the contract as published, independently of memeval's own model table, and rejects what the real service
rejects:

- Authentication: `Authorization: Bearer <key>`; a missing or wrong key is 401 with code `invalid_api_key`
  ("Incorrect API key provided: ...", OpenAI's error-codes guide). With `local=True` it behaves like vLLM / Ollama
  started without a key: any key, any model name.
- Error bodies are {"error": {"message", "type", "param", "code"}} with an `x-request-id` header (the SDK reads
  `x-request-id` into `APIStatusError.request_id` and the `error` object into code/param/type:
  openai/_client.py `_make_status_error`, openai/_exceptions.py `APIError`).
- An unknown model is 404 `model_not_found`: "The model `X` does not exist or you do not have access to it."
- Unknown body fields are 400 "Unrecognized request argument supplied: X" (invalid_request_error).
- `temperature` must lie in [0, 2]; reasoning models (o-series, gpt-5 family) take only the default temperature
  (400 `unsupported_value`, "Only the default (1) value is supported") and refuse `max_tokens` (400
  `unsupported_parameter`: use `max_completion_tokens`; the SDK's own docstring: max_tokens "is not compatible
  with o-series models").
- `response_format: {"type": "json_object"}` needs the word "json" somewhere in the messages (400 "'messages' must
  contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", param `messages`).
- 429 comes in two kinds: a rate limit (`rate_limit_exceeded`, with `retry-after` / `retry-after-ms`, which the SDK
  honours up to 120 s: openai/_base_client.py) and an exhausted quota (`insufficient_quota`, "You exceeded your
  current quota, please check your plan and billing details", retrying does not help).
- Responses: `chat.completion` objects whose `model` is the dated snapshot served (the alias gpt-4o-mini is served
  as gpt-4o-mini-2024-07-18), `finish_reason` `length` when the output cap cut the reply, usage with
  `prompt_tokens_details.cached_tokens`: prompts of 1,024 tokens or more are cached by prefix in 128-token steps
  (OpenAI's prompt-caching guide). Tokens here are characters/4.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
FIELDS = {"model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
          "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
          "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
          "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
          "top_logprobs", "top_p", "user", "verbosity", "web_search_options"}
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
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


class FakeOpenAI:
    def __init__(self, responder=None, local: bool = False):
        self.responder = responder or (lambda body: "ok")
        self.local = local
        self.faults: list[tuple] = []  # (status, headers, body): next chat-completion calls
        self.received: list[dict] = []
        self.headers: list[dict] = []
        self.rejected: list[tuple[int, str]] = []
        self.prefixes: set[str] = set()
        self._n = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, payload: dict, status: int = 200, headers: dict | None = None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                request_id = fake._request_id()
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    return self._send(Rejection(404, f"Invalid URL (POST {self.path})").body(), 404,
                                      {"x-request-id": request_id})
                with fake._lock:
                    fake.received.append(body)
                    fault = fake.faults.pop(0) if fake.faults else None
                if fault:
                    status, headers, payload = fault
                    return self._send(payload, status, {**headers, "x-request-id": request_id})
                try:
                    fake._check_key(self.headers)
                    snapshot = fake._validate(body)
                except Rejection as r:
                    with fake._lock:
                        fake.rejected.append((r.status, r.message))
                    return self._send(r.body(), r.status, {"x-request-id": request_id})
                self._send(fake._completion(body, snapshot, request_id), headers={"x-request-id": request_id})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    def _request_id(self) -> str:
        with self._lock:
            self._n += 1
            return f"req_{self._n:032x}"

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
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}},
        }

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


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
