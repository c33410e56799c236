"""What the judge saw: the viewer shows, for an answer and for each judge run, the exact request sent and the reply,
read from the response cache by the key the row recorded — checked against the bodies the loopback server
received — and says "not in this machine's cache" when the cache does not hold it. No API key reaches the page."""

import shutil

import pytest

from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.viewer import page_data, read_embedded, write_viewer
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, first_text

READER_REPLY = "in the spring of the test"
JUDGE_REPLY = '{"label": "CORRECT"}'


@pytest.fixture()
def judged_run(monkeypatch, tmp_path):
    """Three questions answered by the claude reader and judged twice by the binary judge, on 127.0.0.1."""
    def responder(body):
        return READER_REPLY if "Answer:" in first_text(body) else JUDGE_REPLY

    with FakeAnthropic(responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        yield server, tmp_path


def _body_text(content) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _call_text(data: dict, parts: list[int]) -> str:
    return "".join(data["exchanges"]["texts"][t] for t in parts)


def _run(locomo_dir, out):
    run_locomo(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26", questions="first:3",
                               systems=["rag_turns"], answerer="claude", judge="binary", judge_runs=2,
                               progress=False))


def test_viewer_shows_each_request_sent_and_its_reply(judged_run, locomo_dir):
    server, tmp_path = judged_run
    out = tmp_path / "run"
    _run(locomo_dir, out)
    data = page_data(out)
    calls, rows = data["exchanges"]["calls"], data["rows"]
    assert len(rows["calls"]) == 3 and all(c is not None and len(c) == 1 for c in rows["calls"])
    received = {first_text(body): body for body in server.received}
    for i, (call_ids, prediction) in enumerate(zip(rows["calls"], rows["pred"], strict=True)):
        call = calls[call_ids[0]]
        assert not call.get("missing"), call
        (role, parts), = call["messages"]
        sent_text = _call_text(data, parts)
        body = received[sent_text]  # the exact text the server received for this answer
        assert role == "user" and _body_text(body["messages"][0]["content"]) == sent_text
        params = data["exchanges"]["params"][call["params"]]
        assert params["model"] == body["model"] and params["max_tokens"] == body["max_tokens"]
        assert data["exchanges"]["texts"][call["reply"]["text"]] == READER_REPLY == prediction
        question = data["questions"]["text"][rows["q"][i]]
        assert question in sent_text
    judge_calls = [entry[4] for per_answer in rows["j"] for entry in per_answer]
    assert len(judge_calls) == 3 and all(len(c) == 2 for c in judge_calls)
    for run_calls in judge_calls:
        first, second = (calls[c] for c in run_calls)
        assert (first["repeat"], second["repeat"]) == (0, 1) and first["params"] == second["params"], \
            "a judge's runs share one sampling entry"
        sent_text = _call_text(data, first["messages"][0][1])
        body = received[sent_text]
        assert data["exchanges"]["texts"][first["system"]] == _body_text(body.get("system") or "")
        assert READER_REPLY in sent_text  # the judge saw the reader's answer
        assert data["exchanges"]["texts"][first["reply"]["text"]] == JUDGE_REPLY
    page = write_viewer(out, tmp_path / "view.html")
    assert read_embedded(page.read_text())["exchanges"] == data["exchanges"]
    assert TEST_SECRET not in page.read_text() and TEST_SECRET not in str(data)


def test_an_emptied_cache_says_not_in_this_machines_cache(judged_run, locomo_dir):
    server, tmp_path = judged_run
    out = tmp_path / "run"
    _run(locomo_dir, out)
    shutil.rmtree(tmp_path / "cache")
    data = page_data(out)
    calls = data["exchanges"]["calls"]
    assert len(calls) == 3 + 3 * 2 and all(c["missing"] for c in calls)
    assert not (tmp_path / "cache").exists(), "reading the page's data creates no cache"
    elsewhere = tmp_path / "other-cache"
    assert all(c["missing"] for c in page_data(out, cache_dir=elsewhere)["exchanges"]["calls"])
    assert not elsewhere.exists()


def test_rows_without_request_keys_say_not_recorded(tmp_path, locomo_dir):
    out = tmp_path / "run"
    run_locomo(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26", questions="first:2",
                               systems=["rag_turns"], progress=False))
    data = page_data(out)
    assert data["rows"]["calls"] == [None, None] and data["exchanges"]["calls"] == []


def test_the_page_opens_a_call_and_shows_the_missing_one(judged_run, locomo_dir):
    from tests.test_viewer import Browser, _need_browser

    _need_browser()
    from playwright.sync_api import sync_playwright

    server, tmp_path = judged_run
    out = tmp_path / "run"
    _run(locomo_dir, out)
    cached, emptied = write_viewer(out, tmp_path / "cached.html"), None
    shutil.rmtree(tmp_path / "cache")
    emptied = write_viewer(out, tmp_path / "emptied.html")
    with sync_playwright() as p:
        browser = Browser(p)
        page = browser.open(cached)
        reader = page.locator("#detail details.call", has_text="reader — request and reply").first
        reader.locator("summary").click()
        shown = reader.inner_text()
        assert READER_REPLY in shown and "Answer:" in shown and "model claude" in shown
        judge = page.locator("#detail .judge details.call", has_text="judge run 2").first
        judge.locator("summary").click()
        assert "CORRECT" in judge.inner_text() and "repeat 1" in judge.inner_text()
        page = browser.open(emptied)
        assert page.locator("#detail .call.missing").count() == 3
        assert "reader: not in this machine's cache" in page.locator("#detail").inner_text()
        browser.browser.close()
    assert browser.errors == []


def test_a_cache_that_is_no_database_is_a_note_and_every_call_missing(judged_run, locomo_dir):
    server, tmp_path = judged_run
    _run(locomo_dir, tmp_path / "run")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "responses.sqlite").write_text("not a database")
    data = page_data(tmp_path / "run", cache_dir=broken)
    assert all(c["missing"] for c in data["exchanges"]["calls"])
    assert any("response cache could not be read" in n and str(broken) not in n for n in data["notes"])
    assert (broken / "responses.sqlite").read_text() == "not a database", "left as it was"
