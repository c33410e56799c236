"""What a new user meets after `memeval locomo import --format evermemos` (issue 41, the trial): the report's
paired J on the judge's own 0–100 scale, its notes true of recorded judgments (J was not skipped; the prompt the
import stated), the offline next steps, the viewer on an import folder (imported answers' reader named as such),
no J passed off under the corrected key when the changed questions were never judged on it, and the one-line
refusals of `judge calibrate --recorded --out` and `data fetch --dest FILE`.

Every file is written here in the formats' shapes with this test's own answers and labels; the LoCoMo questions
come from the data (or tests/audit_sample.py's made-up LoCoMo and audit)."""

import json

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.data.paths import find_locomo
from memeval.jsonl import JsonlWriter
from memeval.records import JudgmentRow, read_records, write_records
from tests.audit_sample import answer_key_rows, fetched, write_locomo

T, F = True, False


def _evermemos(path, items: list[dict], metadata: dict | None = None):
    groups: dict = {}
    for item in items:
        groups.setdefault(f"locomo_exp_user_{item['question_id'].split('_')[1]}", []).append(item)
    path.write_text(json.dumps({"total_questions": len(items), "detailed_results": groups,
                                **({"metadata": metadata} if metadata else {})}))
    return path


def _item(audit_id: str, question: str, gold, category: int, runs: tuple[bool, ...], answer: str) -> dict:
    return {"question_id": audit_id, "question": question, "golden_answer": gold, "generated_answer": answer,
            "category": str(category), "llm_judgments": {f"judgment_{i}": v for i, v in enumerate(runs, 1)}}


@pytest.fixture(scope="module")
def questions(locomo_dir):
    """(audit id, QA) of the first five category 1–4 questions of conversations 0 and 1."""
    out = []
    for c, conversation in enumerate(load_locomo(find_locomo(str(locomo_dir)))[:2]):
        picked = [(q, qa) for q, qa in enumerate(conversation.qa) if qa.category in (1, 2, 3, 4)][:5]
        out += [(f"locomo_{c}_qa{q}", qa) for q, qa in picked]
    return out


def _import(cli, source, data, out, system, *extra):
    return cli("locomo", "import", source, "--format", "evermemos", "--system", system, "--data", data, "--out",
               out, *extra)


def _two_imports(cli, questions, locomo_dir, tmp_path):
    """System a: every question accepted by all three runs; b: the first five only (J 100 vs 50)."""
    out = tmp_path / "pub"
    for system, accepted in (("a", len(questions)), ("b", 5)):
        items = [_item(i, qa.question, qa.answer, qa.category, (n < accepted,) * 3, f"{system} says {n}")
                 for n, (i, qa) in enumerate(questions)]
        source = _evermemos(tmp_path / f"{system}.json", items, {"judge_model": "judge-x",
                                                                 "answer_model": f"reader-{system}"})
        result = _import(cli, source, locomo_dir, out, system, "--judge-prompt", "evermemos")
        assert result.returncode == 0, result.stderr
    return out, result


def test_report_of_imported_systems_pairs_j_in_points_and_says_what_judged(questions, locomo_dir, tmp_path, cli):
    out, _ = _two_imports(cli, questions, locomo_dir, tmp_path)
    cli("locomo", "run", "--data", locomo_dir, "--systems", "a,b", "--conversations", "conv-26,conv-30", "--out", out,
        "--no-progress", check=True)
    report = (out / "report.md").read_text()
    paired = report[report.index("## Paired differences in J (evermemos_recorded)"):].split("\n\n")[1]
    row = next(line for line in paired.splitlines() if line.startswith("| a − b"))
    assert row.split(" | ")[1] == "50.00", row  # J is 0–100 already: 100 − 50 points, not ×100 again
    assert "| mean difference |" in paired
    assert "J skipped" not in report and "no judge was requested" not in report.replace("No judge was requested", "")
    assert "the J shown is the imported files' own recorded judgments (a, b: recorded, not re-run)" in report
    assert "not stated by the file" not in report
    assert "Their judge prompt: EverMemOS prompts.yaml (" in report


def test_the_import_suggests_the_offline_next_steps_when_it_brought_judgments(questions, locomo_dir, tmp_path,
                                                                               cli):
    out, result = _two_imports(cli, questions, locomo_dir, tmp_path)
    assert "[--judge binary]" not in result.stdout
    assert f"memeval results {out}\n" in result.stdout
    assert f"memeval locomo trust {out} --out {out}/trust\n" in result.stdout, "--published needs the audit"
    assert "memeval data fetch locomo-audit (then trust takes --published" in result.stdout
    unjudged = [_item(i, qa.question, qa.answer, qa.category, (), "c") for i, qa in questions]
    answers_only = _import(cli, _evermemos(tmp_path / "c.json", unjudged), locomo_dir, tmp_path / "c", "c")
    assert f"next: memeval locomo run --systems c --out {tmp_path / 'c'} [--judge binary]" in answers_only.stdout


def test_the_viewer_reads_an_import_folder_and_names_the_imported_reader(questions, locomo_dir, tmp_path, cli):
    from memeval.viewer import page_data

    out, _ = _two_imports(cli, questions, locomo_dir, tmp_path)
    data = page_data([str(out)])  # a `locomo import` folder: refused before
    assert [(s["name"], s["reader"]) for s in data["systems"]] == [("a", "imported: evermemos, reader-a"),
                                                                   ("b", "imported: evermemos, reader-b")]
    assert len(data["rows"]["pred"]) == 2 * len(questions) and all(data["rows"]["j"])
    assert [round(s["j"]["0"]["mean"]) for s in data["runs"][0]["scores"]] == [100, 50]
    cli("locomo", "run", "--data", locomo_dir, "--systems", "a,b", "--conversations", "conv-26,conv-30", "--out", out,
        "--no-progress", check=True)
    reader = page_data([str(out)])["runs"][0]["reader"]
    assert reader["reader"] is None and reader["imported"] == [["a", "imported: evermemos, reader-a"],
                                                               ["b", "imported: evermemos, reader-b"]]
    assert "extractive" not in json.dumps(reader)


@pytest.fixture()
def audited(tmp_path, monkeypatch, cli):
    """The made-up audit fetched, its LoCoMo file, and one import of it (every question accepted three times) with
    a native `binary` judge's original-key rows beside the recorded ones, never re-judged on another key."""
    fetched(tmp_path, monkeypatch)
    data = write_locomo(tmp_path / "locomo10.json")
    items = [_item(r["question_id"], r["question"], r["golden_answer"], r["category"], (T, T, T), "a guess")
             for r in answer_key_rows()]
    source = _evermemos(tmp_path / "e.json", items, {"judge_model": "judge-x"})
    out = tmp_path / "pub"
    assert _import(cli, source, data, out, "pub").returncode == 0
    recorded = read_records(out / "judgments.jsonl", JudgmentRow)
    with JsonlWriter(out / "judgments.jsonl") as writer:
        write_records(writer, [r.model_copy(update={"protocol": "binary", "prompt_version": "p1"})
                               for r in recorded])
    return out


def test_results_under_the_corrected_key_show_no_j_over_a_partial_set(audited, cli):
    shown = cli("results", audited, "--key", "corrected", "--no-progress", check=True).stdout
    for protocol in ("evermemos_recorded", "binary"):
        row = next(line for line in shown.splitlines() if f"| J ({protocol})" in line)
        assert "– (not judged on this key)" in row, row
    notes = [line for line in shown.splitlines() if line.startswith("- J (")]
    assert any("evermemos_recorded judge) under the corrected key: – for pub (not judged on this key)" in n
               and "`--key excluded` leaves those questions out" in n for n in notes), notes
    assert any("binary judge) under the corrected key: – for pub (not re-judged on this key" in n
               and "`memeval locomo run … --key corrected`" in n for n in notes), notes
    assert "majority vote" not in shown.split("## Which differences")[0].split("\n- ")[0]
    excluded = cli("results", audited, "--key", "excluded", "--no-progress", check=True).stdout
    row = next(line for line in excluded.splitlines() if "| J (evermemos_recorded)" in line)
    assert "100.0" in row and "not judged" not in excluded
    original = cli("results", audited, "--no-progress", check=True).stdout
    assert "not judged on this key" not in original


def test_the_viewer_under_the_corrected_key_matches(audited):
    from memeval.viewer import page_data

    data = page_data([str(audited)], key="corrected")
    names = [p["name"] for p in data["protocols"]]
    assert sorted(names) == ["binary", "evermemos_recorded"]
    assert data["runs"][0]["scores"][0]["j"] == {"0": None, "1": None}  # the J columns stay, "–"
    assert sum("(not judged on this key)" in n for n in data["notes"]) == 1
    assert sum("(not re-judged on this key" in n for n in data["notes"]) == 1
    assert any(data["rows"]["j"])  # each question still shows the judgments that grade its standing gold
    judged = page_data([str(audited)], key="excluded")["runs"][0]["scores"][0]["j"]
    assert judged["0"]["mean"] == 100.0


def test_recorded_calibration_refuses_out_in_one_line(tmp_path, cli):
    result = cli("judge", "calibrate", "--judge", "evermemos", "--recorded", "--out", tmp_path / "own")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--out" in result.stderr and "--recorded" in result.stderr and not (tmp_path / "own").exists()


@pytest.mark.parametrize("under", ["", "/sub"])
def test_fetch_dest_naming_a_file_names_the_flag(under, tmp_path, cli):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("mine\n")
    result = cli("data", "fetch", "locomo-audit", "--source", tmp_path / "nowhere", "--dest", f"{answers}{under}")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--dest" in result.stderr and "is a file, not a folder" in result.stderr
    assert answers.read_text() == "mine\n"


def test_fetch_help_names_the_evermemos_protocol(cli):
    assert "EverMemOS" in " ".join(cli("data", "fetch", "--help").stdout.split())


def test_report_under_the_corrected_key_shows_no_j_over_a_partial_set(audited, tmp_path, cli):
    cli("locomo", "run", "--data", tmp_path / "locomo10.json", "--systems", "pub", "--key", "corrected", "--out",
        audited, "--no-progress", check=True)
    report = (audited / "report.md").read_text()
    recorded = report[report.index("## J recorded in the imported files"):].split("\n\n")[1]
    row = next(line for line in recorded.splitlines() if line.startswith("| pub |"))
    assert "– (not judged on this key)" in row and "100.00" not in row, row
    accounting = report[report.index("## Judge accounting (evermemos_recorded)"):].split("\n\n")[2]
    assert next(line for line in accounting.splitlines() if line.startswith("| pub |")).split(" | ")[5] == "–"
    assert "(not judged on this key): recorded judgments graded the original gold" in report
    assert "(not re-judged on this key" in report
