"""`memeval judge calibrate`: the audit's recorded rates from scored files this test writes (its own words and
judgments, rates worked out by hand below), live calibrations of `binary` and `evermemos` against the fake OpenAI
server on 127.0.0.1 with scripted labels, the lookup by exact configuration, and a resumed run that sends no
request twice."""

import json
import re
import threading
from pathlib import Path

import pytest

from memeval.benchmarks.locomo.audit.store import AUDIT_ENV
from memeval.benchmarks.locomo.audit_leniency import RECORDED_SOURCE, recorded_identity
from memeval.scoring.leniency import NOT_MEASURED, leniency_for, leniency_text
from tests.audit_sample import QUESTIONS, audit_bytes, pin, write_layout, write_locomo
from tests.fake_openai import TEST_KEY, FakeOpenAI, Rejection, user_text
from tests.test_protocols import pinned  # noqa: F401  (the fixture: the protocol tests' stand-in files, pinned)

# The made-up audit's seven non-adversarial questions (tests/audit_sample.py): id → category
CATEGORY = {"locomo_0_qa0": 2, "locomo_0_qa1": 1, "locomo_0_qa2": 4, "locomo_0_qa4": 3,
            "locomo_1_qa0": 4, "locomo_1_qa1": 4, "locomo_1_qa2": 2}
GOLD = {f"locomo_{c}_qa{q}": answer for c, items in enumerate(QUESTIONS.values())
        for q, (_, answer, category) in enumerate(items) if category != 5}

# Recorded judgments, three runs each (T accepted). v1: run 1 accepts 0_qa0 and 0_qa2, run 2 0_qa2 and 1_qa0,
# run 3 0_qa2 alone: (2 + 2 + 1) / 21 = 23.8095%. Single-hop (0_qa2, 1_qa0, 1_qa1): (1 + 2 + 1) / 9 = 44.4444%;
# temporal (0_qa0, 1_qa2): (1 + 0 + 0) / 6 = 16.6667%; multi-hop and open-domain 0.
V1_RECORDED = {"locomo_0_qa0": "TFF", "locomo_0_qa1": "FFF", "locomo_0_qa2": "TTT", "locomo_0_qa4": "FFF",
               "locomo_1_qa0": "FTF", "locomo_1_qa1": "FFF", "locomo_1_qa2": "FFF"}
# v2: all accepted but 0_qa1 (never) and 1_qa2 (runs 1 and 3): (6 + 5 + 6) / 21 = 80.9524%; multi-hop 0;
# temporal (0_qa0 TTT, 1_qa2 TFT): (1 + 0.5 + 1) / 3 = 83.3333%; single-hop 100; open-domain 100.
V2_RECORDED = {**{k: "TTT" for k in CATEGORY}, "locomo_0_qa1": "FFF", "locomo_1_qa2": "TFT"}

# Answers the live judge is shown: each question's specific-but-wrong and vague answer, this test's own words
V1 = {k: f"specific miss {i}" for i, k in enumerate(CATEGORY)}
V2 = {k: f"something about topic {i}" for i, k in enumerate(CATEGORY)}
# What the scripted judge accepts: two specific misses (0_qa2 single-hop, 0_qa0 temporal), five vague answers
# (all but 0_qa1 and 1_qa2), and every gold answer but "Likely yes" (0_qa4, open-domain).
ACCEPTED = {V1["locomo_0_qa2"], V1["locomo_0_qa0"], *[V2[k] for k in CATEGORY if k not in
                                                      ("locomo_0_qa1", "locomo_1_qa2")],
            *[g for k, g in GOLD.items() if k != "locomo_0_qa4"]}


def _scored(judged: dict[str, str], answers: dict[str, str]) -> bytes:
    """A scored file in the audit's layout (`detailed_results` by conversation, string categories)."""
    groups: dict[str, list] = {}
    for audit_id, category in CATEGORY.items():
        conversation = audit_id.split("_")[1]
        question = QUESTIONS[list(QUESTIONS)[int(conversation)]][int(audit_id.split("qa")[1])][0]
        groups.setdefault(f"locomo_exp_user_{conversation}", []).append({
            "question_id": audit_id, "question": question, "golden_answer": GOLD[audit_id],
            "generated_answer": answers[audit_id], "category": str(category),
            "llm_judgments": {f"judgment_{i + 1}": c == "T" for i, c in enumerate(judged.get(audit_id, ""))}})
    return json.dumps({"total_questions": 7, "correct": 0, "accuracy": 0.0, "detailed_results": groups}).encode()


@pytest.fixture()
def audit(tmp_path, monkeypatch):
    """The made-up audit with this test's answer and scored files, fetched into tmp_path; the tiny LoCoMo file."""
    files = {**audit_bytes(), "v1_answers": _scored({}, V1), "v2_answers": _scored({}, V2),
             "v1_scored": _scored(V1_RECORDED, V1), "v2_scored": _scored(V2_RECORDED, V2)}
    pin(monkeypatch, files)
    write_layout(tmp_path / "audit", files)
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "audit"))
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATIONS_DIR", str(tmp_path / "registered"))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    return write_locomo(tmp_path / "locomo10.json")


def _wilson(p: float, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def _by_set(lines: str) -> dict:
    return {r["answer_set"]: r for r in map(json.loads, lines.splitlines())}


def test_recorded_rates_are_the_per_run_mean_of_the_scored_files(audit, cli):
    found = cli("judge", "calibrate", "--judge", "evermemos", "--recorded", "--json", check=True)
    rates = _by_set(found.stdout)
    assert set(rates) == {"specific_wrong", "vague_wrong"}
    v1, v2 = rates["specific_wrong"], rates["vague_wrong"]
    assert v1["rate"] == pytest.approx(100 * 5 / 21, abs=1e-4) and v1["n"] == 7 and v1["runs"] == 3
    assert v2["rate"] == pytest.approx(100 * 17 / 21, abs=1e-4)
    assert (v1["low"], v1["high"]) == pytest.approx(_wilson(5 / 21, 7), abs=1e-4)
    assert {c: round(r["rate"], 4) for c, r in v1["by_category"].items()} == \
        {"1": 0.0, "2": 16.6667, "3": 0.0, "4": 44.4444}
    assert {c: round(r["rate"], 4) for c, r in v2["by_category"].items()} == \
        {"1": 0.0, "2": 83.3333, "3": 100.0, "4": 100.0}
    assert v1["judge"] == "evermemos" and v1["judge_model"] == "gpt-4o-mini" and v1["temperature_sent"] == 0.0
    assert v1["source"] == RECORDED_SOURCE and v1["prompt_version"].startswith("published:")
    assert "gold answers: not measured" in found.stderr

    table = cli("judge", "calibrate", "--judge", "evermemos", "--recorded", check=True).stdout
    assert "| specific wrong ones | 23.81% [" in table and "| gold answers | not measured |" in table


def test_recorded_rates_belong_to_exactly_their_configuration(audit):
    same = recorded_identity()
    assert [r.answer_set for r in leniency_for(same)] == ["specific_wrong", "vague_wrong"]
    assert leniency_text(leniency_for(same)).startswith("this judge accepts 81.0% [")
    for other in ({"model": "gpt-4o"}, {"prompt_version": "a0b1c2d3e4f5a6b7"}, {"sampling": "model-default",
                                                                                "temperature_sent": None},
                  {"judge": "binary"}, {"endpoint": "http://127.0.0.1:1/v1"}):
        assert leniency_for({**same, **other}) == [], other
        assert leniency_text(leniency_for({**same, **other})) == NOT_MEASURED


def test_recorded_refuses_what_the_audit_did_not_record(audit, cli):
    for flags in (["--judge", "binary"], ["--judge", "evermemos", "--judge-model", "gpt-4o"],
                  ["--judge", "evermemos", "--questions", "3"]):
        found = cli("judge", "calibrate", *flags, "--recorded")
        assert found.returncode == 2 and found.stderr.count("\n") == 1 and "--recorded" in found.stderr


def test_recorded_without_the_fetched_audit_names_the_fetch(tmp_path, monkeypatch, cli):
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "none"))
    found = cli("judge", "calibrate", "--judge", "evermemos", "--recorded")
    assert found.returncode == 2 and "memeval data fetch locomo-audit" in found.stderr
    assert leniency_for(recorded_identity()) == []


_ANSWER = re.compile(r"Generated answer: (.*)\n")


class Scripted:
    """The judge's labels by the answer it is shown: accepted answers CORRECT, others WRONG; `mixed` answers are
    accepted by their first call only; after `stop_after` calls the account's quota is exhausted."""

    def __init__(self, mixed=(), stop_after: int | None = None):
        self.mixed, self.stop_after = set(mixed), stop_after
        self.calls: dict[str, int] = {}
        self.answered: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        text = user_text(body)
        answer = _ANSWER.search(text).group(1).strip()
        with self.lock:
            if self.stop_after is not None and len(self.answered) >= self.stop_after:
                raise Rejection(429, "You exceeded your current quota, please check your plan and billing details.",
                                kind="insufficient_quota", code="insufficient_quota")
            self.calls[answer] = self.calls.get(answer, 0) + 1
            self.answered.append(text)
            first = self.calls[answer] == 1
        label = "CORRECT" if answer in ACCEPTED or (answer in self.mixed and first) else "WRONG"
        return json.dumps({"reasoning": "scripted", "label": label})  # the whole reply is the JSON, as the prompt asks


@pytest.fixture()
def server(monkeypatch):
    def start(responder):
        fake = FakeOpenAI(responder=responder)
        fake.__enter__()
        monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        started.append(fake)
        return fake

    started: list = []
    yield start
    for fake in started:
        fake.__exit__(None, None, None)


def _calibrate(cli, locomo: Path, out: Path, *flags):
    return cli("judge", "calibrate", "--llm", "openai", "--data", locomo, "--out", out, "--no-progress", *flags)


def test_a_live_binary_calibration_measures_the_scripted_judge(audit, server, cli, tmp_path):
    fake = server(Scripted())
    run = _calibrate(cli, audit, tmp_path / "binary", "--judge", "binary", "--json")
    assert run.returncode == 0, run.stderr
    rates = _by_set(run.stdout)
    assert len(fake.received) == 21, "seven questions in each of three sets, one run each"
    assert rates["specific_wrong"]["accepted"] == 2 and rates["specific_wrong"]["n"] == 7
    assert rates["vague_wrong"]["rate"] == pytest.approx(100 * 5 / 7, abs=1e-4)
    assert rates["gold"]["rate"] == pytest.approx(100 * 6 / 7, abs=1e-4)
    assert rates["gold"]["by_category"]["3"]["rate"] == 0.0 and rates["gold"]["by_category"]["4"]["rate"] == 100.0
    assert rates["specific_wrong"]["by_category"]["2"]["rate"] == 50.0
    assert (rates["gold"]["low"], rates["gold"]["high"]) == pytest.approx(_wilson(6 / 7, 7), abs=1e-4)
    assert _by_set((tmp_path / "binary" / "calibration.jsonl").read_text()) == rates
    manifest = json.loads((tmp_path / "binary" / "manifest.json").read_text())
    judge = manifest["identity"]["fixed"]["judge"]
    assert judge["name"] == "binary" and judge["model"] == "gpt-4o-mini" and judge["prompt_source"] == "paraphrased"
    assert manifest["complete"] is True

    # a LoCoMo run judged by this very configuration finds these rates; another model does not
    from memeval.reports.judge_leniency import judge_identities

    locomo = cli("locomo", "run", "--data", audit, "--systems", "full_context", "--judge", "binary", "--llm", "openai",
                 "--out", tmp_path / "locomo", "--no-progress", check=True)
    assert locomo.returncode == 0
    identity = judge_identities(json.loads((tmp_path / "locomo" / "manifest.json").read_text()))["binary"]
    found = leniency_for(identity)
    assert [r.answer_set for r in found] == ["specific_wrong", "vague_wrong", "gold"]
    assert leniency_text(found) == ("this judge accepts 71.4% [35.9–91.8] of vague wrong answers, 28.6% [8.2–64.1] "
                                    "of specific wrong ones (and 85.7% [48.7–97.4] of gold answers)")
    assert leniency_for({**identity, "model": "gpt-4o"}) == []
    assert leniency_for({**identity, "judge": "evermemos"}) == []


def test_a_live_evermemos_calibration_takes_the_per_run_mean(audit, server, cli, tmp_path):
    mixed = V1["locomo_1_qa1"]  # accepted by one of its three runs
    fake = server(Scripted(mixed={mixed}))
    run = _calibrate(cli, audit, tmp_path / "evermemos", "--judge", "evermemos", "--sets", "specific_wrong",
                     "--json")
    assert run.returncode == 0, run.stderr
    (rate,) = _by_set(run.stdout).values()
    assert len(fake.received) == 21, "three runs for each of seven answers"
    assert rate["runs"] == 3 and rate["accepted"] == pytest.approx(2 + 1 / 3, abs=1e-6)
    assert rate["rate"] == pytest.approx(100 * (2 + 1 / 3) / 7, abs=1e-4)
    assert rate["by_category"]["4"]["rate"] == pytest.approx(100 * (1 + 1 / 3) / 3, abs=1e-4)
    assert rate["judge"] == "evermemos" and rate["prompt_source"] == "paraphrased"
    assert leniency_for({**recorded_identity(), "prompt_version": rate["prompt_version"],
                         "endpoint": rate["endpoint"]})[0].source.endswith("evermemos")


def test_an_interrupted_calibration_resumes_without_sending_a_request_twice(audit, server, cli, tmp_path):
    first = Scripted(stop_after=8)
    fake = server(first)
    stopped = _calibrate(cli, audit, tmp_path / "run", "--judge", "binary")
    assert stopped.returncode == 1 and "insufficient_quota" in stopped.stderr
    sent_before = set(first.answered)
    assert len(sent_before) == 8

    again = Scripted()
    fake.responder = again
    resumed = _calibrate(cli, audit, tmp_path / "run", "--judge", "binary", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert not sent_before & set(again.answered), "a reply the first run got is never asked for again"
    assert len(sent_before) + len(again.answered) == 21
    rates = _by_set(resumed.stdout)
    assert [rates[s]["accepted"] for s in ("specific_wrong", "vague_wrong", "gold")] == [2, 5, 6]


def test_a_calibration_run_needs_a_directory_and_known_sets(audit, cli):
    missing = cli("judge", "calibrate", "--judge", "binary")
    assert missing.returncode == 2 and "--out" in missing.stderr and missing.stderr.count("\n") == 1
    unknown = cli("judge", "calibrate", "--judge", "binary", "--sets", "gold,bogus", "--recorded")
    assert unknown.returncode == 2 and "bogus" in unknown.stderr


@pytest.mark.parametrize("content", ['{"run": 3', '{"run": "/x", "leniency": [{"rate": 250}]}', "[]"])
def test_a_registration_that_cannot_be_read_is_one_line_naming_its_file(tmp_path, monkeypatch, content):
    from memeval.errors import InputError

    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "none"))
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATIONS_DIR", str(tmp_path / "registered"))
    (tmp_path / "registered").mkdir()
    (tmp_path / "registered" / "0123456789.json").write_text(content)
    with pytest.raises(InputError) as refused:
        leniency_for(recorded_identity())
    assert "0123456789.json" in str(refused.value) and "\n" not in str(refused.value)
    assert "delete the file" in str(refused.value)


def test_a_dry_run_counts_the_calls_and_writes_nothing(audit, cli, tmp_path):
    found = cli("judge", "calibrate", "--judge", "evermemos", "--data", audit, "--out", tmp_path / "dry",
                "--dry-run", "--json", check=True)
    judge = json.loads(found.stdout)["judge"]
    assert judge["requests"] == 63 and judge["to_send"] == 63, "seven questions, three sets, three runs each"
    assert not (tmp_path / "dry").exists()


def test_a_run_of_the_published_evermemos_judge_on_gpt_4o_mini_carries_the_recorded_rates(
        audit, pinned, cli, monkeypatch):  # noqa: F811
    """The recorded configuration is what `--judge evermemos --judge-model gpt-4o-mini` sends once the EverMemOS
    prompts are fetched (here the protocol tests' own stand-in file, pinned): its identity finds the rates; the
    paraphrased prompts or another model find none."""
    from memeval.benchmarks.locomo.evermemos_judge import EverMemOSJudge
    from memeval.llm.client import make_client
    from memeval.llm.settings import ModelSettings

    cli("data", "fetch", "protocols", "--source", pinned)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = make_client("replay", settings=ModelSettings("replay", models={"judge": "gpt-4o-mini"}))
    published = {"judge": "evermemos", **EverMemOSJudge().identity(client)}
    assert published["prompt_version"].startswith("published:")
    assert leniency_text(leniency_for(published)).startswith("this judge accepts 81.0% [")
    paraphrased = {"judge": "evermemos", **EverMemOSJudge(fetched=None).identity(client)}
    assert leniency_for(paraphrased) == []
    other = make_client("replay", settings=ModelSettings("replay", models={"judge": "gpt-4o-2024-08-06"}))
    assert leniency_for({"judge": "evermemos", **EverMemOSJudge().identity(other)}) == []
