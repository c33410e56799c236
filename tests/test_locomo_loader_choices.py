"""What the LoCoMo loader never decides silently: a MEMEVAL_DATA_LOCOMO that names nothing, data holding the
conversations twice (two `locomo10.json`, one beside per-conversation files, two data folders or zips), two turns
sharing a dia_id, and two keys for one session (`session_01` beside `session_1`) are each refused in one line
naming both; a lone zero-padded key is read and counted as a quirk."""

import json
import zipfile

import pytest

from memeval.benchmarks.locomo.data import load_locomo, load_locomo_with_report
from memeval.data.paths import find_locomo
from memeval.errors import DataNotFoundError, InputError


def conversation(**extra) -> dict:
    flat = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Denver."},
                          {"speaker": "Bob", "dia_id": "D1:2", "text": "How is it?"}],
            "qa": [{"question": "Where did Ann move?", "answer": "Denver", "evidence": ["D1:1"], "category": 4}]}
    flat.update(extra)
    return flat


def single_file(sample_id="conv-1") -> list:
    flat = conversation()
    return [{"sample_id": sample_id, "qa": flat.pop("qa"), "conversation": flat}]


@pytest.mark.parametrize("problem", ["missing", "empty"])
def test_a_set_data_variable_that_names_nothing_is_an_error(problem, tmp_path, monkeypatch, cli):
    named = tmp_path / "typo" / "path"
    if problem == "empty":
        named.mkdir(parents=True)
    monkeypatch.setenv("MEMEVAL_DATA_LOCOMO", str(named))
    want = "does not exist" if problem == "missing" else "is an empty directory"
    with pytest.raises(DataNotFoundError, match=f"MEMEVAL_DATA_LOCOMO={named}: {want}"):
        find_locomo()  # ../shared/data/locomo beside the checkout holds data: it must not be used instead
    done = cli("data", "stats")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and f"MEMEVAL_DATA_LOCOMO={named}: {want}" in done.stderr
    monkeypatch.setenv("MEMEVAL_DATA_LOCOMO", "")  # set but empty: as if unset
    assert find_locomo().exists()


def test_a_directory_mixing_both_layouts_is_refused_naming_both(tmp_path):
    (tmp_path / "locomo10.json").write_text(json.dumps(single_file()))
    (tmp_path / "26.json").write_text(json.dumps(conversation()))
    with pytest.raises(InputError, match=r"layout: mixes two layouts: locomo10.json and per-conversation files "
                                         r"\(26.json\)"):
        load_locomo(tmp_path)


def test_two_data_folders_or_two_zips_are_refused_naming_both(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "locomo10.json").write_text(json.dumps(single_file()))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "results.json").write_text("{}")  # not LoCoMo's: not a candidate
    with pytest.raises(InputError, match=r"directory: 2 hold LoCoMo files \(a and b\)"):
        load_locomo(tmp_path)
    zips = tmp_path / "zips"
    zips.mkdir()
    for name in ("x.zip", "y.zip"):
        with zipfile.ZipFile(zips / name, "w") as archive:
            archive.writestr("locomo10.json", json.dumps(single_file()))
    with pytest.raises(InputError, match=r"zip: 2 hold LoCoMo files \(x.zip and y.zip\)"):
        load_locomo(zips)


@pytest.mark.parametrize("members", [("a/locomo10.json", "b/locomo10.json"), ("locomo10.json", "v2/26.json")])
def test_a_zip_holding_the_data_twice_is_refused_naming_both(members, tmp_path):
    path = tmp_path / "locomo.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for member in members:
            archive.writestr(member, json.dumps(single_file() if member.endswith("locomo10.json") else conversation()))
    with pytest.raises(InputError) as refused:
        load_locomo(path)
    line = str(refused.value)
    assert "\n" not in line and all(member in line for member in members)


def test_the_same_conversation_in_two_files_names_both(tmp_path):
    path = tmp_path / "locomo.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/26.json", json.dumps(conversation()))
        archive.writestr("b/26.json", json.dumps(conversation()))
    with pytest.raises(InputError, match=r"duplicate conversation conv-26 \(in .*a/26.json and .*b/26.json\)"):
        load_locomo(path)


def test_two_turns_sharing_a_dia_id_are_refused(tmp_path):
    flat = conversation(session_2_date_time="2:00 pm on 9 May, 2023",
                        session_2=[{"speaker": "Ann", "dia_id": "D1:2", "text": "Fine."}])
    (tmp_path / "26.json").write_text(json.dumps(flat))
    with pytest.raises(InputError, match=r"session_2\[0\]\.dia_id: D1:2 is also the id of session_1\[1\]"):
        load_locomo(tmp_path)


def test_a_zero_padded_session_key_is_counted_and_one_beside_its_plain_twin_refused(tmp_path):
    flat = conversation()
    flat["session_01"] = flat.pop("session_1")
    (tmp_path / "26.json").write_text(json.dumps(flat))
    [loaded], report = load_locomo_with_report(tmp_path)
    assert [s.index for s in loaded.sessions] == [1] and len(loaded.turns) == 2
    assert report.quirks["zero_padded_session_key"] == 1
    for twin in ("session_1", "session_01_date_time"):
        doubled = dict(flat, **{twin: flat["session_01"] if twin == "session_1" else "3:00 pm on 8 May, 2023"})
        (tmp_path / "26.json").write_text(json.dumps(doubled))
        with pytest.raises(InputError, match="names the same session as session_"):
            load_locomo(tmp_path)
