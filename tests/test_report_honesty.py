"""What a keyless run on a user's server says of itself, said true (issue 42): a judge that gave every question one
label is named as such beside its J; the graded judge's runs are those that ran; a dry run's stage tokens say whether
the server's tokenizer counted them; a refused system keeps its name's case; Mem0 refused up front is said refused;
the closing line says per system what did not fit. Against tests/fake_openai.py serving llama.cpp's routes with a
word tokenizer."""

from __future__ import annotations

import json

import pytest

from memeval.cli import main
from memeval.llm.fit import fit_advice
from memeval.records import load_answers
from memeval.reports.judge_spread import constant_judge_note
from tests.fake_openai import FakeOpenAI

MODEL = "tiny-instruct"
GOLD_OF_Q0 = "7 May 2023"  # conv-26:q0000's gold: this reader's answer scores F1 100 there, 0 or little elsewhere


def _responder(body: dict) -> str:
    text = "".join(str(m.get("content", "")) for m in body.get("messages", []))
    if body.get("response_format") and "CORRECT" in text:
        return json.dumps({"reasoning": "it matches", "label": "CORRECT"})
    if body.get("response_format"):
        return json.dumps({"explanation": "close", "score": 80})
    return GOLD_OF_Q0


@pytest.fixture()
def server(monkeypatch, tmp_path):
    with FakeOpenAI(responder=_responder, local=True) as fake:
        fake.n_ctx = 4096
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("MEMEVAL_PROGRESS", "0")
        yield fake


def _run(locomo_dir, out, *extra: str) -> int:
    return main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--llm", "local",
                 "--reader", "claude", "--answer-model", MODEL, "--judge-model", MODEL, "--out", str(out), *extra])


def _section(report: str, title: str) -> str:
    return report.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_constant_judge_note_counts_what_it_labelled():
    judged = [(100.0, 0.0)] * 14 + [(100.0, 40.0)] * 5 + [(100.0, 100.0)]
    assert constant_judge_note("binary", "smollm2-135m", judged) == (
        "smollm2-135m (binary) labelled all 20 judged answers CORRECT, including 14 with F1 0: this judge does not "
        "tell answers apart here; J is not a measurement of the system (measure a judge with `memeval judge "
        "calibrate`).")
    assert constant_judge_note("binary", None, [(0.0, 100.0)] * 3 + [(0.0, 0.0)] * 9).startswith(
        "The binary judge labelled all 12 judged answers WRONG, including 3 with F1 100: ")
    assert constant_judge_note("graded", "m", [(80.0, 0.0)] * 10 + [(80.0, 100.0)]).startswith(
        "m (graded) scored all 11 judged answers 80, including 10 with F1 0 and 1 with F1 100: ")
    assert constant_judge_note("binary", "m", [(100.0, 0.0)] * 9) is None, "under 10 judged: no note"
    assert constant_judge_note("binary", "m", [(100.0, 0.0)] * 19 + [(0.0, 0.0)]) is None, "one differs: no note"


def test_a_judge_that_labels_everything_alike_is_said_so_and_graded_runs_are_those_that_ran(server, locomo_dir,
                                                                                             tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(locomo_dir, out, "--questions", "prototype", "--systems", "rag_turns", "--judge", "binary") == 0
    assert _run(locomo_dir, out, "--questions", "prototype", "--systems", "rag_turns", "--judge", "graded",
                "--judge-runs", "1") == 0
    rows = load_answers(out / "answers.jsonl")
    zero = sum(1 for r in rows if r.f1 == 0)
    full = sum(1 for r in rows if r.f1 == 1)
    assert len(rows) == 20 and zero and full, "the reader's one answer gives some F1 0 and some F1 100"
    report = (out / "report.md").read_text()
    binary = _section(report, "J against published baselines (binary judge)")
    assert (f"- {MODEL} (binary) labelled all 20 judged answers CORRECT, including {zero} with F1 0: this judge "
            "does not tell answers apart here; J is not a measurement of the system (measure a judge with "
            "`memeval judge calibrate`).") in binary, binary
    graded = _section(report, "J against published baselines (graded judge)")
    assert f"{MODEL} (graded) scored all 20 judged answers 80, including {zero} with F1 0 and {full} with F1 100" \
        in graded, graded
    assert "1 run per question at temperature 0.5" in graded and "10 runs" not in report
    capsys.readouterr()
    assert main(["results", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert f"run: {MODEL} (binary) labelled all 20 judged answers CORRECT, including {zero} with F1 0" in said, said
    assert f"run: {MODEL} (graded) scored all 20 judged answers 80" in said


def test_refused_systems_keep_their_names_and_the_closing_line_says_what_did_not_fit(server, locomo_dir, tmp_path,
                                                                                    capsys):
    import importlib.util

    if importlib.util.find_spec("mem0") is None:  # not imported here: memeval turns Mem0's telemetry off first
        pytest.skip("mem0ai is not installed (pip install 'memeval[mem0]')")
    out = tmp_path / "run"
    code = _run(locomo_dir, out, "--questions", "first:2", "--systems", "rag_turns,full_context,mem0",
                "--extract-model", MODEL, "--embed-model", "tiny-embed")
    err = capsys.readouterr().err
    assert code == 4, err
    report = (out / "report.md").read_text()
    assert "\n> full_context refused before any call: its largest reader prompt" in report
    assert "\n> mem0 refused before any call: its largest extraction prompt" in report
    assert "Full_context" not in report and "Mem0 refused" not in report
    assert "> mem0: the mem0ai library " in report
    mem0_note = report.split("> mem0: the mem0ai library ", 1)[1].split("\n", 1)[0]
    assert "; refused before any call, as its prompts do not fit the server's context" in mem0_note, mem0_note
    assert "without a key or a local server" not in mem0_note
    closing = " ".join(err.strip().splitlines()[-1].split())
    assert "does not fit the server's 4,096-token context: full_context's reader prompts (2 answers, largest needs " \
        in closing, closing
    assert " and mem0's extraction prompts (2 answers left without a memory, largest needs " in closing, closing
    assert "4 answers do not fit" not in closing


def test_fit_advice_tells_extraction_from_reader_prompts():
    tail = "more than the 4,096-token context of the server at u (GET /props)"
    advice = fit_advice([("memory_graph", f"ingest failed: DoesNotFit: needs 9,000 tokens (x), {tail}"),
                         ("memory_graph", f"ingest failed: DoesNotFit: needs 9,100 tokens (x), {tail}"),
                         ("full_context", f"DoesNotFit: needs 24,611 tokens (x), {tail}"),
                         ("rag_turns", None)])
    assert advice.startswith("what does not fit the server's 4,096-token context: memory_graph's extraction prompts "
                             "(2 answers left without a memory, largest needs 9,100 tokens) and full_context's reader "
                             "prompts (1 answer, largest needs 24,611 tokens); a rerun fails the same way: "), advice


def _dry(locomo_dir, tmp_path, capsys) -> dict:
    capsys.readouterr()
    assert _run(locomo_dir, tmp_path / "dry", "--questions", "first:3", "--systems", "rag_turns", "--judge", "binary",
                "--dry-run", "--json") == 0
    return json.loads(capsys.readouterr().out)


def test_a_dry_run_counts_stage_tokens_with_the_servers_tokenizer(server, locomo_dir, tmp_path, capsys):
    estimate = _dry(locomo_dir, tmp_path, capsys)
    answers = estimate["answers"]
    assert answers["token_count"] == "exact (the server's tokenizer)", answers
    assert server.received == [] and server.counted, "counted through /tokenize, nothing sent"
    assert "a local server has no token-counting endpoint" not in json.dumps(estimate)
    assert "counted by the server's own tokenizer where a stage's token_count says exact" in estimate["note"]


def test_a_dry_run_says_why_a_stage_was_estimated(server, locomo_dir, tmp_path, capsys, monkeypatch):
    import memeval.llm.count as count

    monkeypatch.setattr(count, "COUNT_BUDGET_CHARS", 100)
    answers = _dry(locomo_dir, tmp_path, capsys)["answers"]
    assert answers["token_count"].startswith("estimate (4 characters a token): 3 prompts of "), answers
    assert answers["token_count"].endswith("characters, more than a dry run counts with the server's tokenizer (100 "
                                           "characters)")
    monkeypatch.setattr(count, "COUNT_BUDGET_CHARS", 10**9)
    server.n_ctx = None  # a server without /props or /tokenize
    answers = _dry(locomo_dir, tmp_path, capsys)["answers"]
    assert answers["token_count"] == "estimate (4 characters a token): the server offers no tokenizer memeval reads"
