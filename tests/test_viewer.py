"""The per-sample viewer: the page's data, and the page itself in a real headless browser (Debian's chromium
driven by Playwright): it renders, a filter changes the rows, a row opens with its evidence marked; hostile strings
in every field (`</script>`, `<!--<script>`, tags, U+2028) show as text, rows still render and no script runs."""

import html
import json
import os
import shutil

import pytest

from memeval.qa.locomo_run import LocomoRunConfig, run_locomo
from memeval.viewer import page_data, write_viewer
from tests.rows import answer_row, judgment_row

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]


def _need_browser() -> None:
    if CHROMIUM is None:
        if os.environ.get("MEMEVAL_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (MEMEVAL_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("no chromium on this machine (CI installs it and sets MEMEVAL_REQUIRE_BROWSER)")


@pytest.fixture()
def run(locomo_dir, tmp_path):
    out = tmp_path / "run"
    run_locomo(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26", questions="5",
                               systems=["rag_turns", "full_context"], progress=False))
    judged = judgment_row("conv-26:q0000", system="rag_turns", category=2, conversation_id="conv-26",
                          scores=[70.0, 90.0], mean=80.0, std=14.1, run_count=2,
                          explanations=["right month, wrong day", "matches"])
    (out / "judgments.jsonl").write_text(json.dumps(judged) + "\n")
    return out


def test_page_data_holds_every_answer_once_with_shared_memories(run, locomo_dir):
    data = page_data(run)
    assert len(data["rows"]) == 10 and data["systems"] == ["full_context", "rag_turns"]
    full = [r for r in data["rows"] if r["system"] == "full_context"]
    assert len({r["memories"] for r in full}) == 1, "full context's memories are stored once per conversation"
    row = next(r for r in data["rows"] if r["system"] == "rag_turns" and r["sample_id"] == "conv-26:q0000")
    assert row["judgments"][0]["explanations"] == ["right month, wrong day", "matches"]
    keys = [k for item in data["memory_sets"][row["memories"]] for k in item]
    assert keys and all(k.startswith("conv-26|") and k in data["turns"] for k in keys)
    from memeval.data.locomo import load_locomo

    conv26 = next(c for c in load_locomo(locomo_dir) if c.sample_id == "conv-26")
    d1 = next(t for s in conv26.sessions for t in s.turns if t.dia_id == "D1:3")
    from memeval.memory.render import turn_text

    assert data["turns"]["conv-26|D1:3"] == turn_text(d1), "turn text from the question's own conversation"
    assert "</script" not in write_viewer(run).read_text().split('type="application/json">')[1].split("</script>")[0]


def test_the_page_renders_filters_and_opens_a_row_in_a_real_browser(run, tmp_path):
    _need_browser()
    from playwright.sync_api import sync_playwright

    page_path = write_viewer(run)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page()
        page.goto(page_path.as_uri())
        assert page.locator("#count").inner_text() == "10 of 10 rows"
        assert page.locator("tr.row").count() == 10
        page.select_option("#system", "rag_turns")
        assert page.locator("tr.row").count() == 5 and page.locator("#count").inner_text() == "5 of 10 rows"
        categories = {c for c in page.locator("tr.row td:nth-child(3)").all_inner_texts()}
        first = sorted(categories)[0].split()[0]
        page.select_option("#category", first)
        shown = page.locator("tr.row").count()
        assert 0 < shown < 5 or len(categories) == 1
        page.select_option("#category", "")
        page.locator("tr.row", has_text="conv-26:q0000").click()
        detail = page.locator("tr.detail")
        assert detail.count() == 1 and "right month, wrong day" in detail.inner_text()
        assert page.locator("tr.detail .ev").count() >= 1, "the evidence turn is marked among the memories"
        shot = page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
        browser.close()
    assert len(shot) > 10_000


# Strings that end, comment out or open a script, inject markup, break JavaScript string literals in old engines
# (U+2028/U+2029), look like entities, or are the page template's own placeholders; two try to set window.__pwned.
HOSTILE = ["</script><script>window.__pwned=1</script>", "<!--<script>", '<img src=x onerror="window.__pwned=2">',
           "]]>", "\u2028|\u2029", "&lt;b&gt; &amp;", "</SCRIPT >", "<svg/onload=window.__pwned=3>", "__DATA__",
           "__TITLE__", "'\"`${x}"]


def hostile(label: str) -> str:
    return f"{label}: " + " ".join(HOSTILE)


@pytest.fixture()
def hostile_run(tmp_path):
    """A run whose every string field is hostile, with LoCoMo data (turn texts, speakers) of the same kind; the
    directory name (the page title) too."""
    data = tmp_path / "data" / "locomo10.json"
    data.parent.mkdir()
    turns = [{"speaker": hostile("speaker"), "dia_id": "D1:1", "text": hostile("turn text")},
             {"speaker": "Bob", "dia_id": "D1:2", "text": "plain"}]
    data.write_text(json.dumps([{"sample_id": "conv-1", "conversation": {
        "speaker_a": hostile("speaker"), "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns}, "qa": [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": 1}]}]))
    run = tmp_path / "run <img src=x onerror=window.__pwned=4> __DATA__"
    run.mkdir()
    rows = [answer_row(f"conv-1:q000{i}", conversation_id="conv-1", category=1 + i, question=hostile(f"question {i}"),
                       gold=hostile(f"gold {i}"), prediction=hostile(f"prediction {i}"), system=hostile("system"),
                       error=hostile(f"error {i}"), evidence_ids=["D1:1", hostile("evidence id")],
                       retrieved_ids=[["D1:1"], [hostile("memory id")]], f1=0.5) for i in range(3)]
    (run / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged = judgment_row("conv-1:q0000", system=hostile("system"), category=1, conversation_id="conv-1",
                          protocol=hostile("protocol"), scores=[50.0], mean=50.0, std=0.0, run_count=1,
                          explanations=[hostile("explanation")])
    (run / "judgments.jsonl").write_text(json.dumps(judged) + "\n")
    (run / "manifest.json").write_text(json.dumps({"data": {"path": str(data)}}))
    return run


def test_hostile_strings_stay_data_in_the_page(hostile_run):
    page = write_viewer(hostile_run).read_text()
    block = page.split('<script id="data" type="application/json">')[1].split("</script>")[0]
    assert not any(s in block for s in ("<", ">", "&", "\u2028", "\u2029")), "raw markup characters in the data"
    assert json.loads(block) == json.loads(json.dumps(page_data(hostile_run)))
    assert page.count('<script id="data"') == 1 and page.count(block) == 1, "the data is placed once"
    assert f"<title>memeval · {html.escape(hostile_run.name)}</title>" in page, "the title is escaped, not substituted"


def test_hostile_strings_render_as_text_and_run_nothing_in_a_real_browser(hostile_run, tmp_path):
    _need_browser()
    from playwright.sync_api import sync_playwright

    page_path = write_viewer(hostile_run, tmp_path / "view.html")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.goto(page_path.as_uri())
        assert page.locator("#count").inner_text() == "3 of 3 rows", "the page's script did not run"
        assert page.locator("tr.row").count() == 3
        cells = page.locator("tr.row").first.locator("td")
        texts = [cells.nth(i).text_content() for i in range(6)]
        assert texts[0] == "conv-1:q0000" and texts[1] == hostile("system")
        assert texts[3:6] == [hostile("question 0"), hostile("gold 0"), hostile("prediction 0")]
        assert page.title() == f"memeval · {hostile_run.name}"
        page.locator("tr.row").first.click()
        detail = page.locator("tr.detail").text_content()
        for label in ("error 0", "explanation", "protocol", "evidence id", "turn text", "speaker", "memory id"):
            assert hostile(label) in detail, label
        assert page.locator("tr.detail .ev").count() >= 1, "the evidence turn is still marked"
        page.fill("#q", "<!--<script>")
        assert page.locator("tr.row").count() == 3, "search over the hostile text"
        page.select_option("#system", hostile("system"))
        assert page.locator("tr.row").count() == 3
        assert page.locator("img, svg, tr script, td script").count() == 0, "markup from the data became elements"
        assert page.evaluate("window.__pwned") is None, "a script from the data ran"
        browser.close()
    assert errors == []


def test_a_run_of_another_task_is_refused_by_name(tmp_path, cli):
    """A graph80 study has answers.jsonl too; the viewer names the manifest's command instead of a missing field."""
    cli("graph80", "generate", "--out", tmp_path / "g", check=True)
    cli("graph80", "run", "--data", tmp_path / "g", "--systems", "chunks", "--repeats", "1", "--out",
        tmp_path / "run", "--no-progress", check=True)
    done = cli("view", tmp_path / "run")
    assert done.returncode == 2 and not (tmp_path / "run" / "view.html").exists()
    assert done.stderr.strip() == (f"memeval: error: {tmp_path / 'run' / 'manifest.json'}: command: 'graph80 run': "
                                   "the viewer reads `locomo run` directories only (its report.md and answers.jsonl "
                                   "hold this run's results)")
