import json
from dataclasses import replace

import numpy as np
import pytest

from memeval.benchmarks.locomo.natural_source import (
    build_natural,
    build_package,
    eligible_questions,
    examination_order,
    support_slice,
)
from memeval.cli import main
from memeval.memaudit.package import load_package, package_from_dict
from memeval.memaudit.writers import TfidfSalienceEstimator, estimated_gvt, run_writer
from memeval.natural.rules import (
    best_summary_sentence,
    byte_overhead_cost,
    content_tokens,
    lexical_support,
    quarter_floor,
    states_date,
    word_cost,
)


@pytest.fixture(scope="module")
def examined(conversations):
    return build_natural(conversations)


def test_rules():
    assert [quarter_floor(v) for v in (0.0, 0.24, 0.25, 0.74, 0.999, 1.0)] == [0, 0, 0.25, 0.5, 0.75, 1.0]
    gold = content_tokens("adoption agencies")
    turn = content_tokens("I've been researching adoption agencies lately")
    assert lexical_support(gold, turn, content_tokens("Caroline researches adoption agencies.")) == 1.0
    assert lexical_support(gold, turn, content_tokens("Caroline looked at adoption options.")) == 0.5
    not_literal = content_tokens("Transgender woman")
    turn2 = content_tokens("my journey of transition changed me")  # answer not literally in the turn
    assert lexical_support(not_literal, turn2, content_tokens("her transition journey")) == 0.5  # 2 of 3
    from datetime import datetime

    assert states_date("They talked on 8 May 2023 at 1:56 pm.", datetime(2023, 5, 8))
    assert states_date("On May 8, 2023 they met.", datetime(2023, 5, 8))
    assert not states_date("They talked in May 2023.", datetime(2023, 5, 8))
    assert best_summary_sentence("I painted a lake sunrise", ["Nothing related here.",
                                                               "Melanie painted a lake sunrise."]) == (
        "Melanie painted a lake sunrise.")
    assert best_summary_sentence("I painted a lake sunrise", ["Completely different words."]) is None
    assert word_cost("a b  c") == 3.0 and byte_overhead_cost("x" * 25) == 8 + 2


def test_eligibility_and_seeded_order(conversations):
    eligible = eligible_questions(conversations)
    assert all(qa.category in (1, 2, 3, 4) and qa.evidence_ids and not qa.unresolved_evidence
               for _, qa in eligible)
    first = [qa.sample_id for _, qa in examination_order(conversations)][:5]
    assert first == [qa.sample_id for _, qa in examination_order(conversations)][:5]
    assert first != [qa.sample_id for _, qa in examination_order(conversations, seed=88)][:5]


def test_support_slice_is_window_of_evidence_sessions(conversations):
    conv = next(c for c in conversations if c.sample_id == "conv-26")
    turns = support_slice(conv, ["D1:5", "D1:7", "D3:1"])
    ids = [t.dia_id for t in turns]
    assert ids == [f"D1:{i}" for i in range(1, 12)] + [f"D3:{i}" for i in range(1, 6)]


def test_natural_87_construction(examined):
    accepted = [e for e in examined if e.accepted]
    assert len(accepted) == 87 and len(examined) == 141
    assert all(e.reason for e in examined if not e.accepted)
    for e in accepted:
        pkg = e.package
        again = package_from_dict(json.loads(pkg.to_json()), pkg.package_id)
        assert again.to_json() == pkg.to_json()
        assert sum(u.weight for u in pkg.units) == pytest.approx(1.0)
        cells = {(c, u): v for c, u, v in pkg.coverage}
        for dia_id in pkg.meta["evidence"]:
            assert cells[(f"{dia_id}:raw", f"answer:{dia_id}")] == 1.0
            if pkg.meta["category"] == 2:
                assert cells[(f"{dia_id}:raw", f"time:{dia_id}")] == 1.0
        assert all(v in (0.25, 0.5, 0.75, 1.0) for v in cells.values())
        assert {c.kind for c in pkg.candidates} <= {"raw", "fact", "dated_fact", "summary"}


def test_temporal_units_split_weight(conversations, examined):
    temporal = [e.package for e in examined if e.accepted and e.package.meta["category"] == 2]
    assert temporal
    pkg = temporal[0]
    n = len(pkg.meta["evidence"])
    assert {u.id: u.weight for u in pkg.units} == pytest.approx(
        {**{f"answer:{d}": 0.5 / n for d in pkg.meta["evidence"]}, **{f"time:{d}": 0.5 / n
                                                                      for d in pkg.meta["evidence"]}})
    dated = [c for c, u, v in pkg.coverage if c.endswith(":dated_fact") and u.startswith("time:")]
    undated = [c for c, u, v in pkg.coverage if c.endswith(":fact") and u.startswith("time:")]
    assert not undated and (dated or not any(c.kind == "dated_fact" for c in pkg.candidates))


def test_byte_costs_change_only_costs(conversations, examined):
    pkg = examined[[e.accepted for e in examined].index(True)].package
    conv = next(c for c in conversations if c.sample_id == pkg.meta["conversation"])
    qa = next(q for q in conv.qa if q.sample_id == pkg.meta["sample_id"])
    bytes_pkg = build_package(conv, qa, "bytes")
    assert bytes_pkg.coverage == pkg.coverage
    assert [c.cost for c in bytes_pkg.candidates] == [byte_overhead_cost(c.text) for c in pkg.candidates]


def test_estimated_gvt_never_reads_coverage(examined):
    pkg = next(e.package for e in examined if e.accepted)
    cp = pkg.compiled
    assert isinstance(cp.estimator, str) and cp.estimator == "tfidf_salience"
    rng = np.random.default_rng(0)
    from memeval.memaudit.package import CoverageCsr

    scrambled = replace(cp, coverage_csr=CoverageCsr.from_dense(
        rng.permutation(cp.coverage.ravel()).reshape(cp.coverage.shape)))
    assert not np.array_equal(scrambled.coverage, cp.coverage)
    for budget in (30, 60, 100):
        assert estimated_gvt(cp, budget).selected == estimated_gvt(scrambled, budget).selected
    assert TfidfSalienceEstimator(cp.texts).salience.max() == pytest.approx(1.0)
    assert run_writer("estimated_gvt", cp, 60).info["estimator"] == "tfidf_salience"


def test_build_cli_is_byte_identical_and_sweepable(locomo_dir, tmp_path, capsys):
    for name in ("a", "b"):
        assert main(["natural", "build", "--data", str(locomo_dir), "--out", str(tmp_path / name)]) == 0
    files = sorted(str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len([f for f in files if f.startswith("locomo-natural-")]) == 87
    assert len([f for f in files if f.startswith("union/locomo-natural-")]) == 87 * 3
    assert {"rejected.jsonl", "examined.jsonl", "manifest.json"} <= set(files)
    for f in files:
        if f != "manifest.json":
            assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    other = json.loads((tmp_path / "b" / "manifest.json").read_text())
    invocation = ("argv", "command_line")  # the one difference: each records its own --out
    assert {k: v for k, v in manifest.items() if k not in invocation} == {
        k: v for k, v in other.items() if k not in invocation}
    assert manifest["argv"] == ["memeval", "natural", "build", "--data", str(locomo_dir), "--out", str(tmp_path / "a")]
    assert manifest["command_line"].startswith("memeval natural build --data ")
    assert (manifest["examined"], manifest["accepted"], manifest["rejected"]) == (141, 87, 54)
    assert sum(manifest["rejected_by_reason"].values()) == 54
    pkg = load_package(tmp_path / "a" / next(f for f in files if f.startswith("locomo-natural-")))
    assert pkg.meta["source"] == "LoCoMo-Natural-87, rule-adjudicated"


def test_union_packages_and_rows(conversations, examined):
    from memeval.natural.union import EXPORT_SYSTEMS, union_package, union_rows

    pkg = next(e.package for e in examined if e.accepted and e.package.meta["category"] == 2)
    conv = next(c for c in conversations if c.sample_id == pkg.meta["conversation"])
    for system in EXPORT_SYSTEMS:
        union = union_package(pkg, conv, system)
        package_from_dict(json.loads(union.to_json()), union.package_id)  # validates
        externals = [c for c in union.candidates if c.kind == "external"]
        assert externals and len({c.experience for c in externals}) == len(externals)
        assert set(union.candidates) - set(externals) == set(pkg.candidates)
        rows = union_rows(union, [30, 100])
        assert {r.method for r in rows} == {f"union:{system}:{p}" for p in ("recency", "salience", "upper")}
        for r in rows:
            assert r.certified and 0 <= r.ratio <= 1 + 1e-9 and r.value <= r.opt + 1e-9
            assert r.cost <= r.budget + 1e-9
        by = {(r.method.rsplit(":", 1)[1], r.budget): r.value for r in rows}
        for budget in (30.0, 100.0):
            assert by[("upper", budget)] >= max(by[("recency", budget)], by[("salience", budget)]) - 1e-9
    obs = union_package(pkg, conv, "observations")
    dated = {c.id for c in obs.candidates if c.kind == "external" and c.text.startswith("[")}
    time_cells = [c for c, u, v in obs.coverage if u.startswith("time:") and c.endswith(":external")]
    assert set(time_cells) <= dated


def test_sweep_natural_covers_writers_and_union_rows(locomo_dir, tmp_path):
    from memeval.benchmarks.locomo.natural_build import build_directory

    build_directory(tmp_path / "pk", str(locomo_dir), target=3)
    args = ["sweep", "natural", "--packages", str(tmp_path / "pk"), "--budgets", "30,100", "--out",
            str(tmp_path / "sw"), "--quiet", "--jobs", "1"]
    assert main(args) == 0
    summary = json.loads((tmp_path / "sw" / "summary.json").read_text())
    methods = {r["method"] for r in summary["rows"]}
    assert {"opt", "gvt", "estimated_gvt", "summary_only"} <= methods
    assert {f"union:{s}:{p}" for s in ("observations", "summaries", "rag_turns")
            for p in ("recency", "salience", "upper")} <= methods
    assert summary["opt_certified"] == summary["opt_rows"] == 6
    assert summary["union_certified"] == summary["union_rows"] == 3 * 3 * 3 * 2
    assert main(args) == 0
    assert json.loads((tmp_path / "sw" / "summary.json").read_text())["computed_rows"] == 0
