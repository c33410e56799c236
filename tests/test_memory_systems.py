import pytest

from memeval.memory import SystemConfig, build_system, system_names
from memeval.memory.lexical import BM25Index, tokenize
from memeval.memory.render import turn_items
from memeval.qa.evidence import evidence_recall, recall_curve


@pytest.fixture(scope="module")
def conv26(conversations):
    return next(c for c in conversations if c.sample_id == "conv-26")


def test_registry_builds_every_system_from_plain_config():
    assert {"full_context", "no_memory", "rag_turns", "observations", "summaries"} <= set(system_names())
    config = SystemConfig.parse("rag_turns:chunk_tokens=256")
    assert config.params == {"chunk_tokens": 256} and config.label == "rag_turns[chunk_tokens=256]"
    assert build_system(config).chunk_tokens == 256
    with pytest.raises(ValueError, match="unknown memory system"):
        build_system("nope")


def test_full_context_returns_every_turn_in_order(conv26):
    system = build_system("full_context")
    system.ingest(conv26)
    items = system.search("anything", 3)
    ids = [t.dia_id for s in conv26.sessions for t in s.turns]
    assert [i.source_ids[0] for i in items] == ids and len(items) == len(ids)
    assert items[0].time == conv26.sessions[0].date_time and items[0].text.startswith("Caroline: ")


def test_no_memory_returns_nothing(conv26):
    system = build_system("no_memory")
    system.ingest(conv26)
    assert system.search("What did Caroline research?", 10) == [] and system.export() == []


def test_rag_turns_finds_the_evidence_turn(conv26):
    system = build_system("rag_turns")
    system.ingest(conv26)
    items = system.search("What did the charity race raise awareness for?", 5)
    assert len(items) == 5 and items[0].score >= items[-1].score > 0
    texts = {i.source_ids[0]: i.text for i in items}
    assert any("charity race" in t for t in texts.values())
    assert system.search("zzzz qqqq", 5) == []


def test_chunking_packs_consecutive_turns_of_one_session(conv26):
    chunks = turn_items(conv26, chunk_tokens=128)
    singles = turn_items(conv26)
    assert [i for c in chunks for i in c.source_ids] == [s.source_ids[0] for s in singles]
    for chunk in chunks:
        sessions = {sid.split(":")[0] for sid in chunk.source_ids}
        assert len(sessions) == 1
        assert chunk.cost_tokens <= 128 or len(chunk.source_ids) == 1
    assert len(chunks) < len(singles)


def test_observations_and_summaries_carry_annotation_sources(conv26):
    obs = build_system("observations")
    obs.ingest(conv26)
    exported = obs.export()
    assert len(exported) == len(conv26.observations)
    assert exported[0].source_ids == conv26.observations[0].source_ids and exported[0].kind == "observation"
    summaries = build_system("summaries")
    summaries.ingest(conv26)
    first = summaries.export()[0]
    assert first.source_ids == tuple(t.dia_id for t in conv26.sessions[0].turns)
    assert first.time == conv26.sessions[0].date_time


def test_bm25_ties_go_to_the_earlier_item_and_zero_scores_are_dropped():
    from memeval.memory.base import MemoryItem

    items = [MemoryItem(t, 0.0, (f"D1:{i}",)) for i, t in enumerate(["red apple", "green pear", "red apple",
                                                                     "blue sky"])]
    found = BM25Index(items).search("red apples", 10)
    assert [i.source_ids for i in found] == [("D1:0",), ("D1:2",)]
    assert tokenize("The Apples were running") == ["appl", "were", "run"]


def test_evidence_recall_and_curve():
    assert evidence_recall(["D1:1", "D1:2"], [["D1:2", "D1:9"], ["D3:1"]]) == 0.5
    assert evidence_recall([], [["D1:1"]]) is None
    assert evidence_recall(["D1:1"], []) == 0.0
    assert recall_curve(["D1:1", "D1:2"], [["D1:3"], ["D1:2"], ["D1:1"]], 5) == [0.0, 0.5, 1.0, 1.0, 1.0]


def test_unknown_or_bad_system_parameters_are_one_line_errors_before_anything_is_written(locomo_dir, tmp_path,
                                                                                        capsys):
    from memeval.cli import main
    from memeval.memory.registry import BUILTIN

    assert set(BUILTIN) == set(system_names())
    for spec, expected in (("memory_graph:hop=1", "unknown parameter hop for memory_graph; valid: top_k, hops"),
                           ("memory_graph:hops=5", "hops must be 0, 1 or 2, not 5"),
                           ("rag_turns:chunk=2", "unknown parameter chunk for rag_turns; valid: chunk_tokens"),
                           ("no_memory:k=1", "valid: (none)")):
        code = main(["locomo", "run", "--data", str(locomo_dir), "--conversations", "conv-26", "--questions", "first:2",
                     "--systems", spec, "--out", str(tmp_path / "run"), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and expected in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run").exists()
    assert build_system("memory_graph:hops=2".partition(":")[0], hops=2).hops == 2
    assert build_system(SystemConfig.parse("memory_graph:max_hops=0")).hops == 0  # the older spelling


def test_graph80_echoes_the_system_spelling_and_checks_parameters(tmp_path, capsys):
    import json

    from memeval.cli import main

    assert main(["graph80", "generate", "--seed", "0", "--out", str(tmp_path / "d")]) == 0
    assert main(["graph80", "run", "--data", str(tmp_path / "d"), "--systems", "memory_graph:hops=2, chunks:k=3",
                 "--repeats", "1", "--out", str(tmp_path / "r")]) == 0
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert {r["system"] for r in summary["rows"]} == {"memory_graph:hops=2", "chunks:k=3"}
    capsys.readouterr()
    assert main(["graph80", "run", "--data", str(tmp_path / "d"), "--systems", "memory_graph:hop=1",
                 "--repeats", "1", "--out", str(tmp_path / "bad")]) == 2
    assert "unknown parameter hop for memory_graph; valid: hops, top_k, aliases" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
