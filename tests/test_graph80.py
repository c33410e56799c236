import json
from collections import Counter

import pytest

from memeval.benchmarks.graph80.data import QUESTION_TYPES, generate_graph80
from memeval.benchmarks.graph80.task import (
    StudyConfig,
    containment,
    parse_three_dim,
    run_study,
    sign_stability,
    three_dim_request,
)
from memeval.cli import main
from memeval.llm import LLMClient, ResponseCache
from memeval.memory.entities import base_form
from tests.scripted import ScriptedBackend


def test_generator_is_deterministic_and_seeded():
    a, b = generate_graph80(3), generate_graph80(3)
    assert [d.as_row() for d in a[0]] == [d.as_row() for d in b[0]]
    assert [q.as_row() for q in a[1]] == [q.as_row() for q in b[1]] and a[2] == b[2]
    assert [q.answer for q in generate_graph80(4)[1]] != [q.answer for q in a[1]]


@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_80_questions_20_per_type_with_grounded_gold(seed):
    documents, questions, triples = generate_graph80(seed)
    assert len(questions) == 80 and Counter(q.type for q in questions) == {t: 20 for t in QUESTION_TYPES}
    assert len({q.question for q in questions}) == 80
    paragraphs = {f"{d.id}:p{i}": f"{d.title}: {t}" for d in documents for i, t in enumerate(d.paragraphs)}
    for t in triples:  # every gold triple is stated by the paragraph it cites (read with its document title)
        text = base_form(paragraphs[t.source_id])
        assert base_form(t.subject) in text or base_form(t.subject.removeprefix("Project ")) in text
        assert base_form(t.object) in text or base_form(t.object.removeprefix("Project ")) in text
    facts = {(base_form(t.subject), t.relation, base_form(t.object)) for t in triples}
    corpus = base_form(" ".join(paragraphs.values()))
    for q in questions:
        assert all((base_form(s), r, base_form(o)) in facts for s, r, o in q.gold_path), q.id
        assert base_form(q.question) not in corpus, "questions never enter the memory"
        assert q.gold_path[-1][2] == q.answer or q.type == "fact"


def test_relation_questions_have_exactly_one_shared_company():
    documents, questions, triples = generate_graph80(0)
    worked = {}
    for t in triples:
        if t.relation == "worked at":
            worked.setdefault(t.subject, set()).add(t.object)
    for q in (q for q in questions if q.type == "relation"):
        a, b, company = q.gold_entities
        assert worked[a] & worked[b] == {company}


def test_three_dim_judge_parse_and_blindness():
    assert parse_three_dim('{"entity": 0.5, "relation": 0.5, "no_wrong": 0}') == pytest.approx(2 / 3)
    assert parse_three_dim('{"entity": 1, "relation": 0.5, "no_wrong": 0}') is None
    assert parse_three_dim("looks fine") is None
    q = {"question": "Who?", "answer": "Ana", "gold_entities": ["Ana"]}
    prompt = three_dim_request(q, "Ana did", 0).messages[0][1]
    assert "Ana did" in prompt and "memory_graph" not in prompt and "chunks" not in prompt
    assert containment("It was Project Falcon.", "project falcon") == 1.0


def test_run_offline_and_with_a_judge(tmp_path):
    assert main(["graph80", "generate", "--seed", "0", "--out", str(tmp_path / "d")]) == 0
    assert main(["graph80", "run", "--data", str(tmp_path / "d"), "--systems",
                 "memory_graph:hops=0;memory_graph:hops=1;chunks;no_memory", "--repeats", "2", "--out",
                 str(tmp_path / "r")]) == 0
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    rows = {(r["system"], r["type"]): r for r in summary["rows"]}
    assert set(rows[("chunks", "all")]) >= {"system", "type", "path_recall", "entity_recall", "context_tokens",
                                            "score_mean", "score_std", "n"}
    assert rows[("chunks", "all")]["n"] == 80 and rows[("chunks", "fact")]["n"] == 20
    assert rows[("no_memory", "all")]["path_recall"] == 0.0
    assert rows[("memory_graph:hops=1", "all")]["path_recall"] >= rows[("memory_graph:hops=0", "all")][
        "path_recall"]
    assert summary["score_kind"] == "gold-answer containment (no judge)"
    per_type = [s for s in summary["stability"] if s["type"] == "fact"]
    assert per_type and not any(s["meaningful"] for s in per_type)
    assert all(s["meaningful"] for s in summary["stability"] if s["type"] == "all")

    client = LLMClient(ScriptedBackend(lambda r: '{"entity": 0.5, "relation": 0.5, "no_wrong": 0.5}'),
                       ResponseCache(tmp_path / "cache"))
    judged = run_study(StudyConfig(str(tmp_path / "d"), str(tmp_path / "j"), ["chunks"], judge="three_dim",
                                   repeats=1), client)
    assert judged["score_kind"] == "three_dim judge"
    assert {r["score_mean"] for r in judged["rows"]} == {1.0} and judged["failed_rows"] == 0

    from memeval.llm import ReplayBackend

    nothing = LLMClient(ReplayBackend(), ResponseCache(tmp_path / "empty-cache"))
    failed = run_study(StudyConfig(str(tmp_path / "d"), str(tmp_path / "f"), ["chunks"], answerer="claude",
                                   repeats=1), nothing)
    assert failed["failed_rows"] == 80, "every answer failed (no key, no cache)"
    assert {r["score_mean"] for r in failed["rows"]} == {None}, "failed answers must not be scored 0"


def test_sign_stability_flags_flips():
    rows = []
    for repeat, (a, b) in enumerate([(1.0, 0.0), (0.0, 1.0)]):
        rows += [{"system": "x", "type": "fact", "repeat": repeat, "score": a},
                 {"system": "y", "type": "fact", "repeat": repeat, "score": b}]
    (fact,) = [s for s in sign_stability(rows) if s["type"] == "fact"]
    assert not fact["sign_holds"] and not fact["meaningful"]


def test_claude_reader_without_a_key_as_typed(tmp_path):
    """As a new user types it with no key: the study finishes with every score shown as missing (never 0, never a
    traceback), exits 4, and `--llm anthropic` without a key is one line and exit 2 before anything is written."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["MEMEVAL_CACHE_DIR"] = str(tmp_path / "empty-cache")
    corpus = tmp_path / "g80"
    assert main(["graph80", "generate", "--out", str(corpus)]) == 0
    cli = [sys.executable, "-m", "memeval", "graph80", "run", "--data", str(corpus), "--reader", "claude",
           "--systems", "chunks", "--repeats", "2"]
    done = subprocess.run([*cli, "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.splitlines()[0].startswith("chunks                       score – ± –  path recall 0.")
    assert done.stderr.strip().splitlines()[-1].startswith("memeval: incomplete: 160 of 160 answers failed (CacheMiss)")
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| chunks | all | – | – |" in report and "\n\n\n" not in report
    keyed = subprocess.run([*cli, "--llm", "anthropic", "--out", str(tmp_path / "keyed")], capture_output=True,
                           text=True, env=env, timeout=300)
    assert keyed.returncode == 2 and keyed.stderr.strip().splitlines() == [
        "memeval: error: ANTHROPIC_API_KEY is not set: no Anthropic backend (use the cache via replay, or set the "
        "key and optionally ANTHROPIC_BASE_URL)"]
    assert not (tmp_path / "keyed").exists()


def test_llm_extraction_and_judge_replies_that_do_not_parse_say_why(tmp_path):
    """An extraction reply without a JSON array fails its system's rows (asked once for every repeat, not once per
    repeat) and a judge reply without the three scores leaves its row unscored; each row names the reason."""
    assert main(["graph80", "generate", "--seed", "0", "--out", str(tmp_path / "d")]) == 0
    backend = ScriptedBackend(lambda r: "Here are the facts." if r.role == "extract" else "A fine answer.")
    graph = "memory_graph:extract_max_tokens=50"
    summary = run_study(StudyConfig(str(tmp_path / "d"), str(tmp_path / "r"), [graph, "chunks"], extractor="llm",
                                    judge="three_dim", repeats=2), LLMClient(backend, ResponseCache(tmp_path / "c")))
    extractions = [r for r in backend.sent if r.role == "extract"]
    assert len(extractions) == 40 and {r.max_tokens for r in extractions} == {50}, "one call per document"
    assert summary["extraction"][graph]["error"].startswith("UnusableExtraction: no JSON array")
    rows = [json.loads(line) for line in (tmp_path / "r" / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 320 and all(r["score"] is None for r in rows)
    assert {r["error"].split(":", 2)[1].strip() for r in rows if r["system"] == graph} == {"UnusableExtraction"}
    assert all(r["error"].startswith("judge: no JSON with entity") for r in rows if r["system"] == "chunks")
    assert summary["missing"]["answers"]["failed"] == 160 and "judgments" not in summary["missing"]
