"""`memeval data sample longmemeval`: a synthetic sample in LongMemEval's file format, so LongMemEval can be tried
offline; it says it is synthetic wherever it is shown (README, `data stats`, every run's report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from memeval.benchmarks.longmemeval.data import QUESTION_TYPES, load_longmemeval

MEMEVAL = Path(sys.executable).with_name("memeval")
SAID = "synthetic sample — not LongMemEval"
# The benchmark's fields, read in its README's "Dataset Format" (github.com/xiaowu0162/LongMemEval), written here
# independently of memeval's own loader
FIELDS = {"question_id", "question_type", "question", "answer", "question_date", "haystack_session_ids",
          "haystack_dates", "haystack_sessions", "answer_session_ids"}


def memeval(*argv, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}  # offline
    env.update(MEMEVAL_PROGRESS="0", MEMEVAL_CACHE_DIR=str(cwd / "cache"))
    return subprocess.run([str(MEMEVAL), *map(str, argv)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lme-sample")
    done = memeval("data", "sample", "longmemeval", "--out", "sample", cwd=root)
    assert done.returncode == 0, done.stderr
    assert SAID in done.stdout
    return root / "sample" / "longmemeval_sample.json"


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%Y/%m/%d (%a) %H:%M")


def test_the_sample_is_in_the_benchmarks_format(sample):
    rows = json.loads(sample.read_text())
    assert SAID in (sample.parent / "README.md").read_text()
    assert {r["question_type"] for r in rows} == set(QUESTION_TYPES)
    assert [r["question_id"] for r in rows if "_abs" in r["question_id"]], "an abstention question"
    for r in rows:
        assert set(r) == FIELDS | {"memeval_synthetic"} and r["memeval_synthetic"] == SAID
        assert len(r["haystack_session_ids"]) == len(r["haystack_dates"]) == len(r["haystack_sessions"])
        dates = [_when(d) for d in r["haystack_dates"]]
        assert dates == sorted(dates) and max(dates) < _when(r["question_date"]), "S: sessions in time order"
        flagged = {sid for sid, turns in zip(r["haystack_session_ids"], r["haystack_sessions"], strict=True)
                   if any(t.get("has_answer") for t in turns)}
        assert flagged == set(r["answer_session_ids"]) and all(s.startswith("answer_") for s in flagged)
        assert ("_abs" in r["question_id"]) == (not flagged)
        assert all(set(t) <= {"role", "content", "has_answer"} and t["role"] in ("user", "assistant")
                   for turns in r["haystack_sessions"] for t in turns)
    instances, report = load_longmemeval(sample)
    assert len(instances) == len(rows) and not report.quirks


def test_a_run_on_it_works_offline_and_says_it_is_synthetic(sample):
    root = sample.parent.parent
    stats = memeval("data", "stats", "--dataset", "longmemeval", sample, cwd=root)
    assert stats.returncode == 0 and f"({SAID})" in stats.stdout.splitlines()[0]
    done = memeval("longmemeval", "run", "--data", sample, "--systems", "rag_turns,full_context", "--out",
                   root / "runs" / "lme", cwd=root)
    assert done.returncode == 0, done.stderr
    report = (root / "runs" / "lme" / "report.md").read_text()
    assert report.splitlines()[2].startswith(f"> Data: {SAID}")
    answers = [json.loads(line) for line in (root / "runs" / "lme" / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 2 * len(json.loads(sample.read_text())) and not [a for a in answers if a["error"]]
    assert "| rag_turns | 100.00 |" in report, "the evidence sessions are found (session recall_any@5)"


def test_stats_of_the_sample_without_dataset_names_the_flag(tmp_path, cli):
    """`data stats FILE` reads LoCoMo unless told: on the sample it said only `sample_id: missing`."""
    written = cli("data", "sample", "longmemeval", "--out", tmp_path / "s", check=True)
    assert "memeval data stats --dataset longmemeval" in written.stdout
    result = cli("data", "stats", tmp_path / "s" / "longmemeval_sample.json")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "sample_id: missing" in result.stderr and "--dataset longmemeval" in result.stderr
