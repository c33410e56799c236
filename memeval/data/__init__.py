"""LoCoMo data: discovery, loading into typed records, and fetching."""

from memeval.benchmarks.locomo.data import (
    CATEGORY_NAMES,
    QA,
    Conversation,
    LoadReport,
    Session,
    Turn,
    load_locomo,
)
from memeval.data.paths import find_locomo

__all__ = [
    "CATEGORY_NAMES",
    "QA",
    "Conversation",
    "LoadReport",
    "Session",
    "Turn",
    "find_locomo",
    "load_locomo",
]
