"""What a failed call means, decided in one place (pure: status, headers and error type in, policy out).

Deterministic rejections (400/401/402/403/404/413 and any other 4xx the API does not mark retryable) stop the
whole command: the same request would fail again, so retrying wastes money and scoring it would fabricate a
result. Connection errors, 408, 409, 429 and 5xx/529 are retried with backoff, honouring `retry-after-ms`,
`retry-after` and `x-should-retry` as the SDK itself does (anthropic/_base_client.py: _parse_retry_after_header,
_should_retry; openai/_base_client.py the same, and no retry past a 120 s retry-after). Error types and statuses:
platform.claude.com/docs/en/api/errors. OpenAI's 429 also covers an exhausted quota or spend limit (error type and
code `insufficient_quota`, "You exceeded your current quota, please check your plan and billing details" —
OpenAI's error-codes guide): a billing state, not a rate, so it stops the run like a 402 instead of retrying.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

DETERMINISTIC_STATUSES = frozenset({400, 401, 402, 403, 404, 413})
RETRYABLE_STATUSES = frozenset({408, 409, 429})
ERROR_TYPE_STATUS = {  # batch `errored` results carry only the type
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "conflict_error": 409, "rate_limit_error": 429,
    "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}


class LLMError(RuntimeError):
    """A call that failed for now (after retries, or without a result); the row records it and a rerun retries."""


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit headers of a reply (anthropic-ratelimit-*, x-ratelimit-*), names lower-cased."""
    return {k.lower(): v for k, v in headers.items() if "ratelimit" in k.lower()}


class TransientError(LLMError):
    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None,
                 retry: bool = True, headers: Mapping[str, str] | None = None, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out  # no reply within the timeout: retried fewer times (memeval/llm/bounds.py)
        self.retry_after = retry_after
        self.status = status
        self.retry = retry  # False: the server said x-should-retry: false; fail now, retry on a later run
        self.headers = rate_limit_headers(headers or {})  # what a 429 says of the buckets, for the limiter


def unreached(exc: BaseException) -> TransientError:
    """A connection error or timeout, naming where it was sent: "Connection error." alone does not tell a user
    that OPENAI_BASE_URL points at a server that is not running. Credentials and the query are left out of the
    URL (a proxy URL can carry a user and password)."""
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    where = ""
    if url is not None:
        host = getattr(url, "host", "") or ""
        port = getattr(url, "port", None)
        where = f" ({getattr(url, 'scheme', 'http')}://{host}{f':{port}' if port else ''}{getattr(url, 'path', '')})"
    return TransientError(f"{type(exc).__name__}: {exc}{where}", timed_out="Timeout" in type(exc).__name__)


class BackendNotConfigured(LLMError):
    """No key, endpoint or SDK for the chosen backend: a setup problem the user fixes before anything runs."""


class UnusableReply(LLMError):
    """The model answered with something that is not an answer: a refusal, empty text, or text cut at the output
    cap. Never cached, never scored or labelled; the row records it and the next run asks again."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class InvalidReply(LLMError):
    """A 200 reply that the request could not have produced: a body or text longer than its `max_tokens` allows,
    or usage that is not a count of tokens (memeval/llm/bounds.py). Never cached, priced or stored as an answer;
    the row records it and the next run asks again."""


class TimedOut(LLMError):
    """No reply within the provider's timeout, on every try a call was given (memeval/llm/bounds.py); the row records
    it and the next run asks again."""


class DoesNotFit(LLMError):
    """A request longer than the server's context window: its prompt's tokens plus the reply cap it asks for exceed
    what the server holds, found before sending (memeval/llm/fit.py) or said by the server's own 400. The same
    request fails the same way on every rerun, so it is never "rerun to retry", and it is not a rejection that stops
    the command: the row records it, other rows and other systems keep running. `needed` and `held` are None when
    the server's reply did not state them."""

    def __init__(self, detail: str, needed: int | None = None, held: int | None = None):
        super().__init__(detail)
        self.needed, self.held = needed, held


class CacheMiss(LLMError):
    """Replay mode found no cached response: nothing is sent, nothing is invented."""


class BudgetExceeded(LLMError):
    """The run's dollar budget is spent: no new calls are scheduled; finished ones stay cached."""


class ModelRetired(Exception):
    """The model's shutdown date has passed: nothing is sent (cached replies still replay). Not an LLMError: it
    stops the run with one line, like a rejection."""

    def __init__(self, model: str, retires: str, successor: str | None):
        super().__init__(f"{model} was shut down on {retires} by its provider; its successor is "
                         f"{successor or 'not named'}, and any substitute is not the published protocol that named "
                         f"{model} (cached replies of {model} still replay: --llm replay; if the provider still "
                         f"serves it, MEMEVAL_SEND_RETIRED=1 sends anyway and its answer decides)")
        self.model, self.retires, self.successor = model, retires, successor


class APIRejected(Exception):
    """A deterministic rejection. Not an LLMError on purpose: nothing may catch it as a row error; the CLI
    prints `one_line()` and exits non-zero."""

    def __init__(self, status: int, error_type: str | None, message: str | None, request_id: str | None,
                 model: str, api_version: str, where: str = "messages", endpoint: str = ""):
        self.status = status
        self.error_type = error_type or "unknown_error"
        self.api_message = message or ""
        self.request_id = request_id
        self.model = model
        self.api_version = api_version
        self.where = where
        self.endpoint = endpoint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = f"anthropic-version {self.api_version}" if self.api_version else f"endpoint {self.endpoint or '-'}"
        return (f"the API rejected a {self.where} request: {self.status} {self.error_type}: "
                f"{self.api_message.strip() or '(no message)'} (request-id {self.request_id or '-'}, "
                f"model {self.model}, {where}); nothing was recorded for it, "
                "finished rows are kept and a rerun resumes")


BILLING_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def decide(status: int, headers: Mapping[str, str], error_code: str | None = None) -> str:
    """'fatal', 'retry' or 'fail' (retryable kind, but the server said not now)."""
    should = (headers.get("x-should-retry") or "").lower()
    if status in DETERMINISTIC_STATUSES or error_code in BILLING_CODES:
        return "fatal"
    if should == "true":
        return "retry"
    if status in RETRYABLE_STATUSES or status >= 500:
        return "fail" if should == "false" else "retry"
    return "fatal"


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms`, then `retry-after` as seconds, then as an HTTP date; None when absent or invalid."""
    try:
        return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except (KeyError, TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())
