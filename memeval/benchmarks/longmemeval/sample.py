"""A small synthetic sample in LongMemEval's file format, so a new user without network can try `longmemeval run`.

Every word is this project's own (nothing is taken from LongMemEval); the layout is the benchmark's: a JSON list of
instances with `question_id`, `question_type`, `question`, `answer`, `question_date`, `haystack_session_ids`,
`haystack_dates` ("2023/05/20 (Sat) 02:21"), `haystack_sessions` (turns of `role`, `content`, `has_answer` on the
evidence turns) and `answer_session_ids`; evidence sessions are named `answer_…`, as the benchmark's are, because
its retrieval metrics credit a session by that prefix. One question per type and one abstention (`_abs`).
Each instance also carries `memeval_synthetic`, a field the benchmark does not have (the loader keeps unknown fields
as metadata), so every report and count made from the file says it is synthetic.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from pathlib import Path

SYNTHETIC = "synthetic sample — not LongMemEval"
MARK_FIELD = "memeval_synthetic"
FILE_NAME = "longmemeval_sample.json"
NOTE = (f"{SYNTHETIC}: {FILE_NAME} was written by `memeval data sample longmemeval` (memeval/data/"
        "longmemeval_sample.py) in LongMemEval's file format, with this project's own text; its numbers say that "
        "the pipeline runs, nothing about any memory system on the benchmark.")

# Chat about other things: the haystack each question's evidence hides in.
FILLER = (
    [("user", "Can you convert 350 degrees Fahrenheit to Celsius for an oven?"),
     ("assistant", "350 °F is about 177 °C; most recipes round that to 180 °C.")],
    [("user", "Write me a short haiku about a rainy train platform."),
     ("assistant", "Wet rails hum softly / umbrellas bloom and then close / the last car sighs out")],
    [("user", "What should I pack for a two-day hike with one night in a hut?"),
     ("assistant", "Layers, a rain shell, a head torch, a water filter, snacks, a sleeping-bag liner and a small "
                   "first-aid kit; huts usually provide blankets.")],
    [("user", "How do I stop a spreadsheet formula from changing when I copy it down a column?"),
     ("assistant", "Anchor the reference with dollar signs, for example $B$2, so the copied formula keeps "
                   "pointing at the same cell.")],
    [("user", "Give me three warm-up exercises before a morning run."),
     ("assistant", "Leg swings, walking lunges and high knees, about a minute each.")],
    [("user", "What is a polite way to decline a meeting invitation?"),
     ("assistant", "Thank them, say you cannot attend, and offer an alternative such as notes or another time.")],
)

# (question id, type, question, answer, question date, evidence sessions as (date, turns), the evidence turns being
# those flagged True). An abstention's question has no evidence; its answer explains why it cannot be answered.
INSTANCES = (
    ("synthetic_ssu_01", "single-session-user", "What is the name of the dog I adopted?", "Biscuit",
     "2023/06/02 (Fri) 09:15",
     [("2023/05/20 (Sat) 10:02",
       [("user", "I finally adopted a retired greyhound last week, we named him Biscuit.", True),
        ("assistant", "Congratulations! Greyhounds are calm companions; Biscuit is a lovely name.", False),
        ("user", "Any tips for his first month at home?", False),
        ("assistant", "Keep walks short at first, give him a quiet bed and a steady routine.", False)])]),
    ("synthetic_ssa_01", "single-session-assistant",
     "Which field guide did you suggest to me for identifying tide-pool animals?", "The Rocky Shore Handbook",
     "2023/07/11 (Tue) 18:40",
     [("2023/07/01 (Sat) 14:25",
       [("user", "I am visiting the coast next month and want to learn what lives in tide pools.", False),
        ("assistant", "A good start is The Rocky Shore Handbook: it is pocket-sized and sorted by zone.", True),
        ("user", "Great, I will look for it.", False)])]),
    ("synthetic_ssp_01", "single-session-preference", "Can you suggest something I could cook this weekend?",
     "The user would prefer a vegetarian dish that suits a cast-iron skillet, since they said they stopped eating "
     "meat and cook mostly with their cast-iron pan; a suggestion that ignores either is not what they want.",
     "2023/08/18 (Fri) 12:00",
     [("2023/08/03 (Thu) 19:30",
       [("user", "I stopped eating meat this year and I cook almost everything in my cast-iron skillet.", True),
        ("assistant", "Cast iron is great for searing vegetables and tofu; preheat it well.", False)])]),
    ("synthetic_tr_01", "temporal-reasoning",
     "How many days passed between my first pottery class and the day I glazed my first bowl?", "12 days",
     "2023/09/30 (Sat) 16:00",
     [("2023/09/05 (Tue) 20:10",
       [("user", "Tonight was my first pottery class, the wheel is harder than it looks.", True),
        ("assistant", "Everyone wobbles at first; centering the clay takes a few sessions.", False)]),
      ("2023/09/17 (Sun) 11:45",
       [("user", "Today I glazed my first bowl! It came out a deep blue.", True),
        ("assistant", "That is quick progress, well done.", False)])]),
    ("synthetic_ku_01", "knowledge-update", "How do I get to work these days?", "By bike",
     "2023/10/25 (Wed) 08:05",
     [("2023/10/02 (Mon) 07:50",
       [("user", "My commute is forty minutes on the number 12 bus every morning.", True),
        ("assistant", "A podcast could make the bus ride go faster.", False)]),
      ("2023/10/16 (Mon) 18:20",
       [("user", "I sold my bus pass: since last week I ride my bike to work instead.", True),
        ("assistant", "Good for you; lights and a bright jacket help on dark mornings.", False)])]),
    ("synthetic_ms_01", "multi-session", "How many houseplants have I bought in total?", "5",
     "2023/11/20 (Mon) 13:30",
     [("2023/11/04 (Sat) 15:00",
       [("user", "I bought two houseplants today, a pothos and a snake plant.", True),
        ("assistant", "Both are forgiving; water them when the soil is dry.", False)]),
      ("2023/11/12 (Sun) 10:40",
       [("user", "Three more plants came home with me from the market: two ferns and a small palm.", True),
        ("assistant", "Ferns like humidity, so a bathroom shelf can suit them.", False)])]),
    ("synthetic_ssu_02_abs", "single-session-user", "What is the name of my cat?",
     "The question cannot be answered: a cat was never mentioned; the user talked about adopting a greyhound "
     "named Biscuit.",
     "2023/06/02 (Fri) 09:20", []),
)


def _sid(prefix: str, *parts: str) -> str:
    return f"{prefix}_{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:8]}"


def _date(text: str, days: int) -> str:
    when = datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[1], "%Y/%m/%d %H:%M") \
        - timedelta(days=days)
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def sample_instances() -> list[dict]:
    """The sample, deterministic: each question's evidence sessions among three filler sessions dated before its
    question (an abstention's haystack borrows the dog adoption, so the question is near something it holds)."""
    out = []
    evidence_of = {qid: sessions for qid, _, _, _, _, sessions in INSTANCES}
    for n, (qid, qtype, question, answer, asked, evidence) in enumerate(INSTANCES):
        sessions = []  # (date, id, turns)
        for date, turns in evidence:
            sessions.append((date, _sid("answer", qid, date),
                             [{"role": r, "content": c, **({"has_answer": True} if flag else {})}
                              for r, c, flag in turns]))
        if not evidence:  # nearby but not the answer: no `answer_` id, no has_answer
            for date, turns in evidence_of["synthetic_ssu_01"]:
                sessions.append((date, _sid("chat", qid, date), [{"role": r, "content": c} for r, c, _ in turns]))
        for f in range(3):
            turns = FILLER[(n + f) % len(FILLER)]
            date = _date(asked, 25 - 7 * f)
            sessions.append((date, _sid("chat", qid, str(f)), [{"role": r, "content": c} for r, c in turns]))
        sessions.sort(key=lambda s: datetime.strptime(s[0][:10] + s[0][-5:], "%Y/%m/%d%H:%M"))
        out.append({"question_id": qid, "question_type": qtype, "question": question, "answer": answer,
                    "question_date": asked, "haystack_session_ids": [s[1] for s in sessions],
                    "haystack_dates": [s[0] for s in sessions], "haystack_sessions": [s[2] for s in sessions],
                    "answer_session_ids": [s[1] for s in sessions if s[1].startswith("answer_")],
                    MARK_FIELD: SYNTHETIC})
    return out


def is_synthetic(instances) -> bool:
    """Whether loaded instances come from this sample (or a file built from it)."""
    return any(i.metadata.get(MARK_FIELD) == SYNTHETIC for i in instances)


def write_sample(out: str | Path) -> list[Path]:
    """`longmemeval_sample.json` and a README saying what it is, each written whole."""
    import json

    from memeval.atomic import write_text_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = write_text_atomic(out / FILE_NAME, json.dumps(sample_instances(), indent=1, ensure_ascii=False) + "\n")
    readme = write_text_atomic(out / "README.md", f"# {SYNTHETIC}\n\n{NOTE}\n\nTry it offline:\n\n"
                               f"    memeval longmemeval run --data {FILE_NAME} --systems rag_turns,full_context "
                               "--out runs/lme-sample\n")
    return [Path(data), Path(readme)]
