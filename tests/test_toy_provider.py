"""A provider added in one file (tests/toy_provider.py) goes through every stage of the client: routed by its
profile, sent to its backend under the limits, accounted, cached and replayed."""

from __future__ import annotations

import pytest

from memeval.llm.cache import ResponseCache
from memeval.llm.client import LLMClient, ReplayBackend
from memeval.llm.settings import ModelSettings
from memeval.llm.types import LLMRequest
from tests.toy_provider import ToyBackend, ToyTable


def _client(tmp_path, toy: ToyBackend, budget_usd: float | None = None) -> LLMClient:
    return LLMClient(ReplayBackend(), ResponseCache(tmp_path),
                     ModelSettings(models={"answer": "toy-1"}, budget_usd=budget_usd), backends={"toy": toy},
                     profile_table=ToyTable())


def test_a_provider_added_in_one_file_is_routed_sent_accounted_and_cached(tmp_path):
    toy = ToyBackend()
    client = _client(tmp_path, toy)
    request = LLMRequest(role="answer", messages=(("user", "where is Paris?"),), max_tokens=20)
    assert client.resolve(request).provider == "toy" and client.backend_name == "toy"
    response = client.complete(request)
    assert response.text == "?siraP si erehw" and not response.cached
    assert [r.model for r in toy.sent] == ["toy-1"] and client.stats.requests_sent == 1
    assert client.stats.cost_usd == pytest.approx((3 * 1.0 + 3 * 2.0) / 1e6)
    again = _client(tmp_path, toy).complete(request)
    assert again.cached and again.text == response.text and len(toy.sent) == 1
    assert client.estimate([LLMRequest(role="answer", messages=(("user", "other"),), max_tokens=20)]) \
        .to_send == 1
