"""A benchmark's categories are one declared value; LoCoMo's names and labels stay what tables have printed."""

import pytest

from memeval.benchmarks import declaration, load
from memeval.benchmarks.locomo import categories as locomo
from memeval.categories import CategorySet
from memeval.engine import registry

LOCOMO_CATEGORIES, CATEGORY_NAMES = locomo.LOCOMO_CATEGORIES, locomo.CATEGORY_NAMES
category_label = locomo.category_label


def test_locomo_declares_its_set_and_keeps_its_names():
    assert load(declaration("locomo").categories) is LOCOMO_CATEGORIES
    assert CATEGORY_NAMES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    assert locomo.QA_CATEGORIES == (1, 2, 3, 4) and locomo.ADVERSARIAL == 5
    assert [category_label(c) for c in CATEGORY_NAMES] == [
        "multi-hop (1)", "temporal (2)", "open-domain (3)", "single-hop (4)", "adversarial (5)"]
    assert LOCOMO_CATEGORIES.headline_span == "1–4" and LOCOMO_CATEGORIES.all_span == "1–5"


def test_the_registry_finds_the_set_through_a_run_kind():
    assert registry.categories("locomo run") is LOCOMO_CATEGORIES
    assert registry.categories("memeval locomo run") is LOCOMO_CATEGORIES
    assert registry.categories("no such kind") is None


def test_a_set_is_frozen_and_checked():
    plus = CategorySet(names={**CATEGORY_NAMES, 6: "cognitive"}, headline=(1, 2, 3, 4, 6), apart=(5,))
    assert plus.label(6) == "cognitive (6)" and plus.headline_span == "1, 2, 3, 4, 6"
    assert plus.by_name("cognitive (6)") == 6 and plus.by_name("other") is None
    assert hash(plus) == hash(CategorySet(names={**CATEGORY_NAMES, 6: "cognitive"}, headline=(1, 2, 3, 4, 6),
                                          apart=(5,)))
    with pytest.raises(TypeError):
        plus.names[7] = "x"
    with pytest.raises(ValueError, match="not named"):
        CategorySet(names={1: "a"}, headline=(1, 2))
    with pytest.raises(ValueError, match="both"):
        CategorySet(names={1: "a"}, headline=(1,), apart=(1,))


def test_the_graded_judge_reads_names_and_guidance_from_the_set_it_is_given():
    from memeval.scoring.judge import BinaryJudge, graded_request

    plus = CategorySet(names={**CATEGORY_NAMES, 6: "cognitive"}, headline=(1, 2, 3, 4, 6), apart=(5,),
                       guidance={**LOCOMO_CATEGORIES.guidance, 6: "Cognitive: the cue implies the answer."})
    text = graded_request("q?", "g", "p", 6, categories=plus).messages[0][1]
    assert "Question category: cognitive (6)\nCategory guidance: Cognitive: the cue implies the answer." in text
    locomo_text = graded_request("q?", "g", "p", 2).messages[0][1]
    assert "Question category: temporal (2)\nCategory guidance: Temporal:" in locomo_text
    none_apart = CategorySet(names={1: "a", 5: "b"}, headline=(1, 5))

    class Row:
        category = 5

    assert not BinaryJudge(1, published=None).accepts(Row())
    assert BinaryJudge(1, published=None, categories=none_apart).accepts(Row())
    with pytest.raises(ValueError, match="unnamed"):
        CategorySet(names={1: "a"}, headline=(1,), guidance={2: "x"})


def test_a_benchmark_without_answer_keys_takes_the_original_key_only(tmp_path):
    from memeval.answer_keys import ORIGINAL, answer_keys, without_keys
    from memeval.errors import InputError

    assert answer_keys("locomo run") is load(declaration("locomo").answer_keys)
    assert answer_keys("no such kind") is None
    assert without_keys(tmp_path, "original") is ORIGINAL
    with pytest.raises(InputError, match="no answer key but the original"):
        without_keys(tmp_path, "corrected")


def test_natural_reliability_names_categories_from_the_declared_sets():
    from memeval.reports.natural import reliability_table

    manifest = {"examined": 2, "accepted": 2, "rejected": 0, "rejected_by_reason": {},
                "accepted_by_category": {"1": 1, "9": 1}}
    assert list(reliability_table(manifest).index[-2:]) == ["accepted: multi-hop (1)", "accepted: category 9"]
    other = CategorySet(names={9: "nine"}, headline=(9,))
    assert list(reliability_table(manifest, [other]).index[-2:]) == ["accepted: category 1", "accepted: nine (9)"]
