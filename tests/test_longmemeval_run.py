"""`memeval longmemeval run` on a small file in the published format: evidence recall at session and turn level
offline (accuracy not measured), and LongMemEval's judge through the real SDK against the fake server."""

import json

import pytest

from memeval.artifacts import stored
from memeval.benchmarks.longmemeval.task import LMEAnswerRow, LMEJudgmentRow, haystack_conversation
from memeval.records import read_records
from tests.test_longmemeval_data import instance


@pytest.fixture()
def data(tmp_path):
    rows = [instance("q1", "single-session-user"), instance("q2", "temporal-reasoning"),
            instance("q3_abs", "knowledge-update", evidence=False)]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(rows))
    return path


def test_a_haystack_becomes_a_conversation_with_mapped_turn_ids(data):
    from memeval.benchmarks.longmemeval.data import load_longmemeval

    instances, _ = load_longmemeval(data)
    conversation, session_of = haystack_conversation(instances[0])
    assert [t.dia_id for t in conversation.turns] == ["s1:0", "s1:1", "s2:0", "s2:1"]
    assert session_of["s2:1"] == "s2" and conversation.sessions[0].date_time == "2023/05/20 (Sat) 02:21"


def test_offline_run_measures_recall_and_leaves_accuracy_unmeasured(data, tmp_path, cli):
    result = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns,full_context,no_memory",
                 "--out", tmp_path / "run", "--no-progress", check=True)
    rows = {r.key: r for r in read_records(tmp_path / "run" / "answers.jsonl", LMEAnswerRow)}
    rag = rows[("rag_turns", "q1")]
    assert rag.turn_recall[0] == 1.0 and rag.session_recall[0] == 1.0, "the Denver turn ranks first"
    assert rag.sessions_given == 1.0 and "Denver" in rag.prediction
    assert rows[("full_context", "q1")].turn_recall is None and rows[("full_context", "q1")].sessions_given == 1.0
    assert rows[("no_memory", "q1")].sessions_given == 0.0 and rows[("rag_turns", "q3_abs")].turn_recall is None
    # the benchmark's numbers: none for an unranked system or an abstention question; "s1" has no "answer" in its
    # id, so (as in the benchmark) the has_answer turn earns no credit although memeval's evidence_recall finds it
    assert rows[("full_context", "q1")].retrieval is None and rows[("rag_turns", "q3_abs")].retrieval is None
    assert rag.retrieval["turn"]["recall_any@1"] == 0.0 and rag.retrieval["session"]["recall_all@5"] == 1.0
    assert "| rag_turns | not measured |" in result.stdout and "session evidence_recall@1" in result.stdout
    assert "recall_any@5 | recall_all@5 | ndcg_any@5" in result.stdout and "session recall@1" not in result.stdout
    again = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns,full_context,no_memory",
                "--out", tmp_path / "run", "--no-progress", check=True)
    assert len(read_records(tmp_path / "run" / "answers.jsonl", LMEAnswerRow)) == 9 and again.returncode == 0


def test_judged_run_through_the_sdk_and_then_from_the_cache(fake, data, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: "Yes." if "Denver" in json.dumps(body) else "No"
    cli("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--judge", "longmemeval", "--out",
        tmp_path / "run", "--no-progress", check=True)
    judged = {r.question_id: r for r in read_records(tmp_path / "run" / "judgments.jsonl", LMEJudgmentRow)}
    assert set(judged) == {"q1", "q2", "q3_abs"} and all(j.protocol == "longmemeval" for j in judged.values())
    bodies = fake.received
    assert all(b["temperature"] == 0.0 and b["max_tokens"] == 10 and b["model"] == "claude-sonnet-4-6"
               for b in bodies) and len(bodies) == 3
    assert "unanswerable" in json.dumps(bodies[-1]) or any("unanswerable" in json.dumps(b) for b in bodies)
    sent = len(fake.received)
    report = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--judge", "longmemeval", "--out",
                 tmp_path / "rerun", "--no-progress", check=True).stdout
    assert len(fake.received) == sent, "a rerun is answered from the cache"
    row = next(line for line in report.split("## Evidence")[0].splitlines() if line.startswith("| rag_turns |"))
    # the fake says yes to every prompt: q3_abs counts in its own type (knowledge-update) and in abstention, as in
    # the benchmark; task-averaged needs all six types, so it is not shown for three questions
    assert row.startswith("| rag_turns | 100.00 (1) | – | – | – | 100.00 (1) | 100.00 (1) | – | 100.00 | "
                          "100.00 (1) | 3 |"), row


def test_bad_arguments_write_nothing(data, tmp_path, cli):
    result = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns:chunk=3", "--out", tmp_path / "run")
    assert result.returncode == 2 and "unknown parameter chunk" in result.stderr and not (tmp_path / "run").exists()
    missing = cli("longmemeval", "run", "--data", tmp_path / "none.json", "--out", tmp_path / "run2")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_the_publication_picks_a_longmemeval_run_up_only_when_it_exists(data, tmp_path, cli):
    from memeval.benchmarks.longmemeval.publication import longmemeval_table
    from memeval.publication.readers import MissingResults

    root = tmp_path / "artifacts"
    with pytest.raises(MissingResults, match="08_longmemeval"):
        longmemeval_table(root)
    cli("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--out", stored("longmemeval_run", root),
        "--no-progress", check=True)
    table = longmemeval_table(root)
    assert "| rag_turns | not measured |" in table.markdown and "3 questions per system" in table.caption
