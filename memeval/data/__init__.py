"""Where data is looked for and how it is fetched; each benchmark's loader lives in its own folder
(memeval/benchmarks/<name>/data.py) and produces the records of memeval/conversations.py."""

from memeval.data.paths import find_locomo

__all__ = ["find_locomo"]
