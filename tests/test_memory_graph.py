import json
import re

import pytest

from memeval.llm import LLMClient, ResponseCache
from memeval.memory import build_system
from memeval.memory.entities import EntityNormalizer
from memeval.memory.extraction import Source, parse_triples
from memeval.memory.graph import MemoryGraph
from tests.scripted import ScriptedBackend


def test_entity_normalisation_width_case_space_and_aliases():
    norm = EntityNormalizer({"Mel": "Melanie"})
    assert norm("  Ｃａｒｏｌｉｎｅ ") == norm("caroline") == "caroline"
    assert norm("New   York\tCity") == "new york city"
    assert norm("MEL") == norm("melanie") == "melanie"


def test_same_fact_from_two_sources_is_one_edge_with_both_sources():
    g = MemoryGraph()
    g.add("Caroline", "likes", "painting", "D1:1", "2023-05-01")
    g.add("caroline", "Likes", "Painting ", "D2:4", "2023-06-01")
    (t,) = g.triples()
    assert t.source_ids == ("D1:1", "D2:4") and t.time == "2023-06-01"


@pytest.fixture()
def moved():
    g = MemoryGraph()
    g.add("Caroline", "lives in", "Boston", "D1:2", "2023-01-10")
    g.add("Caroline", "lives in", "Denver", "D5:7", "2023-06-02")
    g.add("Denver", "is in", "Colorado", "D5:8", "2023-06-02")
    return g


def test_later_fact_supersedes_for_current_queries_and_history_keeps_both(moved):
    assert moved.current("caroline", "lives in") == ["denver"]
    assert [t.object for t in moved.history("Caroline", "lives in")] == ["boston", "denver"]
    recalled = moved.search("Where does Caroline live in?", top_k=5, max_hops=0)
    assert {t.object: t.superseded for t in recalled if t.relation == "lives in"} == {"boston": True,
                                                                                        "denver": False}
    current = moved.search("Where does Caroline live in?", top_k=5, max_hops=0, current_only=True)
    assert "boston" not in {t.object for t in current}


def test_deleting_one_of_two_sources_keeps_the_edge():
    g = MemoryGraph()
    g.add("Caroline", "likes", "painting", "D1:1", "2023-05-01")
    g.add("Caroline", "likes", "painting", "D2:4", "2023-06-01")
    assert g.delete_source("D2:4") == 0
    (t,) = g.triples()
    assert t.source_ids == ("D1:1",) and t.time == "2023-05-01"


def test_deleting_all_sources_removes_edge_and_orphaned_entities(moved):
    assert moved.delete_source("D5:7") == 1
    assert moved.current("Caroline", "lives in") == ["boston"], "the older fact is current again"
    assert moved.entities() == {"caroline", "boston", "denver", "colorado"}
    moved.delete_source("D5:8")
    assert moved.entities() == {"caroline", "boston"}
    moved.delete_source("D1:2")
    assert moved.triples() == [] and moved.entities() == set()


def test_reingesting_never_resurrects_deleted_facts(moved):
    assert moved.search("Denver", top_k=5, max_hops=0)
    moved.delete_source("D5:7")
    moved.delete_source("D5:8")
    assert not moved.add("Caroline", "lives in", "Denver", "D5:7", "2023-06-02"), "a deleted source is refused"
    moved.add("Caroline", "works at", "clinic", "D9:1", "2023-09-01")
    assert "denver" not in moved.entities() and moved.refused_assertions == 1
    assert all("denver" not in t.text for t in moved.search("Denver Colorado", top_k=5, max_hops=2))
    moved.add("Caroline", "visited", "Denver", "D9:2", "2023-09-03")
    assert "denver" in moved.entities(), "a new source stating the fact is a new assertion, not a resurrection"


def test_hop_expansion_follows_the_chain():
    g = MemoryGraph()
    for i, (s, o) in enumerate([("alice", "project x"), ("project x", "tool y"), ("tool y", "bob")]):
        g.add(s, f"rel{i}", o, f"S{i}", "2024-01-01")
    g.add("zed", "unrelated", "thing", "S9", "2024-01-01")
    hops = {h: [t.text for t in g.search("alice rel0", top_k=1, max_hops=h)] for h in (0, 1, 2)}
    assert hops[0] == ["alice rel0 project x"]
    assert hops[1] == ["alice rel0 project x", "project x rel1 tool y"]
    assert hops[2] == [*hops[1], "tool y rel2 bob"]


def test_parse_triples_is_strict():
    sources = [Source("D1:1", "a"), Source("D1:2", "b")]
    text = json.dumps({"triples": [{"subject": "A", "relation": "r", "object": "B", "source": "[D1:2]"},
                                   {"subject": "A", "relation": "r", "object": "C", "source": "D9:9"},
                                   {"subject": "A", "relation": 3, "object": "C", "source": "D1:1"}, "junk"]})
    facts, dropped = parse_triples(text, sources)
    assert [(f.object, f.source_id) for f in facts] == [("B", "D1:2")] and dropped == 3
    assert parse_triples(f"```json\n{text}\n```", sources) == (facts, 3), "a fenced reply is the same reply"
    assert parse_triples("Here you go:\n" + text, sources) == ([], 1), "prose around the JSON: not what was asked"
    assert parse_triples("not json at all", sources) == ([], 1)
    assert parse_triples('{"triples": []}', sources) == ([], 0)
    assert parse_triples("[]", sources) == ([], 1), "the list alone is not the object the prompt asks for"
    single, _ = parse_triples('{"triples": [{"subject": "A", "relation": "r", "object": "B"}]}', sources[:1])
    assert single[0].source_id == "D1:1"


def test_the_extraction_prompt_asks_for_what_its_schema_and_parser_read():
    from memeval.memory.extraction import TRIPLES_SCHEMA, extraction_request

    request = extraction_request([Source("D1:1", "Ann: I moved to Denver.", "2023-05-07")])
    prompt = request.messages[0][1]
    example = json.loads(prompt.split("for example\n")[1].splitlines()[0])
    schema = json.loads(request.output_schema)
    assert request.output_schema == TRIPLES_SCHEMA and list(example) == schema["required"] == ["triples"]
    assert set(example["triples"][0]) == set(schema["properties"]["triples"]["items"]["required"])
    facts, dropped = parse_triples(json.dumps(example), [Source("D1:3", "x")])
    assert len(facts) == 1 and dropped == 0


def _line_extractor(request):
    """Test double for the extraction model: one triple per cited line, (speaker, said, first content word)."""
    facts = []
    for line_id, speaker, text in re.findall(r"^\[(D\d+:\d+)\] \([^)]*\) (\w+): (.*)$", request.messages[0][1],
                                             re.M):
        words = [w for w in re.findall(r"[A-Za-z]{5,}", text)]
        if words:
            facts.append({"subject": speaker, "relation": "mentioned", "object": words[0].lower(),
                          "source": line_id})
    return json.dumps({"triples": facts})


def test_memory_graph_on_locomo_cites_real_turns(conversations, tmp_path):
    conv26 = next(c for c in conversations if c.sample_id == "conv-26")
    client = LLMClient(ScriptedBackend(_line_extractor), ResponseCache(tmp_path))
    system = build_system("memory_graph", client=client)
    system.ingest(conv26)
    dia_ids = {t.dia_id for s in conv26.sessions for t in s.turns}
    triples = system.graph.triples()
    assert triples and all(set(t.source_ids) <= dia_ids for t in triples)
    items = system.search("What did Caroline mention about adoption?", 5)
    kinds = [i.kind for i in items]
    assert "triple" in kinds and "source" in kinds and kinds.index("source") > kinds.index("triple")
    assert all(i.source_ids for i in items)
    assert system.extraction_stats["chunks"] == len(client.backend.sent)


def test_memory_graph_without_llm_writes_error_rows_then_fills_them(locomo_dir, tmp_path, monkeypatch):
    from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
    from memeval.jsonl import read_rows

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    config = LocomoRunConfig(out=str(tmp_path / "run"), data=str(locomo_dir), conversations="conv-26",
                             questions="first:3", systems=["memory_graph"], progress=False)
    result = run_locomo(config)
    rows = read_rows(tmp_path / "run" / "answers.jsonl")
    assert len(rows) == 3 and all(r["error"].startswith("ingest failed: CacheMiss") for r in rows)
    assert any("3 answers failed" in n for n in result.notes)
    client = LLMClient(ScriptedBackend(_line_extractor), ResponseCache(tmp_path / "cache"))
    run_locomo(config, client=client)
    final = {r["sample_id"]: r for r in read_rows(tmp_path / "run" / "answers.jsonl")}
    assert len(final) == 3 and all(r["error"] is None and r["k"] == 5 for r in final.values())


def test_an_injected_embedder_replaces_tfidf_for_recall():
    import numpy as np

    synonyms = {"dog": 0, "canine": 0, "cat": 1, "feline": 1}

    def concept_embedder(texts):
        rows = np.zeros((len(texts), 2))
        for i, text in enumerate(texts):
            for word in text.lower().split():
                if word in synonyms:
                    rows[i, synonyms[word]] += 1
        return rows

    for embedder, expected in ((None, []), (concept_embedder, ["bob owns canine"])):
        g = MemoryGraph(embedder=embedder)
        g.add("Bob", "owns", "canine", "S1", "2024")
        g.add("Ann", "owns", "feline", "S2", "2024")
        assert [t.text for t in g.search("dog", top_k=1, max_hops=0)] == expected


def test_an_extraction_reply_without_a_json_array_fails_ingest_then_replays_the_same(tmp_path):
    """A reply that ended by itself but holds no JSON array is no extraction: answering from the empty graph it
    would leave looks like a memory that knew nothing. It is cached, so a rerun replays it and fails alike."""
    from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
    from memeval.records import load_answers
    from tests.test_hostile_files import locomo_doc

    data = tmp_path / "locomo10.json"
    data.write_bytes(locomo_doc())
    for out in ("run", "replay"):
        backend = ScriptedBackend(lambda request: "Ann moved to Denver, I think.")
        config = LocomoRunConfig(out=str(tmp_path / out), data=str(data), progress=False,
                                 systems=["memory_graph:extract_max_tokens=12"])
        run_locomo(config, client=LLMClient(backend, ResponseCache(tmp_path / "cache")))
        (row,) = load_answers(tmp_path / out / "answers.jsonl")
        assert row.error.startswith("ingest failed: UnusableExtraction: no JSON array") and row.prediction == ""
        assert [r.max_tokens for r in backend.sent] == ([12] if out == "run" else [])


def test_extract_max_tokens_is_a_count():
    from memeval.errors import InputError

    with pytest.raises(InputError, match="extract_max_tokens"):
        build_system("memory_graph", extract_max_tokens=0)
