"""Typed records: what they refuse, what older files they still read, and package ids both ways."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.errors import InputError
from memeval.records import AnswerRow, JudgmentRow, PackageId, SweepRow, read_records, union_method
from tests.rows import answer_row, judgment_row


def test_a_bad_row_is_one_error_naming_file_line_and_field(tmp_path):
    path = tmp_path / "answers.jsonl"
    rows = [answer_row(), {**answer_row("conv-1:q0001"), "category": "four"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"answers.jsonl line 2: category: "):
        read_records(path, AnswerRow)
    path.write_text(json.dumps({**answer_row(), "f1_typo": 1.0}) + "\n")
    with pytest.raises(InputError, match=r"line 1: f1_typo: Extra inputs are not permitted"):
        read_records(path, AnswerRow)
    path.write_text(json.dumps({k: v for k, v in judgment_row().items() if k != "protocol"}) + "\n")
    with pytest.raises(InputError, match=r"line 1: protocol: Field required"):
        read_records(path, JudgmentRow)


def test_records_are_read_by_attribute_and_written_by_to_row():
    row = AnswerRow.from_row(answer_row(f1=None))
    assert row.sample_id == "conv-1:q0000" and row.f1 is None
    with pytest.raises(TypeError):  # no dict emulation: a field is an attribute, the written form is to_row()
        row["sample_id"]
    assert not hasattr(row, "get") and not hasattr(row, "keys")
    assert row.to_row() == answer_row(f1=None) and row.replace(f1=0.5).f1 == 0.5 and row.f1 is None
    assert row.key == ("s", "conv-1:q0000") and row.final


def test_sweep_rows_of_older_files_gain_their_fields_and_write_back_without_empty_ones():
    old_union = {"package_id": "locomo-natural-conv-26-q0047+observations", "seed": None,
                 "distribution": "locomo-natural-union", "budget": 30.0, "max_per_group": 1,
                 "method": "union:observations:recency", "value": 0.0, "opt": 0.5, "ratio": 0.0, "certified": True,
                 "invalidation_units_covered": None, "cost": 17.0, "selected": [], "runtime_s": None,
                 "union_of": "locomo-natural-conv-26-q0047", "system": "observations", "opt_package": 0.5,
                 "package_ratio": 0.0, "exported": 6, "exported_fitting": 5}
    row = SweepRow.from_row(old_union)
    assert (row.system, row.pruning, row.sample_id, row.is_union) == ("observations", "recency", "conv-26:q0047",
                                                                       True)
    assert row.method == union_method("observations", "recency")
    writer_row = SweepRow.from_row({**old_union, "package_id": "small-base-s0007", "method": "gvt", "system": None,
                                    "union_of": None, "opt_package": None, "package_ratio": None, "exported": None,
                                    "exported_fitting": None})
    assert not writer_row.is_union and writer_row.sample_id is None
    assert set(writer_row.to_row()) == {"package_id", "seed", "distribution", "budget", "max_per_group", "method",
                                        "value", "opt", "ratio", "certified", "invalidation_units_covered", "cost",
                                        "selected", "runtime_s"}
    assert writer_row.key == SweepRow.key_of(writer_row.to_row()) == ("small-base-s0007", 30.0, "gvt", 1)
    assert writer_row.replace(budget=60.0, max_per_group=2).key == ("small-base-s0007", 60.0, "gvt", 2)


@given(st.from_regex(r"conv-[0-9]{1,3}", fullmatch=True), st.integers(0, 9999),
       st.sampled_from([None, "observations", "rag_turns", "memory_graph"]))
def test_natural_package_ids_round_trip(conversation, question, system):
    sample_id = f"{conversation}:q{question:04d}"
    pid = PackageId.natural(sample_id, system)
    assert PackageId.parse(str(pid)) == pid and pid.sample_id == sample_id


@given(st.sampled_from(["base", "update_chain", "density_trap"]), st.integers(0, 99999))
def test_small_package_ids_round_trip(distribution, seed):
    pid = PackageId.small(distribution, seed)
    assert PackageId.parse(str(pid)) == pid and str(pid) == f"small-{distribution}-s{seed:04d}"
    assert PackageId.parse("someone-elses-id") == PackageId(kind="other", raw="someone-elses-id")
