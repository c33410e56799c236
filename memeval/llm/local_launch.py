"""llama-cpp-python's OpenAI-compatible server as `LocalServer` and `memeval serve-local` start it: the library's own
server (`python -m memeval.llm.local_launch ...` takes every argument `python -m llama_cpp.server` takes, plus
`--model_sha256`) with what memeval's client needs from any OpenAI-compatible server and the library lacks.

- Routes in llama.cpp's own C++ server's shapes (so one client path reads both), at the server root:
  `GET /props` (which process, model file and context answer here), `POST /apply-template` (the chat format's
  exact prompt text) and `POST /tokenize` (the model's tokens, BOS as chat adds it) — what a client needs to count
  a request's tokens before sending it.
- The OpenAI form `response_format: {"type": "json_schema", "json_schema": {"schema": ...}}`, which 0.3.36
  rejects (llama_types.py ChatCompletionRequestResponseFormat takes `text` or `json_object`), passed on as the
  `{"type": "json_object", "schema": ...}` its grammar builder reads (llama_chat_format.py
  _grammar_for_response_format).
- One chat format, `gemma-system`. llama-cpp-python's built-in `gemma` format drops every system message (it logs
  at debug level only: llama_chat_format.py `format_gemma`), so a protocol's system prompt would never reach the
  model while the reply still came back. Gemma has no system role; Google's formatting guide says to give
  system-level instructions at the start of the first user turn, separated by a blank line
  (ai.google.dev/gemma/docs/formatting, "System instructions"). `gemma-system` does exactly that and is otherwise
  the built-in `gemma` format: `<start_of_turn>user` / `<start_of_turn>model` turns, each closed by
  `<end_of_turn>\\n`, the reply prompted by `<start_of_turn>model\\n`, the BOS token added by the tokenizer.
"""

import json
import os
import sys
import threading
from dataclasses import dataclass

CHAT_FORMAT = "gemma-system"


def gemma_prompt(messages: list[dict]) -> str:
    """The Gemma prompt of OpenAI-style messages, system text opening the first user turn."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    turns = [m for m in messages if m.get("role") != "system"]
    parts = []
    for i, message in enumerate(turns):
        role = "model" if message.get("role") == "assistant" else "user"
        content = str(message.get("content") or "")
        if system and role == "user" and not any(t.get("role") != "assistant" for t in turns[:i]):
            content = f"{system}\n\n{content}"
            system = ""
        parts.append(f"<start_of_turn>{role}\n{content}<end_of_turn>\n")
    if system:  # a system message with no user turn after it: it is the first user turn
        parts.insert(0, f"<start_of_turn>user\n{system}<end_of_turn>\n")
    return "".join(parts) + "<start_of_turn>model\n"


def register() -> None:
    from llama_cpp import llama_chat_format as formats

    @formats.register_chat_format(CHAT_FORMAT)
    def format_gemma_system(messages, **kwargs):
        return formats.ChatFormatterResponse(prompt=gemma_prompt(list(messages)), stop="<end_of_turn>\n")


def openai_response_format(body: bytes) -> bytes:
    """A chat request's body with OpenAI's `json_schema` response format in the shape llama-cpp-python enforces;
    any other body unchanged (a malformed one is the library's to reject)."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    wanted = request.get("response_format") if isinstance(request, dict) else None
    if not isinstance(wanted, dict) or wanted.get("type") != "json_schema":
        return body
    schema = (wanted.get("json_schema") or {}).get("schema") if isinstance(wanted.get("json_schema"), dict) else None
    if not isinstance(schema, dict):
        return body
    request["response_format"] = {"type": "json_object", "schema": schema}
    return json.dumps(request).encode()


class ResponseFormatMiddleware:
    """ASGI: rewrites the body of `POST .../chat/completions` with `openai_response_format` before the library's
    request model validates it."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        body = openai_response_format(body)
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        delivered = False

        async def replay():
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class _Captured(Exception):
    pass


@dataclass
class _Prompt:
    text: str
    add_bos: bool


class _PromptProbe:
    """Stands in for the model in a chat handler: llama-cpp-python's formatter-based handlers
    (llama_chat_format.py chat_formatter_to_chat_completion_handler) format the messages and then tokenize the
    prompt, with `add_bos` as the format says, before anything else touches the model; the probe keeps both and
    stops there. So the prompt text and BOS rule are the server's own, for every such format."""

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False):
        raise _Captured(_Prompt(text.decode("utf-8"), add_bos))


class Templates:
    """The served model's chat prompt and tokens, computed as its chat completions compute them. Tokenizing reads
    only the vocabulary, so it does not wait for a generation in progress (llama.cpp's own server tokenizes in its
    HTTP threads too)."""

    def __init__(self, llama):
        from llama_cpp import llama_chat_format

        self.llama = llama
        self.handler = (llama.chat_handler or llama._chat_handlers.get(llama.chat_format)
                        or llama_chat_format.get_chat_completion_handler(llama.chat_format))
        self._lock = threading.Lock()
        self._add_bos: bool | None = None

    def prompt(self, messages: list[dict]) -> _Prompt:
        try:
            self.handler(llama=_PromptProbe(), messages=messages)
        except _Captured as captured:
            return captured.args[0]
        raise ValueError(f"chat format {self.llama.chat_format!r} does not build a text prompt")

    def add_bos(self) -> bool:
        if self._add_bos is None:
            self._add_bos = self.prompt([{"role": "user", "content": "x"}]).add_bos
        return self._add_bos

    def tokens(self, text: str) -> list[int]:
        add_bos = self.add_bos()
        with self._lock:
            return list(self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))


def memeval_routes(llama, model_settings, model_sha256: str | None):
    """The router of /props, /apply-template and /tokenize for the loaded model. Bodies are read as JSON whatever
    their content-type, as llama.cpp's own server reads them."""
    from fastapi import APIRouter, HTTPException, Request
    from starlette.concurrency import run_in_threadpool

    templates = Templates(llama)
    props = {"model_alias": model_settings.model_alias or model_settings.model, "model_path": model_settings.model,
             "model_sha256": model_sha256, "pid": os.getpid(), "chat_format": str(llama.chat_format),
             "n_ctx": llama.n_ctx(), "n_ctx_train": llama._model.n_ctx_train(),
             "default_generation_settings": {"n_ctx": llama.n_ctx()},
             # llama-cpp-python's server works on one request at a time (llama_cpp/server/app.py get_llama_proxy holds
             # llama_outer_lock and llama_inner_lock around each): clients that read this send no more at once
             "total_slots": 1}
    router = APIRouter()

    async def field(request: Request, name: str, kind: type):
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise HTTPException(400, "the body is not JSON") from None
        value = body.get(name) if isinstance(body, dict) else None
        if not isinstance(value, kind):
            raise HTTPException(400, f"{name}: a {kind.__name__} is required")
        return value

    @router.get("/props")
    async def get_props() -> dict:
        return props

    @router.post("/apply-template")
    async def apply_template(request: Request) -> dict:
        messages = await field(request, "messages", list)
        if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
            raise HTTPException(400, "messages: each one is an object with a role")
        try:
            return {"prompt": (await run_in_threadpool(templates.prompt, messages)).text}
        except ValueError as exc:
            raise HTTPException(501, str(exc)) from None

    @router.post("/tokenize")
    async def tokenize(request: Request) -> dict:
        return {"tokens": await run_in_threadpool(templates.tokens, await field(request, "content", str))}

    return router


def main() -> None:
    import argparse

    from memeval.settings import Setting, add_setting

    ours = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_setting(ours, Setting("--model_sha256"), None)  # serve-local's, passed past llama.cpp's own flags
    known, rest = ours.parse_known_args(sys.argv[1:])
    sys.argv = [sys.argv[0], *rest]
    register()
    from llama_cpp.server import __main__ as server_main
    from llama_cpp.server import app as server_app

    create_app = server_main.create_app

    def create_app_with_routes(*args, **kwargs):
        app = create_app(*args, **kwargs)
        settings = kwargs["model_settings"][0]
        app.include_router(memeval_routes(server_app._llama_proxy(None), settings, known.model_sha256))
        app.add_middleware(ResponseFormatMiddleware)
        return app

    server_main.create_app = create_app_with_routes
    server_main.main()


if __name__ == "__main__":
    main()
