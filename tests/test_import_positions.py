"""Importing answers whose question text repeats inside one conversation (LoCoMo: 12 pairs, 24 questions): the
row's position in its conversation's list names the question, a carried gold answer that disagrees is reported
instead of guessed, and `--skip-invalid` imports the valid rows of a file with malformed ones."""

import json
from collections import Counter

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.imports import normalise
from memeval.records import AnswerRow, read_records


@pytest.fixture(scope="module")
def dataset(locomo_dir):
    return load_locomo(locomo_dir)


def _item(qa, response=None, answer="gold"):
    """One item of Mem0's results file for `qa`: its prediction names the question it answers, so a row placed on
    the wrong question shows."""
    item = {"question": qa.question, "response": response or f"answer to {qa.sample_id}", "category": qa.category}
    if answer == "gold":
        item["answer"] = qa.answer
    elif answer is not None:
        item["answer"] = answer
    return item


def _repeated(conversation):
    counts = Counter(normalise(q.question) for q in conversation.qa)
    return [q for q in conversation.qa if counts[normalise(q.question)] > 1]


def _import(cli, locomo_dir, source, out, fmt="mem0", *extra, check=True):
    result = cli("locomo", "import", source, "--format", fmt, "--system", "outside", "--data", locomo_dir,
                 "--out", out, "--json", *extra, check=check)
    return json.loads(result.stdout) if check else result


def test_a_mem0_file_for_all_ten_conversations_imports_every_question(dataset, locomo_dir, tmp_path, cli):
    doc = {str(i): [_item(qa) for qa in c.qa] for i, c in enumerate(dataset)}
    source = tmp_path / "mem0_results.json"
    source.write_text(json.dumps(doc))
    total = sum(len(c.qa) for c in dataset)
    repeated = sum(len(_repeated(c)) for c in dataset)
    assert (total, repeated) == (1986, 24)
    report = _import(cli, locomo_dir, source, tmp_path / "run")
    assert (report["rows"], report["matched"], report["ambiguous"]) == (1986, 1986, 0)
    assert report["by_position"] == 24
    rows = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    assert len(rows) == 1986 and all(r.prediction == f"answer to {r.sample_id}" for r in rows)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["imported"]["outside"]["report"]["matched"] == 1986


def test_a_carried_gold_that_disagrees_with_the_position_is_reported_not_guessed(dataset, locomo_dir, tmp_path,
                                                                                cli):
    conv30 = next(i for i, c in enumerate(dataset) if c.sample_id == "conv-30")
    first, second = _repeated(dataset[conv30])  # q0061 ('a trophy') and q0095 (adversarial, no answer)
    assert first.answer != second.answer
    other = next(q for q in dataset[conv30].qa if q not in (first, second))
    # only the second of the pair: by position it would be the first, whose gold differs
    (tmp_path / "one.json").write_text(json.dumps({str(conv30): [_item(other), _item(second, answer="")]}))
    report = _import(cli, locomo_dir, tmp_path / "one.json", tmp_path / "one")
    assert (report["matched"], report["mismatched"]) == (1, 1)
    assert any(first.sample_id in e and "'a trophy'" in e for e in report["examples"])
    # the pair out of dataset order: neither row is placed (q0095's adversarial answer is q0061's gold, which must
    # not count as q0095's gold)
    (tmp_path / "swapped.json").write_text(json.dumps({str(conv30): [_item(other), _item(second), _item(first)]}))
    report = _import(cli, locomo_dir, tmp_path / "swapped.json", tmp_path / "swapped")
    assert (report["matched"], report["mismatched"]) == (1, 2)
    kept = {r.sample_id for r in read_records(tmp_path / "swapped" / "answers.jsonl", AnswerRow)}
    assert kept == {other.sample_id}
    # without a gold answer the position alone decides
    (tmp_path / "bare.json").write_text(json.dumps({str(conv30): [_item(first, answer=None),
                                                                  _item(second, answer=None)]}))
    report = _import(cli, locomo_dir, tmp_path / "bare.json", tmp_path / "bare")
    assert (report["matched"], report["by_position"]) == (2, 2)


def test_more_rows_than_questions_with_the_text_are_all_left_out(dataset, locomo_dir, tmp_path, cli):
    conv48 = next(i for i, c in enumerate(dataset) if c.sample_id == "conv-48")
    first = _repeated(dataset[conv48])[0]
    second = next(q for q in _repeated(dataset[conv48])[1:] if normalise(q.question) == normalise(first.question))
    other = next(q for q in dataset[conv48].qa if normalise(q.question) != normalise(first.question))
    (tmp_path / "a.json").write_text(json.dumps({str(conv48): [_item(other), _item(first), _item(second),
                                                                _item(second)]}))
    report = _import(cli, locomo_dir, tmp_path / "a.json", tmp_path / "run")
    assert (report["matched"], report["duplicates"]) == (1, 3)


def test_jsonl_rows_without_sample_ids_are_placed_by_order_within_their_conversation(dataset, locomo_dir, tmp_path,
                                                                                      cli):
    conv48 = next(c for c in dataset if c.sample_id == "conv-48")
    pairs = _repeated(conv48)
    rows = [{"question": q.question, "prediction": f"answer to {q.sample_id}", "conversation_id": "conv-48"}
            for q in sorted(pairs, key=lambda q: q.index)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = _import(cli, locomo_dir, tmp_path / "a.jsonl", tmp_path / "run", "jsonl")
    assert (report["matched"], report["by_position"]) == (len(pairs), len(pairs))
    back = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    assert all(r.prediction == f"answer to {r.sample_id}" for r in back)
    # naming no conversation, a repeated text stays ambiguous
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({**r, "conversation_id": None}) + "\n" for r in rows))
    report = _import(cli, locomo_dir, tmp_path / "b.jsonl", tmp_path / "run_b", "jsonl", check=False)
    assert report.returncode == 2 and f"{len(pairs)} ambiguous" in report.stderr


MALFORMED = [
    ("mem0", lambda good: json.dumps({"0": [good[0], "not an object", {"question": "q"}, good[1],
                                            {**good[2], "response_time": "fast"}]}),
     ["['0'][1]: item: expected an object", "['0'][2]: response: missing", "['0'][4]: response_time: expected"]),
    ("jsonl", lambda good: "\n".join([json.dumps({"question": good[0]["question"], "prediction": "p",
                                                  "conversation_id": "conv-26"}), "{not json}",
                                      json.dumps({"prediction": "p"}), json.dumps([1, 2])]),
     [":2: json: not valid JSON", ":3: question: missing", ":4: row: expected an object"]),
]


@pytest.mark.parametrize("fmt, content, skipped", MALFORMED, ids=["mem0", "jsonl"])
def test_skip_invalid_imports_the_valid_rows_and_reports_each_skipped_one(fmt, content, skipped, dataset, locomo_dir,
                                                                         tmp_path, cli):
    good = [_item(qa) for qa in dataset[0].qa[:3]]
    source = tmp_path / f"a.{fmt}"
    source.write_text(content(good))
    refused = cli("locomo", "import", source, "--format", fmt, "--system", "outside", "--data", locomo_dir,
                  "--out", tmp_path / "refused")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert str(source) in refused.stderr and skipped[0].split(": ", 1)[1].split(":")[0] in refused.stderr
    assert "--skip-invalid" in refused.stderr and not (tmp_path / "refused").exists()

    printed = cli("locomo", "import", source, "--format", fmt, "--system", "outside", "--data", locomo_dir,
                  "--out", tmp_path / "run", "--skip-invalid", check=True).stdout
    valid = 2 if fmt == "mem0" else 1
    assert printed.startswith(f"{valid} of {valid + len(skipped)} rows matched")
    assert f"{len(skipped)} invalid" in printed
    for where in skipped:
        assert sum(where in line and "skipped (invalid)" in line for line in printed.splitlines()) == 1, where
    entry = json.loads((tmp_path / "run" / "manifest.json").read_text())["imported"]["outside"]
    assert entry["report"]["skipped"] == len(skipped) and "--skip-invalid" in entry["command_line"]
    assert all(any(where in s for s in entry["report"]["skipped_rows"]) for where in skipped)
    assert len(read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)) == valid
