"""The one engine: the worked example of docs/layout.md (a whole benchmark with a judge, in under 60 lines) runs
as written through the real SDK against a local server, resumes, and refuses another data file; the graph study
is a task too, so it resumes after a kill."""

import json
import re
from pathlib import Path

import pytest

from memeval.errors import InputError
from tests.fake_anthropic import first_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "layout.md"
ITEMS = [{"id": "t1", "question": "Where does Ana live?", "answer": "Lisbon",
          "context": "Ana lives in Lisbon. She likes tea."},
         {"id": "t2", "question": "What does Ana like?", "answer": "coffee",
          "context": "Ana lives in Lisbon. She likes tea."},
         {"id": "t3", "question": "Who owns the red bike?", "answer": "Kofi",
          "context": "The red bike belongs to Kofi. The blue one is Ana's."}]


def gold_in_answer(prompt: str) -> bool:
    gold = re.search(r"Gold answer: (.*)", prompt).group(1)
    return gold.lower() in re.search(r"\nAnswer: (.*)", prompt).group(1).lower()


def example() -> str:
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index("<!-- example:start -->"):text.index("<!-- example:end -->")]
    return re.search(r"```python\n(.*?)```", block, re.S).group(1)


def run_example(data: Path, out: Path):
    namespace = {"data": str(data), "out": str(out)}
    exec(compile(example(), str(DOC), "exec"), namespace)
    return namespace["outcome"]


def test_the_documented_benchmark_is_short(tmp_path):
    assert len(example().splitlines()) < 60


def test_the_documented_benchmark_runs_judges_and_resumes(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: "yes" if gold_in_answer(first_text(body)) else "no"
    data = tmp_path / "trivia.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    out = tmp_path / "run"

    outcome = run_example(data, out)
    assert outcome.complete and [a.id for a in outcome.answers] == ["t1", "t2", "t3"]
    assert {(j.id, j.correct) for j in outcome.judgments} == {("t1", True), ("t2", False), ("t3", True)}
    assert "| extractive | 3 | 2 |" in outcome.report
    assert len(fake.received) == 3 and all(b["model"] == "claude-sonnet-4-6" and b["max_tokens"] == 5
                                           for b in fake.received), "the judge role's model, sent as asked"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "trivia run" and manifest["complete"] is True
    assert manifest["identity"]["additive"]["judges"]["yes_no"]["model"] == "claude-sonnet-4-6"
    assert len((out / "answers.jsonl").read_text().splitlines()) == 3

    lines = (out / "judgments.jsonl").read_text().splitlines()
    (out / "judgments.jsonl").write_text(lines[0] + "\n")  # a run killed after its first judgment
    again = run_example(data, out)
    assert again.answer_counts.already_done == 3 and again.answer_counts.written == 0
    assert again.judge_counts[0].written == 2 and len(fake.received) == 3, "the other two came from the cache"
    assert {(j.id, j.correct) for j in again.judgments} == {(j.id, j.correct) for j in outcome.judgments}

    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(ITEMS[0]) + "\n")
    with pytest.raises(InputError, match="data"):
        run_example(other, out)
    assert len((out / "answers.jsonl").read_text().splitlines()) == 3, "a refused run writes nothing"


def test_graph80_resumes_after_a_kill_and_derives_the_same_rows(tmp_path, cli):
    cli("graph80", "generate", "--seed", "0", "--out", tmp_path / "d", check=True)
    args = ("graph80", "run", "--data", tmp_path / "d", "--systems", "chunks,no_memory", "--repeats", "2",
            "--out", tmp_path / "run", "--no-progress")
    cli(*args, check=True)
    rows = (tmp_path / "run" / "rows.jsonl").read_bytes()
    summary = (tmp_path / "run" / "summary.json").read_bytes()
    answers = tmp_path / "run" / "answers.jsonl"
    kept = answers.read_text().splitlines()[:100]
    answers.write_text("\n".join(kept) + "\n")  # killed after 100 of its 320 answers
    cli(*args, check=True)
    assert len(answers.read_text().splitlines()) == 320, "only the missing answers were made again"
    assert (tmp_path / "run" / "rows.jsonl").read_bytes() == rows
    assert (tmp_path / "run" / "summary.json").read_bytes() == summary
    from memeval import api

    stored = api.load_run(tmp_path / "run")
    assert stored.kind == "graph80 run" and {s: len(rows) for s, rows in stored.answers.items()} == {
        "chunks": 160, "no_memory": 160}


@pytest.mark.parametrize("words, config_class", [
    (("locomo", "run"), "memeval.benchmarks.locomo.task:LocomoRunConfig"),
    (("longmemeval", "run"), "memeval.benchmarks.longmemeval.task:LongMemEvalConfig"),
    (("graph80", "run"), "memeval.benchmarks.graph80.task:StudyConfig"),
    (("locomo-plus", "run"), "memeval.benchmarks.locomo_plus.task:LocomoPlusConfig")])
def test_a_configuration_declares_flags_its_command_accepts(words, config_class):
    """The rerun command a manifest records is built from the configuration's own declarations; each must be a
    flag of that command, so the two cannot drift apart."""
    import importlib

    from memeval.cli import build_parser
    from memeval.invocation import declared_flags
    from tests.test_front_doors import command_paths

    module, name = config_class.split(":")
    declared = declared_flags(getattr(importlib.import_module(module), name))
    parser = dict(command_paths(build_parser()))[words]
    accepted = {s for action in parser._actions for s in action.option_strings}
    assert declared and not set(declared) - accepted, set(declared) - accepted


def test_the_documented_benchmark_without_a_model_says_it_was_not_judged(tmp_path, monkeypatch):
    """No key and an empty cache: the answers are made, no judgment is invented, and the report says so."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "trivia.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    outcome = run_example(data, tmp_path / "run")
    assert not outcome.complete and outcome.judgments == [] and len(outcome.answers) == 3
    assert outcome.report.startswith("judge yes_no incomplete: 3 questions were not judged because no LLM")
    assert "| extractive | 3 | – (not judged) |" in outcome.report
    assert (tmp_path / "run" / "judgments.jsonl").read_text() == ""
