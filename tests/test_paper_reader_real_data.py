"""The LoCoMo paper's reader (`--reader claude_official` with the fetched prompts) over the real released data: for
every question, the prompt memeval builds against one built here straight from the raw JSON by the logic of the
paper's task_eval/evaluate_claude.py (sessions walked from the last non-empty one down, turns prepended under a
`DATE:` header, a blank-line pair per session; ` [shares <caption>]` only for a turn whose image field is
non-empty and whose caption is not ""; the category-5 option read from `answer`). The release names the fields
`text` and `img_url` where the script reads `clean_text` and `img_file`, and most category-5 items hold only
`adversarial_answer`: those are the only mappings made here. A loader bug that only the real data shows (a
missing `img_url` read as an image) fails here. The templates are this test's own wording, in the shape the
fetched ones take (the paper's text is never committed)."""

import json
from collections import Counter

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.paper_reader import paper_options, paper_request
from memeval.memory.context import FullContext
from memeval.memory.render import turn_text
from memeval.protocols.store import StoredProtocol, templates_sha256

TEMPLATES = {"qa": "\nUse the context; answer briefly.\n\nQ: {} A:\n", "qa_choice": "\nPick one.\n\nQ: {} A:\n",
             "conversation_start": "A talk between {} and {}.\n\n", "date_hint": " Answer with a date.",
             "choice": " Options: (a) {} (b) {}. ", "not_mentioned": "Never said"}
PUBLISHED = StoredProtocol(name="locomo_reader", repo="snap-research/locomo", commit="0" * 40,
                           path="task_eval/evaluate_claude.py", source_sha256="0" * 64, templates=TEMPLATES,
                           templates_sha256=templates_sha256(TEMPLATES))


@pytest.fixture(scope="module")
def raw_files(locomo_dir):
    return {f"conv-{p.stem}": json.loads(p.read_text()) for p in sorted((locomo_dir / "locomo10_v2").glob("*.json"))}


@pytest.fixture(scope="module")
def loaded(locomo_dir):
    return {c.sample_id: c for c in load_locomo(locomo_dir / "locomo10_v2")}


def shares(turn: dict) -> bool:
    image = turn.get("img_url")
    return image is not None and len(image) > 0 and turn["blip_caption"] != ""


def paper_context(raw: dict) -> str:
    last = [i for i in range(1, 50) if raw.get(f"session_{i}")][-1]
    context = ""
    for i in range(last, 0, -1):
        if f"session_{i}" not in raw:
            continue
        context += "\n\n"
        for turn in reversed(raw[f"session_{i}"]):
            line = turn["speaker"] + ' said, "' + turn["text"] + '"'
            if shares(turn):
                line += " [shares %s]" % turn["blip_caption"]
            context = line + "\n" + context
        context = "\nDATE: " + raw[f"session_{i}_date_time"] + "\nCONVERSATION:\n" + context
    return context


def paper_prompt(raw: dict, item: dict, options: tuple[str, str]) -> str:
    start = TEMPLATES["conversation_start"].format(raw["speaker_a"], raw["speaker_b"])
    if item["category"] == 2:
        question = TEMPLATES["qa"].format(item["question"] + TEMPLATES["date_hint"])
    elif item["category"] == 5:
        question = TEMPLATES["qa_choice"].format(item["question"] + TEMPLATES["choice"].format(*options))
    else:
        question = TEMPLATES["qa"].format(item["question"])
    return start + paper_context(raw) + "\n\n" + question


def test_every_question_gets_the_papers_prompt_byte_for_byte(raw_files, loaded):
    checked = offered_answer = 0
    for sample_id, raw in raw_files.items():
        conversation = loaded[sample_id]
        system = FullContext()
        system.ingest(conversation)
        items = system.search("", 10)
        for qa, item in zip(conversation.qa, raw["qa"], strict=True):
            options = paper_options(qa, PUBLISHED)
            if item["category"] == 5:
                offer = "{}".format(item["answer"] if "answer" in item else item["adversarial_answer"])
                assert sorted(options) == sorted([TEMPLATES["not_mentioned"], offer]), qa.sample_id
                offered_answer += "answer" in item and "adversarial_answer" in item
            [(role, sent)] = paper_request(conversation, qa, items, PUBLISHED).messages
            assert role == "user"
            assert sent == paper_prompt(raw, item, options), qa.sample_id
            checked += 1
    assert checked == 1986 and offered_answer == 2


def test_a_caption_is_shared_only_where_the_turn_has_an_image(raw_files, loaded):
    """316 released turns carry a caption but no `img_url`: the paper's script shares nothing for them."""
    counts = Counter()
    for sample_id, raw in raw_files.items():
        turns = loaded[sample_id].turn_by_id()
        for key, value in raw.items():
            if not (key.startswith("session_") and isinstance(value, list)):
                continue
            for turn in value:
                got = turns[turn["dia_id"]]
                assert got.img_url == tuple(turn.get("img_url", ())), turn["dia_id"]
                counts["shared" if shares(turn) else "caption only" if "blip_caption" in turn else "plain"] += 1
                assert turn_text(got) == turn["speaker"] + ": " + turn["text"] + (
                    f" [shared {turn['blip_caption']}]" if turn.get("blip_caption") else ""), turn["dia_id"]
    assert counts["shared"] == 910 and counts["caption only"] == 316
