"""A run whose judge never gave a parseable reply has no J: every judged cell reads "–" (JSON: null), never 0.00,
and the report says how many replies could not be read — through the real SDK against the fake Anthropic API."""

import json
import re

import pytest

from memeval.records import load_judgments


@pytest.fixture
def unparsed_run(fake, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: "The answer matches the gold, so I would call it correct."
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:4",
               "--systems", "rag_turns", "--judge", "graded", "--judge-runs", "1", "--llm", "anthropic",
               "--no-progress", "--out", tmp_path / "run")
    assert done.returncode == 4 and "graded judgments unusable" in done.stderr, "incomplete, and said so"
    return tmp_path / "run"


def test_unparsed_judgments_show_a_dash_and_are_counted(unparsed_run, cli):
    assert load_judgments(unparsed_run / "judgments.jsonl") == [], "no reply parsed: no label recorded"
    report = (unparsed_run / "report.md").read_text()
    accounting = report.split("## Judge accounting")[1].split("\n## ")[0]
    [row] = [line for line in accounting.splitlines() if line.startswith("| rag_turns |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["4", "0"] and cells[4:6] == ["–", "–"], row  # questions, judged; J over judged, J strict
    assert "none of its 4 questions" in report and "not measured" in report
    assert "4 questions got no usable judgment (no JSON score in 0..100 in any reply)" in report
    assert not re.search(r"\| 0\.00 \|", accounting)
    table = cli("results", unparsed_run, check=True).stdout
    j_rows = [line for line in table.splitlines() if line.startswith("| rag_turns") and "| J (graded) " in line]
    assert len(j_rows) == 3 and all("– (no parseable judgment)" in r and "0.0" not in r for r in j_rows), j_rows
    assert "no parseable graded judgment for rag_turns (4 questions: no JSON score in 0..100 in any reply)" in table
    assert "No judge ran" not in table
    doc = json.loads(cli("results", unparsed_run, "--format", "json", check=True).stdout)
    j_cells = [c for c in _cells(doc) if str(c.get("metric", "")).startswith("J (graded")]
    assert j_cells and all(c.get("value") is None for c in j_cells), j_cells


def _cells(doc):
    """Every dict in `results --format json`'s document (its layout is the results module's)."""
    if isinstance(doc, dict):
        yield doc
        for v in doc.values():
            yield from _cells(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _cells(v)
