"""The bounds of one model call: how long the client waits for it, how many bytes its reply may hold, and what its
usage may say. A reply longer than its request's `max_tokens` could produce, or one whose usage is not a count of
tokens, is not an answer: it fails the call (InvalidReply), is never cached, priced or stored, and the next run
asks again. A server that holds a request is given up on after its provider's timeout, and retried a few times."""

from __future__ import annotations

import functools
import math
import os
import threading
from contextlib import contextmanager

from memeval.errors import InputError
from memeval.llm.errors import InvalidReply

# ---- timeouts --------------------------------------------------------------------------------------------------
# The SDKs wait 600 s for a reply and 5 s to connect (anthropic 2.17 and openai 3.63, `_constants.py`:
# DEFAULT_TIMEOUT = Timeout(timeout=600, connect=5.0)): a held request would keep a run silent for ten minutes a try.
# A cloud reply under this project's caps (at most a few thousand output tokens, thinking included) comes back well
# within 120 s. A CPU server (`memeval serve-local`, llama.cpp) answers one request at a time and a 270M model takes
# 70-100 s over a long prompt on 2 cores, so the calls queued behind it need minutes: 600 s.
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = {"anthropic": 120.0, "openai": 120.0, "local": 600.0}
TIMEOUT_VARIABLE = "MEMEVAL_LLM_TIMEOUT_S"  # overrides the read timeout of every provider
MAX_TIMEOUT_S = 3600.0
# A call that timed out is sent at most this many times more (other transient errors get the client's max_retries):
# a server that held one request past the timeout mostly holds the next one too.
TIMEOUT_RETRIES = 2


def read_timeout_s(provider: str) -> float:
    """The seconds a `provider` call may wait for its reply: MEMEVAL_LLM_TIMEOUT_S when set, else the provider's."""
    raw = os.environ.get(TIMEOUT_VARIABLE, "")
    if not raw.strip():
        return READ_TIMEOUT_S.get(provider, READ_TIMEOUT_S["openai"])
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIMEOUT_S:  # also NaN
        raise InputError("environment", TIMEOUT_VARIABLE, f"{raw!r} is not a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT_S:.0f}")
    return value


def http_timeout(provider: str):
    """The SDK timeout of `provider`'s calls: connect within 10 s (or the read timeout, if shorter), read as above."""
    import httpx2

    read = read_timeout_s(provider)
    return httpx2.Timeout(read, connect=min(CONNECT_TIMEOUT_S, read))


# ---- reply size ------------------------------------------------------------------------------------------------
# UTF-8 bytes of text one output token may decode to: a generous ceiling chosen here (not a published figure; the
# tokens of the common vocabularies are a few bytes, the longest a few dozen), so that only a reply no tokenizer
# could have produced within the cap is refused.
BYTES_PER_TOKEN = 128
# The bound of a request sent without a cap (OpenAI's max_tokens is optional; Mem0's judge sets none): above the
# output limit of every OpenAI model in the profile table (`max_output_tokens`; gpt-4.1-mini: 32,768). Only those are
# sent uncapped: an Anthropic request always carries max_tokens.
UNCAPPED_TOKENS = 65_536
JSON_ESCAPE = 6  # one byte of text is at most six bytes of JSON (\u00XX)
BODY_OVERHEAD = 1 << 20  # ids, usage, stop reasons, thinking signatures: 1 MiB beside the text
COUNT_TOKENS_BODY = 1 << 20  # a token count's reply is a number


def text_limit(max_tokens_sent: int | None) -> int:
    """The most UTF-8 bytes of text a reply capped at `max_tokens_sent` output tokens can hold."""
    return (max_tokens_sent or UNCAPPED_TOKENS) * BYTES_PER_TOKEN


def body_limit(max_tokens_sent: int | None) -> int:
    """The most bytes a reply's HTTP body can hold (before and after content decoding)."""
    return BODY_OVERHEAD + JSON_ESCAPE * text_limit(max_tokens_sent)


def oversized_text(request, text: str) -> str | None:
    """Why `text` cannot be `request`'s reply (None when it can)."""
    limit = text_limit(request.max_tokens_sent)
    if len(text) * 4 <= limit:  # a character is at most four UTF-8 bytes: no need to encode
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return (f"a reply of {size:,} bytes of text, more than max_tokens {request.max_tokens_sent or 'unset'} can "
            f"produce (at most {limit:,} bytes at {BYTES_PER_TOKEN} a token)")


class ReplyTooLarge(Exception):
    """Raised while reading a reply's body, past its byte limit; the backend turns it into InvalidReply."""

    def __init__(self, limit: int, seen: int, declared: bool = False):
        super().__init__(f"reply body over {limit:,} bytes ({'its content-length says' if declared else 'read'} "
                         f"{seen:,})")
        self.limit, self.seen = limit, seen


_cap = threading.local()  # the byte limit of the reply this thread is reading (the SDKs read on the calling thread)


@contextmanager
def reply_bytes(limit: int):
    """While in this block, a reply read by this thread through `capped_http_client` stops past `limit` bytes."""
    previous = getattr(_cap, "limit", None)
    _cap.limit = limit
    try:
        yield
    finally:
        _cap.limit = previous


def capped_http_client(sdk, timeout):
    """The SDK's own HTTP client (`sdk.DefaultHttpxClient`: its limits, keep-alive and redirects) with a response
    hook that bounds the body it reads, raw and decoded (a compressed body can decode to far more bytes)."""
    return sdk.DefaultHttpxClient(timeout=timeout, event_hooks={"response": [_bound_response]})


def _bound_response(response) -> None:
    limit = getattr(_cap, "limit", None)
    if limit is None:  # batches, embeddings: not a message reply
        return
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(limit, int(declared), declared=True)
    response.stream = _capped_stream_class()(response.stream, limit)
    # httpx2 decodes through the decoder `_get_content_decoder` memoises in `_decoder` (httpx2 2.17 _models.py);
    # tests/test_llm_bounds.py sends a gzip body that decodes past the limit, so a change there fails a test
    response._decoder = _CappedDecoder(response._get_content_decoder(), limit)


@functools.cache
def _capped_stream_class():
    """A byte stream httpx2 accepts (iter_raw checks for SyncByteStream), made on first use: httpx2 is imported
    with the SDKs, not with the client."""
    import httpx2

    class CappedStream(httpx2.SyncByteStream):
        def __init__(self, stream, limit: int):
            self.stream, self.limit, self.seen = stream, limit, 0

        def __iter__(self):
            for chunk in self.stream:
                self.seen += len(chunk)
                if self.seen > self.limit:
                    raise ReplyTooLarge(self.limit, self.seen)
                yield chunk

        def close(self) -> None:
            self.stream.close()

    return CappedStream


class _CappedDecoder:
    """httpx2's decoders yield their output in chunks (`for decoded in decoder.decode(raw)`): each is counted."""

    def __init__(self, decoder, limit: int):
        self.decoder, self.limit, self.seen = decoder, limit, 0

    def _count(self, chunks):
        for chunk in chunks:
            self.seen += len(chunk)
            if self.seen > self.limit:
                raise ReplyTooLarge(self.limit, self.seen)
            yield chunk

    def decode(self, data: bytes):
        return self._count(self.decoder.decode(data))

    def flush(self):
        return self._count(self.decoder.flush())


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The ReplyTooLarge behind an SDK error (the anthropic SDK wraps it in APIConnectionError, openai's not)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ReplyTooLarge):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def invalid_size(request, exc: ReplyTooLarge, where: str) -> InvalidReply:
    return InvalidReply(f"{where}: {exc}, more than max_tokens {request.max_tokens_sent or 'unset'} can produce; "
                        "not an answer: not kept, the next run asks again")


# ---- usage -----------------------------------------------------------------------------------------------------
# A usage count above this is no count: ten times the largest context window offered (10M tokens, Llama 4 Scout).
MAX_USAGE_TOKENS = 100_000_000


def usage_count(value, name: str, model: str, required: bool = True) -> int:
    """A usage field as a token count, or InvalidReply: a negative, fractional, boolean, textual or absurd count
    would be priced (a negative one lowering the spend counted against --budget-usd)."""
    if value is None and not required:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_USAGE_TOKENS:
        raise InvalidReply(f"invalid usage from {model}: {name} is {value!r}, not a count of tokens (0 to "
                           f"{MAX_USAGE_TOKENS:,}); not priced, not kept, the next run asks again")
    return value
