"""The per-sample viewer: the page's data, and the page itself in a real headless browser (Debian's chromium
driven by Playwright): it renders, a filter changes the rows, a row opens with its evidence marked."""

import json
import os
import shutil

import pytest

from memeval.qa.locomo_run import LocomoRunConfig, run_locomo
from memeval.viewer import page_data, write_viewer
from tests.rows import judgment_row

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


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
    if CHROMIUM is None:
        if os.environ.get("MEMEVAL_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (MEMEVAL_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("no chromium on this machine (CI installs it and sets MEMEVAL_REQUIRE_BROWSER)")
    from playwright.sync_api import sync_playwright

    page_path = write_viewer(run)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
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
