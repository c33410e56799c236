"""Which conversations and questions a run covers: `all`, a list, `prototype`, a seeded category-stratified
sample of N (`N`, `sample:N`) or the first N in file order (`first:N`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memeval.errors import InputError

if TYPE_CHECKING:  # the CLI imports this module for its help text: the loader is not needed for that
    from memeval.conversations import QA, Conversation

PROTOTYPE_CONVERSATION = "conv-26"
PROTOTYPE_QUOTA = {2: 10, 4: 8, 1: 2}  # first 10 temporal, 8 single-hop, 2 multi-hop, in file order
MAX_QUESTIONS = 100_000  # the bound of every --questions count (commands/arguments.py BOUNDS)


def select_conversations(conversations: Sequence[Conversation], spec: str) -> list[Conversation]:
    if spec == "all":
        return list(conversations)
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    by_id = {c.sample_id: c for c in conversations}
    unknown = [w for w in wanted if w not in by_id]
    if unknown or not wanted:
        raise InputError("--conversations", spec, f"unknown conversation id(s) {', '.join(unknown) or '(none)'}; "
                         f"known: {', '.join(by_id)}")
    return [by_id[w] for w in dict.fromkeys(wanted)]


def prototype_questions(conversation: Conversation) -> list[QA]:
    taken = {c: 0 for c in PROTOTYPE_QUOTA}
    chosen = []
    for qa in conversation.qa:
        if qa.category in taken and taken[qa.category] < PROTOTYPE_QUOTA[qa.category]:
            taken[qa.category] += 1
            chosen.append(qa)
    return chosen


QUESTIONS_HELP = ("all (default); N or sample:N: a seeded sample of N questions per conversation, stratified by "
                  "category (each category present gets one, the rest in proportion to its share; --question-seed "
                  "picks it); first:N: the first N per conversation in file order (what N meant before, mostly "
                  "categories 1-3 for small N); prototype: notebook 01's 20 questions of conv-26")


def question_spec(spec: str | int) -> tuple[str, int | None]:
    """(`all` | `prototype` | `first` | `sample`, N): what a --questions value asks for, refused in one line."""
    text = str(spec).strip()
    if text in ("all", "prototype"):
        return text, None
    mode, _, count = text.rpartition(":")
    if mode not in ("", "first", "sample") or not re.fullmatch(r"[0-9]+", count.strip()):
        raise InputError("--questions", text, "expected all, prototype, N, sample:N or first:N")
    n = int(count) if len(count.strip()) <= 7 else MAX_QUESTIONS + 1
    if not 1 <= n <= MAX_QUESTIONS:
        raise InputError("--questions", text, f"expected N from 1 to {MAX_QUESTIONS:,} (questions per conversation)")
    return mode or "sample", n


def questions_identity(spec: str | int, seed: int) -> dict:
    """The identity fields of a question selection. `first:N` records the bare `N` every run made before samples
    existed recorded (there it meant the first N), so those directories resume unchanged under `first:N`; a sample
    records `sample:N` and its seed; `all` and `prototype` are recorded as before."""
    mode, n = question_spec(spec)
    if mode == "first":
        return {"questions": str(n)}
    if mode == "sample":
        return {"questions": f"sample:{n}", "question_seed": seed}
    return {"questions": mode}


def refuse_a_sample_of_a_file_order_run(out, spec: str | int) -> None:
    """A directory whose identity records a bare `N` holds the first N questions in file order (what N meant before
    samples existed). Asking it for a sample is refused naming the spelling that resumes it, before the generic
    refusal that would only say '5' here, 'sample:5' asked."""
    from pathlib import Path

    from memeval.rundir import read_manifest, recorded_identity

    identity = recorded_identity(read_manifest(Path(out)))
    recorded = str((identity.fixed if identity else {}).get("questions", ""))
    if recorded.isdigit() and question_spec(spec)[0] == "sample":
        raise InputError(out, "--questions", f"this run holds the first {recorded} questions per conversation in file "
                         f"order (recorded as {recorded}, before N meant a seeded sample): resume it with --questions "
                         f"first:{recorded}, or use another --out (or --restart) for a sample")


def _rank(seed: int, qa: QA) -> str:
    """A question's place in the seed's order: a hash of seed and question id, the same on every platform and
    Python version, and a question keeps its place when others are added to the file."""
    return hashlib.sha256(f"{seed}:{qa.sample_id}".encode()).hexdigest()


def stratified_sample(questions: Sequence[QA], n: int, seed: int) -> list[QA]:
    """N questions, every category present given one (while N allows, larger categories first) and the rest
    allotted in proportion to each category's count (largest remainder); within a category the lowest ranks.
    Returned in file order."""
    by_category: dict[int, list[QA]] = {}
    for qa in questions:
        by_category.setdefault(qa.category, []).append(qa)
    if n >= len(questions):
        return list(questions)
    sizes = {c: len(q) for c, q in by_category.items()}
    order = sorted(sizes, key=lambda c: (-sizes[c], c))
    quota = {c: 0 for c in sizes}
    for c in order[:n]:
        quota[c] = 1
    left, room = n - sum(quota.values()), {c: sizes[c] - quota[c] for c in sizes}
    total = sum(room.values())
    if left and total:
        shares = {c: left * room[c] / total for c in sizes}
        for c in sizes:
            quota[c] += int(shares[c])
        rest = left - sum(int(v) for v in shares.values())
        for c in sorted(sizes, key=lambda c: (-(shares[c] - int(shares[c])), -sizes[c], c))[:rest]:
            quota[c] += 1
    chosen = {qa.sample_id for c, qs in by_category.items()
              for qa in sorted(qs, key=lambda q: _rank(seed, q))[:quota[c]]}
    return [qa for qa in questions if qa.sample_id in chosen]


def select_questions(conversation: Conversation, spec: str | int, seed: int = 0) -> list[QA]:
    """`all`; `prototype` (the quota above, in file order; conv-26 only, so a report's "20 questions, 1
    conversation" is true); `first:N`, the first N in file order; `N` or `sample:N`, the seeded stratified sample."""
    mode, n = question_spec(spec)
    if mode == "all":
        return list(conversation.qa)
    if mode == "prototype":
        if conversation.sample_id != PROTOTYPE_CONVERSATION:
            raise InputError("--conversations", conversation.sample_id,
                             f"--questions prototype is notebook 01's 20 questions of {PROTOTYPE_CONVERSATION} alone: "
                             f"pass --conversations {PROTOTYPE_CONVERSATION} with it (not all, not a list), or "
                             "another --questions")
        return prototype_questions(conversation)
    if mode == "first":
        return list(conversation.qa[:n])
    return stratified_sample(conversation.qa, n, seed)
