"""A backend for unit tests: replies from a function of the request, optionally failing first."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from memeval.llm.client import LLMRequest, LLMResponse
from memeval.llm.profiles import cost_usd


class ScriptedBackend:
    name = "scripted"

    def __init__(self, responder: Callable[[LLMRequest], str], failures: Sequence[Exception] = ()):
        self.responder = responder
        self.failures = list(failures)
        self.sent: list[LLMRequest] = []
        self._lock = threading.Lock()

    def send(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.sent.append(request)
            if self.failures:
                raise self.failures.pop(0)
        text = self.responder(request)
        return LLMResponse(text=text, model=request.model, request_id=f"scripted-{len(self.sent)}",
                           input_tokens=10, output_tokens=5, cost_usd=cost_usd(request.model, 10, 5),
                           stop_reason="end_turn", api_version=request.api_version)
