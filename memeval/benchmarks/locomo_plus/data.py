"""LoCoMo-Plus's Cognitive items, where they come from, and how one is stitched into a LoCoMo conversation.

The repository (github.com/xjtuleeyf/Locomo-Plus) has no licence file, so nothing of it is committed here: the
user fetches its files at the pinned commit (datasets.py: `memeval data fetch locomo-plus`). The stitching
follows the benchmark's `data/build_conv.py` as its behaviour is described in docs (written from a reading of it,
not copied): the trigger comes 7 days after the conversation's last session, the cue `time_gap` before that, both
as new sessions in time order; "A"/"B" become the conversation's two speakers. Here the cue becomes a session the
memory systems ingest, dated in LoCoMo's own format, and the trigger is what they are asked.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from memeval.benchmarks.locomo_plus.categories import COGNITIVE
from memeval.conversations import QA, Conversation, Session, Turn
from memeval.errors import InputError

CHOICES = ("cyclic", "random")  # which LoCoMo conversation an item is stitched into (see `assign`)
LOCOMO_DATE = "%I:%M %p on %d %B, %Y"
QUERY_AFTER = timedelta(days=7)  # the trigger: a week after the conversation's last session
UNIT_DAYS = {"week": 7, "month": 30, "year": 365}
COUNT_WORDS = {w: n for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}
COUNT_WORDS.update(a=1, an=1)
_GAP = re.compile(r"\b(\d+|[a-z]+)\b\s*(week|month|year)s?\b")


@dataclass(frozen=True)
class PlusItem:
    """One Cognitive item: its position in the file is its id (the file has none)."""

    index: int
    cue_dialogue: str
    trigger_query: str
    time_gap: str
    relation_type: str | None = None

    @property
    def item_id(self) -> str:
        return f"plus-{self.index:04d}"


def load_items(path: str | Path) -> list[PlusItem]:
    """The items of a locomo_plus.json (a list of objects with cue_dialogue, trigger_query and time_gap), each refused
    here, before a run writes anything, if its cue or trigger has no speaker line the stitching can use."""
    from memeval.safe_json import load_json_file

    path = Path(path)
    raw = load_json_file(path, "LoCoMo-Plus items")
    if not isinstance(raw, list):
        raise InputError(path, "items", f"expected a list, got {type(raw).__name__}")
    items = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise InputError(path, f"[{i}]", f"expected an object, got {type(entry).__name__}")
        for key in ("cue_dialogue", "trigger_query", "time_gap"):
            if not isinstance(entry.get(key), str):
                raise InputError(path, f"[{i}].{key}", "missing" if key not in entry else
                                 f"expected a string, got {type(entry[key]).__name__}")
        for key in ("cue_dialogue", "trigger_query"):
            if not any(words for _, words in ab_turns(entry[key])):
                raise InputError(path, f"[{i}] (plus-{i:04d}).{key}",
                                 "no line starting 'A:' or 'B:' with words after it; the benchmark's build_conv.py "
                                 "reads only those lines, so this item would have no " +
                                 ("cue to remember" if key == "cue_dialogue" else "trigger to answer"))
        relation = entry.get("relation_type")
        items.append(PlusItem(i, entry["cue_dialogue"], entry["trigger_query"], entry["time_gap"],
                              relation if isinstance(relation, str) else None))
    if not items:
        raise InputError(path, "items", "empty")
    return items


def gap_days(time_gap: str) -> int:
    """Days between cue and trigger: the first "<count> week(s)/month(s)/year(s)" (a count in digits, a number
    word up to twelve, "a" or "an"); a month is 30 days, a year 365. No such phrase ("several months later") is no
    gap, as in the benchmark: the cue then sits just before the trigger."""
    for match in _GAP.finditer(time_gap.lower().strip()):
        word, unit = match.groups()
        count = int(word) if word.isdigit() else COUNT_WORDS.get(word)
        if count is not None:
            return count * UNIT_DAYS[unit]
    return 0


def ab_turns(text: str) -> list[tuple[str, str]]:
    """("A" or "B", words) per line that starts with "A:" or "B:" once stripped; other lines are not turns."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if line[:2] in ("A:", "B:"):
            out.append((line[0], line[2:].strip()))
    return out


def speaker_of(conversation: Conversation, letter: str) -> str:
    return conversation.speaker_a if letter == "A" else conversation.speaker_b


def locomo_date(moment: datetime) -> str:
    """A datetime as LoCoMo writes session dates ("1:56 pm on 8 May, 2023")."""
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'am' if moment.hour < 12 else 'pm'} on {moment.day} {moment:%B}, {moment.year}"


@dataclass(frozen=True)
class Stitched:
    """One item inside one conversation: the conversation the systems ingest (its sessions and the cue session, in
    time order), the question (the trigger), and where the cue landed."""

    item: PlusItem
    base: Conversation
    conversation: Conversation
    qa: QA
    cue_time: datetime
    query_time: datetime
    cue_after: int | None  # index (in the base's session order) of the last session at or before the cue; None: none
    trigger: tuple[tuple[str, str], ...]  # (speaker, words)

    @property
    def cue_turns(self) -> tuple[Turn, ...]:
        return next(s.turns for s in self.conversation.sessions if s.index == self.cue_session)

    @property
    def cue_session(self) -> int:
        return max(s.index for s in self.base.sessions) + 1

    @property
    def gap_days(self) -> int:
        return (self.query_time - self.cue_time).days


def consecutive_sessions(conversation: Conversation) -> list[Session]:
    """session_1, session_2, ... up to the first missing number (the benchmark's reading of a conversation)."""
    by_index = {s.index: s for s in conversation.sessions}
    out, n = [], 1
    while n in by_index:
        out.append(by_index[n])
        n += 1
    return out


def session_time(conversation: Conversation, session: Session) -> datetime:
    try:
        return datetime.strptime(session.date_time, LOCOMO_DATE)
    except ValueError:
        raise InputError(conversation.sample_id, f"session_{session.index}_date_time",
                         f"{session.date_time!r} is not LoCoMo's date format (e.g. '1:56 pm on 8 May, 2023'); the "
                         "stitching needs every session's date") from None


def stitch(item: PlusItem, base: Conversation) -> Stitched:
    sessions = consecutive_sessions(base)
    if not sessions:
        raise InputError(base.sample_id, "session_1", "no sessions to stitch into")
    times = [session_time(base, s) for s in sessions]
    query_time = times[-1] + QUERY_AFTER
    cue_time = query_time - timedelta(days=gap_days(item.time_gap))
    cue_after = None
    for i, t in enumerate(times):
        if t > cue_time:
            break
        cue_after = i
    cue_index = max(s.index for s in base.sessions) + 1
    cue_turns = tuple(Turn(f"D{cue_index}:{k}", speaker_of(base, letter), words, cue_index, k - 1)
                      for k, (letter, words) in enumerate(ab_turns(item.cue_dialogue), 1))
    cue = Session(cue_index, locomo_date(cue_time), cue_time, cue_turns)
    # sessions in time order, the cue after any session of its own instant (a stable sort, as the benchmark's)
    ordered = [s for _, _, s in sorted([(t, 0, s) for t, s in zip(times, sessions, strict=True)] + [(cue_time, 1, cue)],
                                       key=lambda e: (e[0], e[1]))]
    trigger = tuple((speaker_of(base, letter), words) for letter, words in ab_turns(item.trigger_query))
    if not trigger:
        raise InputError(item.item_id, "trigger_query", "no 'A:' or 'B:' line")
    qa = QA(sample_id=item.item_id, conversation_id=base.sample_id, index=item.index,
            question="\n".join(words for _, words in trigger), answer=None, category=COGNITIVE,
            evidence=tuple(t.dia_id for t in cue_turns), evidence_ids=tuple(t.dia_id for t in cue_turns),
            unresolved_evidence=())
    conversation = Conversation(sample_id=f"{base.sample_id}.{item.item_id}", speaker_a=base.speaker_a,
                                speaker_b=base.speaker_b, sessions=tuple(ordered), qa=(qa,), observations=(),
                                session_summaries={}, event_summaries={},
                                session_dates={s.index: s.date_time for s in ordered})
    return Stitched(item, base, conversation, qa, cue_time, query_time, cue_after, trigger)


def assign(items: list[PlusItem], conversations: list[Conversation], rule: str, seed: int = 0
           ) -> list[tuple[PlusItem, Conversation]]:
    """Which conversation each item goes into, over the whole LoCoMo list in file order. `cyclic`: item i into
    conversation i mod n, as the benchmark's unified_input.py (its evaluation input) does. `random`: one draw per
    item in file order from Python's `random` seeded with `seed` — what build_conv.py's unseeded `random.choice`
    does once seeded, so its output for a seed can be compared."""
    if not conversations:
        raise InputError("LoCoMo", "conversations", "none to stitch into")
    if rule == "cyclic":
        return [(item, conversations[item.index % len(conversations)]) for item in items]
    if rule == "random":
        rng = random.Random(seed)
        drawn = {}
        for i in range(max((item.index for item in items), default=-1) + 1):
            drawn[i] = rng.choice(conversations)  # every earlier item draws too, so a subset keeps its choices
        return [(item, drawn[item.index]) for item in items]
    raise InputError("--choice", rule, f"expected one of {', '.join(CHOICES)}")


def placed(items: list[PlusItem], conversations: list[Conversation], rule: str, seed: int, wanted: set[str]
           ) -> list[Stitched]:
    """The items a run asks: each stitched into the conversation `assign` chose, kept where that conversation is
    one of the `wanted` (a run's --conversations). The run and the viewer (viewed.py) build them the same way."""
    return [stitch(item, conversation) for item, conversation in assign(items, conversations, rule, seed)
            if conversation.sample_id in wanted]


def evidence_text(conversation: Conversation, refs) -> str:
    """What the benchmark's judge reads as evidence: each "Dn:k" reference (split on ';') as "speaker：words" from
    turn k of session n by position; a reference that does not read as one, or names no turn, as a marked line."""
    by_index = {s.index: s for s in conversation.sessions}
    lines = []
    for ref in (part.strip() for raw in refs for part in str(raw).split(";")):
        if not ref:
            continue
        parts = ref.split(":")
        try:
            if len(parts) != 2:
                raise ValueError(ref)
            session, turn = int(parts[0].replace("D", "")), int(parts[1])
        except ValueError:
            lines.append(f"[{ref}] [Parse error]")
            continue
        turns = by_index[session].turns if session in by_index else ()
        lines.append(f"{turns[turn - 1].speaker}\uff1a{turns[turn - 1].text}" if 1 <= turn <= len(turns)
                     else f"[{ref}] [Missing turn]")
    return "\n".join(lines)


def cue_evidence(stitched: Stitched) -> str:
    """The Cognitive judge's evidence: the cue's turns with the speakers' names, empty ones left out."""
    return "\n".join(f"{t.speaker}\uff1a{t.text.strip()}" for t in stitched.cue_turns if t.text)
