"""The OpenAI-compatible provider: the anchors' judges (Mem0: gpt-4o-mini; LongMemEval: gpt-4o-2024-08-06) on
OpenAI, and any model on a server the user runs (vLLM, Ollama, llama.cpp) behind OPENAI_BASE_URL. The `openai`
SDK (3.x: HTTPX2 is its HTTP client, per its 3.0.0 release notes; nothing else in the chat-completions call
changed) is driven with its own retries off, so every retry is the client's (counted, logged, bounded), and
errors are classified by the same policy as Anthropic's."""

from __future__ import annotations

import os

from memeval.llm import bounds
from memeval.llm.endpoints import base_url_for, endpoint_for
from memeval.llm.errors import (
    APIRejected,
    BackendNotConfigured,
    InvalidReply,
    TransientError,
    decide,
    rate_limit_headers,
    retry_after_seconds,
    unreached,
)
from memeval.llm.fit import server_misfit
from memeval.llm.profiles import CLOUD, ModelProfile, local_profile
from memeval.llm.types import LLMResponse
from memeval.llm.wire import openai_body

LOCAL_PLACEHOLDER_KEY = "no-key"  # the SDK requires some key; local servers mostly ignore it


def sdk_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openai")
    except PackageNotFoundError:
        return None


def classify_openai_error(exc, request, where: str = "chat.completions") -> Exception:
    import openai

    too_large = bounds.too_large(exc)
    if too_large is not None:
        return bounds.invalid_size(request, too_large, where)
    if isinstance(exc, openai.APIStatusError):
        headers = getattr(exc.response, "headers", {}) or {}
        body = exc.body if isinstance(exc.body, dict) else {}
        code = body.get("code") or None
        kind = code or body.get("type")  # the code (invalid_api_key, model_not_found) says more than the type
        message = body.get("message") or str(exc)
        if where == "chat.completions":
            misfit = server_misfit(exc.status_code, message, body, request.endpoint or "-")
            if misfit is not None:  # the same prompt never fits: this row fails, the others and the command go on
                return misfit
        verdict = decide(exc.status_code, headers, code or body.get("type"))
        if verdict == "fatal":
            return APIRejected(exc.status_code, kind, message, exc.request_id, request.model, "", where,
                               request.endpoint)
        return TransientError(f"{exc.status_code} {kind or 'error'}: {message} (request-id {exc.request_id or '-'})",
                              retry_after_seconds(headers), exc.status_code, retry=verdict == "retry",
                              headers=headers)
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return unreached(exc)
    return exc


class OpenAIBackend:
    """`provider` openai: OPENAI_API_KEY required, OPENAI_BASE_URL optional (a proxy of OpenAI's API);
    `provider` local: OPENAI_BASE_URL required, the key optional. Every model a local backend is sent is one the
    user serves (a client routes only its own local models there), so it is priced and capped by the local
    profile; an openai backend reads the cloud profiles."""

    def __init__(self, provider: str = "openai", timeout: float | None = None, http_client=None):
        try:
            import openai
        except ImportError:
            raise BackendNotConfigured("the openai SDK is not installed: pip install 'memeval[openai]'") from None

        if provider not in ("openai", "local"):
            raise ValueError(f"OpenAIBackend provider {provider!r}")
        key = os.environ.get("OPENAI_API_KEY")
        if provider == "openai" and not key:
            raise BackendNotConfigured("OPENAI_API_KEY is not set: no OpenAI backend (use the cache via replay, or "
                                       "set the key and optionally OPENAI_BASE_URL)")
        self.endpoint = endpoint_for(provider)  # as recorded and shown; the SDK gets the URL as given
        if not self.endpoint:
            raise BackendNotConfigured("--llm local needs OPENAI_BASE_URL (for example http://127.0.0.1:8000/v1 for "
                                       "vLLM or `memeval serve-local`, http://127.0.0.1:11434/v1 for Ollama)")
        self.name = provider
        # a CPU server answers one request at a time: the calls queued behind a long one need minutes (bounds.py)
        timeout = bounds.http_timeout(provider) if timeout is None else timeout
        self.client = openai.OpenAI(api_key=key or LOCAL_PLACEHOLDER_KEY, base_url=base_url_for(provider),
                                    max_retries=0, timeout=timeout,
                                    http_client=http_client or bounds.capped_http_client(openai, timeout))

    def profile(self, model: str) -> ModelProfile:
        return local_profile(model) if self.name == "local" else CLOUD.profile(model)

    def send(self, request):
        p = self.profile(request.model)
        body = openai_body(request, p.max_tokens_field)
        try:
            with bounds.reply_bytes(bounds.body_limit(request.max_tokens_sent)):
                raw = self.client.chat.completions.with_raw_response.create(**body)
                completion = raw.parse()
        except Exception as exc:  # noqa: BLE001 — classified, never swallowed
            raise classify_openai_error(exc, request) from None
        if not _is_completion(completion):  # a gateway's or web server's other JSON: the same request gets it again
            raise APIRejected(200, "invalid_response", f"the reply is JSON that is not a chat completion (no "
                              f"choices[0].message); is {self.endpoint} an OpenAI-compatible chat endpoint? "
                              "(OPENAI_BASE_URL)", getattr(completion, "id", None), request.model, "",
                              "/v1/chat/completions", self.endpoint)
        response = response_from_completion(completion, request, p)
        response.rate_headers = rate_limit_headers(raw.headers)
        return response


    def embed(self, batch):
        """One embeddings request (memeval/llm/embeddings.py batches the texts and names the format)."""
        from memeval.llm.embeddings import EmbeddingReply, UnreadableEmbeddings, decode_vectors, unreadable

        kwargs = {"model": batch.model, "input": list(batch.texts),
                  "encoding_format": "base64" if self.name == "openai" else "float"}
        if batch.dimensions is not None:
            kwargs["dimensions"] = batch.dimensions
        try:
            raw = self.client.embeddings.with_raw_response.create(**kwargs)
            reply = raw.parse()
        except Exception as exc:  # noqa: BLE001 — classified, never swallowed
            raise classify_openai_error(exc, batch, "/v1/embeddings") from None
        request_id = getattr(reply, "_request_id", None) or raw.headers.get("x-request-id")
        hint = f"is {self.endpoint} an OpenAI-compatible embeddings endpoint? (OPENAI_BASE_URL)"
        data = getattr(reply, "data", None)
        if not isinstance(data, list):
            raise unreadable(batch, f"the reply is {type(reply).__name__}, not a list of embeddings", request_id, hint)
        try:
            vectors = decode_vectors(data, len(batch.texts), batch.dimensions)
        except UnreadableEmbeddings as exc:
            raise unreadable(batch, str(exc), request_id, hint) from None
        usage = getattr(reply, "usage", None)
        tokens = getattr(usage, "prompt_tokens", None)
        return EmbeddingReply(vectors, str(getattr(reply, "model", "") or batch.model), request_id,
                              int(tokens) if isinstance(tokens, int) and tokens >= 0 else 0,
                              rate_limit_headers(raw.headers))


def _is_completion(completion) -> bool:
    choices = getattr(completion, "choices", None)
    return isinstance(choices, list) and bool(choices) and getattr(choices[0], "message", None) is not None


FINISH_TO_STOP = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def response_from_completion(completion, request, profile: ModelProfile):
    """Usage in the client's terms: input tokens exclude the cached ones (OpenAI's prompt_tokens include them), so
    one price formula serves both providers (priced from the request's model's `profile`); a cut (`length`), a
    filter or a refusal maps to the stop reasons the judges treat as unusable. Usage that is not a count of tokens
    is an InvalidReply, never priced (no usage at all, which some local servers send, counts 0)."""
    choice = completion.choices[0]
    message = choice.message
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None)
    model = request.model
    cached = bounds.usage_count(getattr(details, "cached_tokens", None), "usage.prompt_tokens_details.cached_tokens",
                                model, required=False)
    prompt = bounds.usage_count(usage.prompt_tokens, "usage.prompt_tokens", model) if usage else 0
    output = bounds.usage_count(usage.completion_tokens, "usage.completion_tokens", model) if usage else 0
    if cached > prompt:
        raise InvalidReply(f"invalid usage from {model}: cached_tokens {cached:,} is more than prompt_tokens "
                           f"{prompt:,}; not priced, not kept, the next run asks again")
    stop = FINISH_TO_STOP.get(choice.finish_reason, choice.finish_reason)
    if getattr(message, "refusal", None):
        stop = "refusal"
    return LLMResponse(
        text=message.content or "", model=completion.model,
        request_id=getattr(completion, "_request_id", None) or completion.id,
        input_tokens=prompt - cached, output_tokens=output,
        cost_usd=profile.cost_usd(prompt - cached, output, 0, cached),
        stop_reason=stop, cache_read_input_tokens=cached,
    )
