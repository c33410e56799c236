"""A reader's output cap: each protocol sets one, `--answer-max-tokens` replaces it, and a run whose replies were
cut at it says so plainly. A reply cut at the cap is never an answer (memeval/llm/types.py `unusable_reason`), and at
temperature 0 a rerun gets the same cut reply, so "rerun to retry them" would send the user round in circles: the
remedy is a larger cap or a model that stops by itself (a small base model rambles on)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memeval.errors import InputError

FLAG = "--answer-max-tokens"


def check_cap(cap: int | None, llm_reader: bool) -> None:
    """Refuse a cap that is not a positive integer, or one given to a reader that calls no model."""
    if cap is None:
        return
    if isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0:
        raise InputError(FLAG, str(cap), "expected a positive integer")
    if not llm_reader:
        raise InputError(FLAG, str(cap), "caps an LLM reader's reply; the extractive reader calls no model")


def capped(requests: list, cap: int | None) -> list:
    """The reader's requests with `cap` as their output cap (unchanged when None: each protocol's own). The cap is
    part of every request's cache key, so another cap is another call, never a cached reply cut shorter."""
    return requests if cap is None else [dataclasses.replace(r, max_tokens=cap, max_tokens_from=FLAG) for r in requests]


def was_cut(error: str | None) -> bool:
    """Whether a row's error is a reader reply cut at its output cap (with text, or empty: a thinking model can spend
    the whole cap thinking)."""
    return bool(error) and error.startswith("UnusableReply:") and "cut at max_tokens" in error


def cut_advice(errors: Sequence[str | None], cap: int) -> str | None:
    """What to do when reader replies were cut at the cap (None when none was), for the report and the closing
    line; `errors` holds one entry per answer row of the run, None for an answer."""
    cut = sum(was_cut(e) for e in errors)
    if not cut:
        return None
    others = sum(1 for e in errors if e) - cut
    were = "reader reply was" if cut == 1 else "reader replies were"
    if cut == len(errors):
        head = f"the one {were}" if cut == 1 else f"all {cut:,} {were}"
    else:
        head = f"{cut:,} of {len(errors):,} {were}"
    what, same = ("it is no answer", "reply") if cut == 1 else ("none of them is an answer", "replies")
    tail = f"; rerun to retry the other {others:,} failed answer{'' if others == 1 else 's'}" if others else ""
    return (f"{head} cut at max_tokens={cap}: the model did not stop by itself, so {what}; rerun with a larger "
            f"{FLAG} (another --out, or --restart) or an instruction-tuned model — a plain rerun gets the same {same} "
            f"at temperature 0{tail}")
