"""The field's published results in: EverMemOS `detailed_results` files read as typed rows, the framework's own
statistics (per-run mean, population std over runs, majority vote) against numbers worked out by hand here, and
`memeval locomo import --format evermemos`: answers as a system, the recorded judgments as the judge
`evermemos_recorded` (recorded, not re-run), every import shape, and bad files refused in one line.

Every file here is written by the test in the framework's format, with this test's own answers and labels (the
LoCoMo questions and golds are read from the data at run time, as the importer matches against them)."""

import json

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.published.detailed import (
    NOT_STATED,
    RECORDED_PROTOCOL,
    published_stats,
    read_detailed,
)
from memeval.data.paths import find_locomo
from memeval.errors import InputError
from memeval.records import AnswerRow, JudgmentRow, read_records

T, F = True, False


def _labels(*runs: bool) -> dict:
    return {f"judgment_{i}": label for i, label in enumerate(runs, start=1)}


def _write(path, groups: dict, metadata: dict | None = None):
    doc = {"total_questions": sum(len(v) for v in groups.values()), "correct": 0, "accuracy": 0.0,
           "detailed_results": groups}
    if metadata is not None:
        doc["metadata"] = metadata
    path.write_text(json.dumps(doc))
    return path


def _item(n: int, category: int, runs: tuple[bool, ...], conversation: int = 0) -> dict:
    return {"question_id": f"locomo_{conversation}_qa{n}", "question": f"Where did the kite land, case {n}?",
            "golden_answer": f"on roof {n}", "generated_answer": f"near roof {n}", "llm_judgments": _labels(*runs),
            "category": str(category)}


# ---- the framework's statistics -----------------------------------------------------------------------------------

def test_three_runs_per_run_mean_population_std_and_majority_by_hand(tmp_path):
    # category 1: four items; category 4: two items. Runs accept (cat 1) 3, 2, 1 and (cat 4) 2, 1, 1.
    items = [_item(0, 1, (T, T, T)), _item(1, 1, (T, T, F)), _item(2, 1, (T, F, F)), _item(3, 1, (F, F, F)),
             _item(4, 4, (T, T, T)), _item(5, 4, (T, F, F))]
    stats = published_stats(read_detailed(_write(tmp_path / "e.json", {"locomo_exp_user_0": items})).rows)
    # runs over 6 items: 5/6, 3/6, 2/6 -> mean 10/18 = 55.555..%; population std of (83.33, 50, 33.33)
    assert stats.run_scores == pytest.approx([500 / 6, 50.0, 200 / 6])
    assert stats.mean == pytest.approx(1000 / 18)
    assert stats.std == pytest.approx((((500 / 6 - 1000 / 18) ** 2 + (50 - 1000 / 18) ** 2
                                        + (200 / 6 - 1000 / 18) ** 2) / 3) ** 0.5)
    assert stats.majority == pytest.approx(100 * 3 / 6)  # items 0, 1 and 4 have two or three of three
    assert (stats.n, stats.judged, stats.runs) == (6, 6, 3)
    assert stats.by_category[1].run_scores == pytest.approx([75.0, 50.0, 25.0])
    assert stats.by_category[1].mean == pytest.approx(50.0) and stats.by_category[1].majority == 50.0
    assert stats.by_category[4].run_scores == pytest.approx([100.0, 50.0, 50.0])


@pytest.mark.parametrize("runs", [1, 3, 5])
def test_n_judgment_runs(runs, tmp_path):
    """Item i is accepted by the runs r < i (so 0 of N, 1 of N, ... N of N over N + 1 items)."""
    items = [_item(i, 2, tuple(r < i for r in range(runs))) for i in range(runs + 1)]
    detailed = read_detailed(_write(tmp_path / "e.json", {"locomo_exp_user_0": items}))
    assert detailed.runs == runs and [len(r.judgments) for r in detailed.rows] == [runs] * (runs + 1)
    stats = published_stats(detailed.rows)
    # run r accepts items r+1..N: N - r of N + 1
    expected = [100 * (runs - r) / (runs + 1) for r in range(runs)]
    assert stats.run_scores == pytest.approx(expected)
    assert stats.mean == pytest.approx(sum(expected) / runs)
    # accepted by more than half of N runs: items i with i > N/2
    assert stats.majority == pytest.approx(100 * sum(1 for i in range(runs + 1) if 2 * i > runs) / (runs + 1))


def test_items_missing_a_run_follow_the_framework(tmp_path):
    """Run i counts only the items holding judgment_i; a category's run i divides by all its items
    (llm_judge.py `evaluate`); the majority is over an item's own runs."""
    items = [_item(0, 1, (T, T)), _item(1, 1, (F,)), _item(2, 1, ())]
    stats = published_stats(read_detailed(_write(tmp_path / "e.json", {"g": items})).rows)
    assert stats.run_scores == pytest.approx([50.0, 100.0])  # run 1: 1 of 2 judged; run 2: 1 of 1
    assert stats.by_category[1].run_scores == pytest.approx([100 / 3, 100 / 3])
    assert stats.majority == pytest.approx(50.0) and stats.judged == 2 and stats.n == 3


def test_unjudged_file_has_no_figures(tmp_path):
    items = [_item(0, 1, ()), _item(1, 2, ())]
    stats = published_stats(read_detailed(_write(tmp_path / "e.json", {"g": items})).rows)
    assert (stats.mean, stats.std, stats.majority, stats.run_scores, stats.judged) == (None, None, None, [], 0)


# The done-when reproduction, on four fc-style files of this test's own numbers: each file is 200 items of one
# category, three runs, built from counts of label patterns so the figures are worked out by hand below.
FC_FILES = {  # name: ({pattern: count}, per-run mean, population std, majority vote), to two decimals
    # runs accept 150+3+2 = 155, 150+3+1 = 154, 150+2+1 = 153 of 200: 77.5, 77.0, 76.5 -> 77.00, std 0.41;
    # majority: TTT + TTF + TFT + FTT = 150 + 3 + 2 + 1 = 156 -> 78.00
    "small-model-short": ({(T, T, T): 150, (T, T, F): 3, (T, F, T): 2, (F, T, T): 1, (F, F, F): 44},
                          "77.00", "0.41", "78.00"),
    # runs: 160 + 1 = 161, 160, 160 + 2 = 162: 80.5, 80.0, 81.0 -> 80.50, std 0.41; majority 160 -> 80.00
    "small-model-long": ({(T, T, T): 160, (T, F, F): 1, (F, F, T): 2, (F, F, F): 37}, "80.50", "0.41", "80.00"),
    # runs: 170, 170, 170 + 1 = 171: 85.0, 85.0, 85.5 -> 85.17, std 0.24; majority 170 -> 85.00
    "large-model-short": ({(T, T, T): 170, (F, F, T): 1, (F, F, F): 29}, "85.17", "0.24", "85.00"),
    # runs: 185 + 4 = 189, 185 + 4 = 189, 185: 94.5, 94.5, 92.5 -> 93.83, std 0.94; majority 189 -> 94.50
    "large-model-long": ({(T, T, T): 185, (T, T, F): 4, (F, F, F): 11}, "93.83", "0.94", "94.50"),
}


def test_four_fc_style_files_reproduce_their_figures_to_two_decimals(tmp_path):
    for name, (patterns, mean, std, majority) in FC_FILES.items():
        items, n = [], 0
        for labels, count in patterns.items():
            for _ in range(count):
                items.append(_item(n, 4, labels, conversation=n % 2))
                n += 1
        groups = {f"locomo_exp_user_{c}": [i for i in items if i["question_id"].startswith(f"locomo_{c}_")]
                  for c in (0, 1)}
        path = _write(tmp_path / f"{name}.json", groups, {"answer_model": name, "judge_model": "judge-x",
                                                          "num_runs": 3})
        stats = published_stats(read_detailed(path).rows)
        assert (f"{stats.mean:.2f}", f"{stats.std:.2f}", f"{stats.majority:.2f}") == (mean, std, majority), name


@pytest.mark.parametrize("item, field", [
    ({"question": "q", "golden_answer": "g", "generated_answer": "a", "category": "1"}, "question_id"),
    ({"question_id": "locomo_0_qa0", "golden_answer": "g", "generated_answer": "a", "category": "1"}, "question"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "category": "1"}, "generated_answer"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "generated_answer": "a",
      "category": "multi-hop"}, "category"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "generated_answer": "a",
      "category": "1", "llm_judgments": {"judgment_1": "true"}}, "llm_judgments.judgment_1"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "generated_answer": "a",
      "category": "1", "llm_judgments": {"judgment_1": True, "judgment_3": False}}, "llm_judgments.judgment_2"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "generated_answer": "a",
      "category": "1", "llm_judgments": {"run_1": True}}, "llm_judgments.run_1"),
    ({"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", "generated_answer": "a",
      "category": "1", "llm_judgments": [True]}, "llm_judgments"),
])
def test_a_malformed_item_names_its_file_item_and_field(item, field, tmp_path):
    path = _write(tmp_path / "e.json", {"locomo_exp_user_0": [_item(0, 1, (T,)), item]})
    with pytest.raises(InputError) as caught:
        read_detailed(path)
    assert caught.value.field == field and str(path) in caught.value.source
    assert "[1]" in caught.value.source  # the second item of its group


# ---- the import ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def questions(locomo_dir):
    """(audit id, QA) of the first five category 1–4 questions of conversations 0 and 1, from the data."""
    conversations = load_locomo(find_locomo(str(locomo_dir)))
    out = []
    for c, conversation in enumerate(conversations[:2]):
        picked = [(q, qa) for q, qa in enumerate(conversation.qa) if qa.category in (1, 2, 3, 4)][:5]
        out += [(f"locomo_{c}_qa{q}", qa) for q, qa in picked]
    return out


def _locomo_item(audit_id: str, qa, runs: tuple[bool, ...], answer: str = "") -> dict:
    return {"question_id": audit_id, "question": qa.question, "golden_answer": qa.answer,
            "generated_answer": answer or f"my answer to {audit_id}", "llm_judgments": _labels(*runs),
            "category": str(qa.category)}


def _groups(items: list[dict]) -> dict:
    out: dict = {}
    for item in items:
        conversation = item["question_id"].split("_qa")[0].rsplit("_", 1)[1]
        out.setdefault(f"locomo_exp_user_{conversation}", []).append(item)
    return out


def _import(cli, source, locomo_dir, out, *extra, system="published"):
    return cli("locomo", "import", source, "--format", "evermemos", "--system", system, "--data", locomo_dir,
               "--out", out, *extra)


@pytest.mark.parametrize("runs", [1, 3, 5])
def test_answers_become_a_system_and_labels_a_recorded_judge(runs, questions, locomo_dir, tmp_path, cli):
    items = [_locomo_item(a, qa, tuple((i + r) % 3 != 0 for r in range(runs))) for i, (a, qa) in
             enumerate(questions)]
    source = _write(tmp_path / "eval_results.json", _groups(items), {"answer_model": "reader-y",
                                                                     "judge_model": "judge-x", "num_runs": runs})
    result = _import(cli, source, locomo_dir, tmp_path / "run", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["matched"], report["recorded"]["rows"], report["recorded"]["runs"]) == (10, 10, runs)
    answers = {r.sample_id: r for r in read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)}
    for audit_id, qa in questions:
        row = answers[qa.sample_id]
        assert row.prediction == f"my answer to {audit_id}" and row.answerer == "imported (evermemos)"
        assert row.gold == qa.answer and row.category == qa.category and row.f1 is not None
    judged = read_records(tmp_path / "run" / "judgments.jsonl", JudgmentRow)
    assert {j.protocol for j in judged} == {RECORDED_PROTOCOL} and {j.judge_model for j in judged} == {"judge-x"}
    assert all(j.prompt_version.startswith("recorded, not re-run") for j in judged)
    by_id = {j.sample_id: j for j in judged}
    for i, (_, qa) in enumerate(questions):
        assert by_id[qa.sample_id].scores == [100.0 if (i + r) % 3 else 0.0 for r in range(runs)]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())["imported"]["published"]
    import hashlib

    assert manifest["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert manifest["format"] == "evermemos" and manifest["metadata"]["answer_model"] == "reader-y"
    assert manifest["judge"] == {"protocol": RECORDED_PROTOCOL, "model": "judge-x", "model_source":
                                 "metadata.judge_model", "prompt": NOT_STATED, "runs": runs,
                                 "status": "recorded, not re-run"}


def test_the_question_id_places_the_row_and_what_does_not_fit_is_reported(questions, locomo_dir, tmp_path, cli):
    (a0, q0), (a1, q1), (a2, q2), (a3, q3), (a4, q4) = questions[:5]
    items = [_locomo_item(a0, q0, (T, T, T)),
             {**_locomo_item(a1, q1, (T, T, T)), "question": "What colour was the kite?"},  # text not its id's
             _locomo_item(a2, q2, (T, F, T)), _locomo_item(a2, q2, (F, F, F)),  # one id twice: both left out
             {**_locomo_item(a3, q3, (T, T, T)), "golden_answer": "a gold of my own"},  # gold mismatch
             {**_locomo_item("locomo_0_qa9999", q4, (T, T, T))},  # no such question
             {**_locomo_item("personamem_5_qa2", q4, (T, T, T))}]  # not a LoCoMo audit id
    # q4 itself is missing from the file: nothing is made up for it
    source = _write(tmp_path / "e.json", _groups(items[:-1]) | {"default_group": items[-1:]})
    report = json.loads(_import(cli, source, locomo_dir, tmp_path / "run", "--json").stdout)
    assert (report["rows"], report["matched"], report["unmatched"], report["duplicates"], report["mismatched"]) == \
        (7, 1, 3, 2, 1)
    assert any("What colour was the kite?" in e for e in report["examples"])
    assert any("a gold of my own" in e for e in report["examples"])
    assert {r.sample_id for r in read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)} == {q0.sample_id}
    assert [j.sample_id for j in read_records(tmp_path / "run" / "judgments.jsonl", JudgmentRow)] == [q0.sample_id]


def test_string_categories_must_match_the_question(questions, locomo_dir, tmp_path, cli):
    (a0, q0), (a1, q1) = questions[:2]
    wrong = 1 if q1.category != 1 else 2
    items = [_locomo_item(a0, q0, (T,)), {**_locomo_item(a1, q1, (T,)), "category": f" {wrong} "}]
    report = json.loads(_import(cli, _write(tmp_path / "e.json", _groups(items)), locomo_dir, tmp_path / "run",
                                "--json").stdout)
    assert (report["matched"], report["mismatched"]) == (1, 1)
    assert any(f"says {wrong}" in e for e in report["examples"])


def test_empty_judgments_import_answers_only(questions, locomo_dir, tmp_path, cli):
    items = [_locomo_item(a, qa, ()) for a, qa in questions]
    result = _import(cli, _write(tmp_path / "ap_eval_results.json", _groups(items)), locomo_dir, tmp_path / "run")
    assert result.returncode == 0 and "answers only" in result.stdout
    assert len(read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)) == 10
    assert not (tmp_path / "run" / "judgments.jsonl").exists()


def test_the_judge_model_as_the_file_states_it_or_as_the_user_says(questions, locomo_dir, tmp_path, cli):
    items = [_locomo_item(a, qa, (T, F, T)) for a, qa in questions]
    bare = _write(tmp_path / "scored.json", _groups(items))  # no metadata, as the audit's scored files
    assert _import(cli, bare, locomo_dir, tmp_path / "a").returncode == 0
    assert {j.judge_model for j in read_records(tmp_path / "a" / "judgments.jsonl", JudgmentRow)} == {NOT_STATED}
    assert _import(cli, bare, locomo_dir, tmp_path / "b", "--judge-model", "judge-z").returncode == 0
    assert {j.judge_model for j in read_records(tmp_path / "b" / "judgments.jsonl", JudgmentRow)} == {"judge-z"}
    framework = _write(tmp_path / "framework.json", _groups(items), {"model": "judge-w", "num_runs": 3})
    assert _import(cli, framework, locomo_dir, tmp_path / "c").returncode == 0  # llm_judge writes `model`
    assert {j.judge_model for j in read_records(tmp_path / "c" / "judgments.jsonl", JudgmentRow)} == {"judge-w"}
    stated = _write(tmp_path / "stated.json", _groups(items), {"judge_model": "judge-x"})
    refused = _import(cli, stated, locomo_dir, tmp_path / "d", "--judge-model", "judge-z")
    assert refused.returncode == 2 and "states the judge model 'judge-x'" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "d").exists()
    other = cli("locomo", "import", bare, "--format", "mem0", "--system", "s", "--judge-model", "m", "--data",
                locomo_dir, "--out", tmp_path / "e")
    assert other.returncode == 2 and "--judge-model" in other.stderr


@pytest.mark.parametrize("content, message", [
    ("[]", "top level: expected an object with `detailed_results`"),
    ('{"total_questions": 1}', "detailed_results: missing"),
    ('{"detailed_results": {"locomo_exp_user_0": {}}}', "expected a list of items"),
    ('{"detailed_results": {"g": [{"question_id": "locomo_0_qa0", "question": "q", "golden_answer": "g", '
     '"generated_answer": "a", "category": "1", "llm_judgments": {"judgment_1": 1}}]}}',
     "llm_judgments.judgment_1: expected true or false"),
    ('{"detailed_results": {}, "metadata": []}', "metadata: expected an object"),
])
def test_bad_files_are_one_line_and_write_nothing(content, message, locomo_dir, tmp_path, cli):
    source = tmp_path / "e.json"
    source.write_text(content)
    result = _import(cli, source, locomo_dir, tmp_path / "run")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_skip_invalid_imports_the_valid_items(questions, locomo_dir, tmp_path, cli):
    items = [_locomo_item(a, qa, (T,)) for a, qa in questions[:3]]
    items[1]["category"] = "temporal"
    report = json.loads(_import(cli, _write(tmp_path / "e.json", _groups(items)), locomo_dir, tmp_path / "run",
                                "--skip-invalid", "--json").stdout)
    assert (report["matched"], report["skipped"]) == (2, 1) and "category" in report["skipped_rows"][0]


def test_reports_show_the_per_run_mean_std_over_runs_and_majority(questions, locomo_dir, tmp_path, cli):
    # ten questions, three runs accepting 6, 5 and 4 of them; majority 5 (items 0–4 by two or three runs)
    runs = [(T, T, T), (T, T, T), (T, T, T), (T, T, F), (T, F, T), (T, F, F), (F, T, F), (F, F, F), (F, F, F),
            (F, F, F)]
    items = [_locomo_item(a, qa, r) for (a, qa), r in zip(questions, runs, strict=True)]
    source = _write(tmp_path / "e.json", _groups(items), {"judge_model": "judge-x"})
    assert _import(cli, source, locomo_dir, tmp_path / "run").returncode == 0
    # mean of 60, 50, 40 = 50.00; population std sqrt(200/3) = 8.16; majority 5 of 10 = 50.00
    results = cli("results", tmp_path / "run", check=True).stdout
    line = next(n for n in results.splitlines() if "J (evermemos_recorded) is recorded, not re-run" in n)
    assert "per-run mean 50.00 ± 8.16 (population std over 3 runs: 60.00, 50.00, 40.00), majority vote 50.00" \
        in line and "judge model judge-x" in line
    assert "J majority vote (evermemos_recorded)" in results
    cli("locomo", "run", "--data", locomo_dir, "--systems", "published", "--conversations", "conv-26,conv-30",
        "--out", tmp_path / "run", "--no-progress", check=True)
    report = (tmp_path / "run" / "report.md").read_text()
    row = next(n for n in report.splitlines() if n.startswith("| published | judge-x, evermemos_recorded"))
    assert "(recorded, not re-run)" in row and "| 50.00 ± 8.16 | 50.00 | 60.00 / 50.00 / 40.00 | 10 |" in row
    assert "## J recorded in the imported files (evermemos_recorded judge, recorded, not re-run)" in report
    assert "(ours)" not in row
    assert "judged by the file's producer: its judgments kept as the judge evermemos_recorded (recorded, not " \
        "re-run; judge model judge-x)" in report
    from memeval.viewer import page_data

    protocols = page_data([str(tmp_path / "run")])["protocols"]
    assert [(p["name"], p["model"], p["status"]) for p in protocols] == [
        (RECORDED_PROTOCOL, "judge-x", "recorded, not re-run: the imported file's own labels, no request sent")]


class _Key:
    """A corrected key over three audited questions: q1's gold changed, q2 left out, q3 only miscited."""

    mode = "corrected"

    def affected(self, sample_id):
        from types import SimpleNamespace

        return SimpleNamespace(golden_answer="old") if sample_id in ("c:q1", "c:q2", "c:q3") else None

    def gold(self, sample_id, original):
        return {"c:q1": "new", "c:q2": None}.get(sample_id, original)


def test_under_another_key_only_questions_whose_gold_stands_keep_their_recorded_judgments():
    from memeval.benchmarks.locomo.recorded import recorded_notes, under_key

    rows = [JudgmentRow(protocol=RECORDED_PROTOCOL, scores=[100.0, 0.0, 100.0], mean=200 / 3, std=None,
                        run_count=3, warning=None, errors=[], sample_id=f"c:q{i}", conversation_id="c", category=1,
                        system="published", prompt_version="recorded", judge_model="judge-x") for i in range(4)]
    kept = under_key(rows, _Key())
    assert [r.sample_id for r in kept] == ["c:q0", "c:q3"]  # a miscited question's gold still stands
    assert under_key(rows, None) == rows
    note = recorded_notes(kept, _Key())[0]
    assert "2 questions of categories 1–4; under the corrected key the questions it changes are left out" in note


def test_a_stated_judge_prompt_and_model_find_that_judges_measured_leniency(questions, locomo_dir, tmp_path,
                                                                             monkeypatch, cli):
    """A recorded J carries a measured leniency only when the file's producer states the whole configuration:
    the model (in the file or --judge-model) and the prompt (--judge-prompt); an unstated prompt or another model
    reads "leniency not measured"."""
    from memeval.benchmarks.locomo.audit_leniency import recorded_identity
    from memeval.scoring.leniency import Leniency, Rate, register

    registrations = tmp_path / "registered"
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATIONS_DIR", str(registrations))
    identity = recorded_identity()
    rate = Rate.of(7, 20)  # 35.0% of 20
    register(tmp_path / "a-calibration", [Leniency(
        **rate.model_dump(), judge=identity["judge"], judge_model="gpt-4o-mini",
        prompt_version=identity["prompt_version"], prompt_source=identity["prompt_source"], sampling="protocol",
        temperature_sent=0.0, runs=3, answer_set="vague_wrong", by_category={}, source="a calibration run")],
        registrations)
    items = [_locomo_item(a, qa, (T, F, T)) for a, qa in questions]
    bare = _write(tmp_path / "scored.json", _groups(items))
    stated = _import(cli, bare, locomo_dir, tmp_path / "stated", "--judge-model", "gpt-4o-mini", "--judge-prompt",
                     "evermemos")
    unstated = _import(cli, bare, locomo_dir, tmp_path / "unstated", "--judge-model", "gpt-4o-mini")
    other = _import(cli, bare, locomo_dir, tmp_path / "other", "--judge-model", "judge-z", "--judge-prompt",
                    "evermemos")
    assert stated.returncode == unstated.returncode == other.returncode == 0
    shown = {name: cli("results", tmp_path / name).stdout for name in ("stated", "unstated", "other")}
    assert "this judge accepts 35.0% [" in shown["stated"]
    for name in ("unstated", "other"):
        assert "this judge accepts" not in shown[name] and "leniency not measured" in shown[name]
    refused = _import(cli, bare, locomo_dir, tmp_path / "x", "--judge-prompt", "mem0")
    assert refused.returncode == 2 and "--judge-prompt" in refused.stderr and not (tmp_path / "x").exists()
