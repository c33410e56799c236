"""Golden-file tests of the markdown builders; regenerate with MEMEVAL_UPDATE_GOLDEN=1 after a deliberate change."""

import os
from pathlib import Path

import pytest

from memeval.benchmarks.locomo.tables import adversarial_table, f1_table, full_report, j_table, latency_table
from tests.rows import answer, judgment

GOLDEN = Path(__file__).parent / "golden"

SYSTEM_ROWS = {
    "rag_turns": [
        answer("conv-1:q0000", category=1, f1=0.5, question="Q1?", gold="a, b", prediction="a",
               latency_search_s=0.01, latency_total_s=0.02, context_tokens=100),
        answer("conv-1:q0001", category=2, f1=1.0, question="When?", gold="May 2023",
               prediction="May 2023", latency_search_s=0.03, latency_total_s=0.05, context_tokens=300),
        answer("conv-1:q0002", category=4, f1=0.25, question="What | pipe?", gold="x",
               prediction="x y z w", latency_search_s=0.02, latency_total_s=0.04, context_tokens=200),
        answer("conv-1:q0003", category=5, f1=1.0, question="Adv?", gold=None,
               prediction="not mentioned", latency_search_s=0.02, latency_total_s=0.03, context_tokens=150),
    ]
}
JUDGMENTS = {
    "rag_turns": [
        judgment("conv-1:q0000", category=1, mean=60.0, std=2.0),
        judgment("conv-1:q0001", category=2, mean=90.0, std=1.0),
        judgment("conv-1:q0002", category=4, mean=30.0, std=5.0),
    ]
}


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("MEMEVAL_UPDATE_GOLDEN") and (not path.exists() or path.read_text() != text):
        path.write_text(text)
        pytest.fail(f"golden {name} rewritten; rerun without MEMEVAL_UPDATE_GOLDEN to check it")
    assert path.read_text() == text


@pytest.mark.parametrize("mode", ["locomo", "mem0"])
def test_f1_table_golden(mode):
    text = f1_table(SYSTEM_ROWS, mode=mode)
    check_golden(f"f1_table_{mode}.md", text)
    assert "multi-hop (1)" in text and "single-hop (4)" in text


def test_mem0_baselines_keyed_by_category_id():
    text = f1_table(SYSTEM_ROWS, mode="mem0")
    mem0_row = next(line for line in text.splitlines() if line.startswith("| Mem0 (published)"))
    # id 1 = 38.72 (Mem0's "single-hop"), id 2 = 48.93 (temporal), id 3 = 28.64 ("multi-hop"), id 4 = 47.65
    assert mem0_row.split(" | ")[1:5] == ["38.72", "48.93", "28.64", "47.65"]


def test_j_latency_adversarial_golden():
    check_golden("j_table.md", j_table(JUDGMENTS))
    check_golden("latency_table.md", latency_table(SYSTEM_ROWS))
    check_golden("adversarial_table.md", adversarial_table(SYSTEM_ROWS))


def test_full_report_golden(monkeypatch):
    from memeval.scoring import f1

    monkeypatch.setattr(f1, "punkt_tables_present", lambda: False)  # the golden is the approximate-B1 report
    text = full_report(SYSTEM_ROWS, {"graded": JUDGMENTS})
    check_golden("full_report.md", text)
    assert "What \\| pipe?" in text  # cells are escaped


def test_full_report_shows_every_protocol_apart():
    binary = {"rag_turns": [row.replace(mean=100.0 if row.category == 1 else 0.0, std=0.0)
                            for row in JUDGMENTS["rag_turns"]]}
    text = full_report(SYSTEM_ROWS, {"graded": JUDGMENTS, "binary": binary})
    graded_part = text.split("(graded judge)")[1].split("## ")[0]
    binary_part = text.split("(binary judge)")[1].split("## ")[0]
    assert "| rag_turns | graded (ours) | 60.00 ± 2.00 | 90.00 ± 1.00 | – | 30.00 ± 5.00 | 60.00" in graded_part
    assert "| rag_turns | binary (ours) | 100.00 ± 0.00 | 0.00 ± 0.00 | – | 0.00 ± 0.00 | 33.33" in binary_part
    assert "`binary`: paraphrased prompts — not the published protocol" in binary_part
    assert "not the Mem0 protocol" in graded_part and "published protocol (" not in text


def test_published_j_rows_are_shown_when_no_judge_ran():
    text = full_report(SYSTEM_ROWS, {})
    assert "| rag_turns | – | not measured | not measured | not measured | not measured | not measured | 0 |" in text
    for published in ("Full-context", "Mem0g", "Mem0", "Zep", "RAG best (k=2, 256-token chunks)", "LangMem",
                      "OpenAI Memory", "A-Mem* (Mem0 re-run)"):
        assert f"| {published} (published) | gpt-4o-mini, binary (Mem0 paper) |" in text, published
    assert "`memeval locomo run --judge binary --judge-model gpt-4o-mini --llm openai` is the published" in text


def test_a_failed_answer_is_not_a_fast_answer():
    """A row whose call failed carries only its search time; counted as a total it would read as the fastest."""
    rows = [answer(f"conv-1:q000{i}", latency_search_s=0.0002, latency_total_s=1.0) for i in range(3)]
    rows += [answer(f"conv-1:q001{i}", latency_search_s=0.0002, latency_total_s=0.0002, prediction="", f1=None,
                    error="UnusableReply: cut at max_tokens") for i in range(5)]
    line = next(line for line in latency_table({"s": rows}).splitlines() if line.startswith("| s |"))
    assert line.split(" | ")[3:5] == ["1000.0", "1000.0"], line
