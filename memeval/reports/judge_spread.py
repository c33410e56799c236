"""A judge that gave every judged question the same label or score: its J says nothing about the system. A tiny
local judge often does this (SmolLM2-135M labels every answer CORRECT, whatever its F1), and a J of 100.00 read
alone looks like a measurement. The note states the counts beside the J table; `memeval judge calibrate` is what
measures a judge.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_JUDGED = 10  # fewer questions can agree by chance; the note is for a judge that plainly does not discriminate
LABELLED = ("binary", "evermemos")  # judges whose per-question score is a label: 100 CORRECT, 0 WRONG


def constant_judge_note(protocol: str, judge_model: str | None,
                        judged: Sequence[tuple[float, float | None]]) -> str | None:
    """`judged`: (the judgment's score, the answer's F1 ×100 or None) for each judged question. The note when at
    least MIN_JUDGED questions were judged and every one got the same score, with how many of them had F1 0 (a
    score above 0) or F1 100 (a score below 100); None otherwise."""
    scores = {score for score, _ in judged}
    if len(judged) < MIN_JUDGED or len(scores) != 1:
        return None
    score = scores.pop()
    n = len(judged)
    if protocol in LABELLED and score in (0.0, 100.0):
        said = f"labelled all {n:,} judged answers {'CORRECT' if score else 'WRONG'}"
    else:
        said = f"scored all {n:,} judged answers {score:g}"
    extremes = [f"{count:,} with F1 {f1}" for f1, count, shown in (
        (0, sum(1 for _, f in judged if f == 0), score > 0),
        (100, sum(1 for _, f in judged if f is not None and f >= 100), score < 100)) if shown and count]
    who = f"{judge_model} ({protocol})" if judge_model else f"The {protocol} judge"
    return (f"{who} {said}" + (f", including {' and '.join(extremes)}" if extremes else "")
            + ": this judge does not tell answers apart here; J is not a measurement of the system (measure a judge "
            "with `memeval judge calibrate`).")
