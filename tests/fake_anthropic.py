"""A local Anthropic-compatible server on 127.0.0.1 for driving the real SDK in tests, with injected faults."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TEST_SECRET = "sk-ant-test-SECRET-do-not-store-0123456789"


class FakeAnthropic:
    def __init__(self, responder=None):
        self.responder = responder or (lambda body: "ok")
        self.faults: list[tuple] = []  # (status, headers, body) or ("sleep", seconds)
        self.received: list[dict] = []
        self.headers: list[dict] = []
        self.batches: dict[str, dict] = {}  # id -> {"requests", "polls_left", "errored": set of custom ids}
        self.batch_polls_before_end = 2
        self.batch_errored: set[str] = set()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send_json(self, payload, status=200, content_type="application/json"):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                with fake._lock:
                    fake.headers.append(dict(self.headers))
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if len(parts) >= 5 and parts[1:4] == ["v1", "messages", "batches"]:
                    batch_id = parts[4]
                    if batch_id not in fake.batches:
                        return self._send_json({"type": "error", "error": {"type": "not_found_error",
                                                                            "message": batch_id}}, 404)
                    if len(parts) == 6 and parts[5] == "results":
                        return self._send_json(fake._batch_results(batch_id), content_type="application/binary")
                    with fake._lock:
                        state = fake.batches[batch_id]
                        state["polls_left"] -= 1
                    return self._send_json(fake._batch_object(batch_id))
                self._send_json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/v1/messages/batches"):
                    with fake._lock:
                        fake.headers.append(dict(self.headers))
                        batch_id = f"msgbatch_fake_{len(fake.batches) + 1}"
                        fake.batches[batch_id] = {"requests": body["requests"],
                                                  "polls_left": fake.batch_polls_before_end}
                    return self._send_json(fake._batch_object(batch_id))
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

    def _batch_object(self, batch_id: str) -> dict:
        state = self.batches[batch_id]
        ended = state["polls_left"] < 0
        n = len(state["requests"])
        errored = sum(r["custom_id"] in self.batch_errored for r in state["requests"]) if ended else 0
        return {
            "id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "created_at": "2026-12-02T00:00:00Z", "expires_at": "2026-12-03T00:00:00Z",
            "ended_at": "2026-12-02T01:00:00Z" if ended else None,
            "request_counts": {"processing": 0 if ended else n, "succeeded": n - errored if ended else 0,
                               "errored": errored, "canceled": 0, "expired": 0},
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def _batch_results(self, batch_id: str) -> bytes:
        lines = []
        for i, item in enumerate(reversed(self.batches[batch_id]["requests"])):  # results come unordered
            params = item["params"]
            with self._lock:
                self.received.append(params)
            if item["custom_id"] in self.batch_errored:
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": "injected batch error"}}}
            else:
                result = {"type": "succeeded", "message": {
                    "id": f"msg_batch_{i}", "type": "message", "role": "assistant", "model": params.get("model"),
                    "content": [{"type": "text", "text": self.responder(params)}], "stop_reason": "end_turn",
                    "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}}
            lines.append(json.dumps({"custom_id": item["custom_id"], "result": result}))
        return ("\n".join(lines) + "\n").encode()

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
