"""Only answers are answers: a refusal, an empty reply or one cut at the output cap is a failure with its reason —
never cached, scored or labelled, and asked again by the next run — through the real SDKs against the fakes."""

import json

from memeval.llm import LLMRequest, ResponseCache
from memeval.llm.client import make_client
from memeval.llm.errors import UnusableReply
from memeval.llm.types import LLMResponse
from memeval.records import load_answers, load_judgments
from tests.fake_anthropic import first_text


def _request(**kw):
    return LLMRequest(model="claude-sonnet-4-6", messages=(("user", "Where does Ana live?"),), max_tokens=20,
                      temperature=0.0, template_version="t", role="judge", **kw)


def test_each_kind_of_non_answer_is_raised_and_not_cached(fake, tmp_path):
    client = make_client("anthropic", cache_dir=str(tmp_path), sleep=lambda s: None)
    for reply, reason in [({"text": "I can't help with that.", "stop_reason": "refusal"}, "refusal"),
                          ({"text": "   ", "stop_reason": "end_turn"}, "empty reply"),
                          ({"text": "", "stop_reason": "max_tokens"}, "empty reply (cut at max_tokens)"),
                          ({"text": "Ana lives in a city whose name is", "stop_reason": "max_tokens"},
                           "cut at max_tokens")]:
        fake.responder = lambda body, reply=reply: reply
        outcome = client.complete_many([_request()])[0]
        assert isinstance(outcome, UnusableReply) and outcome.reason == reason, outcome
        assert client.lookup(_request()) is None, "nothing is cached"
    assert len(fake.received) == 4 and client.stats.unusable == {
        "refusal": 1, "empty reply": 1, "empty reply (cut at max_tokens)": 1, "cut at max_tokens": 1}
    fake.responder = lambda body: "Lisbon"
    assert client.complete(_request()).text == "Lisbon" and client.lookup(_request()).text == "Lisbon"
    cut = {"text": "yes, the response", "stop_reason": "max_tokens"}
    fake.responder = lambda body: cut
    kept = client.complete(_request(truncation_ok=True, repeat_index=1))
    assert kept.text == "yes, the response", "a protocol that reads cut replies keeps them"


def test_a_non_answer_cached_by_an_older_version_is_asked_again(fake, tmp_path):
    client = make_client("anthropic", cache_dir=str(tmp_path), sleep=lambda s: None)
    resolved = client.resolve(_request())
    stale = LLMResponse(text="", model="claude-sonnet-4-6", stop_reason="max_tokens")
    ResponseCache(tmp_path).put(resolved.key, resolved.key_material(), stale.to_cache())
    fake.responder = lambda body: "Lisbon"
    assert client.complete(_request()).text == "Lisbon" and len(fake.received) == 1


def test_a_reader_run_records_non_answers_as_failures_and_a_rerun_asks_only_for_them(fake, locomo_dir, tmp_path,
                                                                                       monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    asked = []

    def reader(body):
        text = first_text(body)
        asked.append(text)
        if len(asked) == 1:
            return {"text": "I won't answer that.", "stop_reason": "refusal"}
        if len(asked) == 2:
            return {"text": "On the seventh of May, the year", "stop_reason": "max_tokens"}
        return "7 May 2023"

    fake.responder = reader
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:4", "--systems",
            "rag_turns", "--reader", "claude", "--no-progress", "--out", tmp_path / "run"]
    first = cli(*args)
    assert first.returncode == 4 and "2 of 4 answers failed" in first.stderr, first.stderr
    rows = load_answers(tmp_path / "run" / "answers.jsonl")
    failed = [r for r in rows if r.error]
    assert len(failed) == 2 and all(r.prediction == "" and r.f1 is None for r in failed)
    assert {r.error.split(":")[0] for r in failed} == {"UnusableReply"}
    assert any("refusal" in r.error for r in failed) and any("cut at max_tokens" in r.error for r in failed)
    sent = len(fake.received)
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert len(fake.received) == sent + 2, "only the two non-answers are asked again"
    final = {r.sample_id: r for r in load_answers(tmp_path / "run" / "answers.jsonl")}
    assert all(r.error is None and r.prediction == "7 May 2023" for r in final.values() if r.sample_id in
               {f.sample_id for f in failed})


def test_judges_write_no_label_from_a_non_answer(fake, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: {"text": "", "stop_reason": "max_tokens"}
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:3", "--systems",
               "rag_turns", "--judge", "binary", "--no-progress", "--out", tmp_path / "run")
    assert done.returncode == 4
    assert load_judgments(tmp_path / "run" / "judgments.jsonl") == []
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["complete"] is False


def test_a_retired_model_is_refused_before_sending_and_its_cached_replies_still_replay(fake_openai, locomo_dir,
                                                                                       tmp_path, monkeypatch, cli):
    import dataclasses

    from memeval.commands.doctor import retirement_lines
    from memeval.llm import profiles

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: '{"reasoning": "same", "label": "CORRECT"}'
    args = ["locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
            "rag_turns", "--judge", "binary", "--judge-model", "gpt-4o-mini", "--no-progress"]
    cli(*args, "--llm", "openai", "--out", tmp_path / "before", check=True)
    sent = len(fake_openai.received)
    past = dataclasses.replace(profiles.PROFILES["gpt-4o-mini"], retires="2020-01-01")
    monkeypatch.setitem(profiles.PROFILES, "gpt-4o-mini", past)
    refused = cli(*args, "--questions", "first:3", "--llm", "openai", "--out", tmp_path / "after")
    assert refused.returncode == 2 and len(fake_openai.received) == sent
    assert refused.stderr.strip().splitlines()[-1].startswith(
        "memeval: error: gpt-4o-mini was shut down on 2020-01-01 by its provider; its successor is gpt-6-luna")
    replay = cli(*args, "--llm", "openai", "--out", tmp_path / "replayed")
    assert replay.returncode == 0 and len(fake_openai.received) == sent, "cached replies of a retired model replay"
    monkeypatch.setenv("MEMEVAL_SEND_RETIRED", "1")  # the table's day may be early: the provider's answer decides
    sent_anyway = cli(*args, "--questions", "first:3", "--llm", "openai", "--out", tmp_path / "anyway")
    assert sent_anyway.returncode == 0 and len(fake_openai.received) > sent
    rows = [{"role": "judge", "model": "gpt-4o-mini", "retires": "2027-01-14", "successor": "gpt-6-luna"}]
    assert retirement_lines(rows + [{**rows[0], "role": "answer"}], today="2026-12-04") == [
        "note: gpt-4o-mini (judge, answer) retires on 2027-01-14 (in 41 days); successor gpt-6-luna. From then on "
        "runs naming it are refused (cached replies still replay), and a protocol published with it cannot be rerun "
        "as published"]
    assert retirement_lines(rows, today="2026-09-01") == []
