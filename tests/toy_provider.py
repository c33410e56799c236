"""A toy provider in one file, the way docs/llm.md "Adding a provider" says: its models' profiles, a profile table
that knows them, and a backend that answers a resolved request. It answers with the last user message reversed."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.llm.profiles import ModelProfile, ProfileTable
from memeval.llm.types import LLMRequest, LLMResponse

PROVIDER = "toy"
MODELS = {"toy-1": ModelProfile("toy-1", "current", "", True, 0, 1.0, 2.0, 1.0, 0.1, False, provider=PROVIDER)}


@dataclass(frozen=True)
class ToyTable(ProfileTable):
    """The cloud profiles plus this provider's models."""

    def profile(self, model: str, source: str = "model") -> ModelProfile:
        return MODELS.get(model) or super().profile(model, source)


class ToyBackend:
    name = PROVIDER

    def __init__(self):
        self.sent: list[LLMRequest] = []

    def send(self, request: LLMRequest) -> LLMResponse:
        self.sent.append(request)
        text = request.messages[-1][1][::-1]
        prompt = sum(len(t) for _, t in request.messages) // 4
        return LLMResponse(text=text, model=request.model, request_id=f"toy-{len(self.sent)}", input_tokens=prompt,
                           output_tokens=len(text) // 4, stop_reason="end_turn",
                           cost_usd=ToyTable().cost_usd(request.model, prompt, len(text) // 4))
