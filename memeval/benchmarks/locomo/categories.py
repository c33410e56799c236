"""LoCoMo's question categories, named once: the integers of the file as the official code and the question
counts imply them (the Mem0 paper relabels them; tables print names with ids for that reason)."""

from __future__ import annotations

from memeval.categories import CategorySet

LOCOMO_CATEGORIES = CategorySet(
    names={1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"},
    headline=(1, 2, 3, 4),  # the categories every published F1 and J averages over
    apart=(5,),  # adversarial: no gold answer to judge; scored apart by refusal
    guidance={  # the graded judge's words for each category (memeval/scoring/judge.py)
        1: "Multi-hop: the answer combines several facts; each part of the gold answer counts.",
        2: "Temporal: the exact date, period or order matters; a wrong date or order is wrong, another format of "
           "the same date is right.",
        3: "Open-domain: the gold answer may be an inference from the conversation; judge the substance.",
        4: "Single-hop: one fact stated in the conversation; it must match.",
        5: "Adversarial: the conversation does not contain the answer; an answer that says so is correct.",
    },
)
CATEGORY_NAMES: dict[int, str] = dict(LOCOMO_CATEGORIES.names)
QA_CATEGORIES = LOCOMO_CATEGORIES.headline
ADVERSARIAL = LOCOMO_CATEGORIES.apart[0]


def category_label(category: int) -> str:
    return LOCOMO_CATEGORIES.label(category)
