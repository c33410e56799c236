"""Answers from another harness: each format round-trips a native run to identical scores, matching reports what
it could not place (never guessing), bad files are one line, and imported answers are judged like native ones."""

import json

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.records import AnswerRow, JudgmentRow, read_records


@pytest.fixture(scope="module")
def native(locomo_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("native") / "run"
    run_locomo(LocomoRunConfig(out=str(out), data=str(locomo_dir), conversations="conv-26,conv-30", questions="first:8",
                               systems=["rag_turns"], progress=False))
    return read_records(out / "answers.jsonl", AnswerRow)


def _write(fmt: str, rows: list[AnswerRow], conversations, path):
    """A native run's answers written in another harness's format (from the run itself: nothing invented)."""
    if fmt == "memeval":
        path.write_text("".join(json.dumps(r.to_row()) + "\n" for r in rows))
    elif fmt == "mem0":
        index = {c.sample_id: i for i, c in enumerate(conversations)}
        doc = {}
        for r in rows:
            doc.setdefault(str(index[r.conversation_id]), []).append(
                {"question": r.question, "answer": r.gold, "response": r.prediction, "category": r.category,
                 "speaker_1_memory_time": r.latency_search_s / 2, "speaker_2_memory_time": r.latency_search_s / 2,
                 "response_time": r.latency_total_s - r.latency_search_s})
        path.write_text(json.dumps(doc))
    else:
        path.write_text("".join(json.dumps({"question": r.question, "prediction": r.prediction,
                                            "conversation_id": r.conversation_id, "latency_s": r.latency_total_s,
                                            "retrieved_ids": r.retrieved_ids}) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("fmt", ["memeval", "mem0", "jsonl"])
def test_a_native_run_exported_and_imported_back_scores_the_same(fmt, native, locomo_dir, tmp_path, cli):
    conversations = load_locomo(locomo_dir)
    source = _write(fmt, native, conversations, tmp_path / f"answers.{fmt}")
    result = cli("locomo", "import", source, "--format", fmt, "--system", "outside", "--data", locomo_dir,
                 "--out", tmp_path / "run", "--json", check=True)
    assert json.loads(result.stdout)["matched"] == len(native) == 16
    back = {r.sample_id: r for r in read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)}
    for r in native:
        mine = back[r.sample_id]
        assert (mine.f1, mine.prediction, mine.category, mine.system) == (r.f1, r.prediction, r.category, "outside")
        assert mine.answerer == f"imported ({fmt})"
        assert mine.latency_total_s == pytest.approx(r.latency_total_s, rel=1e-9)
        if fmt != "mem0":  # mem0's results file does not carry what was retrieved
            assert mine.evidence_recall == r.evidence_recall
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    import hashlib

    assert manifest["imported"]["outside"]["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert manifest["imported"]["outside"]["format"] == fmt
    report = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26,conv-30", "--questions", "first:8",
                 "--systems", "outside", "--out", tmp_path / "run", "--no-progress", check=True).stdout
    overall = next(line for line in report.splitlines() if line.startswith("| outside |"))
    native_report = (tmp_path / "run" / "report.md").read_text()
    assert overall in native_report and "answers imported from" in native_report


def test_matching_reports_what_it_cannot_place(native, locomo_dir, tmp_path, cli):
    rows = [{"question": r.question, "prediction": r.prediction, "conversation_id": r.conversation_id}
            for r in native[:4]]
    rows[0]["question"] = rows[0]["question"] + " Really?"  # altered text: unmatched, not fuzzily guessed
    rows[1]["question"] = "  " + rows[1]["question"].upper() + "  "  # case and spacing do not matter
    rows.append(dict(rows[2]))  # two rows for one question: both left out
    rows.append({"question": native[3].question, "prediction": "x", "sample_id": "conv-26:q9999"})
    source = tmp_path / "a.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = json.loads(cli("locomo", "import", source, "--format", "jsonl", "--system", "outside", "--data",
                            locomo_dir, "--out", tmp_path / "run", "--json", check=True).stdout)
    assert (report["rows"], report["matched"], report["unmatched"], report["duplicates"]) == (6, 2, 2, 2)
    assert any("Really?" in e for e in report["examples"]) and any("q9999" in e for e in report["examples"])
    kept = {r.sample_id for r in read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)}
    assert kept == {native[1].sample_id, native[3].sample_id}


@pytest.mark.parametrize("content, fmt, message", [
    ("", "jsonl", "empty file"),
    ("{not json}\n", "jsonl", "not valid JSON"),
    ('{"prediction": "x"}\n', "jsonl", "a.x:1: question: missing"),
    ('{"question": "q"}\n', "jsonl", "prediction: missing"),
    ('{"question": "q", "prediction": "p", "latency_s": "fast"}\n', "jsonl", "latency_s: expected seconds"),
    ('{"99": []}', "mem0", "expected a conversation index 0–9"),
    ('{"0": [{"question": "q", "answer": "a"}]}', "mem0", "response: missing"),
    ('{"question": "nothing like it", "prediction": "p"}\n', "jsonl", "no row matched a LoCoMo question"),
])
def test_bad_answer_files_are_one_line(content, fmt, message, locomo_dir, tmp_path, cli):
    source = tmp_path / "a.x"
    source.write_text(content)
    result = cli("locomo", "import", source, "--format", fmt, "--system", "outside", "--data", locomo_dir,
                 "--out", tmp_path / "run")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_builtin_names_and_second_imports_are_refused(native, locomo_dir, tmp_path, cli):
    source = _write("memeval", native, None, tmp_path / "a.jsonl")
    assert "built-in system" in cli("locomo", "import", source, "--format", "memeval", "--system", "rag_turns",
                                    "--data", locomo_dir, "--out", tmp_path / "run").stderr
    cli("locomo", "import", source, "--format", "memeval", "--system", "x", "--data", locomo_dir, "--out",
        tmp_path / "run", check=True)
    again = cli("locomo", "import", source, "--format", "memeval", "--system", "x", "--data", locomo_dir, "--out",
                tmp_path / "run")
    assert again.returncode == 2 and "already holds answers of 'x'" in again.stderr


def test_imported_answers_are_judged_like_native_ones(fake, native, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    source = _write("memeval", native, None, tmp_path / "a.jsonl")
    cli("locomo", "import", source, "--format", "memeval", "--system", "outside", "--data", locomo_dir, "--out",
        tmp_path / "run", check=True)
    fake.responder = lambda body: '{"reasoning": "ok", "label": "CORRECT"}'
    cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26,conv-30", "--questions", "first:8",
        "--systems", "outside", "--judge", "binary", "--out", tmp_path / "run", "--no-progress", check=True)
    judged = read_records(tmp_path / "run" / "judgments.jsonl", JudgmentRow)
    assert {j.system for j in judged} == {"outside"} and all(j.mean == 100.0 for j in judged)
    assert len(judged) == sum(1 for r in native if r.category != 5)
    answer_calls = [b for b in fake.received if "Answer:" in json.dumps(b)]
    assert answer_calls == [], "imported answers are not answered again"
