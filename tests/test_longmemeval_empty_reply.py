"""LongMemEval's judge reads an empty reply as "no": its evaluate_qa.py strips the reply and labels it `'yes' in
reply.lower()`, empty or not (xiaowu0162/LongMemEval, src/evaluation/evaluate_qa.py at the pinned commit d6dc8b5).
Under `--judge longmemeval` such a question is judged (label no, counted in the report and manifest), not left
unjudged; for every other protocol an empty reply stays no answer."""

import json

from memeval.benchmarks.longmemeval.judge import longmemeval_request
from memeval.llm.types import LLMResponse
from memeval.records import LMEJudgmentRow, read_records
from tests.fake_openai import user_text
from tests.test_longmemeval_data import instance


def test_an_empty_judge_reply_is_labelled_no_and_counted(fake_openai, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user"),
                                instance("q2", "multi-session", answer="Boulder")]))
    fake_openai.responder = lambda body: "" if "Boulder" in user_text(body) else "Yes."
    args = ("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--judge", "longmemeval",
            "--judge-model", "gpt-4o-2024-08-06", "--llm", "openai", "--no-progress", "--out", tmp_path / "run")
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    rows = {r.question_id: r for r in read_records(tmp_path / "run" / "judgments.jsonl", LMEJudgmentRow)}
    assert (rows["q1"].label, rows["q2"].label, rows["q2"].reply) == (True, False, "")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["judge_empty_replies_labelled_no"] == 1
    assert "1 of 2 longmemeval judge replies were empty and are labelled no" in (tmp_path / "run" / "report.md"
                                                                               ).read_text()
    asked = len(fake_openai.received)
    assert cli(*args).returncode == 0 and len(fake_openai.received) == asked, "judged: nothing asked again"


def test_only_the_longmemeval_request_reads_an_empty_reply():
    empty = LLMResponse(text="  ", model="m", stop_reason="end_turn")
    request = longmemeval_request("q", "multi-session", "Q?", "A", "R")
    assert request.empty_ok and empty.unusable_reason(request.truncation_ok, request.empty_ok) is None
    assert empty.unusable_reason() == "empty reply"
    refused = LLMResponse(text="", model="m", stop_reason="refusal")
    assert refused.unusable_reason(True, True) == "refusal"
