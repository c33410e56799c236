"""A local Anthropic-compatible server on 127.0.0.1 for driving the real SDK in tests. It holds the API
contract as published, independently of memeval's own model table, and rejects what the real service rejects:

- `anthropic-version` is required and must be a known version (platform.claude.com/docs/en/api/versioning:
  2023-06-01, 2026-10-21).
- Under 2026-10-21, `temperature`, `top_p` and `top_k` are removed from Messages, token counting and Message
  Batches requests: 400 "temperature: Extra inputs are not permitted", even at default values
  (platform.claude.com/docs/en/api/migration-2026-10-21; confirmed by third-party runs against Sonnet 4.6).
- Claude Opus 4.7 and later reject sampling parameters on any version: 400 "`temperature` is deprecated for
  this model." (github.com/Comfy-Org/ComfyUI/issues/13923); the Sonnet 5 page: non-default values are a 400.
- Where sampling is taken, `temperature` lies in [0, 1]: 400 "temperature: range: 0..1" (the API's body quoted in
  anthropics/anthropic-sdk-python#893, whose maintainers say in 2026-08 that values outside 0.0-1.0 are now a 400
  on current models). Claude Opus 4.1 and later 4.x, Sonnet 4.5 / 4.6 and Haiku 4.5 refuse `temperature` and
  `top_p` together: 400 "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
  (comet-ml/opik#3728 names Opus 4.1, Sonnet 4.5, Haiku 4.5; SalesforceAIResearch/MCP-Universe#49 Opus 4.5;
  iOfficeAI/AionUi#912 Sonnet 4.6), held here for the models whose sampling is "any".
- An unknown model is a 404 not_found_error; a missing or wrong key a 401 authentication_error
  (platform.claude.com/docs/en/api/errors). Error bodies are {"type": "error", "error": {"type", "message"},
  "request_id"} with a `request-id` header.
- Body fields are those of the SDK's own signatures (anthropic 2.16, resources/messages/messages.py:
  `Messages.create` and `Messages.count_tokens`; count_tokens has no max_tokens and no sampling parameters);
  anything else is 400 "<field>: Extra inputs are not permitted", the message shape of the migration guide's
  sampling error. `model`, `messages` and `max_tokens` are required there (keyword arguments without a default);
  `max_tokens` 0 is taken ("Set to `0` to populate the prompt cache without generating a response", SDK 2.17
  types/message_create_params.py): the reply here has no content, stop_reason max_tokens and 0 output tokens (its
  shape is this fake's own), a negative one is a 400. `output_config.format` only on models with structured outputs (structured-outputs docs);
  `custom_id` must match [A-Za-z0-9_-]{1,64} (Message Batches API reference).
- Batches: each request ends succeeded, errored, canceled or expired (docs.claude.com/.../retrieving-message-
  batches); a request with invalid input comes back as its own `errored` result carrying the error type
  (dev.to, "Claude Message Batches: what to do with each result state"), so it is validated when processed.
- Prompt caching: a prefix ending at a `cache_control` block is cached when it reaches the model's minimum
  (4,096 Opus 4.6 / Haiku 4.5, 2,048 Sonnet 4.6 as observed in anthropic-sdk-python#1194); usage reports
  `cache_creation_input_tokens` / `cache_read_input_tokens`. Tokens here are characters/4.
- A reply that is not the API's JSON (`not_json()`, queued in `faults`): what a proxy, gateway or web server at
  ANTHROPIC_BASE_URL answers with a 200 page. The SDK does not raise an APIStatusError for a 2xx; it hands a body
  whose content type is not JSON back as its text, and a body that claims JSON but is not fails in `json()`
  (anthropic 2.16, _response.py: BaseAPIResponse._parse, non-strict response validation, the SDK default).
"""

from __future__ import annotations

import hashlib
import json
import re
import time

from tests.loopback import JsonHandler, LoopbackServer

TEST_SECRET = "sk-ant-test-SECRET-do-not-store-0123456789"
VERSIONS = ("2023-06-01", "2026-10-21")
SAMPLING = ("temperature", "top_p", "top_k")
# model → (sampling under 2023-06-01: "any" | "default-only" | "none", cache floor, structured outputs)
MODELS = {
    "claude-opus-4-6": ("any", 4096, True),
    "claude-sonnet-4-6": ("any", 2048, True),
    "claude-haiku-4-5": ("any", 4096, True),
    "claude-opus-4-7": ("none", 2048, True),
    "claude-opus-4-8": ("none", 1024, True),
    "claude-sonnet-5": ("default-only", 1024, True),
    "claude-opus-5": ("none", 512, True),
    "claude-sonnet-5-5": ("none", 1024, True),
    "claude-opus-5-5": ("none", 1024, True),
}
COUNT_FIELDS = {"model", "messages", "system", "output_config", "cache_control", "speed", "thinking", "tools",
                "tool_choice", "user_profile_id", "workspace_id"}
MESSAGE_FIELDS = COUNT_FIELDS | {"max_tokens", "stop_sequences", "stream", "metadata", "service_tier", "container",
                                 "diagnostics", "inference_geo", *SAMPLING}
_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Thinking, model → (with `thinking` omitted: "off" | "on" | "always"; the `thinking.type` values accepted, any
# other a 400; the default `display`). Read 2026-12-04:
# - Sonnet 5.5: platform.claude.com/docs/en/models/sonnet-5-5/migration-guide — a request without `thinking` runs
#   adaptive thinking; accepted "adaptive", "between_tools"; default display "omitted". /whats-new-sonnet-5-5:
#   `disabled` is a 400 invalid_request_error whose message points to between_tools; between_tools is the lowest
#   setting and a request without tools gets text only; between_tools at effort xhigh or max is a 400.
# - Opus 5.5: "Adaptive (always on)" (comparison table of platform.claude.com/docs/en/models/sonnet-5-5/overview);
#   turning thinking off or a budget is "a 400 invalid_request_error" (openrouter.ai/docs/cookbook/evaluate-and-
#   optimize/model-migrations/claude-5-5); the message as reproduced on the live API in dev.to/persimmoq "Claude
#   Opus 5.5 / Sonnet 5.5: 5 settings that return 400 when you only change the model name".
# - Opus 5 thinks when `thinking` is omitted and may still be disabled or budgeted; disabled with effort xhigh or
#   max is a 400 (apidog.com/blog/claude-opus-5-api; openrouter, same page). Sonnet 5: adaptive or disabled,
#   display omitted (apifox.com "Claude Sonnet 5.5 vs Sonnet 5" table), on when omitted (the Sonnet 5.5 migration
#   guide names Sonnet 4.6 and earlier as the ones that ran without).
# - Opus 4.8 ran without thinking when omitted (apidog, same page) and takes adaptive only (simstudioai/sim#4771);
#   Opus 4.7 adaptive only, budgets and disabled a 400 (docs.aws.amazon.com/bedrock/latest/userguide/claude-
#   messages-adaptive-thinking.html). Opus 4.6 and Sonnet 4.6: adaptive, budgets, disabled (same page); Haiku 4.5
#   budgets only ("Extended" in the Sonnet 5.5 overview's table); none of them thinks when omitted.
THINKING = {
    "claude-opus-4-6": ("off", ("adaptive", "enabled", "disabled"), "summarized"),
    "claude-sonnet-4-6": ("off", ("adaptive", "enabled", "disabled"), "summarized"),
    "claude-haiku-4-5": ("off", ("enabled", "disabled"), "summarized"),
    "claude-opus-4-7": ("off", ("adaptive",), "summarized"),
    "claude-opus-4-8": ("off", ("adaptive", "disabled"), "summarized"),
    "claude-sonnet-5": ("on", ("adaptive", "disabled"), "omitted"),
    "claude-opus-5": ("on", ("adaptive", "enabled", "disabled"), "omitted"),
    "claude-sonnet-5-5": ("on", ("adaptive", "between_tools"), "omitted"),
    "claude-opus-5-5": ("always", ("adaptive",), "omitted"),
}
# `budget_tokens` "Must be ≥1024 and less than `max_tokens`" (anthropic SDK 2.17,
# types/thinking_config_enabled_param.py).
MIN_BUDGET_TOKENS = 1024
# `output_config.effort` levels (SDK types/output_config_param.py) and the models that take it (the supportedModels
# of platform.claude.com/docs/zh-CN/build-with-claude/effort.md, among this fake's models: not Haiku 4.5).
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
EFFORT_MODELS = {"claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5",
                 "claude-opus-5", "claude-sonnet-5-5", "claude-opus-5-5"}
# Output tokens a thinking reply spends thinking, unless the responder says ({"thinking_tokens": n}); the answer
# text counts 20 tokens, as in every reply of this fake. Thinking is billed as output: usage.output_tokens counts it
# (SDK types/usage.py: output_tokens "remains the inclusive, authoritative total used for billing").
THOUGHT_TOKENS = 200
ANSWER_TOKENS = 20


def _check_thinking(body: dict, count_tokens: bool) -> None:
    """The thinking and effort rules of THINKING / EFFORT_* above; a violation is a 400 invalid_request_error."""
    def reject(message: str):
        raise Rejection(400, "invalid_request_error", message)

    default, accepted, _ = THINKING[body["model"]]
    thinking = body.get("thinking")
    if thinking is not None and not isinstance(thinking, dict):
        reject("thinking: Input should be an object")
    kind = (thinking or {}).get("type")
    if thinking is not None and kind not in accepted:
        if kind == "disabled" and default == "always":
            reject('"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and '
                   '"output_config.effort" to control thinking behavior.')
        if kind == "disabled" and "between_tools" in accepted:
            reject('"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" to '
                   "turn off up-front thinking.")
        reject(f'"thinking.type.{kind}" is not supported for this model.')
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < MIN_BUDGET_TOKENS:
            reject(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET_TOKENS}")
        if not count_tokens and budget >= body["max_tokens"]:
            reject("`max_tokens` must be greater than `thinking.budget_tokens`.")
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None:
        if effort not in EFFORT_LEVELS:
            reject(f"output_config.effort: Input should be {', '.join(repr(e) for e in EFFORT_LEVELS)}")
        if body["model"] not in EFFORT_MODELS:
            reject("output_config.effort: not supported for this model")
        if kind in ("between_tools", "disabled") and effort in ("xhigh", "max"):
            reject(f'output_config.effort "{effort}" is not supported with "thinking.type.{kind}".')


def _thought(body: dict, out) -> int:
    """Output tokens this reply spends thinking (0: it does not think)."""
    default, _, _ = THINKING[body["model"]]
    kind = (body.get("thinking") or {}).get("type")
    if kind in ("disabled", "between_tools") or (kind is None and default == "off"):
        return 0
    spent = out.get("thinking_tokens", THOUGHT_TOKENS) if isinstance(out, dict) else THOUGHT_TOKENS
    return min(spent, body["thinking"]["budget_tokens"]) if kind == "enabled" else spent


class Rejection(Exception):
    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _blocks(content) -> list[dict]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


class FakeAnthropic(LoopbackServer):
    def __init__(self, responder=None):
        self.responder = responder or (lambda body: "ok")
        self.faults: list[tuple] = []  # (status, headers, body) or ("sleep", seconds): next /v1/messages calls
        self.received: list[dict] = []  # every /v1/messages body, accepted or not
        self.headers: list[dict] = []
        self.rejected: list[tuple[int, str]] = []  # contract violations: (status, message)
        self.count_requests: list[dict] = []
        self.batches: dict[str, dict] = {}
        self.batch_polls_before_end = 2
        self.batch_errored: dict[str, str] = {}  # custom_id → error type to inject
        # Batch lifetimes, on each batch's own clock (`backdate` moves it). A batch not done 24 hours after creation
        # expires and its unprocessed requests end `expired`; results can be downloaded for 29 days after creation,
        # after which the batch can still be retrieved but its results cannot (the batch-processing guide's limits,
        # docs.claude.com/zh-CN/docs/build-with-claude/batch-processing; `expires_at` "24 hours after creation" in
        # the retrieve reference, docs.claude.com/fr/api/retrieving-message-batches). Past 29 days `archived_at` is
        # set ("archived and its results became unavailable", same reference) and `results_url` is null (SDK 2.17
        # types/messages/message_batch.py: "Specified only once processing ends"); the SDK's `results()` then
        # raises a bare AnthropicError "No `results_url` for the given batch; Has it finished processing? ..."
        # (SDK 2.17 resources/messages/batches.py). What the results URL answers once archived is not documented:
        # a 404 here.
        self.batch_expires_s = 24 * 3600
        self.batch_results_kept_s = 29 * 24 * 3600
        # (status, headers, body) answering the next GETs of a batch ("retrieve") or of its results ("results")
        self.batch_faults: dict[str, list[tuple]] = {"retrieve": [], "results": []}
        self.prompt_cache: set[str] = set()
        self.limits = None  # a tests.fake_limits.TierLimits: rate-limit headers on every reply, 429s past them
        self.latency_s = 0.0  # how long a message takes to come back
        # fields laid over every reply's `usage` (a broken or hostile server: negative, fractional, textual counts)
        self.usage: dict = {}
        fake = self

        class Handler(JsonHandler):
            def _error(self, rejection: Rejection, request_id: str, record=True):
                if record:
                    with fake._lock:
                        fake.rejected.append((rejection.status, rejection.message))
                self.send_json({"type": "error", "error": {"type": rejection.kind, "message": rejection.message},
                                "request_id": request_id}, rejection.status, {"request-id": request_id})

            def do_GET(self):
                request_id = fake._request_id()
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                try:
                    version = fake._check_headers(self.headers)
                except Rejection as r:
                    return self._error(r, request_id)
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if len(parts) in (5, 6) and parts[1:4] == ["v1", "messages", "batches"]:
                    batch_id = parts[4]
                    with fake._lock:
                        queue = fake.batch_faults["results" if len(parts) == 6 else "retrieve"]
                        fault = queue.pop(0) if queue else None
                    if fault:
                        status, fault_headers, payload = fault
                        return self.send_json({**payload, "request_id": request_id}, status,
                                              {**fault_headers, "request-id": request_id})
                    if not fake._batch_exists(batch_id):  # the service's answer about state, not a client's fault
                        return self._error(fake._batch_not_found(), request_id, record=False)
                    if len(parts) == 6 and parts[5] == "results":
                        if fake._batch_object(batch_id)["results_url"] is None:
                            return self._error(fake._batch_not_found(), request_id, record=False)
                        return self.send_json(fake._batch_results(batch_id), content_type="application/binary")
                    if len(parts) == 5:
                        with fake._lock:
                            fake.batches[batch_id]["polls_left"] -= 1
                        return self.send_json(fake._batch_object(batch_id), headers={"request-id": request_id})
                del version
                self._error(Rejection(404, "not_found_error", f"Not found: {self.path}"), request_id)

            def do_DELETE(self):
                """DELETE /v1/messages/batches/{id}: "Message Batches can only be deleted once they've finished
                processing. If you'd like to delete an in-progress batch, you must first cancel it"; the reply is
                {"id", "type": "message_batch_deleted"} (platform.claude.com/docs/en/api/messages/batches/delete).
                The status of the refusal is not documented: 400 invalid_request_error here."""
                request_id = fake._request_id()
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                try:
                    fake._check_headers(self.headers)
                except Rejection as r:
                    return self._error(r, request_id)
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if len(parts) != 5 or parts[1:4] != ["v1", "messages", "batches"]:
                    return self._error(Rejection(404, "not_found_error", f"Not found: {self.path}"), request_id)
                batch_id = parts[4]
                if not fake._batch_exists(batch_id):
                    return self._error(fake._batch_not_found(), request_id, record=False)
                if fake._batch_object(batch_id)["processing_status"] != "ended":
                    return self._error(Rejection(400, "invalid_request_error", "Message Batches can only be deleted "
                                                 "once they've finished processing; cancel it first"), request_id)
                fake.delete_batch(batch_id)
                self.send_json({"id": batch_id, "type": "message_batch_deleted"}, headers={"request-id": request_id})

            def do_POST(self):
                request_id = fake._request_id()
                body = self.read_json()
                path = self.path.split("?")[0].rstrip("/")
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                if path.endswith("/v1/messages/batches"):
                    try:
                        version = fake._check_headers(self.headers)
                        for item in body.get("requests", []):
                            if not _CUSTOM_ID.match(str(item.get("custom_id", ""))):
                                raise Rejection(400, "invalid_request_error",
                                                f"requests: custom_id {item.get('custom_id')!r} must match "
                                                "^[a-zA-Z0-9_-]{1,64}$")
                    except Rejection as r:
                        return self._error(r, request_id)
                    with fake._lock:
                        batch_id = f"msgbatch_fake_{len(fake.batches) + 1}"
                        fake.batches[batch_id] = {"requests": body["requests"], "version": version,
                                                  "polls_left": fake.batch_polls_before_end,
                                                  "created": time.time(), "ended": None, "deleted": False}
                    return self.send_json(fake._batch_object(batch_id), headers={"request-id": request_id})
                if path.endswith("/v1/messages/count_tokens"):
                    with fake._lock:
                        fake.count_requests.append(body)
                    try:
                        version = fake._check_headers(self.headers)
                        fake._validate(body, version, count_tokens=True)
                    except Rejection as r:
                        return self._error(r, request_id)
                    return self.send_json({"input_tokens": fake._prompt_tokens(body)},
                                          headers={"request-id": request_id})
                with fake._lock:
                    fake.received.append(body)
                    fault = fake.faults.pop(0) if fake.faults else None
                if fault and fault[0] == "sleep":
                    time.sleep(fault[1])
                    fault = None
                if fault and fault[0] == "raw":  # a body sent as is (not_json, compressed)
                    _, status, content_type, data, *extra = fault
                    return self.send_json(data, status, {"request-id": request_id, **(extra[0] if extra else {})},
                                          content_type=content_type)
                if fault:
                    status, headers, payload = fault
                    return self.send_json({**payload, "request_id": request_id}, status,
                                          {**headers, "request-id": request_id})
                try:
                    version = fake._check_headers(self.headers)
                    fake._validate(body, version)
                except Rejection as r:
                    return self._error(r, request_id)
                limit_headers = {}
                if fake.limits is not None:
                    admitted, limit_headers, retry = fake.limits.admit(fake._uncached_input(body), body["max_tokens"])
                    if not admitted:
                        return self.send_json({"type": "error", "error": {
                            "type": "rate_limit_error", "message": "This request would exceed the rate limit for "
                            "your organization. Please reduce the prompt length or the maximum tokens requested, "
                            "or try again later."}, "request_id": request_id}, 429,
                            {**limit_headers, "retry-after": str(retry), "request-id": request_id})
                if fake.latency_s:
                    time.sleep(fake.latency_s)
                message = fake._message(body, request_id)
                if fake.limits is not None:
                    fake.limits.correct(body["max_tokens"], message["usage"]["output_tokens"])
                    limit_headers = fake.limits.headers()
                self.send_json(message, headers={**limit_headers, "request-id": request_id})

        self.serve(Handler, "")

    def _request_id(self) -> str:
        return f"req_fake_{self.next_number():06d}"

    @staticmethod
    def _check_headers(headers) -> str:
        key = headers.get("x-api-key") or (headers.get("authorization") or "").removeprefix("Bearer ")
        if key != TEST_SECRET:
            raise Rejection(401, "authentication_error", "invalid x-api-key" if key else "missing API key")
        version = headers.get("anthropic-version")
        if not version:
            raise Rejection(400, "invalid_request_error", "anthropic-version: header is required")
        if version not in VERSIONS:
            raise Rejection(400, "invalid_request_error", f"anthropic-version: {version!r} is not a valid version")
        return version

    @staticmethod
    def _validate(body: dict, version: str, count_tokens: bool = False) -> None:
        FakeAnthropic._check_breakpoints(body)
        allowed = COUNT_FIELDS if count_tokens else MESSAGE_FIELDS
        for name in body:
            if name not in allowed:
                raise Rejection(400, "invalid_request_error", f"{name}: Extra inputs are not permitted")
        model = body.get("model")
        if model not in MODELS:
            raise Rejection(404, "not_found_error", f"model: {model}")
        sampling, _, structured = MODELS[model]
        sent = [name for name in SAMPLING if name in body]
        if sent and version == "2026-10-21":
            raise Rejection(400, "invalid_request_error", f"{sent[0]}: Extra inputs are not permitted")
        if sent and (sampling == "none" or (sampling == "default-only" and body.get("temperature", 1.0) != 1.0)):
            raise Rejection(400, "invalid_request_error", f"`{sent[0]}` is deprecated for this model.")
        temperature = body.get("temperature")
        if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                        or not 0 <= temperature <= 1):
            raise Rejection(400, "invalid_request_error", "temperature: range: 0..1")
        if sampling == "any" and "temperature" in body and "top_p" in body:
            raise Rejection(400, "invalid_request_error", "`temperature` and `top_p` cannot both be specified for this "
                            "model. Please use only one.")
        if not count_tokens and not isinstance(body.get("max_tokens"), int):
            raise Rejection(400, "invalid_request_error", "max_tokens: Field required")
        if not count_tokens and body["max_tokens"] < 0:
            raise Rejection(400, "invalid_request_error", "max_tokens: Input should be greater than or equal to 0")
        if not body.get("messages"):
            raise Rejection(400, "invalid_request_error", "messages: Field required")
        fmt = (body.get("output_config") or {}).get("format")
        if fmt is not None and (not structured or fmt.get("type") != "json_schema" or "schema" not in fmt):
            raise Rejection(400, "invalid_request_error", "output_config.format: not supported for this model"
                            if not structured else "output_config.format: expected type json_schema and schema")
        _check_thinking(body, count_tokens)

    @staticmethod
    def _prompt_tokens(body: dict) -> int:
        text = body.get("system", "") if isinstance(body.get("system", ""), str) else ""
        for message in body["messages"]:
            text += "".join(b.get("text", "") for b in _blocks(message["content"]))
        return _tokens(text)

    @staticmethod
    def _breakpoints(body: dict) -> list[tuple[str, str]]:
        """(key, text) of each prefix ending at a `cache_control` block, in order. The key is the model and the
        blocks up to that point as sent: the cache is a prefix match on the rendered prompt, so this fake only
        hits when the blocks are cut the same way (stricter than the service, never looser)."""
        system = body.get("system", "") if isinstance(body.get("system", ""), str) else ""
        blocks, text, out = [system], system, []
        for message in body.get("messages") or []:
            for block in _blocks(message.get("content", "")):
                blocks.append(block.get("text", ""))
                text += block.get("text", "")
                if block.get("cache_control"):
                    key = hashlib.sha256(json.dumps([body.get("model"), blocks]).encode()).hexdigest()
                    out.append((key, text))
        return out

    @staticmethod
    def _check_breakpoints(body: dict) -> None:
        """At most 4 blocks may carry `cache_control` (prompt-caching docs, platform.claude.com/docs/en/build-
        with-claude/prompt-caching: "You can define up to 4 cache breakpoints"); more is a 400."""
        found = len(FakeAnthropic._breakpoints(body))
        if found > 4:
            raise Rejection(400, "invalid_request_error",
                            f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")

    def _cacheable(self, body: dict) -> list[tuple[str, str]]:
        """The breakpoints whose prefix reaches the model's minimum cacheable length (shorter ones are not
        cached, and no error is returned: prompt-caching docs, "Cache limitations")."""
        floor = MODELS[body["model"]][1]
        return [(key, text) for key, text in self._breakpoints(body) if _tokens(text) >= floor]

    def _uncached_input(self, body: dict) -> int:
        """Input tokens a request counts against the input limit: all but the longest cache read (a write
        counts: rate-limits docs, cache_creation_input_tokens count toward ITPM)."""
        with self._lock:
            hits = [text for key, text in self._cacheable(body) if key in self.prompt_cache]
        return self._prompt_tokens(body) - (_tokens(hits[-1]) if hits else 0)

    def _marked(self, body: dict) -> str:
        """The prefix ending at the last cacheable breakpoint ('' when none)."""
        points = self._cacheable(body)
        return points[-1][1] if points else ""

    def _cache_usage(self, body: dict) -> tuple[int, int]:
        """(written, read): the longest breakpoint prefix already cached is read, the rest up to the last
        breakpoint is written, and every breakpoint's prefix is cached from then on (the service checks each
        breakpoint for a hit, prompt-caching docs "How automatic prefix checking works")."""
        points = self._cacheable(body)
        if not points:
            return 0, 0
        with self._lock:
            hits = [text for key, text in points if key in self.prompt_cache]
            self.prompt_cache.update(key for key, _ in points)
        read = _tokens(hits[-1]) if hits else 0
        return _tokens(points[-1][1]) - read, read

    def _message(self, body: dict, request_id: str) -> dict:
        out = self.responder(body)
        text, stop = (out, "end_turn") if isinstance(out, str) else (out["text"], out.get("stop_reason", "end_turn"))
        written, read = self._cache_usage(body)
        total = self._prompt_tokens(body)
        content, output = [{"type": "text", "text": text}], ANSWER_TOKENS
        thought = _thought(body, out)
        if body["max_tokens"] == 0:  # a cache warm-up: the prompt is read (and cached), nothing is generated
            content, output, thought, stop = [], 0, 0, "max_tokens"
        if thought:
            # thinking comes first and counts toward max_tokens: what it leaves is the room for the answer
            cap = body["max_tokens"]
            display = (body.get("thinking") or {}).get("display") or THINKING[body["model"]][2]
            blocks = [{"type": "thinking", "thinking": "" if display == "omitted" else "Weighing the question.",
                       "signature": "sig_fake"}]
            if isinstance(out, dict) and out.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": "opaque_fake"})
            room = cap - min(thought, cap)
            if room < ANSWER_TOKENS:
                text, stop = text[: room * 4], "max_tokens"
            content = blocks + ([{"type": "text", "text": text}] if text else [])
            output = min(cap, thought + ANSWER_TOKENS)
        return {"id": f"msg_{request_id}", "type": "message", "role": "assistant", "model": body["model"],
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": total - written - read, "output_tokens": output,
                          "cache_creation_input_tokens": written, "cache_read_input_tokens": read, **self.usage}}

    def backdate(self, batch_id: str, seconds: float) -> None:
        """Move a batch's creation `seconds` into the past (its 24-hour expiry and 29-day archive follow)."""
        with self._lock:
            self.batches[batch_id]["created"] -= seconds

    def delete_batch(self, batch_id: str) -> None:
        """What a DELETE, or the Console, does: from then on the id is a 404 not_found_error (the record stays in
        `batches`, marked, so counts of batches made are unchanged)."""
        with self._lock:
            self.batches[batch_id]["deleted"] = True

    def _batch_exists(self, batch_id: str) -> bool:
        with self._lock:
            return batch_id in self.batches and not self.batches[batch_id]["deleted"]

    @staticmethod
    def _batch_not_found() -> Rejection:
        """An id this key cannot see: deleted, or made in another workspace (batches are scoped to the workspace
        of the key that made them, batch-processing guide's limits) is a 404 `not_found_error`, the requested
        resource not found (platform.claude.com/docs/en/api/errors). The message wording is this fake's own."""
        return Rejection(404, "not_found_error", "message batch not found")

    def _batch_clock(self, batch_id: str) -> tuple[float | None, bool, bool]:
        """(when it ended or None, whether its requests expired, whether it is archived), now. Ending is
        remembered: a batch that expired stays expired."""
        with self._lock:
            state = self.batches[batch_id]
            age = time.time() - state["created"]
            if state["ended"] is None and age >= self.batch_expires_s:
                state["ended"], state["expired"] = state["created"] + self.batch_expires_s, True
            elif state["ended"] is None and state["polls_left"] < 0:
                state["ended"] = time.time()
            return state["ended"], state.get("expired", False), age >= self.batch_results_kept_s

    def _batch_object(self, batch_id: str) -> dict:
        ended_at, expired, archived = self._batch_clock(batch_id)
        state = self.batches[batch_id]
        ended = ended_at is not None
        n = len(state["requests"])
        errored = len(self._batch_outcomes(batch_id)[1]) if ended and not expired else 0
        done = n if ended and not expired else 0
        created = state["created"]
        return {
            "id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "created_at": _rfc3339(created), "expires_at": _rfc3339(created + self.batch_expires_s),
            "ended_at": _rfc3339(ended_at) if ended else None,
            "archived_at": _rfc3339(created + self.batch_results_kept_s) if archived else None,
            "request_counts": {"processing": 0 if ended else n, "succeeded": done - errored, "errored": errored,
                               "canceled": 0, "expired": n if expired else 0},
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended and not archived else None,
        }

    def _batch_outcomes(self, batch_id: str) -> tuple[dict, dict]:
        """(custom_id → params that pass, custom_id → (error type, message)); validated under the batch's version."""
        state = self.batches[batch_id]
        good, bad = {}, {}
        for item in state["requests"]:
            cid, params = item["custom_id"], item["params"]
            if cid in self.batch_errored:
                bad[cid] = (self.batch_errored[cid], "injected batch error")
                continue
            try:
                self._validate(params, state["version"])
                good[cid] = params
            except Rejection as r:
                bad[cid] = (r.kind, r.message)
        return good, bad

    def _batch_results(self, batch_id: str) -> bytes:
        good, bad = self._batch_outcomes(batch_id)
        expired = self._batch_clock(batch_id)[1]
        lines = []
        for i, item in enumerate(reversed(self.batches[batch_id]["requests"])):  # results come unordered
            cid, params = item["custom_id"], item["params"]
            if expired:  # never sent to the model
                lines.append(json.dumps({"custom_id": cid, "result": {"type": "expired"}}))
                continue
            with self._lock:
                self.received.append(params)
            if cid in bad:
                kind, message = bad[cid]
                if message != "injected batch error":
                    with self._lock:
                        self.rejected.append((400, message))
                result = {"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": message}}}
            else:
                result = {"type": "succeeded", "message": self._message(good[cid], f"batch_{batch_id}_{i}")}
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return ("\n".join(lines) + "\n").encode()

    def versions_sent(self) -> list[str | None]:
        return [{k.lower(): v for k, v in h.items()}.get("anthropic-version") for h in self.headers]


def _rfc3339(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def error(status: int, retry_after: str | None = None, retry_after_ms: str | None = None,
          should_retry: str | None = None) -> tuple:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
             408: "timeout_error", 409: "conflict_error", 429: "rate_limit_error", 500: "api_error",
             529: "overloaded_error"}
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    if should_retry is not None:
        headers["x-should-retry"] = should_retry
    return (status, headers, {"type": "error", "error": {"type": kinds.get(status, "api_error"),
                                                         "message": "injected"}})


def not_json(content_type: str = "text/html; charset=utf-8", status: int = 200) -> tuple:
    """A fault: the next /v1/messages call is answered `status` with a page that is not JSON, under `content_type`
    (text/html: the SDK returns the text; application/json: the SDK's JSON decoding fails)."""
    page = b"<html><head><title>Gateway</title></head><body>Sign in to continue</body></html>"
    return ("raw", status, content_type, page)


def compressed(payload: dict, padding: int) -> tuple:
    """A fault: a 200 message whose gzip body is small on the wire and decodes to `padding` more bytes (spaces
    after the JSON: still a valid message once read whole). Content-Encoding is the server's choice; the client
    decodes what it is sent."""
    import gzip

    data = gzip.compress(json.dumps(payload).encode() + b" " * padding)
    return ("raw", 200, "application/json", data, {"content-encoding": "gzip"})


def first_text(body: dict) -> str:
    """The text of the first message, whether sent as a string or as content blocks."""
    return "".join(b.get("text", "") for b in _blocks(body["messages"][0]["content"]))


def main(argv=None) -> int:
    from tests.loopback import serve_by_hand

    return serve_by_hand(FakeAnthropic, "fake Anthropic Messages API", argv,
                         lambda server, args: {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": TEST_SECRET},
                         then=lambda args: "then run memeval as usual (the claude reader, judges); models are the "
                                           "API's ids (claude-sonnet-4-6, claude-haiku-4-5, ...)")


if __name__ == "__main__":
    raise SystemExit(main())
