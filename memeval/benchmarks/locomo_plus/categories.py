"""LoCoMo-Plus's categories: LoCoMo's five ids as the benchmark names them (its judge's templates are keyed by these
names; LoCoMo's 3 is "open-domain" in memeval's LoCoMo set, "common-sense" here) and 6, Cognitive, its own."""

from __future__ import annotations

from memeval.categories import CategorySet

COGNITIVE = 6  # the id Cognitive rows carry beside LoCoMo's 1-5

LOCOMO_PLUS_CATEGORIES = CategorySet(
    names={1: "multi-hop", 2: "temporal", 3: "common-sense", 4: "single-hop", 5: "adversarial", COGNITIVE: "Cognitive"},
    # the benchmark's overall is the mean over every judged row, adversarial and Cognitive included (its judge has a
    # prompt for each); F1 has no value for rows without a gold answer (Cognitive, most adversarial rows)
    headline=(1, 2, 3, 4, 5, COGNITIVE),
    apart=(),  # nothing is left unjudged
    averaged="pooled, every row counting once, as the benchmark's evaluation script (llm_as_judge.py) averages its "
             "judge's scores; its pinned repository publishes no table",
)
