"""The LoCoMo paper's reader setting (`claude_official`): rendering, category handling, option mapping, and a
run through the real SDK against the loopback server."""

import pytest

from memeval.benchmarks.locomo.paper_reader import (
    DATE_HINT,
    NOT_MENTIONED_OPTION,
    choice_options,
    official_prediction,
    official_question,
    official_request,
    render_official_context,
)
from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.jsonl import read_rows
from memeval.llm.client import make_client
from memeval.memory.base import MemoryItem
from memeval.memory.render import observation_items, turn_items
from memeval.scoring.f1 import score_f1


@pytest.fixture(scope="module")
def conv26(conversations):
    return next(c for c in conversations if c.sample_id == "conv-26")


def test_context_is_per_session_with_date_lines_and_turns_in_dialogue_order(conv26):
    items = turn_items(conv26)
    first, second = conv26.sessions[0], conv26.sessions[1]
    picked = [items[len(first.turns) + 1], items[2], items[0], items[2]]  # ranked out of order, one repeated
    text = render_official_context(conv26, picked)
    t0, t2 = first.turns[0], first.turns[2]
    u1 = second.turns[1]
    assert text == (f"DATE: {first.date_time}\nCONVERSATION:\n{t0.speaker} said, \"{t0.text}\"\n"
                    f"{t2.speaker} said, \"{t2.text}\"\n\n"
                    f"DATE: {second.date_time}\nCONVERSATION:\n{u1.speaker} said, \"{u1.text}\"")


def test_captions_chunks_and_non_turn_memories(conv26):
    captioned = next(t for t in conv26.turns if t.blip_caption)
    chunk = MemoryItem("chunk", 1.0, (captioned.dia_id,), kind="chunk")
    text = render_official_context(conv26, [chunk])
    assert text.endswith(f'{captioned.speaker} said, "{captioned.text}" and shared {captioned.blip_caption}.')
    observation = observation_items(conv26)[0]
    mixed = render_official_context(conv26, [observation, turn_items(conv26)[0]])
    lines = mixed.splitlines()
    assert lines[0] == f"DATE: {conv26.sessions[0].date_time}" and lines[-1] == observation.text
    assert render_official_context(conv26, []) == "(nothing retrieved)"


def test_category_handling_hint_choice_and_seeded_order(conv26):
    by_category = {}
    for qa in conv26.qa:
        by_category.setdefault(qa.category, []).append(qa)
    temporal, single = by_category[2][0], by_category[4][0]
    assert official_question(temporal) == temporal.question + DATE_HINT
    assert official_question(single) == single.question
    orders = set()
    for qa in by_category[5]:
        a, b = choice_options(qa)
        assert {a, b} == {NOT_MENTIONED_OPTION, qa.answer if qa.answer is not None else qa.adversarial_answer}
        assert choice_options(qa) == (a, b)
        assert official_question(qa) == f"{qa.question} Select the correct answer: (a) {a} (b) {b}."
        orders.add(a == NOT_MENTIONED_OPTION)
    assert orders == {True, False}, "the seeded order must vary across questions"


def test_option_letters_map_to_option_text_and_score_as_abstention(conv26):
    qa = next(q for q in conv26.qa if q.category == 5)
    a, b = choice_options(qa)
    letter = "a" if a == NOT_MENTIONED_OPTION else "b"
    for reply in (letter, f"({letter})", f"{letter.upper()}.", f"({letter}) whatever follows"):
        assert official_prediction(qa, reply) == NOT_MENTIONED_OPTION
        assert score_f1(official_prediction(qa, reply), qa.answer, 5, "locomo") == 1.0
    assert official_prediction(qa, "A necklace from Sweden") == "A necklace from Sweden"
    single = next(q for q in conv26.qa if q.category == 4)
    assert official_prediction(single, " b ") == "b"


def test_request_is_temperature_zero_on_the_answer_model_and_never_carries_the_gold(conv26):
    qa = next(q for q in conv26.qa if q.category == 1)
    request = official_request(conv26, qa, turn_items(conv26)[:3])
    prompt = request.messages[0][1]
    assert request.temperature == 0.0 and (request.model, request.role) == ("", "answer")
    assert make_client("replay").resolve(request).model == "claude-opus-4-6"
    assert prompt.startswith(f"Below is a conversation between two people, {conv26.speaker_a} and "
                             f"{conv26.speaker_b}.")
    assert prompt.rstrip().endswith(f"Question: {qa.question}\nShort answer:")
    assert "DATE: " in prompt and "Caroline said, \"" in prompt


def test_one_cache_prefix_per_conversation_whatever_the_category(conv26):
    """The plain and the choice templates differ only after the context, so full context caches one prefix per
    conversation (two would write the conversation to the cache twice)."""
    items = turn_items(conv26)
    by_category = {q.category: q for q in conv26.qa}
    prefixes = {official_request(conv26, by_category[c], items, cache_context=True).cache_prefix
                for c in (1, 2, 5)}
    assert len(prefixes) == 1
    prefix = prefixes.pop()
    assert prefix.endswith(render_official_context(conv26, items)) and len(prefix) > 10_000


def test_claude_official_run_through_the_sdk(locomo_dir, tmp_path, monkeypatch):
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, first_text

    def responder(body):
        prompt = first_text(body)
        if "Select the correct answer" in prompt:
            return "(a)" if "(a) Not mentioned" in prompt else "(b)"
        return "7 May 2023"

    with FakeAnthropic(responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
        result = run_locomo(LocomoRunConfig(out=str(tmp_path / "run"), data=str(locomo_dir),
                                            conversations="conv-26", questions="all",
                                            systems=["full_context"], answerer="claude_official", progress=False))
        prompts = [first_text(b) for b in server.received]
        assert server.rejected == []
    rows = read_rows(tmp_path / "run" / "answers.jsonl")
    # full context repeats per question: the conversation is a cached block ahead of the question, and the first
    # question of each distinct prefix goes alone, so the server writes each prefix once and reads it after
    blocks = [b["messages"][0]["content"] for b in server.received]
    assert all(b[0]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in b[1] for b in blocks)
    prefixes = {b[0]["text"] for b in blocks}
    assert len(prefixes) == 1  # the answer and the two-option templates share everything through the context
    assert result.llm["cache_creation_input_tokens"] == sum(len(p) // 4 for p in prefixes)
    assert result.llm["cache_read_input_tokens"] == sum(len(b[0]["text"]) // 4 for b in blocks) - sum(
        len(p) // 4 for p in prefixes)
    assert len(rows) == len(prompts) == result.answer_counts["written"] > 150
    assert {r["answerer"] for r in rows} == {"claude_official"}
    adversarial = [r for r in rows if r["category"] == 5]
    assert adversarial and all(r["prediction"] == NOT_MENTIONED_OPTION and r["f1"] == 1.0 for r in adversarial)
    assert sum(DATE_HINT in p for p in prompts) == sum(1 for r in rows if r["category"] == 2)
    full = render_official_context(*_conv_and_items(locomo_dir))
    assert all(full in p for p in prompts), "full_context hands the reader the whole conversation"
    assert all(r["context_tokens"] == (len(full) + 3) // 4 for r in rows)


def _conv_and_items(locomo_dir):
    from memeval.benchmarks.locomo.data import load_locomo

    conv = next(c for c in load_locomo(locomo_dir / "locomo10_v2") if c.sample_id == "conv-26")
    return conv, turn_items(conv)


def test_a_dry_run_says_whether_the_papers_reader_and_mem0s_judge_are_published(locomo_dir, tmp_path, cli,
                                                                               monkeypatch):
    """The cost table alone did not say it: only a finished run's report did."""
    monkeypatch.setenv("MEMEVAL_PROTOCOLS_DIR", str(tmp_path / "no-protocols"))
    result = cli("locomo", "run", "--data", locomo_dir, "--reader", "claude_official", "--judge", "binary",
                 "--conversations", "conv-26", "--questions", "first:2", "--systems", "rag_turns", "--dry-run",
                 "--out", tmp_path / "run", check=True)
    notes = [line for line in result.stderr.splitlines() if line.startswith("memeval: note: ")]
    assert notes == ["memeval: note: reader claude_official: paraphrased prompts — not the published protocol "
                     "(`memeval data fetch protocols` fetches them)",
                     "memeval: note: judge binary: paraphrased prompts — not the published protocol "
                     "(`memeval data fetch protocols` fetches them)"]
    assert not (tmp_path / "run").exists()
