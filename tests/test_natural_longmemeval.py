"""Natural packages from LongMemEval on a small file in the published format: the strict acceptance rules and
their reasons, evidence from has_answer turns, a query-blind salient-sentence candidate, byte-identical rebuilds,
and a natural sweep over them with every OPT certified."""

import json

import pytest

from memeval.benchmarks.longmemeval.natural_source import salient_sentence
from tests.test_longmemeval_data import instance

LONG_TURN = ("We spent the whole weekend unpacking boxes. I finally moved to Denver after months of planning. "
             "The weather was fine.")


def _with_turn(qid, qtype, content, answer="Denver", evidence=True):
    row = instance(qid, qtype, answer=answer, evidence=evidence)
    row["haystack_sessions"][0][0]["content"] = content
    return row


@pytest.fixture()
def data(tmp_path):
    rows = [
        _with_turn("q1", "single-session-user", LONG_TURN),
        _with_turn("q2", "temporal-reasoning", LONG_TURN),
        _with_turn("q3", "knowledge-update", LONG_TURN, answer="Boston"),  # the evidence does not hold the answer
        _with_turn("q4", "multi-session", "I moved to Denver."),  # one sentence: no cheaper candidate exists
        _with_turn("q5_abs", "single-session-user", LONG_TURN, evidence=False),  # abstention: not eligible
        _with_turn("q6", "single-session-user", LONG_TURN, answer="the"),  # no content tokens in the answer
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(rows))
    return path


def test_build_accepts_and_rejects_with_reasons_and_rebuilds_identically(data, tmp_path, cli):
    out = tmp_path / "natural"
    result = cli("natural", "build", "--source", "longmemeval", "--data", data, "--out", out, "--no-progress",
                 check=True)
    summary = json.loads(result.stdout)
    assert summary["eligible"] == 5 and summary["accepted"] == 2
    assert summary["rejected_by_reason"] == {"answer_has_no_content_tokens": 1,
                                             "evidence_turns_hold_under_half_of_answer": 1,
                                             "no_non_raw_candidate_covers_anything": 1}
    assert summary["accepted_by_type"] == {"single-session-user": 1, "temporal-reasoning": 1}
    package = json.loads((out / "longmemeval-natural-q2.json").read_text())
    kinds = {c["kind"] for c in package["candidates"]}
    assert kinds == {"raw", "sentence", "dated_sentence"}
    assert {u["id"] for u in package["units"]} == {"answer:s1:0", "time:s1:0"}, "temporal: an answer and a time unit"
    sentence = next(c for c in package["candidates"] if c["kind"] == "sentence")
    assert sentence["text"] == "I finally moved to Denver after months of planning."
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    cli("natural", "build", "--source", "longmemeval", "--data", data, "--out", out, "--no-progress", check=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first, "byte-identical for the same input"
    sweep = cli("memaudit", "sweep", "natural", "--packages", out, "--budgets", "5,20", "--out", tmp_path / "sweep",
                "--no-progress", check=True)
    assert "OPT certified 4/4" in sweep.stdout


def test_the_salient_sentence_is_query_blind_and_needs_two_sentences():
    idf = {"denver": 3.0, "move": 1.0, "weather": 0.5}
    assert salient_sentence("I moved. Denver is great. Weather!", idf) == "Denver is great."
    assert salient_sentence("I moved to Denver.", idf) is None


def test_longmemeval_build_needs_its_file_and_refuses_the_graph(tmp_path, cli):
    missing = cli("natural", "build", "--source", "longmemeval", "--out", tmp_path / "x")
    assert missing.returncode == 2 and "--data" in missing.stderr and not (tmp_path / "x").exists()
