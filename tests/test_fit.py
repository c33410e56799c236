"""Fit before sending (memeval/llm/fit.py): a request to a user's server is counted with the server's own tokenizer
and refused when its prompt plus reply cap exceeds the server's context window; a server's own 400 for that is the
same DoesNotFit; neither stops the client, is retried, or is labelled "rerun to retry". A run with a system that
cannot fit refuses that system up front and completes the others. The fake (tests/fake_openai.py) serves llama.cpp's
and vLLM's routes with a word tokenizer and refuses what llama-cpp-python refuses."""

from __future__ import annotations

import pytest

from memeval.cli import main
from memeval.engine.run import failure_advice
from memeval.llm import LLMRequest
from memeval.llm.client import make_client
from memeval.llm.errors import DoesNotFit
from memeval.llm.fit import Count, Window, fit_advice, misfit, server_misfit
from memeval.llm.settings import ModelSettings
from memeval.records import load_answers
from memeval.rundir import incomplete_line
from tests.fake_openai import FakeOpenAI, chat_template, word_tokens

MODEL = "tiny-instruct"


@pytest.fixture()
def server(monkeypatch):
    with FakeOpenAI(responder=lambda body: "Paris", local=True) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def _client(tmp_path, max_concurrency: int = 8, context_tokens: int | None = None):
    return make_client("local", cache_dir=str(tmp_path / "cache"), settings=ModelSettings(
        "local", {"answer": MODEL}, max_concurrency=max_concurrency, context_tokens=context_tokens))


def _ask(words: int, cap: int = 16) -> LLMRequest:
    return LLMRequest(model=MODEL, messages=(("user", "word " * words + "Where?"),), max_tokens=cap, role="answer",
                      temperature=0.0)


def _tokens(request: LLMRequest) -> int:
    return len(word_tokens(chat_template([{"role": "user", "content": request.messages[0][1]}])))


def test_a_prompt_past_the_window_is_not_sent_and_the_client_goes_on(server, tmp_path):
    server.n_ctx = 300
    client = _client(tmp_path)
    long = _ask(400)
    with pytest.raises(DoesNotFit) as caught:
        client.complete(long)
    needed = _tokens(long) + 16
    assert (caught.value.needed, caught.value.held) == (needed, 300), "counted by the server's tokenizer"
    assert f"needs {needed:,} tokens" in str(caught.value) and "300-token context" in str(caught.value)
    assert "GET /props" in str(caught.value) and "rerun fails the same way" in str(caught.value)
    assert server.received == [] and client.fatal is None
    assert [sorted(b) for b in server.counted] == [["messages"], ["content"]], "llama.cpp's shape: template, tokens"
    assert client.complete(_ask(20)).text == "Paris", "the next request is sent"
    assert len(server.received) == 1


@pytest.mark.parametrize("slots", [None, 1, 2])
def test_no_more_requests_on_the_wire_than_the_server_has_slots(server, tmp_path, capsys, slots):
    """memeval's launcher (llama-cpp-python: one request at a time) says total_slots 1; --max-concurrency 8 would
    only queue inside it, each call reported in flight for the whole queue."""
    server.n_ctx, server.total_slots, server.latency_s = 4096, slots, 0.2
    client = _client(tmp_path, max_concurrency=8)
    replies = client.complete_many([_ask(5 + i) for i in range(8)])
    assert [r.text for r in replies] == ["Paris"] * 8
    if slots is None:  # the first call goes alone (the client's probe), the other seven at once
        assert server.most_at_once >= 4
    else:
        assert server.most_at_once == slots
    said = capsys.readouterr().err
    assert (f"works on {slots} request" in said) == (slots is not None)


def test_a_cached_reply_is_never_counted(server, tmp_path):
    request = _ask(120)
    assert _client(tmp_path).complete(request).text == "Paris"
    server.n_ctx = 50  # the server restarted with a smaller window: the cached reply still replays, uncounted
    assert _client(tmp_path).complete(request).text == "Paris"
    assert server.counted == [] and len(server.received) == 1


def test_vllm_shape_window_and_count(server, tmp_path):
    server.n_ctx, server.shape = 300, "vllm"
    with pytest.raises(DoesNotFit, match="GET /v1/models max_model_len") as caught:
        _client(tmp_path).complete(_ask(400))
    assert caught.value.needed == _tokens(_ask(400)) + 16
    assert [sorted(b) for b in server.counted] == [["messages", "model"]]


def test_without_server_routes_the_flag_and_an_estimate_decide_said_once(server, tmp_path, capsys):
    client = _client(tmp_path, context_tokens=300)  # the fake serves no /props, no /tokenize (n_ctx unset)
    with pytest.raises(DoesNotFit, match="--context-tokens") as caught:
        client.complete(_ask(400))
    assert "estimated at 4 characters a token plus 25%" in str(caught.value)
    with pytest.raises(DoesNotFit):
        client.complete(_ask(401))
    err = capsys.readouterr().err
    assert err.count("offers no tokenizer") == 1 and server.received == []
    unknown = _client(tmp_path / "unknown")
    assert unknown.complete(_ask(400)).text == "Paris", "no window known: sent, the server decides"
    assert "context window" not in capsys.readouterr().err, "a request that fits any window needs no note"
    assert unknown.complete(_ask(4000)).text == unknown.complete(_ask(4001)).text == "Paris"
    assert capsys.readouterr().err.count("does not report its context window") == 1


def test_the_servers_own_400_is_does_not_fit_not_a_rejection(server, tmp_path):
    server.n_ctx = 300
    client = _client(tmp_path, context_tokens=None)
    client.fit.misfit = lambda request: None  # the check found nothing to refuse; the server refuses
    with pytest.raises(DoesNotFit) as caught:
        client.complete(_ask(400))
    assert caught.value.held == 300 and "maximum context length is 300 tokens" in str(caught.value)
    assert client.fatal is None and len(server.received) == 1, "not retried, and the client is not stopped"
    assert client.complete(_ask(10)).text == "Paris"


def test_the_server_refusals_parse():
    raw = server_misfit(400, "Requested tokens (5000) exceed context window of 4096", {}, "http://h/v1")
    assert (raw.needed, raw.held) == (5000, 4096)
    cpp = server_misfit(400, "the request exceeds the available context size, try increasing it",
                        {"type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}, "u")
    assert (cpp.needed, cpp.held) == (9000, 8192)
    assert server_misfit(400, "Unrecognized request argument supplied: x", {}, "u") is None
    assert server_misfit(500, "Requested tokens (5000) exceed context window of 4096", {}, "u") is None
    assert misfit(Count(4000, "counted"), 96, Window(4096, "GET /props"), "u") is None
    assert misfit(Count(4001, "counted"), 96, Window(4096, "GET /props"), "u").needed == 4097


def test_advice_never_says_rerun_for_rows_that_do_not_fit():
    class Row:
        def __init__(self, error):
            self.error, self.system = error, "s"

    class Task:
        @staticmethod
        def failure_advice(answers):
            return None

    fit = "DoesNotFit: needs 24,611 tokens (...), more than the 4,096-token context of the server at u (GET /props)"
    rows = [Row(fit), Row(fit.replace("24,611", "9,000")), Row(None), Row("TransientError: 503")]
    advice = failure_advice(Task(), rows)
    assert advice.startswith("what does not fit the server's 4,096-token context: s's reader prompts (2 answers, "
                             "largest needs 24,611 tokens); a rerun fails the same way: serve a longer context "
                             "(memeval serve-local --n-ctx) or use another system; rerun to retry the other 1 failed"), \
        advice
    line = incomplete_line({"answers": {"requested": 4, "failed": 3, "absent": 0, "advice": advice,
                                        "reasons": {"DoesNotFit": 2, "TransientError (503)": 1}}})
    assert "rerun to retry them" not in line
    assert fit_advice([("s", None), ("s", "TransientError: x")]) is None


def test_a_system_that_cannot_fit_is_refused_up_front_and_the_other_completes(server, tmp_path, locomo_dir,
                                                                               monkeypatch, capsys):
    server.n_ctx = 2048  # rag_turns' prompts fit; full_context's (all of conv-26) do not
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMEVAL_PROGRESS", "0")
    out = tmp_path / "run"
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:3",
                 "--systems", "rag_turns,full_context", "--reader", "claude", "--llm", "local", "--answer-model",
                 MODEL, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 4, err
    refusal = [line for line in err.splitlines() if "refused before any call" in line]
    assert len(refusal) == 1 and refusal[0].startswith("memeval: full_context refused before any call: its largest "
                                                       "reader prompt (conv-26, ")
    assert "more than the 2,048-token context of the server at" in refusal[0]
    assert refusal[0].endswith("; the other systems run")
    rows = load_answers(out / "answers.jsonl")
    assert [r.error for r in rows if r.system == "rag_turns"] == [None] * 3
    assert all(r.error.startswith("DoesNotFit: full_context refused") for r in rows if r.system == "full_context")
    assert len(server.received) == 3, "no full_context request was sent"
    closing = err.strip().splitlines()[-1]
    assert "what does not fit the server's 2,048-token context: full_context's reader prompts (3 answers, " \
           "largest needs " in closing, closing
    assert "a rerun fails the same way" in closing and "rerun to retry" not in closing


def test_the_dry_run_names_each_systems_largest_prompt_against_the_window(server, tmp_path, locomo_dir,
                                                                          monkeypatch, capsys):
    server.n_ctx = 2048
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:3",
                 "--systems", "rag_turns,full_context", "--reader", "claude", "--llm", "local", "--answer-model",
                 MODEL, "--dry-run", "--out", str(tmp_path / "dry")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0 and server.received == [], "a dry run sends no model call"
    assert "Largest prompt per system (what a server's context must hold): rag_turns " in out
    assert "by the server's tokenizer (llama.cpp /tokenize)" in out
    assert "conv-26:q0002, does NOT fit the server's 2,048)" in out, out[-600:]
    assert out.count("fits the server's 2,048") == 1


def test_mem0_is_refused_up_front_by_its_extraction_prompt(server, tmp_path, locomo_dir, monkeypatch, capsys):
    import importlib.util

    if importlib.util.find_spec("mem0") is None:  # not imported here: memeval turns Mem0's telemetry off first
        pytest.skip("mem0ai is not installed (pip install 'memeval[mem0]')")
    server.n_ctx = 4096  # Mem0's extraction prompt and its 2,000-token reply cap do not fit
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMEVAL_PROGRESS", "0")
    out = tmp_path / "run"
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:2",
                 "--systems", "mem0,rag_turns", "--reader", "claude", "--llm", "local", "--answer-model", MODEL,
                 "--extract-model", MODEL, "--embed-model", "tiny-embed", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "memeval: mem0 refused before any call: its largest extraction prompt (conv-26) needs " in err
    assert "+ 2,000 reply cap" in err
    assert server.embedded == [] and len(server.received) == 2, "nothing of Mem0's was sent; rag_turns answered"
    rows = load_answers(out / "answers.jsonl")
    assert [r.error for r in rows if r.system == "rag_turns"] == [None, None]
    assert all(r.error.startswith("DoesNotFit: mem0 refused") for r in rows if r.system == "mem0")
