"""The answer key as a choice (issue 41, part F): F1, BLEU-1, J and evidence recall of a stored LoCoMo run under
the original, corrected and excluded keys, with the audit's AMBIGUOUS questions included or dropped; a corrected
key re-judges only the questions whose gold it changes; every table names its key and the ceiling.

The audit here is a tiny errors.json the test writes in the audit's format, with the test's own corrected answers
and reasons, on questions of the LoCoMo data read at test time (their text must match, as the loader checks); its
pinned hash is swapped for the test file's."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import pytest

from memeval.cli import main
from memeval.jsonl import read_rows
from memeval.scoring.f1 import bleu1, locomo_f1
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, first_text

RUN = ["locomo", "run", "--conversations", "conv-26", "--questions", "prototype", "--systems", "rag_turns",
       "--no-progress"]
WRONG_DATE = "conv-26:q0001"  # a temporal question: its gold is "corrected" to words the extractive answer holds
AMBIGUOUS = "conv-26:q0004"  # a multi-hop one the test's audit calls ambiguous
CITATION = "conv-26:q0010"  # a wrong citation: its answer stands, its evidence moves
NEW_GOLD = "lake sunrise last year"
AMBIGUOUS_GOLD = "Embracing Identity"


def _audit_id(sample_id: str) -> str:
    conversation, _, question = sample_id.partition(":q")
    assert conversation == "conv-26"
    return f"locomo_0_qa{int(question)}"


def write_audit(directory, conversations, monkeypatch, citation_evidence: list[str]) -> None:
    """errors.json in the audit's format (the test's words), its hash pinned for this test only."""
    from memeval.benchmarks.locomo.audit import sources

    qa = {q.sample_id: q for c in conversations for q in c.qa}

    def entry(sample_id, error_type, correct, evidence=None):
        q = qa[sample_id]
        return {"question_id": _audit_id(sample_id), "question": q.question, "golden_answer": str(q.answer),
                "category": q.category, "error_type": error_type, "cited_evidence": list(q.evidence_ids),
                "correct_evidence": evidence or list(q.evidence_ids),
                "reasoning": f"test reason for {sample_id}", "correct_answer": correct}

    errors = [entry(WRONG_DATE, "TEMPORAL_ERROR", NEW_GOLD), entry(AMBIGUOUS, "AMBIGUOUS", AMBIGUOUS_GOLD),
              entry(CITATION, "WRONG_CITATION", str(qa[CITATION].answer), citation_evidence)]
    data = json.dumps(errors).encode()
    (directory / "errors.json").write_bytes(data)
    monkeypatch.setitem(sources.AUDIT_FILES, "errors", dataclasses.replace(
        sources.AUDIT_FILES["errors"], sha256=hashlib.sha256(data).hexdigest()))
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(directory))


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "no-audit"))


@pytest.fixture()
def run_dir(tmp_path, locomo_dir, offline):
    out = tmp_path / "run"
    assert main([*RUN, "--data", str(locomo_dir), "--out", str(out)]) == 0
    return out


def _results(capsys, run, *flags) -> dict:
    capsys.readouterr()
    assert main(["results", str(run), "--format", "json", "--no-progress", *flags]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["answer_key"][0].startswith("Answer key: " + (flags[1] if "--key" in flags else "original"))
    return {(c["metric"], c.get("group")): c for c in doc["cells"]
            if c["system"] == "rag_turns" and c.get("group", "").startswith("overall")}


def _cell(cells, prefix):
    return next(c for (metric, _), c in cells.items() if metric.startswith(prefix))


def _by_id(run):
    return {r["sample_id"]: r for r in read_rows(run / "answers.jsonl")}


def test_each_key_mode_rescores_f1_and_bleu1_against_its_gold(run_dir, tmp_path, conversations, monkeypatch,
                                                               capsys):
    rows = _by_id(run_dir)
    original = _results(capsys, run_dir)
    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    assert rows[WRONG_DATE]["f1"] == 0.0 and locomo_f1(rows[WRONG_DATE]["prediction"], NEW_GOLD, 2) > 0

    same = _results(capsys, run_dir, "--key", "original")
    assert _cell(same, "F1")["value"] == pytest.approx(_cell(original, "F1")["value"])
    assert _cell(same, "F1")["n"] == 20 == _cell(original, "F1")["n"]

    def f1_by_hand(golds: dict, left_out=()) -> float:
        kept = [r for s, r in rows.items() if s not in left_out]
        return 100 * sum(locomo_f1(r["prediction"], golds.get(r["sample_id"], r["gold"]), r["category"])
                         for r in kept) / len(kept)

    corrected = _results(capsys, run_dir, "--key", "corrected")
    assert _cell(corrected, "F1")["n"] == 20
    assert _cell(corrected, "F1")["value"] == pytest.approx(f1_by_hand({WRONG_DATE: NEW_GOLD,
                                                                        AMBIGUOUS: AMBIGUOUS_GOLD}))
    assert _cell(corrected, "F1")["value"] > _cell(original, "F1")["value"]
    b1_original = _cell(original, "BLEU")["value"]
    b1_delta = sum(bleu1(rows[s]["prediction"], g) - bleu1(rows[s]["prediction"], rows[s]["gold"])
                   for s, g in ((WRONG_DATE, NEW_GOLD), (AMBIGUOUS, AMBIGUOUS_GOLD)))
    assert _cell(corrected, "BLEU")["value"] == pytest.approx(b1_original + 100 * b1_delta / 20)

    dropped = _results(capsys, run_dir, "--key", "corrected", "--ambiguous", "drop")
    assert _cell(dropped, "F1")["n"] == 19
    assert _cell(dropped, "F1")["value"] == pytest.approx(f1_by_hand({WRONG_DATE: NEW_GOLD}, {AMBIGUOUS}))

    excluded = _results(capsys, run_dir, "--key", "excluded")  # ambiguous kept with its original answer
    assert _cell(excluded, "F1")["n"] == 19
    assert _cell(excluded, "F1")["value"] == pytest.approx(f1_by_hand({}, {WRONG_DATE}))
    excluded_drop = _results(capsys, run_dir, "--key", "excluded", "--ambiguous", "drop")
    assert _cell(excluded_drop, "F1")["n"] == 18
    assert _cell(excluded_drop, "F1")["value"] == pytest.approx(f1_by_hand({}, {WRONG_DATE, AMBIGUOUS}))


def test_evidence_recall_on_the_corrected_citations(run_dir, tmp_path, conversations, monkeypatch, capsys):
    rows = _by_id(run_dir)
    cited = rows[CITATION]
    given = sorted({i for item in cited["retrieved_ids"] for i in item} - set(cited["evidence_ids"]))
    assert cited["evidence_recall"] == 0.0 and given
    write_audit(tmp_path, conversations, monkeypatch, [given[0]])
    recall = [r["evidence_recall"] for r in rows.values() if r["evidence_recall"] is not None]
    original = _results(capsys, run_dir, "--key", "original")
    assert _cell(original, "evidence")["value"] == pytest.approx(100 * sum(recall) / len(recall))
    corrected = _results(capsys, run_dir, "--key", "corrected")
    assert _cell(corrected, "evidence")["value"] == pytest.approx(100 * (sum(recall) + 1.0) / len(recall))


def test_report_names_the_key_and_the_ceiling_or_how_to_check_it(run_dir, tmp_path, locomo_dir, conversations,
                                                                  monkeypatch, capsys):
    from memeval.benchmarks.locomo.categories import QA_CATEGORIES

    report = (run_dir / "report.md").read_text()
    assert "Answer key: original key (LoCoMo's gold answers)." in report
    assert "not checked against the LoCoMo audit" in report and "memeval data fetch locomo-audit" in report
    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    capsys.readouterr()
    assert main([*RUN, "--data", str(locomo_dir), "--out", str(run_dir), "--key", "corrected"]) == 0
    report = (run_dir / "report.md").read_text()
    assert "Answer key: corrected key (1 wrong gold answers replaced by the audit's, 1 ambiguous corrected" in report
    assert "not checked against the LoCoMo audit" not in report
    counts = {c: sum(1 for conv in conversations for q in conv.qa if q.category == c) for c in QA_CATEGORIES}
    ceiling = {c: 100 * (n - (c in (1, 2))) / n for c, n in counts.items()}  # one wrong gold in 2, one in 1
    overall = 100 * (sum(counts.values()) - 2) / sum(counts.values())
    assert (f"temporal (2) {ceiling[2]:.2f}" in report and f"multi-hop (1) {ceiling[1]:.2f}" in report
            and f"overall (1–4) {overall:.2f}" in report)
    assert f"single-hop (4) {ceiling[4]:.2f}" in report and ceiling[4] == 100.0
    text = capsys.readouterr().out
    assert "Ceiling of a perfect system under the original key" in text
    md = main(["results", str(run_dir), "--key", "excluded", "--no-progress"])
    assert md == 0 and "Answer key: excluded key (1 questions with a wrong gold answer left out" in \
        capsys.readouterr().out


def test_corrected_key_without_the_audit_is_one_line(run_dir, locomo_dir, capsys):
    capsys.readouterr()
    assert main(["results", str(run_dir), "--key", "corrected", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memeval data fetch locomo-audit" in err[0] and "--key" in err[0]
    before = (run_dir / "report.md").read_bytes()
    assert main([*RUN, "--data", str(locomo_dir), "--out", str(run_dir), "--key", "excluded"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memeval data fetch locomo-audit" in err[0]
    assert (run_dir / "report.md").read_bytes() == before


@pytest.fixture()
def judge_server(monkeypatch, tmp_path):
    """Answers from the extractive reader; the binary judge says CORRECT only to the test's corrected gold."""
    def responder(body):
        gold = re.search(r"Gold answer: (.*)", first_text(body))
        return '{"label": "CORRECT"}' if gold and gold[1].strip() in (NEW_GOLD, AMBIGUOUS_GOLD) else \
            '{"label": "WRONG"}'

    with FakeAnthropic(responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "no-audit"))
        yield server


def test_corrected_key_rejudges_only_the_questions_whose_gold_it_changes(judge_server, tmp_path, locomo_dir,
                                                                         conversations, monkeypatch, capsys):
    out = tmp_path / "run"
    judged = [*RUN, "--data", str(locomo_dir), "--out", str(out), "--judge", "binary"]
    assert main(judged) == 0
    assert len(judge_server.received) == 20
    first = read_rows(out / "judgments.jsonl")
    assert len(first) == 20 and all("answer_key" not in j and j["mean"] == 0.0 for j in first)
    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    from memeval.benchmarks.locomo.task import LocomoRunConfig, estimate_run

    estimate = estimate_run(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26",
                                            questions="prototype", systems=["rag_turns"], judge="binary",
                                            key="corrected"))
    assert (estimate.stages["judge"].requests, estimate.stages["judge"].to_send) == (20, 2)
    assert len(judge_server.received) == 20, "a dry run sends nothing"
    result = main([*judged, "--key", "corrected", "--json"])
    assert result == 0
    new = judge_server.received[20:]
    assert len(new) == 2, "only the two questions whose gold changed are judged again"
    sent = sorted(re.search(r"Gold answer: (.*)", first_text(b))[1].strip() for b in new)
    assert sent == sorted([NEW_GOLD, AMBIGUOUS_GOLD])
    rows = read_rows(out / "judgments.jsonl")
    assert len(rows) == 22
    keyed = {j["sample_id"]: j for j in rows if j.get("answer_key") == "corrected"}
    assert set(keyed) == {WRONG_DATE, AMBIGUOUS} and all(j["mean"] == 100.0 for j in keyed.values())
    cells = _results(capsys, out, "--key", "corrected")
    assert _cell(cells, "J (binary")["value"] == pytest.approx(100 * 2 / 20)
    assert _cell(_results(capsys, out), "J (binary")["value"] == 0.0, "the original key keeps its judgments"
    assert _cell(_results(capsys, out, "--key", "excluded"), "J (binary")["n"] == 19
    assert main([*judged, "--key", "corrected"]) == 0
    assert len(judge_server.received) == 22, "a rerun under the same key sends nothing"
    from memeval.records import load_judgments

    assert len(load_judgments(out / "judgments.jsonl")) == 20, "readers that know no key see the original rows"


def test_viewer_flags_each_audited_question_and_scores_under_the_key(run_dir, tmp_path, conversations,
                                                                     monkeypatch):
    from memeval.viewer import page_data

    plain = page_data(run_dir)
    assert plain["questions"]["audit"] == [None] * 20 and any("not checked" in n for n in plain["notes"])
    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    data = page_data(run_dir)
    flags = dict(zip(data["questions"]["id"], data["questions"]["audit"], strict=True))
    assert flags[WRONG_DATE][:2] == ["TEMPORAL_ERROR", NEW_GOLD] and flags[AMBIGUOUS][0] == "AMBIGUOUS"
    assert flags[CITATION][0] == "WRONG_CITATION"
    assert all(flag[3] is None for flag in flags.values() if flag), "no reasoning unless asked for"
    assert sum(flag is not None for flag in flags.values()) == 3
    assert "test reason for" not in json.dumps(data)
    asked = page_data(run_dir, reasoning=True)
    reasons = {i: f[3] for i, f in zip(asked["questions"]["id"], asked["questions"]["audit"], strict=True) if f}
    assert reasons[WRONG_DATE] == f"test reason for {WRONG_DATE}"

    prediction = _by_id(run_dir)[WRONG_DATE]["prediction"]
    corrected = page_data(run_dir, key="corrected")
    q = corrected["questions"]["id"].index(WRONG_DATE)
    row = corrected["rows"]["q"].index(q)
    assert corrected["rows"]["f1"][row] == round(100 * locomo_f1(prediction, NEW_GOLD, 2), 2) > 0
    assert corrected["questions"]["gold"][q] == NEW_GOLD
    assert any(n.startswith("Answer key: corrected key") for n in corrected["notes"])
    excluded = page_data(run_dir, key="excluded", ambiguous="drop")
    assert len(excluded["rows"]["q"]) == 18 and WRONG_DATE not in excluded["questions"]["id"]


def test_a_page_with_the_audits_reasoning_is_never_written_where_git_commits(run_dir, tmp_path, conversations,
                                                                             monkeypatch):
    from memeval.data.paths import project_root
    from memeval.errors import InputError
    from memeval.viewer import write_viewer

    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    tracked = project_root() / "memeval" / "f41-view-test.html"
    with pytest.raises(InputError, match="CC BY-NC"):
        write_viewer(run_dir, tracked, reasoning=True)
    assert not tracked.exists()
    page = write_viewer(run_dir, tmp_path / "page.html", reasoning=True)
    assert page.is_file()


def test_the_flag_shows_in_a_real_browser(run_dir, tmp_path, conversations, monkeypatch):
    from tests.test_viewer import CHROMIUM, Browser, _need_browser

    _need_browser()
    from playwright.sync_api import sync_playwright

    from memeval.viewer import write_viewer

    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    page_path = write_viewer(run_dir, tmp_path / "page.html", key="corrected", reasoning=True)
    assert CHROMIUM
    with sync_playwright() as p:
        browser = Browser(p)
        page = browser.open(page_path)
        page.fill("#q", "lake sunrise")
        page.locator(".row:visible").first.click()
        flag = page.locator("#detail .auditflag")
        assert flag.count() == 1
        text = flag.inner_text()
        assert "TEMPORAL_ERROR" in text and NEW_GOLD in text and f"test reason for {WRONG_DATE}" in text
        browser.browser.close()
    assert browser.errors == []


def test_api_load_run_under_each_key(run_dir, tmp_path, conversations, monkeypatch):
    from memeval import api

    prediction = _by_id(run_dir)[WRONG_DATE]["prediction"]
    assert {r.sample_id: r.f1 for r in api.load_run(run_dir).answers["rag_turns"]}[WRONG_DATE] == 0.0
    write_audit(tmp_path, conversations, monkeypatch, ["D3:11"])
    corrected = {r.sample_id: r for r in api.load_run(run_dir, key="corrected").answers["rag_turns"]}
    assert corrected[WRONG_DATE].f1 == locomo_f1(prediction, NEW_GOLD, 2) > 0
    assert corrected[WRONG_DATE].gold == NEW_GOLD and len(corrected) == 20
    assert len(api.load_run(run_dir, key="excluded", ambiguous="drop").answers["rag_turns"]) == 18


def test_an_answer_without_retrieved_memories_keeps_its_recall_unmeasured_under_a_corrected_key(
        run_dir, tmp_path, conversations, monkeypatch):
    """An imported answer carries no memories: its evidence recall was never measured, and corrected citations
    do not make it 0 (which would pull an imported system's recall down by questions it was never scored on)."""
    from memeval.benchmarks.locomo.audit_key import answer_key
    from memeval.benchmarks.locomo.keyed import keyed_answers
    from memeval.records import load_answers

    write_audit(tmp_path, conversations, monkeypatch, ["D99:1"])
    key = answer_key("corrected", conversations=conversations)
    row = next(r for r in load_answers(run_dir / "answers.jsonl") if r.sample_id == CITATION)
    imported = row.replace(retrieved_ids=[], evidence_recall=None, recall_curve=None)
    moved = ["D99:1"]
    [kept] = keyed_answers([imported], key, evidence=lambda sample_id: moved)
    assert kept.evidence_recall is None
    [measured] = keyed_answers([row], key, evidence=lambda sample_id: moved)
    assert measured.evidence_recall == 0.0 and measured.evidence_ids == moved
