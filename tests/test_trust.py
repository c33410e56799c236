"""The trust section (memeval/benchmarks/locomo/trust.py, `memeval locomo trust`): a small offline run and a published run in
the EverMemOS format, on a made-up LoCoMo and a made-up audit (tests/audit_sample.py: this project's own words), side
by side on each key, with the ceilings, the recorded judge's place, the MDE of every adjacent pair — each number
checked against a computation written here — and the plain "not fetched" path."""

import json
import math

import pytest

from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from memeval.benchmarks.locomo.trust import trust_document, write_trust
from tests.audit_sample import QUESTIONS, fetched, write_locomo

# the published system's answers (own words) and its three recorded judge runs, per (conversation, question index)
PUBLISHED = {
    ("conv-26", 0): ("May 2021", [False, False, True]),  # right under the audit's key; the original gold says June
    ("conv-26", 1): ("Oslo, Lund", [True, True, True]),
    ("conv-26", 2): ("Pepper", [True, True, True]),
    ("conv-26", 4): ("Probably", [False, True, False]),
    ("conv-30", 0): ("Green", [True, True, True]),
    ("conv-30", 1): ("Her aunt", [True, True, False]),
    ("conv-30", 2): ("2018", [False, False, False]),
}


def _detailed() -> dict:
    groups = {}
    for c, (conversation, items) in enumerate(QUESTIONS.items()):
        rows = []
        for q, (question, answer, category) in enumerate(items):
            if (conversation, q) not in PUBLISHED:
                continue
            said, runs = PUBLISHED[(conversation, q)]
            rows.append({"question_id": f"locomo_{c}_qa{q}", "question": question, "golden_answer": answer,
                         "generated_answer": said, "category": str(category),
                         "llm_judgments": {f"judgment_{k + 1}": v for k, v in enumerate(runs)}})
        groups[f"locomo_exp_user_{c}"] = rows
    return {"total_questions": 7, "detailed_results": groups,
            "metadata": {"judge_model": "judge-of-the-test", "answer_model": "reader-of-the-test"}}


@pytest.fixture()
def world(tmp_path, monkeypatch, cli):
    data = write_locomo(tmp_path / "locomo10.json")
    fetched(tmp_path, monkeypatch)
    run_locomo(LocomoRunConfig(out=str(tmp_path / "run"), data=str(data), systems=["rag_turns", "full_context"],
                               progress=False))
    source = tmp_path / "published.json"
    source.write_text(json.dumps(_detailed()))
    cli("locomo", "import", source, "--format", "evermemos", "--system", "published-x", "--data", data,
        "--out", tmp_path / "pub", check=True)
    return tmp_path


def _cell(doc, system, measure, key, category="overall"):
    return next(c for c in doc.cells if (c.system, c.measure, c.key, c.category) == (system, measure, key, category))


def test_each_key_side_by_side_with_ceilings_and_the_recorded_judge(world):
    doc = trust_document([world / "run", world / "pub"], data=world / "locomo10.json")
    assert doc.audit["fetched"] and doc.keys == ["original", "corrected", "excluded"]
    # 7 non-adversarial questions; wrong gold: conv-26 q0 (2), q1 (1, ambiguous), conv-30 q1 (4)
    assert doc.ceilings == pytest.approx({"1": 0.0, "2": 50.0, "3": 100.0, "4": 200 / 3, "overall": 400 / 7})
    published = "published-x"
    # F1 of the published answers, by hand: original gold / the audit's corrected gold
    # "May 2021" against "June 2021": half the tokens
    original = {"conv-26:q0000": 0.5, "conv-26:q0001": 1.0, "conv-26:q0002": 1.0, "conv-26:q0004": 0.0,
                "conv-30:q0000": 1.0, "conv-30:q0001": 1.0, "conv-30:q0002": 0.0}
    corrected = {**original, "conv-26:q0000": 1.0, "conv-30:q0001": 0.0}  # "Not stated" for the aunt
    ambiguous = "conv-26:q0001"
    from memeval.scoring.f1 import score_f1

    assert score_f1("Oslo, Lund", "Oslo, Lund and Bergen", 1, "locomo") < 1  # the ambiguous one changes too
    corrected[ambiguous] = score_f1("Oslo, Lund", "Oslo, Lund and Bergen", 1, "locomo")
    assert _cell(doc, published, "F1", "original").value == pytest.approx(100 * sum(original.values()) / 7)
    assert _cell(doc, published, "F1", "corrected").value == pytest.approx(100 * sum(corrected.values()) / 7)
    # the excluded key leaves the two wrong gold answers out and keeps the ambiguous one as it is (--ambiguous include)
    kept = [s for s in original if s not in ("conv-26:q0000", "conv-30:q0001")]
    assert _cell(doc, published, "F1", "excluded").n == 5
    assert _cell(doc, published, "F1", "excluded").value == pytest.approx(100 * sum(original[s] for s in kept) / 5)
    # the recorded judge: per-run mean on the original key; no J on the corrected gold (it cannot be re-run);
    # the excluded key leaves the two wrong ones out
    runs = {sample: PUBLISHED[(sample.split(":")[0], int(sample[-4:]))][1] for sample in original}
    measure = "J evermemos_recorded · judge-of-the-test"
    j = _cell(doc, published, measure, "original")
    assert j.value == pytest.approx(100 * sum(sum(r) / 3 for r in runs.values()) / 7)
    assert j.low < j.value < j.high
    assert _cell(doc, published, measure, "corrected").value is None
    assert "recorded judge" in _cell(doc, published, measure, "corrected").why
    assert _cell(doc, published, measure, "excluded").value == pytest.approx(
        100 * sum(sum(runs[s]) / 3 for s in kept) / 5)
    assert "recorded by the file's producer (judge-of-the-test)" in doc.judges[measure]
    assert "leniency not measured" in doc.judges[measure]
    assert _cell(doc, published, "F1", "original", "2").n == 2


def test_adjacent_pairs_carry_the_mde_of_a_direct_computation(world):
    doc = trust_document([world / "run", world / "pub"], data=world / "locomo10.json")
    f1 = [p for p in doc.pairs if p.measure == "F1" and p.category == "overall" and p.key == "original"]
    assert len(f1) == 2, "three systems: two adjacent pairs"
    overall = {c.system: c.value for c in doc.cells if c.measure == "F1" and c.key == "original"
               and c.category == "overall"}
    assert overall[f1[0].a] >= overall[f1[0].b] >= overall[f1[1].b], "ranked by the original key's overall F1"
    from memeval.records import load_answers

    rows = {r.system: r for r in load_answers(world / "run" / "answers.jsonl")}
    del rows
    answers = {(r.system, r.sample_id): r for path in ("run", "pub")
               for r in load_answers(world / path / "answers.jsonl") if r.category != 5}
    pair = f1[0]
    name = {s: s.split(" · ")[-1] for s in (pair.a, pair.b)}
    ids = sorted({s for (_, s) in answers})
    d = {s: 100 * (answers[(name[pair.a], s)].f1 - answers[(name[pair.b], s)].f1) for s in ids}
    mean = sum(d.values()) / len(d)
    sums = {}
    for s, v in d.items():
        sums[s.split(":")[0]] = sums.get(s.split(":")[0], 0.0) + v - mean
    se = math.sqrt(2 / 1 * sum(x * x for x in sums.values()) / len(d) ** 2)
    assert pair.difference == pytest.approx(mean)
    assert pair.mde == pytest.approx((1.959963984540054 + 0.8416212335729143) * se)
    assert pair.verdict in ("within noise", "real at α = 0.05")


def test_the_command_writes_the_section_and_figures_that_keep_the_rules(world, cli):
    out = world / "trust"
    result = cli("locomo", "trust", world / "run", world / "pub", "--data", world / "locomo10.json", "--out", out,
                 check=True)
    text = (out / "trust.md").read_text()
    assert "## How far these tables can be trusted" in text and "Ceiling of a perfect system" in text
    assert "### Judge leniency" in text and "### Which differences are real" in text
    assert "adjacent comparisons that can be tested are within noise" in text and "figure rule" not in text
    assert "trust.md" in result.stdout
    pngs = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert pngs == ["trust_key_f1.png", "trust_key_j_evermemos_recorded_judge_of_the_test.png",
                    "trust_leniency.png", "trust_mde.png"]
    from memeval.publication.figure_rules import problems_in

    assert problems_in(out / "figures") == {f"{p[:-4]}.json": [] for p in pngs}
    stored = json.loads((out / "trust.json").read_text())
    assert stored["ceilings"]["overall"] == pytest.approx(400 / 7)
    assert "Who taught" not in text and "No turn says" not in (out / "trust.json").read_text(), \
        "the audit's questions and reasons are not copied into the section"


def test_without_the_audit_it_says_so_plainly(world, cli, monkeypatch, tmp_path):
    empty = tmp_path / "no-audit"
    empty.mkdir()
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(empty))
    doc = trust_document([world / "run"], data=world / "locomo10.json")
    assert doc.keys == ["original"] and doc.ceilings == {} and not doc.audit["fetched"]
    assert "The LoCoMo audit is not fetched" in doc.notes[0] and "memeval data fetch locomo-audit" in doc.notes[0]
    written = write_trust([world / "run"], tmp_path / "out", data=world / "locomo10.json")
    assert "not fetched" in written["report"].read_text() and not written["figure_problems"]
    refused = cli("locomo", "trust", "--published", "--data", world / "locomo10.json", "--out", tmp_path / "o2")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "memeval data fetch locomo-audit" in refused.stderr


def test_published_runs_come_from_the_fetched_audit_once(world, cli):
    out = world / "trust-published"
    cli("locomo", "trust", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    published = sorted(p.name for p in (out / "published").iterdir())
    assert published == sorted(["fc-gpt-4o-mini-memos", "fc-gpt-4o-mini-cot", "fc-gpt-4.1-mini-memos",
                                "fc-gpt-4.1-mini-cot", "audit-v1-specific-wrong", "audit-v2-vague-wrong"])
    before = (out / "published" / "audit-v1-specific-wrong" / "answers.jsonl").read_bytes()
    cli("locomo", "trust", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    assert (out / "published" / "audit-v1-specific-wrong" / "answers.jsonl").read_bytes() == before, "imported once"
    doc = json.loads((out / "trust.json").read_text())
    assert "audit-v1-specific-wrong" in {c["system"].split(" · ")[-1] for c in doc["cells"]}


def test_a_published_file_the_user_already_imported_is_not_imported_again(world, cli):
    """`trust MINE --published` after importing one of the audit's files into MINE: that run appears once (the
    user's import), the other five come from the audit."""
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES

    mine = world / "mine"
    source = world / "audit" / AUDIT_FILES["fc_gpt-4o-mini-memos"].path
    cli("locomo", "import", source, "--format", "evermemos", "--system", "my-fc", "--judge-prompt", "evermemos",
        "--data", world / "locomo10.json", "--out", mine, check=True)
    out = world / "trust-mine"
    cli("locomo", "trust", mine, "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    assert sorted(p.name for p in (out / "published").iterdir()) == sorted([
        "fc-gpt-4o-mini-cot", "fc-gpt-4.1-mini-memos", "fc-gpt-4.1-mini-cot", "audit-v1-specific-wrong",
        "audit-v2-vague-wrong"])
    systems = {c["system"].split(" · ")[-1] for c in json.loads((out / "trust.json").read_text())["cells"]}
    assert "my-fc" in systems and "fc-gpt-4o-mini-memos" not in systems


def test_a_directory_that_is_no_run_is_one_line(world, cli, tmp_path):
    (tmp_path / "empty").mkdir()
    result = cli("locomo", "trust", tmp_path / "empty", "--data", world / "locomo10.json", "--out", tmp_path / "o")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "answers" in result.stderr
    assert not (tmp_path / "o").exists()


def test_a_runs_report_carries_the_section(world, tmp_path, monkeypatch):
    report = (world / "run" / "report.md").read_text()
    section = report[report.index("## How far these tables can be trusted"):]
    assert "A perfect system scores at most 57.14 (categories 1–4)" in section
    assert "| rag_turns | memeval |" in section and "corrected key" in section
    run = world / "run"
    assert f"memeval locomo trust {run} --published --out {run}/trust" in section, "the path as it was given"
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "no-audit"))
    run_locomo(LocomoRunConfig(out=str(tmp_path / "plain"), data=str(world / "locomo10.json"),
                               systems=["rag_turns"], progress=False))
    plain = (tmp_path / "plain" / "report.md").read_text()
    assert "## How far these tables can be trusted\n\nNot checked against the LoCoMo audit" in plain


def test_the_differences_table_covers_every_key_with_each_judge_and_its_leniency(world, cli):
    out = world / "trust-keys"
    cli("locomo", "trust", world / "run", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    doc = json.loads((out / "trust.json").read_text())
    keys = {(p["measure"], p["key"]) for p in doc["pairs"]}
    assert {k for m, k in keys if m == "F1"} == {"original", "corrected", "excluded"}
    recorded = {m for m, _ in keys if m.startswith("J evermemos_recorded")}
    assert recorded and all({k for m, k in keys if m == j} == {"original", "excluded"} for j in recorded), \
        "a recorded judge cannot be graded on the corrected key: no pair there"
    text = (out / "trust.md").read_text()
    section = text[text.index("### Which differences are real"):]
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert table[0].startswith("| measure | judge and its leniency | key | pair |")
    j_rows = [line for line in table if line.startswith("| J evermemos_recorded")]
    assert j_rows and all(("of vague wrong answers" in line or "leniency not measured" in line)
                          and "recorded by the file's producer" in line for line in j_rows), \
        "each J row carries its judge and its leniency"
    assert {line.split(" | ")[2] for line in table[2:]} == {"original", "corrected", "excluded"}
    assert "No J evermemos_recorded" in section and "on the corrected key" in section


def test_the_audits_wrong_answer_sets_are_reference_sets_never_paired(world, cli):
    out = world / "trust-ref"
    cli("locomo", "trust", world / "run", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    doc = json.loads((out / "trust.json").read_text())
    wrong = {"audit-v1-specific-wrong", "audit-v2-vague-wrong"}
    assert not wrong & {n for p in doc["pairs"] for n in (p["a"], p["b"])}
    origins = {c["system"]: c["origin"] for c in doc["cells"]}
    assert all(origins[n].startswith("reference answer set") for n in wrong)
    assert all(c["value"] is not None for c in doc["cells"] if c["system"] in wrong and c["measure"] == "F1"
               and c["key"] == "original" and c["category"] == "overall"), "their scores are still shown"
    assert "Not ranked or paired: audit-v1-specific-wrong, audit-v2-vague-wrong" in (out / "trust.md").read_text()


def test_a_missing_run_is_refused_before_the_published_runs_are_imported(world, cli, tmp_path):
    out = tmp_path / "x"
    missing = cli("locomo", "trust", tmp_path / "nonexistent", "--published", "--data", world / "locomo10.json",
                  "--out", out)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nonexistent" in missing.stderr
    assert not out.exists(), "nothing imported into --out/published"


def test_an_audit_dir_that_is_a_file_is_refused(world, cli, tmp_path):
    a_file = tmp_path / "audit.txt"
    a_file.write_text("not an audit")
    out = tmp_path / "x"
    refused = cli("locomo", "trust", world / "run", "--published", "--audit-dir", a_file, "--data",
                  world / "locomo10.json", "--out", out)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--audit-dir" in refused.stderr
    assert not out.exists() and a_file.read_text() == "not an audit"


def test_an_out_that_is_a_run_directory_is_refused(world, cli):
    before = sorted(p.name for p in (world / "run").iterdir())
    into_run = cli("locomo", "trust", world / "run", "--published", "--data", world / "locomo10.json",
                   "--out", world / "run")
    assert into_run.returncode == 2 and into_run.stderr.count("\n") == 1 and "--out" in into_run.stderr
    assert sorted(p.name for p in (world / "run").iterdir()) == before, "nothing lands inside the run"


def test_a_file_named_as_a_run_is_said_to_be_a_file(world, cli, tmp_path):
    report = cli("locomo", "trust", world / "run" / "report.md", "--data", world / "locomo10.json",
                 "--out", tmp_path / "x")
    assert report.returncode == 2 and report.stderr.count("\n") == 1
    assert "is a file, not a run directory" in report.stderr and not (tmp_path / "x").exists()


def test_the_suggested_trust_command_is_the_path_as_typed_and_out_of_the_checkout(world, tmp_path, monkeypatch):
    from memeval.benchmarks.locomo import trust

    monkeypatch.chdir(tmp_path)
    run_locomo(LocomoRunConfig(out="own/first", data=str(world / "locomo10.json"), systems=["rag_turns"],
                               progress=False))
    assert "memeval locomo trust own/first --published --out own/first/trust" in \
        (tmp_path / "own" / "first" / "report.md").read_text()
    monkeypatch.setattr("memeval.data.paths.project_root", lambda: tmp_path)
    assert trust.suggested_out("own/first") == "reports/trust/first", "not under a part .gitignore covers"
    assert trust.suggested_out("runs/first") == "runs/first/trust"


def test_the_figures_keep_one_look_per_system_every_key_and_draw_each_difference(world, cli):
    out = world / "trust-figures"
    cli("locomo", "trust", world / "run", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    figures = {p.stem: json.loads(p.read_text()) for p in (out / "figures").glob("*.json")}
    looks: dict[str, set] = {}
    for name, figure in figures.items():
        if name.startswith("trust_key_"):
            assert [p["title"] for p in figure["panels"]] == [f"{k} key, per category"
                                                             for k in ("original", "corrected", "excluded")]
            for panel in figure["panels"]:
                for series in panel["series"]:
                    looks.setdefault(series["label"], set()).add((series["colour"], series["marker"]))
    assert looks and all(len(v) == 1 for v in looks.values()), f"one colour and marker per system: {looks}"
    j = next(f for n, f in figures.items() if n.startswith("trust_key_j_evermemos_recorded"))
    assert j["panels"][1]["series"] == [] and "no corrected-key panel data: recorded judge" in j["caption"]
    mde = figures["trust_mde"]
    drawn = [s for p in mde["panels"] for s in p["series"] if s["kind"] == "point"]
    assert drawn and all(s["interval"] and s["low"] is not None for s in drawn), "each pair's difference, interval"
    assert any(s["label"].startswith("MDE ") for p in mde["panels"] for s in p["series"])
    assert not any("audit-v" in s["label"] for p in mde["panels"] for s in p["series"])
    doc = json.loads((out / "trust.json").read_text())
    pair = next(p for p in doc["pairs"] if p["key"] == "original" and p["measure"] == "F1" and p["se"] is not None)
    panel = next(p for p in mde["panels"] if p["title"] == "F1, original key")
    series = next(s for s in panel["series"] if s["name"] == f"{pair['a']} − {pair['b']}" and s["kind"] == "point")
    assert pair["difference"] in series["y"]
    leniency = figures["trust_leniency"]
    assert "leniency_gold" not in {s["name"] for p in leniency["panels"] for s in p["series"]}
    assert "gold answers: not measured for any judge here, so not drawn" in leniency["caption"]


def test_a_run_holding_junk_is_refused_before_the_published_runs_are_imported(world, cli, tmp_path):
    """Everything the report reads is read before --published imports anything: no published/ left behind."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "answers.jsonl").write_text('{"junk":1}\n')
    out = tmp_path / "x"
    refused = cli("locomo", "trust", bad, "--published", "--data", world / "locomo10.json", "--out", out)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "answers.jsonl" in refused.stderr
    assert not out.exists(), "nothing imported into --out/published"
    with pytest.raises(Exception, match="answers.jsonl"):
        write_trust([world / "run", bad], out, data=world / "locomo10.json", published=True)
    assert not out.exists()


def test_pairs_are_drawn_unlike_any_system_and_the_noise_band_is_the_verdicts(world, cli):
    out = world / "trust-pairs"
    cli("locomo", "trust", world / "run", "--published", "--data", world / "locomo10.json", "--out", out, check=True)
    figures = {p.stem: json.loads(p.read_text()) for p in (out / "figures").glob("*.json")}
    systems = {(s["colour"], s["marker"]) for n, f in figures.items() if n.startswith("trust_key_")
               for p in f["panels"] for s in p["series"] if s["name"] != "ceiling"}
    mde = figures["trust_mde"]
    pairs = [s for p in mde["panels"] for s in p["series"] if s["kind"] == "point"]
    assert pairs and systems
    assert not {s["colour"] for s in pairs} & {c for c, _ in systems}, "a pair never wears a system's colour"
    assert not {s["marker"] for s in pairs} & {m for _, m in systems}, "nor a system's marker"
    doc = json.loads((out / "trust.json").read_text())
    pair = next(p for p in doc["pairs"] if p["key"] == "original" and p["measure"] == "F1" and p["se"] is not None)
    panel = next(p for p in mde["panels"] if p["title"] == "F1, original key")
    band = next(s for s in panel["series"] if s["name"] == f"noise band ±1.96·SE {pair['a']} − {pair['b']}")
    assert 1.959963984540054 * pair["se"] in band["y"], "the band is what the verdict uses, not the MDE"
    assert "noise band the verdict uses" in mde["caption"] and "a smaller one can still be real" in mde["caption"]


def test_the_report_lists_each_figure_with_its_caption(world, cli):
    out = world / "trust-listed"
    cli("locomo", "trust", world / "run", world / "pub", "--data", world / "locomo10.json", "--out", out, check=True)
    text = (out / "trust.md").read_text()
    section = text[text.index("### Figures"):]
    for png in sorted((out / "figures").glob("*.png")):
        caption = json.loads(png.with_suffix(".json").read_text())["caption"]
        assert f"(<figures/{png.name}>): " in section and caption[:60] in section


def test_a_j_above_the_ceiling_is_flagged_and_explained(world, cli):
    """The made-up audit leaves multi-hop a ceiling of 0 and single-hop 66.7; the published run's recorded judge
    gives 100 and 88.9 there: credit for answers that disagree with a gold the audit finds wrong."""
    out = world / "trust-above"
    cli("locomo", "trust", world / "pub", "--data", world / "locomo10.json", "--out", out, check=True)
    text = (out / "trust.md").read_text()
    assert "A J above the ceiling is credit given to answers that disagree with a gold answer the audit finds " \
           "wrong" in text.split("### ")[1], "said under the ceilings"
    row = next(line for line in text.splitlines() if line.startswith("| published-x | original |")
               and "▲" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "100.0 ▲" and cells[5] == "88.9 ▲" and cells[3] == "16.7" and "▲" not in cells[4]
    assert "▲ above the ceiling of a perfect system on the original key" in text
    f1_rows = text[text.index("### F1"):text.index("### J")]
    assert "▲" not in f1_rows, "F1 is not a judge's credit"
