"""A dry run sends no model request — chat or embeddings — for any built-in system, against a live local server:
a system whose extraction plans requests (memory_graph, mem0) estimates its reader prompts from stand-ins, said in
the notes, and is never ingested (ingesting is the extraction calls the dry run only prices)."""

from __future__ import annotations

import importlib.util

import pytest

from memeval.cli import main
from memeval.memory.registry import BUILTIN
from tests.fake_openai import FakeOpenAI

MODEL = "tiny-instruct"


@pytest.fixture()
def server(monkeypatch, tmp_path):
    with FakeOpenAI(responder=lambda body: "Paris", local=True) as fake:
        fake.n_ctx = 1_000_000
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def test_a_locomo_dry_run_of_every_built_in_system_sends_nothing(server, tmp_path, locomo_dir, capsys):
    systems = [s for s in BUILTIN if s != "mem0" or importlib.util.find_spec("mem0") is not None]
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:3",
                 "--systems", ",".join(systems), "--reader", "claude", "--judge", "none", "--llm", "local",
                 "--answer-model", MODEL, "--extract-model", MODEL, "--embed-model", "tiny-embed", "--no-progress",
                 "--dry-run", "--out", str(tmp_path / "dry")])
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())
    assert code == 0, captured.err[-2000:]
    assert server.received == [] and server.embedded == [], "a dry run sends no chat and no embeddings request"
    assert not (tmp_path / "dry").exists()
    table = {line.split()[0] for line in captured.out.splitlines() if line.split()}
    assert {"stage", "answers", "ingest", "total"} <= table, captured.out
    assert any(s.startswith("embeddings") for s in table), captured.out
    assert "memory_graph: its reader prompts" in out, "the stand-ins are said"
    assert "Largest prompt per system" in out and "memory_graph " in out.split("Largest prompt per system")[1]


def test_a_longmemeval_dry_run_sends_nothing(server, tmp_path, capsys):
    data = tmp_path / "lme"
    assert main(["data", "sample", "longmemeval", "--out", str(data)]) == 0
    capsys.readouterr()
    code = main(["longmemeval", "run", "--data", str(data / "longmemeval_sample.json"), "--systems", "full_context,no_memory,rag_turns",
                 "--reader", "llm", "--llm", "local", "--answer-model", MODEL, "--no-progress", "--dry-run",
                 "--out", str(tmp_path / "dry")])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    assert server.received == [] and server.embedded == []
    assert "LongMemEval dry run" in captured.out


class PlansOnly:
    """A plug-in that plans its extraction calls but gives no stand-ins for what they write: never ingested."""

    name = "plans_only"
    ranked = False
    needs_llm = True

    def planned_requests(self, conversation) -> list:
        return []

    def ingest(self, conversation) -> None:
        raise AssertionError("a dry run ingested a system that plans its requests")

    def search(self, question: str, k: int) -> list:
        return []

    def export(self) -> list:
        return []


def test_a_plug_in_that_plans_requests_without_stand_ins_is_not_ingested_and_said_uncounted(server, tmp_path,
                                                                                           locomo_dir, capsys):
    code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:2",
                 "--systems", f"{__name__}:PlansOnly", "--reader", "claude", "--judge", "none", "--llm", "local",
                 "--answer-model", MODEL, "--extract-model", MODEL, "--no-progress", "--dry-run", "--out", str(tmp_path / "dry")])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    assert server.received == [] and server.embedded == []
    assert f"Not counted: the reader prompts of {__name__}:PlansOnly (it plans" in " ".join(captured.out.split())
