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
