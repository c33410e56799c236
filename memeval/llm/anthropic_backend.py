"""The Anthropic backend: the real SDK with its retries off, each call under its provider's timeout and reply
byte cap (memeval/llm/bounds.py), an SDK error classified by errors.decide into a rejection (stop) or a transient
error (retry), and a Messages reply turned into the client's priced LLMResponse. The send stage
(memeval/llm/send.py) calls it; batches (memeval/llm/batch.py) price their results with `response_from_message`."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from memeval.llm import bounds
from memeval.llm.errors import (
    APIRejected,
    BackendNotConfigured,
    TransientError,
    decide,
    rate_limit_headers,
    retry_after_seconds,
    unreached,
)
from memeval.llm.profiles import CLOUD, ProfileTable
from memeval.llm.types import LLMRequest, LLMResponse, public_url
from memeval.llm.wire import request_body


def _headers(exc) -> Mapping[str, str]:
    try:
        return exc.response.headers
    except AttributeError:
        return {}


def classify_sdk_error(exc, request: LLMRequest, where: str = "messages") -> Exception:
    """An SDK exception → APIRejected (stop), TransientError (retry, or fail now), following errors.decide."""
    import anthropic

    too_large = bounds.too_large(exc)
    if too_large is not None:
        return bounds.invalid_size(request, too_large, where)
    if isinstance(exc, anthropic.APIStatusError):
        headers = _headers(exc)
        verdict = decide(exc.status_code, headers)
        if verdict == "fatal":
            return APIRejected(exc.status_code, exc.type, exc.api_message or str(exc), exc.request_id,
                               request.model, request.api_version, where)
        return TransientError(f"{exc.status_code} {exc.type or 'error'}: {exc.api_message or exc}"
                              f" (request-id {exc.request_id or '-'})", retry_after_seconds(headers),
                              exc.status_code, retry=verdict == "retry", headers=headers)
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return unreached(exc)
    return exc


class AnthropicBackend:
    """The real SDK. Key and base URL come from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL only; the SDK's own
    retries are off so that every retry is ours (counted, logged, bounded). Every call carries the request's
    own `anthropic-version` (SDK 2.x would otherwise send 2026-10-21 for every model), waits at most the provider's
    timeout and reads at most the bytes its `max_tokens` allows (memeval/llm/bounds.py)."""

    name = "anthropic"

    def __init__(self, timeout: float | None = None, http_client=None):
        import anthropic

        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise BackendNotConfigured("ANTHROPIC_API_KEY is not set: no Anthropic backend (use the cache via replay, or "
                           "set the key and optionally ANTHROPIC_BASE_URL)")
        timeout = bounds.http_timeout("anthropic") if timeout is None else timeout
        kwargs = {"max_retries": 0, "timeout": timeout,
                  "http_client": http_client or bounds.capped_http_client(anthropic, timeout)}
        if os.environ.get("ANTHROPIC_BASE_URL"):
            kwargs["base_url"] = os.environ["ANTHROPIC_BASE_URL"]
        self.client = anthropic.Anthropic(**kwargs)

    @staticmethod
    def call_kwargs(request: LLMRequest) -> dict:
        """SDK keyword arguments: typed fields as such; `temperature` (dropped from the SDK 2.x signature)
        in `extra_body` only when it is to be sent; the version header in `extra_headers`."""
        body = request_body(request)
        kwargs = {k: body[k] for k in ("model", "max_tokens", "messages", "system", "output_config", "thinking")
                  if k in body}
        if "temperature" in body:
            kwargs["extra_body"] = {"temperature": body["temperature"]}
        kwargs["extra_headers"] = {"anthropic-version": request.api_version}
        return kwargs

    def send(self, request: LLMRequest) -> LLMResponse:
        try:
            with bounds.reply_bytes(bounds.body_limit(request.max_tokens_sent)):
                raw = self.client.messages.with_raw_response.create(**self.call_kwargs(request))
                message = raw.parse()
        except Exception as exc:  # noqa: BLE001 — classified, never swallowed
            raise self._unreadable(exc, request) or classify_sdk_error(exc, request) from None
        if not _is_message(message):
            raise self._not_a_reply(request, message)
        response = response_from_message(message, request, getattr(message, "_request_id", None)
                                         or raw.headers.get("request-id"))
        response.rate_headers = rate_limit_headers(raw.headers)
        return response

    def count_tokens(self, request: LLMRequest) -> int:
        kwargs = self.call_kwargs(request)
        kwargs.pop("max_tokens", None)
        kwargs.pop("extra_body", None)
        try:
            with bounds.reply_bytes(bounds.COUNT_TOKENS_BODY):
                counted = self.client.messages.count_tokens(**kwargs)
        except Exception as exc:  # noqa: BLE001
            raise self._unreadable(exc, request, "count_tokens") or classify_sdk_error(exc, request, "count_tokens") \
                from None
        tokens = getattr(counted, "input_tokens", None)
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            raise self._not_a_reply(request, counted, "count_tokens")
        return tokens

    # A 2xx reply that is not the API's JSON (a proxy's, gateway's or web server's page where ANTHROPIC_BASE_URL
    # points): the same request would get the same page, so it stops the client like a rejection, in one line.
    def _unreadable(self, exc: Exception, request: LLMRequest, where: str = "messages") -> APIRejected | None:
        import anthropic

        if isinstance(exc, anthropic.APIResponseValidationError):
            return APIRejected(exc.status_code, "invalid_response", f"{exc.message}; {self._hint()}", exc.request_id,
                               request.model, request.api_version, where)
        if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):  # the body claimed JSON and is not
            return APIRejected(200, "invalid_response", f"the reply's body is not JSON ({type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:100]}); {self._hint()}", None, request.model,
                               request.api_version, where)
        return None

    def _not_a_reply(self, request: LLMRequest, reply, where: str = "messages") -> APIRejected:
        shown = " ".join(reply.split())[:80] if isinstance(reply, str) else type(reply).__name__
        what = "a body that is not JSON" if isinstance(reply, str) else "JSON that is not a response"
        return APIRejected(200, "invalid_response", f"the reply is {what} ({shown!r}); {self._hint()}", None,
                           request.model, request.api_version, where)

    def _hint(self) -> str:
        return f"is {public_url(str(self.client.base_url))} an Anthropic Messages endpoint? (ANTHROPIC_BASE_URL)"


def _is_message(message) -> bool:
    """The reply has what a Messages response has: the SDK hands a reply that is not JSON back as its text, and
    builds a JSON reply of another shape without checking it."""
    return isinstance(getattr(message, "content", None), list) and getattr(message, "usage", None) is not None


def response_from_message(message, request: LLMRequest, request_id: str | None, batch: bool = False,
                          table: ProfileTable = CLOUD) -> LLMResponse:
    """The client's response to a Messages reply, priced from `table` (the client's profiles; a batch passes its
    client's). The answer is the `text` blocks only: a `thinking` or `redacted_thinking` block never is, so a reply
    that spent its cap thinking has empty text. Thinking is priced through `output_tokens`, which includes it (the
    SDK's Usage: "the inclusive, authoritative total used for billing"). Usage that is not a count of tokens is an
    InvalidReply, never priced."""
    text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
    usage = message.usage
    counts = [bounds.usage_count(getattr(usage, name, None), f"usage.{name}", request.model, required)
              for name, required in (("input_tokens", True), ("output_tokens", True),
                                     ("cache_creation_input_tokens", False), ("cache_read_input_tokens", False))]
    prompt, output, write, read = counts
    return LLMResponse(
        text=text, model=message.model, request_id=request_id or message.id,
        input_tokens=prompt, output_tokens=output,
        cost_usd=table.cost_usd(request.model, prompt, output, write, read, batch),
        stop_reason=message.stop_reason, cache_creation_input_tokens=write, cache_read_input_tokens=read,
        api_version=request.api_version,
    )
