"""What the second new-user trial of issue 41 found in `memeval results`, report.md and `locomo import`: the
audit's wrong-answer sets are reference sets there too (scored, labelled, never paired), an import folder is named
as one with all its imports counted, the import note is true of recorded judgments, the corrected − original column
agrees with the numbers beside it, report.md without the audit suggests a command that works, a trust report folder
is not a run, and a J above the ceiling is explained.

Every file is written here in the formats' shapes (tests/audit_sample.py's made-up LoCoMo and audit, this test's own
answers); the reference sets are recognised by the SHA-256 the test pins for them."""

import json

import pytest

from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
from tests.audit_sample import fetched, write_locomo

SYSTEMS = ["rag_turns", "full_context"]


@pytest.fixture()
def world(tmp_path, monkeypatch, cli):
    """A run of two built-in systems with the audit's v2 set imported into it as `ap-v2`."""
    data = write_locomo(tmp_path / "locomo10.json")
    audit = fetched(tmp_path, monkeypatch)
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES

    cli("locomo", "import", audit / AUDIT_FILES["v2_scored"].path, "--format", "evermemos", "--system", "ap-v2",
        "--judge-model", "judge-of-the-test", "--judge-prompt", "evermemos", "--data", data,
        "--out", tmp_path / "run", check=True)
    run_locomo(LocomoRunConfig(out=str(tmp_path / "run"), data=str(data), systems=[*SYSTEMS, "ap-v2"],
                               progress=False))
    return tmp_path


def test_results_keep_a_reference_set_scored_and_labelled_but_never_paired(world, cli):
    text = cli("results", world / "run", "--no-progress", check=True).stdout
    assert "| ap-v2 (reference answer set) | F1 ×100" in text, "its scores stay, labelled"
    power = text[text.index("Which differences are real"):text.index("J beside answer length")]
    assert "rag_turns − full_context" in power or "full_context − rag_turns" in power
    assert "ap-v2 −" not in power and "− ap-v2" not in power
    assert power.count("Not paired: ap-v2 — reference answer set (locomo-audit, written to be wrong)") == 1
    doc = json.loads(cli("results", world / "run", "--format", "json", "--no-progress", check=True).stdout)
    assert not {"ap-v2"} & {name for p in doc["paired"] for name in (p["run"], p["minus"])}
    assert "ap-v2" in {c["system"] for c in doc["cells"]}


def test_report_pairs_leave_the_reference_set_out_and_say_who_judged_it(world):
    report = (world / "run" / "report.md").read_text()
    for title in ("## Paired differences in F1", "## Which differences in F1 are real",
                  "## Paired differences in J (evermemos_recorded)"):
        section = report[report.index(title):].split("\n## ")[0]
        assert "ap-v2 −" not in section and "− ap-v2" not in section, title
        assert "Not paired: ap-v2" in section, title
    note = next(line for line in report.splitlines() if line.startswith("> ap-v2: answers imported"))
    assert "scored and judged here like every other system" not in note
    assert "judged by the file's producer" in note and "recorded, not re-run" in note


def test_an_import_folder_is_named_as_one_with_every_import_counted(world, cli, tmp_path):
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES

    folder = tmp_path / "pub"
    for name in ("v1_scored", "v2_scored", "fc_gpt-4o-mini-cot"):
        cli("locomo", "import", world / "audit" / AUDIT_FILES[name].path, "--format", "evermemos", "--system",
            name.replace("_", "-"), "--judge-model", "judge-of-the-test", "--data", world / "locomo10.json",
            "--out", folder, check=True)
    text = cli("results", folder, "--no-progress", check=True).stdout
    line = next(line for line in text.splitlines() if line.startswith("- pub: "))
    assert "(locomo import," in line and "locomo run" not in line.split(":")[1]
    assert "3 imports, last): `memeval locomo import" in line and "--system fc-gpt-4o-mini-cot" in line


def test_corrected_minus_original_is_the_unrounded_difference_shown_to_two_places():
    from memeval.benchmarks.locomo.trust import _cells, _overall_table
    from memeval.records import TrustCell, TrustDocument

    cells = [TrustCell(run="", system="s", origin="memeval", measure="F1", key=key, category="overall",
                       value=value, low=None, high=None, n=9) for key, value in (("original", 7.74),
                                                                                 ("corrected", 7.96))]
    doc = TrustDocument(audit={}, keys=["original", "corrected"], ceilings={}, f1_ceilings={}, cells=cells, pairs=[],
                        leniency=[], judges={}, words={}, notes=[])
    table = "\n".join(_overall_table(doc, "F1", _cells(doc), [("s", "memeval")]))
    row = next(line for line in table.splitlines() if line.startswith("| s "))
    assert "7.7 (n = 9" in row and "8.0 (n = 9" in row
    assert row.split("|")[-3].strip() == "+0.22", row  # 7.96 − 7.74, not +0.2 beside 7.7 and 8.0


def test_without_the_audit_the_report_suggests_a_trust_command_that_works(tmp_path, monkeypatch, cli):
    data = write_locomo(tmp_path / "locomo10.json")
    monkeypatch.setenv("MEMEVAL_LOCOMO_AUDIT_DIR", str(tmp_path / "no-audit"))
    run_locomo(LocomoRunConfig(out=str(tmp_path / "plain"), data=str(data), systems=["rag_turns"], progress=False))
    section = (tmp_path / "plain" / "report.md").read_text().split("## How far these tables can be trusted")[1]
    assert "\\`" not in section, "a code span is not Markdown-escaped"
    assert "(`memeval data fetch locomo-audit`)" in section
    command = section[section.index("`memeval locomo trust"):].split("`")[1]
    assert "--published" not in command
    result = cli("locomo", "trust", tmp_path / "plain", "--data", data, "--out", tmp_path / "plain" / "trust")
    assert result.returncode == 0, result.stderr


def test_importing_into_a_trust_report_folder_is_refused_with_nothing_written(world, cli, tmp_path):
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES

    for report in ("trust.md", "trust.json"):
        folder = tmp_path / f"t-{report}"
        folder.mkdir()
        (folder / report).write_text("a trust report\n")
        before = sorted(p.name for p in folder.iterdir())
        result = cli("locomo", "import", world / "audit" / AUDIT_FILES["v1_scored"].path, "--format", "evermemos",
                     "--system", "x", "--data", world / "locomo10.json", "--out", folder)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "--out" in result.stderr and report in result.stderr and "Traceback" not in result.stderr
        assert sorted(p.name for p in folder.iterdir()) == before


def test_the_ceiling_line_says_what_a_j_above_it_means_on_the_original_key_only(world, cli):
    from memeval.benchmarks.locomo.audit_key import answer_key, load_audit
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo.keyed import key_notes

    conversations = load_locomo(world / "locomo10.json")
    audit = load_audit(conversations)
    original = key_notes(answer_key("original", conversations=conversations), audit, conversations)[-1]
    assert original.startswith("Ceiling of a perfect system") and "A J above its ceiling is credit on questions " \
        "whose gold the audit finds wrong: a lenient judge" in original
    corrected = key_notes(answer_key("corrected", conversations=conversations), audit, conversations)[-1]
    assert corrected.startswith("Ceiling of a perfect system") and "A J above its ceiling" not in corrected
    assert "A J above its ceiling" in cli("results", world / "run", "--no-progress", check=True).stdout
