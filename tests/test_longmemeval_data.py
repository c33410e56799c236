"""LongMemEval data: the loader and fetch on small files the tests write in the published format (the data itself
is not reachable here and never committed)."""

import hashlib
import json

import pytest

from memeval.benchmarks.longmemeval.data import QUESTION_TYPES, load_longmemeval, stats
from memeval.benchmarks.longmemeval.datasets import LONGMEMEVAL_SHA256, fetch_longmemeval, longmemeval_url


def instance(qid, qtype, answer="Denver", evidence=True, **extra):
    """One instance as the release writes it: parallel ids, dates and sessions; evidence turns flagged."""
    return {
        "question_id": qid, "question_type": qtype, "question": "Where did I move last spring?", "answer": answer,
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["s1", "s2"], "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 09:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "I just moved to Denver!", "has_answer": evidence},
             {"role": "assistant", "content": "Congratulations on the move."}],
            [{"role": "user", "content": "Any hiking tips?"}, {"role": "assistant", "content": "Try the foothills."}],
        ],
        "answer_session_ids": ["s1"] if evidence else [],
        **extra,
    }


def test_loader_reads_types_abstention_evidence_and_keeps_unknown_fields(tmp_path):
    rows = [instance("q1", "single-session-user"), instance("q2_abs", "knowledge-update", evidence=False),
            instance("q3", "temporal-reasoning", answer=3, release_note="kept"),
            instance("q4_abs_2", "multi-session", evidence=False)]  # `_abs` inside the id, as the benchmark tests
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(rows))
    instances, report = load_longmemeval(path)
    q1, q2, q3, q4 = instances
    assert (q1.abstention, q2.abstention, q4.abstention) == (False, True, True)
    assert q1.evidence_turns == [("s1", 0)] and q1.sessions[0].date == "2023/05/20 (Sat) 02:21"
    assert q1.sessions[0].evidence and not q1.sessions[1].evidence
    assert q3.answer == "3" and q3.metadata == {"release_note": "kept"}
    # q1 and q3 flag a user turn in "s1", an id without "answer": the benchmark's retrieval credit goes by the id
    assert report.quirks == {"non-string answers (stringified)": 1,
                             'has_answer user turns in sessions without "answer" in the id (no retrieval credit)': 2}
    counts = stats(instances)
    assert counts["by_type"]["knowledge-update"] == 1 and counts["abstention"] == 2 and counts["turns"] == 16
    assert set(counts["by_type"]) == set(QUESTION_TYPES)


@pytest.mark.parametrize("change, field", [
    ({"question_type": "trivia"}, "question_type"),
    ({"haystack_session_ids": ["s1"]}, "haystack_session_ids"),
    ({"question": None}, "question"),
])
def test_malformed_instances_name_file_instance_and_field(change, field, tmp_path, cli):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([{**instance("q1", "multi-session"), **change}]))
    result = cli("data", "stats", path, "--dataset", "longmemeval")
    assert result.returncode == 2 and f"lme.json[0] (q1): {field}" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_bad_turn_role_names_the_turn(tmp_path):
    row = instance("q1", "multi-session")
    row["haystack_sessions"][1][0]["role"] = "system"
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([row]))
    with pytest.raises(Exception, match=r"haystack_sessions\[1\]\[0\]\.role"):
        load_longmemeval(path)


def test_fetch_checks_the_pinned_hash_and_writes_nothing_on_a_mismatch(tmp_path, cli):
    assert longmemeval_url("s").endswith("/resolve/98d7416c24c778c2fee6e6f3006e7a073259d48f/"
                                         "longmemeval_s_cleaned.json")
    assert LONGMEMEVAL_SHA256["longmemeval_s_cleaned.json"].startswith("d6f21ea9")
    source = tmp_path / "copy.json"
    source.write_text(json.dumps([instance("q1", "multi-session")]))
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    bad = cli("data", "fetch", "longmemeval", "--variant", "s", "--source", source, "--dest", tmp_path / "d")
    assert bad.returncode == 2 and "checksum mismatch" in bad.stderr and not (tmp_path / "d").exists()
    missing = cli("data", "fetch", "longmemeval", "--variant", "m", "--source", source, "--dest", tmp_path / "d")
    assert missing.returncode == 2 and "no pinned checksum" in missing.stderr
    target = fetch_longmemeval("oracle", tmp_path / "d", str(source), digest)
    assert target.name == "longmemeval_oracle.json" and target.read_bytes() == source.read_bytes()
    printed = cli("data", "stats", target, "--dataset", "longmemeval", "--json", check=True).stdout
    assert json.loads(printed)["instances"] == 1
