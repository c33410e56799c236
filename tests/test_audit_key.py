"""The audit's key on memeval's sample ids: the id mapping and its question-text check, the ceilings, every key mode
and the evidence, on a made-up audit (tests/audit_sample.py); and the mapping on the real released LoCoMo data."""

import json

import pytest

from memeval.benchmarks.locomo.audit.store import AUDIT_ENV, audit_path
from memeval.benchmarks.locomo.audit_key import (
    LOCOMO10_ORDER,
    answer_key,
    audit_sample_id,
    ceilings,
    load_audit,
)
from memeval.benchmarks.locomo.data import load_locomo
from memeval.errors import InputError
from tests.audit_sample import ERRORS, answer_key_rows, audit_bytes, pin, write_layout, write_locomo


@pytest.fixture()
def made_up(tmp_path, monkeypatch):
    files = audit_bytes()
    pin(monkeypatch, files)
    write_layout(tmp_path / "audit", files)
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "audit"))
    return load_locomo(write_locomo(tmp_path / "locomo10.json"))


def test_ids_map_over_every_question_category_5_included(made_up):
    audit = load_audit(made_up)
    assert sorted(audit.entries) == ["conv-26:q0000", "conv-26:q0001", "conv-26:q0002", "conv-30:q0001"]
    assert audit.keyed == 7
    assert audit_sample_id("locomo_1_qa3", made_up) == "conv-30:q0003"  # category 5, counted
    with pytest.raises(InputError, match="locomo_1_qa4: no question 4 in conv-30"):
        audit_sample_id("locomo_1_qa4", made_up)
    with pytest.raises(InputError, match="is not locomo_<conversation>_qa<question>"):
        audit_sample_id("locomo_01_qa1", made_up)


def test_a_question_whose_text_differs_is_refused_naming_the_audit_id(made_up, tmp_path, monkeypatch):
    files = audit_bytes()
    wrong = [dict(e) for e in ERRORS]
    wrong[3]["question"] = "Who taught Cy to sail?"
    files["errors"] = json.dumps(wrong).encode()
    pin(monkeypatch, files)
    write_layout(tmp_path / "audit", files)
    with pytest.raises(InputError) as caught:
        load_audit(made_up)
    assert caught.value.field == "locomo_1_qa1.question" and caught.value.source.endswith("errors.json")
    assert "conv-30:q0001" in caught.value.problem


def test_a_key_question_whose_text_differs_is_refused_too(made_up, tmp_path, monkeypatch):
    files = audit_bytes()
    rows = answer_key_rows()
    rows[6]["question"] = "When did Cy move inland?"
    files["answer_key"] = json.dumps(rows).encode()
    pin(monkeypatch, files)
    write_layout(tmp_path / "audit", files)
    with pytest.raises(InputError, match="answer_key.json: locomo_1_qa2.question: does not match conv-30:q0002"):
        load_audit(made_up)


def test_counts_ceilings_and_evidence_computed_by_hand(made_up):
    audit = load_audit(made_up)
    assert dict(audit.counts()) == {"TEMPORAL_ERROR": 1, "AMBIGUOUS": 1, "WRONG_CITATION": 1, "HALLUCINATION": 1}
    assert sorted(audit.corrupting()) == ["conv-26:q0000", "conv-26:q0001", "conv-30:q0001"]
    assert sorted(audit.corrupting("drop")) == ["conv-26:q0000", "conv-30:q0001"]
    # non-adversarial: multi-hop 1 (wrong 1), temporal 2 (wrong 1), open-domain 1 (0), single-hop 3 (wrong 1)
    assert ceilings(audit, made_up) == {1: 0.0, 2: 50.0, 3: 100.0, 4: pytest.approx(200 / 3),
                                        "overall": pytest.approx(400 / 7)}
    assert audit.corrected_evidence("conv-26:q0002") == ["D1:3"]  # a WRONG_CITATION's evidence, corrected
    assert audit.corrected_evidence("conv-30:q0001") == []
    assert audit.corrected_evidence("conv-30:q0000") is None


def test_the_reasoning_is_read_from_the_fetched_file_never_held(made_up):
    audit = load_audit(made_up)
    entry = audit.entries["conv-30:q0001"]
    assert "reasoning" not in entry.model_dump()
    assert audit.reasoning("conv-30:q0001") == "No turn says who taught her."
    assert audit.reasoning("conv-30:q0000") is None


GOLD = {"conv-26:q0000": "June 2021", "conv-26:q0001": "Oslo, Lund", "conv-26:q0002": "Pepper",
        "conv-26:q0004": "Likely yes", "conv-30:q0000": "Green", "conv-30:q0001": "Her aunt", "conv-30:q0002": "2019"}


def _golds(key):
    return {sample_id: key.gold(sample_id, gold) for sample_id, gold in GOLD.items()}


@pytest.mark.parametrize(("mode", "ambiguous", "changed"), [
    ("original", "include", {}),
    ("corrected", "include", {"conv-26:q0000": "May 2021", "conv-26:q0001": "Oslo, Lund and Bergen",
                              "conv-30:q0001": "Not stated"}),
    ("corrected", "drop", {"conv-26:q0000": "May 2021", "conv-26:q0001": None, "conv-30:q0001": "Not stated"}),
    ("excluded", "include", {"conv-26:q0000": None, "conv-30:q0001": None}),
    ("excluded", "drop", {"conv-26:q0000": None, "conv-26:q0001": None, "conv-30:q0001": None}),
])
def test_each_key_mode(made_up, mode, ambiguous, changed):
    key = answer_key(mode, ambiguous, conversations=made_up)
    assert _golds(key) == {**GOLD, **changed}
    assert key.affected("conv-26:q0002").error_type == "WRONG_CITATION" and key.affected("conv-30:q0000") is None
    assert key.mode == mode and key.ambiguous == ambiguous and "\n" not in key.label


def test_labels_say_what_was_changed(made_up):
    assert answer_key("corrected", "drop", conversations=made_up).label.startswith(
        "corrected key (2 wrong gold answers replaced by the audit's, 1 ambiguous left out;")
    assert answer_key("excluded", conversations=made_up).label.startswith(
        "excluded key (2 questions with a wrong gold answer left out, 1 ambiguous kept with their original answer;")


def test_keys_other_than_the_original_need_the_fetched_audit(tmp_path, monkeypatch):
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "none"))
    conversations = load_locomo(write_locomo(tmp_path / "locomo10.json"))
    key = answer_key(conversations=conversations)
    assert key.gold("conv-26:q0000", "June 2021") == "June 2021" and key.affected("conv-26:q0000") is None
    assert load_audit(conversations) is None and audit_path("errors") is None
    with pytest.raises(InputError, match="memeval data fetch locomo-audit"):
        answer_key("corrected", conversations=conversations)
    with pytest.raises(InputError, match="expected original, corrected, excluded"):
        answer_key("fixed", conversations=conversations)
    with pytest.raises(InputError, match="--key corrected or --key excluded"):
        answer_key("original", "drop", conversations=conversations)


def test_a_stored_file_edited_after_the_fetch_is_refused(made_up, tmp_path):
    assert audit_path("errors") == tmp_path / "audit" / "errors.json"
    (tmp_path / "audit" / "errors.json").write_text("[]")
    with pytest.raises(InputError, match="errors.json: sha256: not dial481/locomo-audit@9493fb4b4af4:errors.json"):
        load_audit(made_up)


@pytest.mark.parametrize("layout", ["locomo10.zip", "locomo10_v2"])
def test_audit_ids_land_on_the_real_data_with_its_question_text(locomo_dir, layout, tmp_path, monkeypatch):
    """Made-up audit ids (their question text taken from the data at run time, never committed) over the real
    release: conversation order of locomo10.json, questions counted with category 5."""
    conversations = load_locomo(locomo_dir / layout)
    assert tuple(c.sample_id for c in conversations) == LOCOMO10_ORDER
    assert audit_sample_id("locomo_0_qa1", conversations) == "conv-26:q0001"
    assert audit_sample_id("locomo_9_qa0", conversations) == "conv-50:q0000"
    adversarial = next(qa for qa in conversations[3].qa if qa.category == 5)
    after = conversations[3].qa[adversarial.index + 1]
    picks = [(0, conversations[0].qa[1]), (3, after), (9, conversations[9].qa[-1])]
    errors = [{"question_id": f"locomo_{c}_qa{qa.index}", "question": qa.question.upper() + " ",
               "golden_answer": "x", "category": qa.category, "error_type": "INCOMPLETE", "cited_evidence": [],
               "correct_evidence": [], "reasoning": "made up", "correct_answer": "y"} for c, qa in picks]
    files = {"errors": json.dumps(errors).encode()}
    pin(monkeypatch, files)
    audit = load_audit(conversations, write_layout(tmp_path / "audit", files))
    assert sorted(audit.entries) == sorted(qa.sample_id for _, qa in picks)
    assert after.sample_id == f"conv-42:q{adversarial.index + 1:04d}"
