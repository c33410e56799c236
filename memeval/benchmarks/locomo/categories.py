"""LoCoMo's question categories, named once: the integers of the file as the official code and the question
counts imply them (the Mem0 paper relabels them; tables print names with ids for that reason)."""

from __future__ import annotations

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
QA_CATEGORIES = (1, 2, 3, 4)  # the categories every published F1 and J averages over
ADVERSARIAL = 5


def category_label(category: int) -> str:
    return f"{CATEGORY_NAMES[category]} ({category})"
