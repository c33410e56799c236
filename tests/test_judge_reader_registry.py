"""Judges and readers come from the benchmarks' declarations (`Benchmark.judges`, `Benchmark.readers`) plus the shared
ones: every declared name loads the judge or reader it names, naming them imports no benchmark module, a benchmark
that declares a reader or judge is reached by name without any shared file changing, the CLI's choice lists keep
their names and order, and Mem0's clock reads the session date the loader parsed."""

import json
import subprocess
import sys
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from memeval.benchmarks import Benchmark, declarations, load
from memeval.conversations import QA, Conversation, Session, Turn
from memeval.errors import InputError
from memeval.memory.base import SystemConfig
from memeval.qa import readers
from memeval.qa.answer_pass import AnswerSettings, answer_conversation, protocol_cap
from memeval.scoring import judges


def test_every_declared_judge_and_reader_is_what_its_name_says():
    declared_judges = {n: t for b in declarations()
                       for n, t in [*b.judges.items(), *(i for k in b.tasks.values() for i in k.judges.items())]}
    declared_readers = {n: t for b in declarations() for n, t in b.readers.items()}
    assert declared_judges and declared_readers
    assert not set(declared_judges) & set(judges.SHARED) and not set(declared_readers) & set(readers.SHARED)
    for name, target in declared_judges.items():
        assert judges.JUDGES[name] is load(target)
    for name in declared_readers:
        reader = readers.reader(name)
        assert isinstance(reader, readers.Reader) and reader.llm and reader.name == name
    assert list(judges.JUDGES) == [*judges.SHARED, *declared_judges]
    assert judges.JUDGES["evermemos"](None).runs == 3 and judges.JUDGES["evermemos"](2).runs == 2
    assert judges.JUDGES["evermemos"](None).name == "evermemos"
    assert judges.JUDGES["longmemeval"]().name == "longmemeval"


def test_choice_lists_keep_their_names_and_order():
    from memeval.qa import choices

    assert choices.ANSWERERS == ("extractive", "claude", "claude_official", "evermemos_mem0", "evermemos_memos",
                                 "evermemos_cot")
    assert choices.LLM_ANSWERERS == choices.ANSWERERS[1:]
    assert choices.JUDGE_CHOICES == ("none", "graded", "binary", "evermemos")
    assert readers.names() == choices.ANSWERERS
    assert protocol_cap("extractive") == protocol_cap("claude") == 64
    assert {protocol_cap(n) for n in ("evermemos_mem0", "evermemos_memos", "evermemos_cot")} == {32768}


def test_naming_judges_and_readers_imports_no_benchmark_module():
    script = ("import sys\n"
              "from memeval.qa import choices, readers\n"
              "from memeval.scoring.judges import JUDGES\n"
              "names = (list(JUDGES), readers.names(), choices.JUDGE_CHOICES)\n"
              "import json; print(json.dumps(sorted(m for m in sys.modules if m.startswith('memeval.benchmarks.') and m.count('.') > 2)))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


class ShoutingReader(readers.Reader):
    def cap(self) -> int:
        return 7

    def requests(self, searched, conversation, shared):
        from memeval.llm.client import LLMRequest

        return [LLMRequest(messages=(("user", qa.question),), max_tokens=self.cap(), role="answer")
                for qa, _, _, _ in searched]

    def prediction(self, qa, reply):
        return reply.upper()


def toy_judge(runs=None):
    return SimpleNamespace(name="toy", runs=runs)


TOY = Benchmark(name="toy", command="unused", judges={"toy": f"{__name__}:toy_judge"},
                readers={"shouting": f"{__name__}:ShoutingReader"})


class Replies:
    """A client answering every request with the same text."""

    def __init__(self):
        self.asked = []

    def resolve(self, request):
        return SimpleNamespace(key=f"k{len(self.asked)}")

    def complete_many(self, requests):
        self.asked += requests
        return [SimpleNamespace(text="  the lake  ", latency_s=0.0) for _ in requests]


def conversation() -> Conversation:
    turn = Turn("D1:1", "Ann", "We went to the lake.", 1, 0)
    qa = QA("toy:q0", "toy", 0, "Where did they go?", "the lake", 1, ("D1:1",), ("D1:1",), ())
    return Conversation("toy", "Ann", "Bo", (Session(1, "1:00 pm on 8 May, 2023", None, (turn,)),), (qa,), (), {},
                        {}, {})


def test_a_benchmark_declaring_a_reader_and_a_judge_is_reached_by_name(monkeypatch):
    monkeypatch.setattr(readers, "declarations", lambda: [*declarations(), TOY])
    monkeypatch.setattr(judges, "declarations", lambda: [*declarations(), TOY])
    assert judges.JUDGES["toy"](4).runs == 4 and list(judges.JUDGES)[-1] == "toy"
    assert readers.names()[-1] == "shouting" and protocol_cap("shouting") == 7
    client = Replies()
    [row] = answer_conversation(SystemConfig("full_context"), conversation(), conversation().qa,
                                AnswerSettings("shouting", 5), client=client)
    assert row.prediction == "  THE LAKE  " and row.answerer == "shouting" and row.error is None
    assert [r.max_tokens for r in client.asked] == [7] and client.asked[0].messages == (("user", "Where did they go?"),)
    with pytest.raises(ValueError, match="unknown answerer 'whisper'"):
        readers.reader("whisper")


def test_mem0_clock_reads_the_loaders_date():
    from memeval.memory.mem0_system import add_calls, session_clock

    dated = conversation()
    dated = Conversation(**{**dated.__dict__, "sessions": (Session(1, "1:00 pm on 8 May, 2023",
                                                                   datetime(2023, 5, 8, 13, 0),
                                                                   dated.sessions[0].turns),)})
    assert {session_clock(c) for c in add_calls(dated)} == {datetime(2023, 5, 8, 13, 0, tzinfo=timezone.utc)}
    with pytest.raises(InputError, match="session 1 date_time: '1:00 pm on 8 May, 2023' is not a date its loader"):
        session_clock(add_calls(conversation())[0])
