import csv
import json
from pathlib import Path

import numpy as np
import pytest

from memeval.benchmarks.locomo.natural_source import build_natural
from memeval.cli import main
from memeval.llm import LLMClient, ResponseCache
from memeval.natural.audit import (
    agreement,
    compare_sources,
    frame_cells,
    llm_labels,
    read_verdicts,
    rule_labels,
    write_audit_frame,
)
from memeval.natural.bridge import bridge_pairs, bridge_table, spearman_interval
from memeval.natural.rules import byte_overhead_cost
from memeval.natural.sensitivity import (
    label_noise,
    mean_ratios,
    noisy_package,
    score_packages,
    with_cost_rule,
)
from memeval.records import SweepRow, read_records, union_method
from tests.rows import answer_row, judgment_row
from tests.scripted import ScriptedBackend

FIXTURES = Path(__file__).parent / "fixtures" / "v1"


@pytest.fixture(scope="module")
def packages(conversations):
    return [e.package for e in build_natural(conversations, target=6) if e.accepted]


def test_k2_never_lowers_opt_and_byte_costs_apply(packages):
    k1 = score_packages(packages, [30], ["opt"])
    k2 = score_packages(packages, [30], ["opt"], max_per_group=2)
    assert all(b["opt"] >= a["opt"] - 1e-12 for a, b in zip(k1, k2, strict=True))
    bytes_pkg = with_cost_rule(packages[0], "bytes")
    assert [c.cost for c in bytes_pkg.candidates] == [byte_overhead_cost(c.text) for c in packages[0].candidates]
    assert mean_ratios(k1) == {(30.0, "opt"): 1.0}


def test_label_noise_is_seeded_and_zero_rate_is_identity(packages):
    assert noisy_package(packages[0], 0.0, 1).coverage == tuple(
        sorted(packages[0].coverage, key=lambda c: ([x.id for x in packages[0].candidates].index(c[0]),
                                                    [u.id for u in packages[0].units].index(c[1]))))
    assert noisy_package(packages[0], 0.3, 5) == noisy_package(packages[0], 0.3, 5)
    assert noisy_package(packages[0], 0.3, 5).coverage != packages[0].coverage
    result = label_noise(packages, [30, 100], rate=0.0, seeds=(0,), methods=("opt", "greedy", "random", "gvt"))
    for stats in result["runs"][0]["by_budget"].values():
        assert stats["mean_abs_ratio_change"] == 0.0


def test_sensitivity_reuses_k1_as_the_clean_reference(packages):
    from memeval.natural.sensitivity import sensitivity

    result = sensitivity(packages[:2], [30], noise_rate=0.2, noise_seeds=1)
    assert result["label_noise"]["clean"] == result["k1"] == mean_ratios(score_packages(packages[:2], [30]))
    recomputed = label_noise(packages[:2], [30], rate=0.2, seeds=(0,))
    assert recomputed["runs"] == result["label_noise"]["runs"]


def test_audit_frame_roundtrip_and_agreement(packages, tmp_path):
    labels = rule_labels(packages)
    cells = frame_cells(packages)
    nonzero = {c for c, v in labels.items() if v > 0}
    assert nonzero <= set(cells)
    zeros = [c for c in cells if labels[c] == 0]
    assert len(zeros) == pytest.approx(0.2 * sum(1 for v in labels.values() if v == 0), abs=5)
    path = tmp_path / "frame.csv"
    assert write_audit_frame(packages, path) == len(cells)
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    for row in rows:  # a "human" who agrees with the rule except on raw cells, which they call partial
        value = float(row["rule_value"])
        row["verdict"] = "0.5" if row["candidate_kind"] == "raw" and value == 1 else (
            "1" if value == 1 else ("0" if value == 0 else "0.5"))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, rows[0].keys())
        writer.writeheader()
        writer.writerows(rows)
    human = read_verdicts(path)
    assert len(human) == len(cells)
    same = agreement(labels, {c: labels[c] for c in cells})
    assert same["kappa"] == 1.0 and same["raw_agreement"] == 1.0
    result = compare_sources(packages, labels, human, [30, 100])
    assert result["cells"] == len(cells) and result["kappa"] < 1.0
    assert set(result["by_budget"]) == {30.0, 100.0}


def test_bad_verdict_names_file_line_and_field(tmp_path, capsys, packages):
    path = tmp_path / "frame.csv"
    write_audit_frame(packages[:1], path)
    text = path.read_text().splitlines()
    text[1] = text[1] + "maybe"
    path.write_text("\n".join(text) + "\n")
    from memeval.errors import InputError

    with pytest.raises(InputError, match=r"frame.csv:2.*verdict"):
        read_verdicts(path)


def test_llm_adjudicator_through_the_client(packages, tmp_path):
    cells = frame_cells(packages[:1])[:6]

    def responder(request):
        return '{"value": 0.5, "reason": "partly"}' if "Stored memory" in request.messages[0][1] else "?"

    client = LLMClient(ScriptedBackend(responder), ResponseCache(tmp_path))
    labels, reasons = llm_labels(client, packages, cells)
    assert labels == {c: 0.5 for c in cells} and all(r == "partly" for r in reasons.values())
    assert len(client.backend.sent) == len(cells)
    rerun = LLMClient(ScriptedBackend(responder), ResponseCache(tmp_path))
    assert llm_labels(rerun, packages, cells)[0] == labels
    assert rerun.backend.sent == [], "a cached rerun must send nothing"
    bad = LLMClient(ScriptedBackend(lambda r: "no idea"), ResponseCache(tmp_path / "other"))
    labels, reasons = llm_labels(bad, packages, cells)
    assert labels == {} and all("unparseable" in r for r in reasons.values())


def _union_row(i: int) -> SweepRow:
    return SweepRow(package_id=f"locomo-natural-conv-26-q{i:04d}+observations", seed=None,
                    distribution="locomo-natural-union", budget=30.0, max_per_group=1,
                    method=union_method("observations", "salience"), value=i / 11, opt=1.0, ratio=i / 11,
                    certified=True, invalidation_units_covered=None, cost=1.0, selected=[], runtime_s=None,
                    sample_id=f"conv-26:q{i:04d}", system="observations", pruning="salience")


def test_bridge_joins_union_rows_to_qa_outcomes_per_judge_protocol(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    answers, judgments = [], []
    for i in range(12):
        sid = f"conv-26:q{i:04d}"
        answers.append(answer_row(sid, system="observations", f1=i / 11, evidence_recall=1 - i / 11))
        judgments.append(judgment_row(sid, system="observations", protocol="graded", mean=10.0 * i))  # rises with the ratio
        judgments.append(judgment_row(sid, system="observations", protocol="binary", mean=100.0 * (i < 6)))  # falls with it
    (run / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (run / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in judgments))
    pairs = bridge_pairs([_union_row(i) for i in range(12)], run)
    assert len(pairs) == 12 and pairs[3]["j_graded"] == pytest.approx(0.3) and pairs[3]["j_binary"] == 1.0
    table = {r["outcome"]: r for r in bridge_table(pairs, n_boot=200)}
    assert table["f1"]["rho"] == pytest.approx(1.0) and table["evidence_recall"]["rho"] == pytest.approx(-1.0)
    assert table["j_graded"]["rho"] == pytest.approx(1.0) and table["j_binary"]["rho"] < -0.8
    assert spearman_interval([1, 1, 1], [1, 2, 3])["rho"] is None


def test_bridge_reads_sweep_rows_written_before_typed_records():
    rows = read_records(FIXTURES / "sweep_natural" / "raw_results.jsonl", SweepRow)
    union = [r for r in rows if r.is_union]
    assert len(union) == 36 and {r.pruning for r in union} == {"recency", "salience", "upper"}
    assert {r.sample_id for r in union} == {"conv-26:q0047", "conv-43:q0004"}
    assert {r.system for r in union} == {"observations", "summaries", "rag_turns"}
    assert all(r.sample_id is not None for r in rows)  # plain natural rows too, from their package id


def test_bridge_refuses_missing_inputs(tmp_path):
    assert main(["natural", "bridge", "--sweep", str(tmp_path / "missing"), "--run", str(tmp_path / "nope")]) == 2
    assert not (tmp_path / "missing").exists()


def test_bootstrap_spearman_rows_match_scipy_on_tied_data():
    from scipy.stats import spearmanr

    from memeval.natural.bridge import _row_spearman

    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, (300, 9)) / 4  # union ratios and recalls are heavily tied
    y = rng.integers(0, 3, (300, 9)) / 2
    mine = _row_spearman(x, y)
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    assert np.isnan(mine[constant]).all()
    reference = [spearmanr(a, b).statistic for a, b, c in zip(x, y, constant, strict=True) if not c]
    np.testing.assert_allclose(mine[~constant], reference, rtol=0, atol=1e-12)
    interval = spearman_interval(x[0], y[0] + x[0], n_boot=400, seed=1)
    assert interval["low"] <= interval["rho"] <= interval["high"]


def test_natural_cli_analysis_commands(locomo_dir, tmp_path):
    assert main(["natural", "build", "--data", str(locomo_dir), "--out", str(tmp_path / "pk"), "--target", "3",
                 "--no-union"]) == 0
    assert main(["natural", "sensitivity", "--packages", str(tmp_path / "pk"), "--budgets", "30",
                 "--noise-seeds", "1", "--out", str(tmp_path / "s.json")]) == 0
    result = json.loads((tmp_path / "s.json").read_text())
    assert {"k1", "k2", "bytes", "label_noise"} <= set(result) and result["k1"]["30.0@opt"] == 1.0
    assert main(["natural", "audit-export", "--packages", str(tmp_path / "pk"), "--out",
                 str(tmp_path / "f.csv")]) == 0
    assert main(["natural", "audit-compare", "--packages", str(tmp_path / "nothing"), "--labels",
                 str(tmp_path / "f.csv")]) == 2


def test_memory_graph_union_export_only_when_an_extractor_ran(locomo_dir, tmp_path):
    from memeval.benchmarks.locomo.natural_build import build_directory
    from memeval.llm import ReplayBackend
    from tests.test_memory_graph import _line_extractor

    offline = build_directory(tmp_path / "a", str(locomo_dir), target=2,
                              graph_client=LLMClient(ReplayBackend(), ResponseCache(tmp_path / "c")))
    assert "memory_graph" not in offline["union_systems"]
    assert "CacheMiss" in offline["union_not_exported"]["memory_graph"]
    client = LLMClient(ScriptedBackend(_line_extractor), ResponseCache(tmp_path / "c"))
    extracted = build_directory(tmp_path / "b", str(locomo_dir), target=2, graph_client=client)
    assert "memory_graph" in extracted["union_systems"]
    graph_files = sorted((tmp_path / "b" / "union").glob("*+memory_graph.json"))
    assert len(graph_files) == 2
    doc = json.loads(graph_files[0].read_text())
    assert any(c["kind"] == "external" for c in doc["candidates"])


def test_llm_verdicts_file_reads_back_for_comparison(packages, tmp_path):
    from memeval.natural.audit import write_verdicts

    cells = frame_cells(packages[:1])[:4]
    labels = {cells[0]: 1.0, cells[1]: 0.5}
    reasons = {c: "why" for c in cells}
    write_verdicts(tmp_path / "v.csv", labels, reasons)
    assert read_verdicts(tmp_path / "v.csv") == labels


def test_audit_llm_cli_without_a_key_labels_nothing(locomo_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["natural", "build", "--data", str(locomo_dir), "--out", str(tmp_path / "pk"), "--target", "1",
                 "--no-union"]) == 0
    assert main(["natural", "audit-llm", "--packages", str(tmp_path / "pk"), "--out", str(tmp_path / "v.csv")]) == 0
    assert "0 of" in capsys.readouterr().out and read_verdicts(tmp_path / "v.csv") == {}
