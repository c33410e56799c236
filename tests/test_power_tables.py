"""The power of each comparison in the tables a reader sees: `memeval results` (markdown, csv, json) and report.md
on a small run this test writes — two systems, three conversations, a graded judge — checked against numbers
computed here by hand: the paired MDE, the verdict, the mean answer length in words, the Wilson interval of a small
category, and each J's leniency ("leniency not measured", or the rate a calibration registered for exactly that
judge configuration)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.rows import answer, answer_row, judgment, judgment_row

Z = 1.959963984540054 + 0.8416212335729143  # z_0.975 + z_0.8
JUDGE = {"model": "judge-model-x", "provider": "anthropic", "api_version": "2023-06-01", "sampling": "protocol",
         "temperature_sent": 0.5, "prompt_version": "v-test", "runs": 1}
# (sample id, category, alpha F1, beta F1, alpha answer, beta answer, alpha J, beta J)
QUESTIONS = [
    ("c1:q1", 1, 0.5, 0.25, "red kite over hills", "a kite", 100.0, 0.0),
    ("c1:q2", 2, 1.0, 1.0, "Tuesday", "on a Tuesday afternoon", 100.0, 100.0),
    ("c1:q3", 4, 0.0, 0.5, "no idea", "the blue one", 0.0, 100.0),
    ("c2:q1", 4, 0.75, 0.0, "three small boats", "none", 100.0, 0.0),
    ("c2:q2", 2, 0.25, 0.25, "in May", "May", 0.0, 0.0),
    ("c3:q1", 4, 1.0, 0.5, "the green lamp", "a lamp", 100.0, 100.0),
    ("c3:q2", 1, 0.5, 0.0, "two", "nobody knows that", 100.0, 0.0),
]


def _by_hand_mde(diffs: list[float], clusters: list[str]) -> tuple[float, float]:
    """(mean, MDE) written out: centred cluster sums, G/(G − 1) · Σ S_g² / n², times z_0.975 + z_0.8."""
    n, mean = len(diffs), sum(diffs) / len(diffs)
    sums: dict[str, float] = {}
    for d, c in zip(diffs, clusters, strict=True):
        sums[c] = sums.get(c, 0.0) + d - mean
    g = len(sums)
    return mean, Z * math.sqrt(g / (g - 1) * sum(s * s for s in sums.values()) / n ** 2)


def _rows(table: str) -> list[list[str]]:
    """The cells of each row of a Markdown table (padded or not)."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()
            if line.startswith("|") and not line.startswith("|--") and not line.startswith("|-")]


def _write_run(run: Path, judge: dict, questions=QUESTIONS) -> None:
    run.mkdir(parents=True)
    answers, judgments = [], []
    for sample, category, f1_a, f1_b, text_a, text_b, j_a, j_b in questions:
        for system, f1, text, j in (("alpha", f1_a, text_a, j_a), ("beta", f1_b, text_b, j_b)):
            answers.append(answer_row(sample, category=category, system=system, f1=f1, prediction=text))
            judgments.append(judgment_row(sample, category=category, system=system, mean=j, std=0.0, scores=[j],
                                          run_count=1, judge_model=judge["model"]))
    (run / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    (run / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in judgments))
    manifest = {"command": "locomo run", "complete": True, "git_sha": "0123456789abcdef",
                "identity": {"kind": "locomo run", "fixed": {"reader": "extractive"},
                             "additive": {"systems": {"alpha": {}, "beta": {}}, "judges": {"graded": judge}}}}
    (run / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def places(tmp_path, monkeypatch) -> Path:
    """A cache, an empty audit directory and an empty calibrations directory of this test's own."""
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "audit"))
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATIONS_DIR", str(tmp_path / "calibrations"))
    return tmp_path


def test_results_show_mde_verdict_length_and_leniency(places):
    from memeval.reports.results import (
        LENGTH_TITLE,
        PAIRED_SYSTEMS,
        POWER_TITLE,
        compare,
        csv_text,
        json_document,
        markdown,
    )

    run = places / "run"
    _write_run(run, JUDGE)
    comparison = compare([run], by_category=True)
    f1_diffs = [100 * (q[2] - q[3]) for q in QUESTIONS]
    clusters = [q[0].split(":")[0] for q in QUESTIONS]
    mean, mde = _by_hand_mde(f1_diffs, clusters)
    row = next(r for r in comparison.rows if r.kind == PAIRED_SYSTEMS and r.metric.startswith("F1")
               and r.group == "overall (1–4)")
    assert (row.system, row.minus_system, row.n) == ("alpha", "beta", 7)
    assert row.value == pytest.approx(mean) and row.mde == pytest.approx(mde, rel=1e-12)
    verdict = "within noise" if abs(mean) < 1.959963984540054 * mde / Z else "real at α = 0.05"
    assert row.verdict == verdict

    text = markdown(comparison)
    power = {(r[0], r[1]): r[2:] for r in _rows(text.split(f"## {POWER_TITLE}\n", 1)[1].split("\n## ", 1)[0])}
    assert power["alpha − beta", "F1 ×100"][2:] == ["7", f"{mde:.1f}", verdict]
    assert ("alpha − beta", "F1 ×100, temporal (2)") in power and ("alpha − beta", "J (graded)") in power

    length = {(r[0], r[1]): r[2] for r in _rows(text.split(f"## {LENGTH_TITLE}\n", 1)[1].split("\n## ", 1)[0])}
    words_alpha = sum(len(q[4].split()) for q in QUESTIONS) / len(QUESTIONS)
    shown = length["alpha", "answer words (mean)"].split(" ")[0]  # to the places its interval justifies
    assert float(shown) == pytest.approx(words_alpha, abs=0.5 * 10 ** -len(shown.partition(".")[2]))
    assert length["alpha", "J (graded): leniency"] == "leniency not measured"
    assert "- J (graded) of run — leniency not measured." in text.split("## ")[1]  # under the runs table too
    # J of multi-hop (1): two questions, alpha judged 100 on both → the Wilson interval of 2 of 2, not a bootstrap
    from memeval.scoring.power import wilson

    low, high = wilson(2, 2)
    value, interval = length["alpha", "J (graded), multi-hop (1)"].split(" ", 1)
    assert float(value) == 100 and interval.endswith(" Wilson")
    shown_low, shown_high = (float(x) for x in interval.removesuffix(" Wilson").strip("[]").split(", "))
    assert shown_low == pytest.approx(100 * low, abs=0.5) and shown_high == pytest.approx(100 * high, abs=0.5)

    csv_rows = csv_text(comparison.rows).splitlines()
    assert csv_rows[0].split(",")[-4:] == ["minus_system", "mde", "verdict", "leniency"]
    doc = json_document(comparison)
    within = next(d for d in doc.paired if d.minus_system == "beta" and d.metric.startswith("F1")
                  and d.group == "overall (1–4)")
    assert within.mde == pytest.approx(mde) and within.verdict == verdict and within.run == within.minus
    j_cell = next(c for c in doc.cells if c.metric.startswith("J (") and c.group == "overall (1–4)")
    assert j_cell.leniency == "leniency not measured"


def test_a_registered_calibration_of_exactly_this_judge_is_shown_and_another_model_is_not(places):
    from memeval.reports.results import compare, markdown
    from memeval.scoring.leniency import Leniency, Rate, register

    rate = Rate.of(4, 10)
    measured = Leniency(**rate.model_dump(), judge="graded", judge_model=JUDGE["model"],
                        prompt_version=JUDGE["prompt_version"], prompt_source="test", sampling="protocol",
                        temperature_sent=0.5, runs=1, answer_set="vague_wrong", by_category={}, source="test run")
    register(places / "calibration-run", [measured])
    same, other = places / "same", places / "other"
    _write_run(same, JUDGE)
    _write_run(other, {**JUDGE, "model": "another-model"})
    expected = f"this judge accepts {rate.text()} of vague wrong answers"
    assert expected in markdown(compare([same]))
    shown = markdown(compare([other]))
    assert expected not in shown and "leniency not measured" in shown


def test_report_md_shows_power_by_category_and_j_beside_length(places):
    from memeval.benchmarks.locomo.report import run_report

    answers = {s: [answer(q[0], category=q[1], system=s, f1=q[2] if s == "alpha" else q[3],
                          prediction=q[4] if s == "alpha" else q[5]) for q in QUESTIONS] for s in ("alpha", "beta")}
    judged = {s: [judgment(q[0], category=q[1], system=s, mean=q[6] if s == "alpha" else q[7], std=0.0,
                           scores=[q[6] if s == "alpha" else q[7]], run_count=1) for q in QUESTIONS]
              for s in ("alpha", "beta")}
    text = run_report(answers, {"graded": judged})
    power = text.split("## Which differences in F1 are real", 1)[1].split("\n## ", 1)[0]
    mean, mde = _by_hand_mde([100 * (q[2] - q[3]) for q in QUESTIONS], [q[0].split(":")[0] for q in QUESTIONS])
    by_group = {(r[0], r[1]): r[2:] for r in _rows(power)}
    assert by_group["alpha − beta", "1–4"][0] == f"+{mean:.1f}" and by_group["alpha − beta", "1–4"][3] == f"{mde:.1f}"
    assert ("alpha − beta", "temporal (2)") in by_group
    jl = text.split("## J beside answer length, by category (graded)", 1)[1].split("\n## ", 1)[0]
    assert "leniency not measured" in jl
    table = {(r[0], r[1]): r[2:] for r in _rows(jl)}
    words_beta = sum(len(q[5].split()) for q in QUESTIONS) / len(QUESTIONS)
    assert table["beta", "1–4"][-1] == f"{words_beta:.1f}" and table["beta", "multi-hop (1)"][2] == "Wilson"
    assert "J (graded judge, ours) — leniency not measured." in text
    assert "## Which differences in J are real (graded" in text


@pytest.mark.parametrize("identity", [None, "x", {"additive": "x"}, {"additive": {"judges": ["graded"]}},
                                      {"additive": {"judges": {"graded": "not a mapping"}}}])
def test_a_manifest_without_a_readable_judge_identity_says_not_measured(identity):
    from memeval.reports.judge_leniency import judge_identities, leniency_by_protocol

    manifest = {"identity": identity}
    assert judge_identities(manifest) == {}
    assert leniency_by_protocol(manifest, ["graded"]) == {"graded": "leniency not measured"}


def test_one_conversation_gets_an_item_level_interval_and_verdict_not_na(places):
    from memeval.reports.results import PAIRED_SYSTEMS, compare

    run = places / "one"
    one = [q for q in QUESTIONS if q[0].startswith("c1:")]
    _write_run(run, JUDGE, one)
    row = next(r for r in compare([run]).rows if r.kind == PAIRED_SYSTEMS and r.metric.startswith("F1"))
    diffs = [100 * (q[2] - q[3]) for q in one]
    _, mde = _by_hand_mde(diffs, [str(i) for i in range(len(diffs))])  # each question its own cluster
    assert row.resampled == "questions" and row.ci_low is not None and row.ci_low <= row.value <= row.ci_high
    assert row.mde == pytest.approx(mde, rel=1e-12) and row.verdict.endswith("(item level)")


def test_the_viewer_names_each_judge_with_its_leniency(places):
    from memeval.scoring.leniency import Leniency, Rate, register
    from memeval.viewer import page_data

    run = places / "viewed"
    _write_run(run, JUDGE)
    assert [p["leniency"] for p in page_data(run, cache_dir=places / "cache")["protocols"]] == \
        ["leniency not measured"]
    rate = Rate.of(3, 12)
    register(places / "calibration-run", [Leniency(
        **rate.model_dump(), judge="graded", judge_model=JUDGE["model"], prompt_version=JUDGE["prompt_version"],
        prompt_source="test", sampling="protocol", temperature_sent=0.5, runs=1, answer_set="specific_wrong",
        by_category={}, source="test run")])
    assert [p["leniency"] for p in page_data(run, cache_dir=places / "cache")["protocols"]] == \
        [f"this judge accepts {rate.text()} of specific wrong ones"]
