"""Honest waiting (issue 42): while one call ran for minutes on a CPU server the bar read `0.0 req/min`, which looks
like a hang. The bar now names the calls in flight and the age of the oldest from its first second, redraws itself
while no row finishes, and shows no rate before a reply has come back, nor a zero one while calls are in flight."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from types import SimpleNamespace

from memeval.progress import CallStatus, ProgressBar
from tests.fake_openai import FakeOpenAI
from tests.test_rate_limits import Clock


class _Client:
    """What CallStatus reads of a client: its stats, its limiter, and the calls in flight (`waiting`)."""

    def __init__(self, clock):
        self.stats = SimpleNamespace(replies=0, retries=0)
        self.limiter = SimpleNamespace(clock=clock, waiting=lambda: None)
        self.flying: list[tuple[str, int, float]] = []

    def waiting(self):
        if not self.flying:
            return None
        model, attempt, start = min(self.flying, key=lambda f: f[2])
        return model, attempt, start, len(self.flying)


def test_the_status_names_the_calls_in_flight_from_the_first_second_and_never_a_zero_rate_beside_them():
    clock = Clock()
    client = _Client(clock)
    status = CallStatus(client, clock=clock)
    client.flying.append(("smollm2-135m", 1, clock.now))
    clock.now += 1
    assert status() == "1 in flight (smollm2-135m, 1 s)", "from the first second, no rate before any reply"
    clock.now += 94
    assert status() == "1 in flight (smollm2-135m, 95 s)"
    client.flying.clear()
    client.stats.replies = 1
    clock.now += 5
    assert status() == "0.6 req/min", "one reply in 100 s"
    client.flying += [("smollm2-135m", 2, clock.now), ("smollm2-135m", 1, clock.now + 3)]
    clock.now += 120  # two minutes without a reply: the rate over the last minute is zero
    assert status() == "2 in flight (oldest: smollm2-135m, attempt 2, 120 s)", "no 0.0 req/min beside calls in flight"
    client.flying.clear()
    assert status() == "0.0 req/min", "nothing in flight, nothing back for a minute: zero is the truth"


def test_a_bar_redraws_itself_while_its_status_and_count_stay_the_same(monkeypatch, capsys):
    import time

    monkeypatch.setenv("MEMEVAL_PROGRESS", "1")
    with ProgressBar(5, "answers", "q", status=lambda: "1 in flight (m, 3 s)", interval_s=0.05):
        time.sleep(0.6)
    drawn = capsys.readouterr().err.count("1 in flight (m, 3 s)")
    assert drawn >= 5, f"drawn {drawn} times in 0.6 s at one redraw every 0.05 s"


LATENCY_S = 3.5


def test_a_slow_local_call_shows_on_the_bar_as_one_in_flight_with_a_growing_age(locomo_dir, tmp_path):
    with FakeOpenAI(responder=lambda body: "7 May 2023", local=True) as server:
        server.latency_s = LATENCY_S
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(OPENAI_BASE_URL=server.url, MEMEVAL_CACHE_DIR=str(tmp_path / "cache"), MEMEVAL_PROGRESS="1")
        done = subprocess.run([sys.executable, "-m", "memeval", "locomo", "run", "--data", str(locomo_dir),
                               "--conversations", "conv-26", "--questions", "first:2", "--systems", "rag_turns",
                               "--reader", "claude", "--llm", "local", "--answer-model", "m",
                               "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    drawn = [d for d in re.split(r"[\r\n]", done.stderr) if d.startswith("answers:")]
    before = drawn[:next(i for i, d in enumerate(drawn) if " 1/2 " in d or " 2/2 " in d)]
    ages = [int(m.group(1)) for d in before if (m := re.search(r"1 in flight \(m, (\d+) s\)", d))]
    assert len(set(ages)) >= 3 and ages == sorted(ages), f"the age grows while the first call waits: {before}"
    assert not any("req/min" in d for d in before), "no rate before the first reply"
    assert not re.search(r"(?<![\d.])0\.0 req/min", done.stderr), done.stderr
