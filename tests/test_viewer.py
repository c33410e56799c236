"""The per-question viewer: the page's data, and the page itself in a real headless browser (Debian's chromium
driven by Playwright): the run header with its scores and intervals, every system's answer to one question side by
side, the adversarial gold, a filter over 20,000 answers redrawn within a measured bound, two runs in one page,
hostile strings shown as text with no script run, and `memeval view` as a user types it."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bench_viewer import synthetic_run
from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.viewer import page_data, read_embedded, write_viewer
from tests.rows import answer_row, judgment_row

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]
SYSTEMS = ["rag_turns", "full_context", "observations"]
# From one keystroke in the search box to the next painted frame, 20,000 answers: ~5–20 ms of script and one
# frame (16–50 ms headless on 2 busy cores, benchmarks/bench_viewer.py); redrawing every row took seconds.
KEYSTROKE_BOUND_MS = 500
ROWS = ".row:visible"  # the list's drawn rows (the rest of its pool of row elements is hidden)


def _need_browser() -> None:
    if CHROMIUM is None:
        if os.environ.get("MEMEVAL_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (MEMEVAL_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("no chromium on this machine (CI installs it and sets MEMEVAL_REQUIRE_BROWSER)")


class Browser:
    """One headless page per `open`; script errors and dialogs are collected, never ignored."""

    def __init__(self, playwright):
        self.browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        self.errors: list[str] = []

    def open(self, path: Path, width: int = 1400):
        page = self.browser.new_page(viewport={"width": width, "height": 1000})
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", lambda dialog: (self.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready]", state="attached", timeout=60_000)
        return page


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = Browser(p)
        yield b
        b.browser.close()
    assert b.errors == []


@pytest.fixture(scope="module")
def run(locomo_dir, tmp_path_factory):
    """Three systems on every question of two conversations (so intervals resample conversations), one answer
    judged twice with explanations."""
    out = tmp_path_factory.mktemp("viewer") / "run"
    run_locomo(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26,conv-30", questions="all",
                               systems=SYSTEMS, progress=False))
    judged = judgment_row("conv-26:q0000", system="rag_turns", category=2, conversation_id="conv-26",
                          scores=[70.0, 90.0], mean=80.0, std=14.1, run_count=2,
                          explanations=["right month, wrong day", "matches"])
    (out / "judgments.jsonl").write_text(json.dumps(judged) + "\n")
    return out


def _answers(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]


def test_page_data_stores_questions_turns_and_memory_lists_once(run, locomo_dir):
    data = page_data(run)
    rows, questions = data["rows"], data["questions"]
    answers = _answers(run)
    assert len(rows["q"]) == len(answers) and [s["name"] for s in data["systems"]] == SYSTEMS
    assert len(questions["id"]) == len({a["sample_id"] for a in answers}), "a question is stored once, not per system"
    full = [m for m, s in zip(rows["mem"], rows["s"], strict=True) if data["systems"][s]["name"] == "full_context"]
    assert len(set(full)) == 2, "full context's memory list is stored once per conversation"
    i = next(k for k in range(len(rows["q"])) if questions["id"][rows["q"][k]] == "conv-26:q0000"
             and data["systems"][rows["s"][k]]["name"] == "rag_turns")
    assert rows["j"][i] == [[0, 80.0, [70.0, 90.0], ["right month, wrong day", "matches"], None]]
    answer = next(a for a in answers if a["sample_id"] == "conv-26:q0000" and a["system"] == "rag_turns")
    turns = [data["turns"]["id"][t] for item in data["sets"][rows["mem"][i]] for t in data["items"][item]]
    assert turns == [i for item in answer["retrieved_ids"] for i in item], "the memories in rank order"
    assert rows["f1"][i] == round(100 * answer["f1"], 2), "F1 on the ×100 scale"
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.memory.render import turn_text

    conv26 = next(c for c in load_locomo(locomo_dir) if c.sample_id == "conv-26")
    d13 = conv26.turn_by_id()["D1:3"]
    t = next(k for k, (c, d) in enumerate(zip(data["turns"]["conv"], data["turns"]["id"], strict=True))
             if data["conversations"][c] == "conv-26" and d == "D1:3")
    assert data["turns"]["text"][t] == turn_text(d13), "turn text from the question's own conversation"
    assert "prompt" not in rows, "this run stored no prompts"
    assert rows["scores"][i] == answer["retrieval_scores"] and len(answer["retrieval_scores"]) == 10, \
        "each memory's retrieval score, in rank order"
    assert str(run.parent) not in json.dumps(data), "no absolute path of the run on the page"
    assert read_embedded(write_viewer(run).read_text()) == json.loads(json.dumps(data))


LOADED: list[Path] = []


def counted_loader(path):
    """LoCoMo's own loader, counting the data paths it was asked for."""
    from memeval.benchmarks.locomo.data import load_locomo

    LOADED.append(Path(path))
    return load_locomo(path)


@pytest.fixture
def declared_loader(monkeypatch):
    """Sets what LoCoMo's declaration names as its conversations' loader; the real declaration back afterwards."""
    import dataclasses

    import memeval.benchmarks.locomo as locomo
    from memeval.benchmarks import declaration

    def declare(target: str | None) -> None:
        monkeypatch.setattr(locomo, "BENCHMARK", dataclasses.replace(locomo.BENCHMARK, conversations=target))
        declaration.cache_clear()

    yield declare
    monkeypatch.undo()
    declaration.cache_clear()


def test_the_page_reads_a_runs_data_through_its_benchmarks_declaration(run, locomo_dir, declared_loader, tmp_path):
    """The viewer imports no benchmark: the turn texts come from the loader the declaration names, read once per
    data path; a benchmark that declares none gets a page without texts rather than an error."""
    texts = page_data(run)["turns"]["text"]
    again = shutil.copytree(run, tmp_path / "again")
    LOADED.clear()
    declared_loader(f"{__name__}:counted_loader")
    assert set(page_data([run, again])["turns"]["text"]) == set(texts) and all(texts)
    assert LOADED == [locomo_dir], "one read of the data both runs name"
    declared_loader(None)
    data = page_data(run)
    assert data["turns"]["text"] and not any(data["turns"]["text"])
    assert len(data["questions"]["id"]) == len({a["sample_id"] for a in _answers(run)})


def _report_f1(run: Path) -> dict[str, tuple[float, float, float]]:
    """System → (F1, low, high) ×100 from the run's own report.md (another code path: run_report)."""
    table = (run / "report.md").read_text().split("## F1 with bootstrap confidence intervals")[1]
    out = {}
    for line in table.splitlines():
        m = re.match(r"\| (\w+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \|", line)
        if m:
            out[m[1]] = tuple(float(x) for x in m.groups()[1:])
    return out


def test_the_header_shows_systems_commit_models_and_scores_with_intervals(run, browser):
    page = browser.open(write_viewer(run, run.parent / "header.html"))
    header = page.locator(".run")
    assert header.count() == 1
    text = header.inner_text()
    manifest = json.loads((run / "manifest.json").read_text())
    assert "commit " + manifest["git_sha"][:10] in text
    assert "systems rag_turns, full_context, observations" in text
    assert "reader extractive (no LLM" in text and "k = 10" in text
    assert "judge graded · leniency not measured\n" in text, \
        "the protocol of the judgments the run holds (its manifest names no judge), and its leniency"
    expected = _report_f1(run)
    assert set(expected) == set(SYSTEMS)
    cells = {r[0]: r for r in (row.locator("td").all_inner_texts() for row in header.locator("tbody tr").all())}
    for system, (f1, low, high) in expected.items():
        assert cells[system][1:3] == [f"{f1:.1f}", f"[{low:.1f}, {high:.1f}]"], (system, cells[system], f1)
    questions = sum(1 for a in _answers(run) if a["system"] == "rag_turns" and a["category"] in (1, 2, 3, 4))
    assert cells["rag_turns"][3] == f"{questions:,}"
    assert "categories 1–4" in page.locator("#convention").inner_text()


def test_one_question_shows_every_system_side_by_side(run, browser):
    page = browser.open(write_viewer(run, run.parent / "side.html"))
    page.fill("#q", "When did Caroline go to the LGBTQ support group?")
    assert page.locator("#count").inner_text() == "3 of {:,} answers".format(len(_answers(run)))
    page.locator(ROWS, has_text="observations").click()
    columns = page.locator("#detail .answer")
    assert columns.count() == 3
    assert columns.locator("h3.sys").all_inner_texts() == SYSTEMS
    mine = {a["system"]: a for a in _answers(run) if a["sample_id"] == "conv-26:q0000"}
    assert columns.locator(".pred").all_inner_texts() == [mine[s]["prediction"] for s in SYSTEMS]
    assert page.locator("#detail .answer.current h3.sys").inner_text() == "observations", "the clicked answer is marked"
    page.locator("#list").focus()
    page.keyboard.press("ArrowUp")
    assert page.locator("#detail .answer.current h3.sys").inner_text() == "full_context", "↑ moves to the row above"
    assert page.locator(".row.sel span:nth-child(2)").inner_text() == "full_context"
    rag = columns.nth(0)
    assert "right month, wrong day" in rag.locator(".judge").inner_text()
    assert rag.locator(".mems li").count() == 10 and rag.locator(".mems li.hasev .turn.ev").count() >= 1
    assert f"{mine['rag_turns']['retrieval_scores'][0]:.3f}" in rag.locator(".mems li").first.inner_text(), \
        "the top memory's retrieval score is shown"
    assert "The prompt sent is not stored" in page.locator("#detail .qhead").inner_text()
    full = columns.nth(1)
    assert full.locator("button", has_text="show all").count() == 1
    full.locator("button", has_text="show all").click()
    assert full.locator(".mems li").count() == len(mine["full_context"]["retrieved_ids"])


def test_adversarial_questions_show_the_answer_their_premise_invites(run, browser, locomo_dir):
    from memeval.benchmarks.locomo.data import load_locomo

    trap = {qa.sample_id: qa.adversarial_answer for c in load_locomo(locomo_dir) for qa in c.qa if qa.category == 5}
    page = browser.open(write_viewer(run, run.parent / "adversarial.html"))
    page.select_option("#category", "5")
    adversarial = sum(1 for a in _answers(run) if a["category"] == 5)
    assert page.locator("#count").inner_text() == f"{adversarial:,} of {len(_answers(run)):,} answers"
    row = page.locator(ROWS).first
    sample = row.locator("span").first.inner_text()
    assert trap[sample] and trap[sample] in row.locator("span").nth(4).get_attribute("title")
    row.click()
    box = page.locator("#detail .advbox")
    assert box.count() == 1 and trap[sample] in box.inner_text() and "not mentioned" in box.inner_text()


@pytest.fixture(scope="module")
def big(locomo_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("big") / "run"
    made = synthetic_run(out, locomo_dir, rows=20_000, judged=False)
    return out, made


def test_a_filter_over_20000_answers_redraws_within_the_bound_and_counts_right(big, browser, locomo_dir):
    from memeval.benchmarks.locomo.data import load_locomo

    run, made = big
    trap = {qa.sample_id: qa.adversarial_answer for c in load_locomo(locomo_dir) for qa in c.qa}
    page = browser.open(write_viewer(run))
    assert page.locator("#count").inner_text() == "20,000 of 20,000 answers"
    keystroke = """async ([id, value]) => {
        const box = document.getElementById(id), t0 = performance.now();
        box.value = value; box.dispatchEvent(new Event("input", {bubbles: true}));
        await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0; }"""
    system = made["systems"][1]
    page.select_option("#system", "1")
    word = "tattoo"
    times = [page.evaluate(keystroke, ["q", word[:n]]) for n in range(1, len(word) + 1)]
    assert max(times) < KEYSTROKE_BOUND_MS, times

    def gold(row) -> str:
        if row["category"] != 5:
            return row["gold"] or "–"
        invites = trap[row["sample_id"]]
        return ("adversarial" + (f" · premise invites: {invites}" if invites else "") +
                (f" · answer: {row['gold']}" if row["gold"] else ""))

    rows = [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]
    expected = sum(1 for r in rows if r["system"] == system and
                   word in f"{r['question']}\u0001{gold(r)}\u0001{r['prediction']}".lower())
    assert 0 < expected < 1986
    assert page.locator("#count").inner_text() == f"{expected:,} of 20,000 answers"
    shown = page.locator(ROWS)
    pool = page.locator(".row").count()
    assert pool < 100 and shown.count() == min(expected, pool), "only the rows in view are drawn, and only matches"
    assert all(t == system for t in shown.locator("span:nth-child(2)").all_inner_texts())


def test_two_runs_in_one_page(run, locomo_dir, browser, tmp_path, cli):
    other = tmp_path / "k5"
    run_locomo(LocomoRunConfig(out=str(other), data=str(locomo_dir), conversations="conv-26", questions="first:5",
                               systems=["rag_turns", "summaries"], k=5, progress=False))
    (run / "view.html").unlink(missing_ok=True)
    refused = cli("view", run, other)
    assert refused.returncode == 2 and "--output" in refused.stderr
    assert not (run / "view.html").exists() and not (other / "view.html").exists()
    page = browser.open(write_viewer([run, other], tmp_path / "both.html"))
    assert page.locator(".run h2").all_inner_texts() == ["run", "k5"]
    assert page.title() == "memeval view · run vs k5"
    labels = [f"run · {s}" for s in SYSTEMS] + ["k5 · rag_turns", "k5 · summaries"]
    assert page.locator("#system option").all_inner_texts()[1:] == labels
    page.locator(ROWS).first.click()
    assert page.locator("#detail .answer h3.sys").all_inner_texts() == labels, "every run's systems side by side"
    assert "k = 5" in page.locator(".run").nth(1).inner_text()
    assert page.locator("#head span").all_inner_texts()[:3] == ["sample", "run", "system"]
    page.select_option("#system", "3")  # k5 · rag_turns: each list row names its run and, whole, its system
    rows = page.locator(ROWS)
    assert rows.count() == 5
    assert set(rows.locator("span:nth-child(2)").all_inner_texts()) == {"k5"}
    assert set(rows.locator("span:nth-child(3)").all_inner_texts()) == {"rag_turns"}


def test_two_judges_get_a_named_column_each(run, browser, tmp_path):
    both = tmp_path / "two-judges"
    shutil.copytree(run, both)
    binary = judgment_row("conv-26:q0000", system="rag_turns", category=2, conversation_id="conv-26",
                          protocol="binary", scores=[0.0], mean=0.0, std=0.0, run_count=1, explanations=["WRONG"])
    with open(both / "judgments.jsonl", "a") as handle:
        handle.write(json.dumps(binary) + "\n")
    page = browser.open(write_viewer(both, tmp_path / "judges.html"))
    heads = page.locator("#head span").all_inner_texts()
    assert [h for h in heads if h.startswith("J")] == ["J binary", "J graded"]
    row = page.locator(ROWS).first.locator("span").all_inner_texts()
    assert row[0] == "conv-26:q0000" and row[1] == "rag_turns"
    assert (row[heads.index("J binary")], row[heads.index("J graded")]) == ("0.0", "80.0")


# Strings that end, comment out or open a script, inject markup, break JavaScript string literals in old engines
# (U+2028/U+2029), look like entities, or are the page template's own placeholders; two try to set window.__pwned.
HOSTILE = ["</script><script>window.__pwned=1</script>", "<!--<script>", '<img src=x onerror="window.__pwned=2">',
           "]]>", "\u2028|\u2029", "&lt;b&gt; &amp;", "</SCRIPT >", "<svg/onload=window.__pwned=3>", "__DATA__",
           "__TITLE__", "'\"`${x}", "<script>window.__pwned=5</script>"]


def hostile(label: str) -> str:
    return f"{label}: " + " ".join(HOSTILE)


@pytest.fixture()
def hostile_run(tmp_path):
    """A run whose every string field is hostile, with LoCoMo data (turn texts, speakers, the adversarial answer)
    of the same kind; the directory name (the page title) too."""
    data = tmp_path / "data" / "locomo10.json"
    data.parent.mkdir()
    turns = [{"speaker": hostile("speaker"), "dia_id": "D1:1", "text": hostile("turn text")},
             {"speaker": "Bob", "dia_id": "D1:2", "text": "plain"}]
    qa = [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": c} for c in (1, 2)]
    qa.append({"question": "q", "adversarial_answer": hostile("trap"), "evidence": ["D1:1"], "category": 5})
    data.write_text(json.dumps([{"sample_id": "conv-1", "conversation": {
        "speaker_a": hostile("speaker"), "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns}, "qa": qa}]))
    run = tmp_path / "run <img src=x onerror=window.__pwned=4> __DATA__"
    run.mkdir()
    rows = [answer_row(f"conv-1:q000{i}", conversation_id="conv-1", category=(1, 2, 5)[i],
                       question=hostile(f"question {i}"), gold=hostile(f"gold {i}") if i < 2 else None,
                       prediction=hostile(f"prediction {i}"), system=hostile("system"), error=hostile(f"error {i}"),
                       evidence_ids=["D1:1", hostile("evidence id")], retrieved_ids=[["D1:1"], [hostile("memory id")]],
                       f1=0.5) for i in range(3)]
    (run / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged = judgment_row("conv-1:q0000", system=hostile("system"), category=1, conversation_id="conv-1",
                          protocol=hostile("protocol"), scores=[50.0], mean=50.0, std=0.0, run_count=1,
                          explanations=[hostile("explanation")])
    (run / "judgments.jsonl").write_text(json.dumps(judged) + "\n")
    (run / "manifest.json").write_text(json.dumps({"data": {"path": str(data)}, "git_sha": hostile("sha"),
                                                   "command_line": hostile("command")}))
    return run


def test_hostile_strings_stay_data_in_the_page(hostile_run):
    import html

    page = write_viewer(hostile_run).read_text()
    block = page.split('<script id="data" type="application/gzip+base64">')[1].split("</script>")[0]
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", block), "the data block is base64 only"
    assert read_embedded(page) == json.loads(json.dumps(page_data(hostile_run)))
    assert page.count('<script id="data"') == 1 and page.count("<script") == 2, "no script but the page's own"
    assert f"<title>memeval view · {html.escape(hostile_run.name)}</title>" in page, "the title is escaped once"


def test_hostile_strings_render_as_text_and_run_nothing_in_a_real_browser(hostile_run, tmp_path, browser):
    page = browser.open(write_viewer(hostile_run, tmp_path / "view.html"))
    assert page.locator("#count").inner_text() == "3 of 3 answers", "the page's script did not run"
    cells = page.locator(ROWS).first.locator("span")
    texts = [cells.nth(i).text_content() for i in range(6)]
    assert texts[0] == "conv-1:q0000" and texts[1] == hostile("system")
    assert texts[3:6] == [hostile("question 0"), hostile("gold 0"), hostile("prediction 0")]
    assert page.title() == f"memeval view · {hostile_run.name}"
    header = page.locator(".run").text_content()
    assert hostile("system") in header and hostile("sha")[:10] in header
    detail = page.locator("#detail").text_content()
    for label in ("question 0", "error 0", "explanation", "protocol", "evidence id", "turn text", "speaker",
                  "memory id"):
        assert hostile(label) in detail, label
    assert page.locator("#detail .turn.ev").count() >= 1, "the evidence turn is still marked"
    page.locator(ROWS, has_text="conv-1:q0002").click()
    assert hostile("trap") in page.locator("#detail .advbox").text_content()
    page.fill("#q", "<!--<script>")
    assert page.locator(ROWS).count() == 3, "search over the hostile text"
    page.select_option("#system", "0")
    assert page.locator(ROWS).count() == 3
    assert page.locator("img, svg, #runs script, #detail script, #win script").count() == 0, \
        "markup from the data became elements"
    assert page.evaluate("window.__pwned") is None, "a script from the data ran"
    assert browser.errors == []


def test_memeval_view_as_typed(run, tmp_path):
    """The installed console script, as a user types it: one line naming the page, exit 0; two runs without
    --output: one line, exit 2, nothing written."""
    memeval = Path(sys.executable).with_name("memeval")
    assert memeval.is_file()
    page = run / "view.html"
    page.unlink(missing_ok=True)
    done = subprocess.run([str(memeval), "view", str(run)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"viewer: {page} (open it in a browser)\n" and done.stderr == ""
    assert read_embedded(page.read_text())["rows"]["q"]
    refused = subprocess.run([str(memeval), "view", str(run), str(run.parent)], capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == ("memeval: error: --output: (not given): 2 runs make one page: name it, e.g. "
                              "--output compare.html\n")


def test_a_run_of_another_task_is_refused_by_name(tmp_path, cli):
    """A graph80 study has answers.jsonl too; the viewer names the manifest's command instead of a missing field."""
    cli("graph80", "generate", "--out", tmp_path / "g", check=True)
    cli("graph80", "run", "--data", tmp_path / "g", "--systems", "chunks", "--repeats", "1", "--out",
        tmp_path / "run", "--no-progress", check=True)
    done = cli("view", tmp_path / "run")
    assert done.returncode == 2 and not (tmp_path / "run" / "view.html").exists()
    assert done.stderr.strip() == (f"memeval: error: {tmp_path / 'run' / 'manifest.json'}: command: 'graph80 run': "
                                   "the viewer reads `locomo run`, `locomo import` and `locomo-plus run` "
                                   "directories only (their "
                                   "answers.jsonl holds the answers)")
