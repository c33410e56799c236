"""A local Anthropic-compatible server on 127.0.0.1 for driving the real SDK in tests, with injected faults."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeAnthropic:
    def __init__(self, responder=None):
        self.responder = responder or (lambda body: "ok")
        self.faults: list[tuple] = []  # (status, headers, body) or ("sleep", seconds)
        self.received: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.received.append(body)
                    fake.headers.append(dict(self.headers))
                    fault = fake.faults.pop(0) if fake.faults else None
                if fault and fault[0] == "sleep":
                    time.sleep(fault[1])
                    fault = None
                if fault:
                    status, headers, payload = fault
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    data = json.dumps(payload).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                text = fake.responder(body)
                n = len(fake.received)
                message = {
                    "id": f"msg_fake_{n}", "type": "message", "role": "assistant", "model": body.get("model"),
                    "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 100 + n, "output_tokens": 20},
                }
                data = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", f"req_fake_{n}")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def error(status: int, retry_after: str | None = None) -> tuple:
    kinds = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error", 400: "invalid_request_error"}
    headers = {"retry-after": retry_after} if retry_after else {}
    return (status, headers, {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": "injected"}})
