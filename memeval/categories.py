"""A benchmark's question categories as one declared value: the ids and their names, the ids a headline averages
over, and the ids scored apart (never judged). Shared reports and scorers receive a CategorySet from the benchmark
that declares it (`Benchmark.categories`), so none of them names a benchmark's categories itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class CategorySet:
    names: Mapping[int, str]  # id -> name, in the order tables list them
    headline: tuple[int, ...]  # the ids every headline F1 and J averages over
    apart: tuple[int, ...] = ()  # ids never judged: reported on their own, outside the headline
    guidance: Mapping[int, str] = field(default_factory=dict)  # what a category-aware judge is told of each id
    averaged: str = "as the published tables average them"  # how the headline's mean is taken, and on whose word
    _order: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = MappingProxyType(dict(self.names))
        unknown = [c for c in (*self.headline, *self.apart) if c not in names]
        if unknown:
            raise ValueError(f"category ids {unknown} are not named in {dict(names)}")
        if set(self.headline) & set(self.apart):
            raise ValueError("a category cannot be both in the headline and scored apart")
        if set(self.guidance) - set(names):
            raise ValueError(f"guidance for unnamed category ids {sorted(set(self.guidance) - set(names))}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "guidance", MappingProxyType(dict(self.guidance)))
        object.__setattr__(self, "headline", tuple(self.headline))
        object.__setattr__(self, "apart", tuple(self.apart))
        object.__setattr__(self, "_order", tuple(names))

    def __hash__(self) -> int:
        return hash((tuple(self.names.items()), self.headline, self.apart, tuple(self.guidance.items()), self.averaged))

    def __contains__(self, category: object) -> bool:
        return category in self.names

    def __iter__(self) -> Iterator[int]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    @property
    def ids(self) -> tuple[int, ...]:
        return self._order

    def name(self, category: int) -> str:
        return self.names[category]

    def label(self, category: int) -> str:
        """"name (id)": tables print the id beside the name because papers relabel categories."""
        return f"{self.names[category]} ({category})"

    def is_apart(self, category: object) -> bool:
        return category in self.apart

    def by_name(self, text: str) -> int | None:
        """The id whose name `text` starts with (a table's group label read back), or None."""
        return next((c for c, n in self.names.items() if text.startswith(n)), None)

    @property
    def headline_span(self) -> str:
        """The headline ids as tables write them: "1–4" for a run of ids, "1, 3" otherwise."""
        return span(self.headline)

    @property
    def all_span(self) -> str:
        return span(self._order)


def span(ids: tuple[int, ...]) -> str:
    ordered = sorted(ids)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(str(c) for c in ordered)
