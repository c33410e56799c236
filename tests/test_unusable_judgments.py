"""A judge that never gives a usable label leaves an incomplete run (exit 4, a closing line naming the judge, the
count and the reason), and a rerun asks again for exactly those judgments — through the real SDK and the fake."""

import json

from memeval.records import load_judgments


def _run(cli, locomo_dir, out, *extra):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "3", "--systems",
               "rag_turns,no_memory", "--judge", "binary", "--no-progress", "--out", out, *extra)


def test_a_judge_that_answers_in_prose_leaves_the_run_incomplete_and_a_rerun_asks_again(fake, locomo_dir, tmp_path,
                                                                                       monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: "The predicted answer matches the gold answer, so I would call it correct."
    out = tmp_path / "run"
    first = _run(cli, locomo_dir, out)
    judged = len(fake.received)
    assert first.returncode == 4, first.stderr
    assert first.stderr.strip().splitlines()[-1].startswith(
        f"memeval: incomplete: {judged} of {judged} binary judgments unusable (no CORRECT/WRONG label in the reply); "
        "rerun to retry them")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert manifest["missing"] == {"judgments": [{"protocol": "binary", "requested": judged, "missing": judged,
                                                  "unusable": {"no CORRECT/WRONG label in the reply": judged}}]}
    assert load_judgments(out / "judgments.jsonl") == []
    report = (out / "report.md").read_text()
    paired = report[report.index("## Paired differences in J (binary)"):].split("\n\n")[1].strip()
    assert paired == "No paired comparison: no judged questions."

    fake.responder = lambda body: '{"label": "CORRECT"}'
    again = _run(cli, locomo_dir, out)
    assert again.returncode == 0, again.stderr
    assert len(fake.received) == 2 * judged, "every unusable judgment, and only those, is asked again"
    assert len(load_judgments(out / "judgments.jsonl")) == judged
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["missing"] == {}
    assert "no judged questions" not in (out / "report.md").read_text()
    assert _run(cli, locomo_dir, out).returncode == 0 and len(fake.received) == 2 * judged, "nothing left to ask"


def test_a_stored_judgment_without_a_label_is_asked_again(fake, locomo_dir, tmp_path, monkeypatch, cli):
    """A run judged before such judgments were left out holds rows with no usable run: a rerun judges them."""
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: '{"label": "WRONG"}'
    out = tmp_path / "run"
    assert _run(cli, locomo_dir, out).returncode == 0
    rows = (out / "judgments.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    first.update(scores=[-1.0], mean=None, std=None, run_count=0, errors=["unusable"])
    (out / "judgments.jsonl").write_text("\n".join([json.dumps(first), *rows[1:]]) + "\n")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True, "the edit above is all that changed"
    again = _run(cli, locomo_dir, out)
    assert again.returncode == 0, again.stderr
    latest = {(r.system, r.sample_id): r for r in load_judgments(out / "judgments.jsonl")}
    assert latest[(first["system"], first["sample_id"])].mean == 0.0, "judged again (the reply from the cache)"
    assert len((out / "judgments.jsonl").read_text().splitlines()) == len(rows) + 1
