"""Each stage of the client (memeval/llm/client.py) alone, with the fakes: route, cache, account, limit, send."""

from __future__ import annotations

import threading

import pytest

from memeval.errors import InputError
from memeval.llm.account import Account, ClientStats
from memeval.llm.cache import ResponseCache
from memeval.llm.errors import APIRejected, BudgetExceeded, TransientError, UnusableReply
from memeval.llm.limit import Limits, waves
from memeval.llm.profiles import CLOUD
from memeval.llm.reply_cache import ReplyCache
from memeval.llm.router import Router
from memeval.llm.send import ReplayBackend, Sender
from memeval.llm.types import LLMRequest, LLMResponse
from tests.scripted import ScriptedBackend


def _router(backend=None, models=None, require_named_roles=False) -> Router:
    return Router(backend or ReplayBackend(), {}, models or {}, require_named_roles,
                  {"openai": "https://api.openai.com/v1", "local": ""}, "https://api.anthropic.com", CLOUD,
                  "protocol", "json_schema")


def _ask(text="hello", role="answer") -> LLMRequest:
    return LLMRequest(model="", role=role, messages=(("user", text),), max_tokens=16, temperature=0.0)


def test_route_gives_a_role_its_run_model_and_the_provider_and_endpoint_it_goes_to():
    router = _router(models={"answer": "gpt-4o-mini"})
    resolved = router.resolve(_ask())
    assert (resolved.model, resolved.provider, resolved.endpoint) == ("gpt-4o-mini", "openai",
                                                                      "https://api.openai.com/v1")
    judge = router.resolve(_ask(role="judge"))
    assert judge.provider == "anthropic" and judge.endpoint == "https://api.anthropic.com"
    with pytest.raises(InputError, match="--answer-model"):
        _router(require_named_roles=True).resolve(_ask())


def test_cache_keeps_an_answer_and_never_an_empty_reply(tmp_path):
    stats = ClientStats()
    replies = ReplyCache(ResponseCache(tmp_path), threading.Lock(), stats)
    request = _router().resolve(_ask())
    assert replies.get(request) is None
    with pytest.raises(UnusableReply):
        replies.keep(request, LLMResponse(text=" ", model=request.model, stop_reason="end_turn"))
    assert replies.get(request) is None and stats.unusable == {"empty reply": 1} and stats.failures == 1
    replies.keep(request, LLMResponse(text="Paris", model=request.model, stop_reason="end_turn"))
    hit = replies.get(request)
    assert hit is not None and hit.text == "Paris" and hit.cached
    assert ReplyCache(None, threading.Lock(), stats).get(request) is None


def test_account_charges_a_reply_and_stops_new_calls_once_the_budget_is_spent():
    account = Account(threading.Lock(), ClientStats(), budget_usd=0.01)
    account.check_budget()
    request = _router().resolve(_ask())
    account.charge(request, LLMResponse(text="x", model=request.model, request_id="r1", input_tokens=3,
                                        output_tokens=2, cost_usd=0.01))
    assert (account.stats.cost_usd, account.stats.input_tokens, account.stats.first_request_id) == \
        (0.01, 3, {"answer": "r1"})
    with pytest.raises(BudgetExceeded, match=r"budget \$0.01 spent"):
        account.check_budget()


def test_limit_sends_identical_requests_once_and_a_prefix_writer_first():
    shared = "a long shared context " * 10
    prefixed = LLMRequest(role="answer", messages=(("user", shared + "q1"),),
                          cache_prefix_chars=len(shared))
    other = LLMRequest(role="answer", messages=(("user", shared + "q2"),), cache_prefix_chars=len(shared))
    plain = _ask()
    owner, first, rest = waves([plain, prefixed, plain, other], ["k0", "k1", "k0", "k3"])
    assert owner == [0, 1, 0, 3] and first == [1] and rest == [0, 3]


def test_limit_reports_the_call_waiting_longest():
    class NoServer:
        def slots(self, request):
            return None

    stats = ClientStats()
    limits = Limits(2, NoServer(), threading.Lock(), stats, threading.local())
    assert limits.waiting() is None
    with limits.server_slot(_ask()), limits.sending("m"):
        model, attempt, _, flying = limits.waiting()
        assert (model, attempt, flying) == ("m", 1, 1)
    assert limits.waiting() is None and (stats.requests_sent, stats.replies) == (1, 1)


def _sender(backend, slept: list) -> Sender:
    router = _router(backend)
    lock, local, stats = threading.Lock(), threading.local(), ClientStats()
    limits = Limits(2, None, lock, stats, local)
    return Sender(router, limits, Account(lock, stats, None), lock, local, 3, 0.5, 30.0, slept.append)


def test_send_retries_a_transient_error_then_a_rejection_stops_every_later_call():
    slept: list = []
    backend = ScriptedBackend(lambda r: "ok", failures=[TransientError("503 overloaded", 2.0, 503)])
    sender = _sender(backend, slept)
    request = sender.route.resolve(_ask())
    response, attempts = sender.call(lambda: backend.send(request), request)
    assert (response.text, attempts, slept, sender.stats.retries) == ("ok", 2, [2.0], 1)
    rejected = APIRejected(401, "authentication_error", "bad key", "req_1", request.model, request.api_version)
    with pytest.raises(APIRejected):
        sender.call(lambda: (_ for _ in ()).throw(rejected), request)
    with pytest.raises(APIRejected):
        sender.call(lambda: backend.send(request), request)
    assert len(backend.sent) == 2 and sender.fatal is rejected
