"""A LoCoMo-Plus run is read by the shared commands as its registration declares it: `memeval results` tables it
under its own categories (Cognitive among them, headline 1–6), `memeval view` renders it, `memeval.api.load_run`
loads it, and a finished run is re-judged by the judge its run kind declares. Small files in LoCoMo-Plus's format
are written by tests/test_locomo_plus.py's fixture; the judge runs against the fake OpenAI server."""

import json

import pytest

from memeval.records import JudgmentRow, read_records
from tests.test_locomo_plus import files, judge_reply  # noqa: F401  (the fixture and the fake judge's replies)


def plus_run(cli, files, out, *extra):  # noqa: F811
    plus_dir, locomo_path = files
    return cli("locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns,full_context",
               "--no-progress", "--out", out, *extra, check=True)


@pytest.fixture()
def judged(files, tmp_path, cli, fake_openai, monkeypatch):  # noqa: F811
    """A finished run answered offline, then re-judged by rerunning it with the judge its kind declares."""
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = judge_reply
    out = tmp_path / "plus_run"  # not the data folder (files[0]): --out refuses a folder memeval did not write
    plus_run(cli, files, out, "--items", "5")
    assert not (out / "judgments.jsonl").exists()
    again = cli("locomo-plus", "run", "--data", files[0], "--locomo", files[1], "--systems", "rag_turns,full_context",
                "--items", "5", "--judge", "locomo_plus", "--llm", "openai", "--no-progress", "--out", out)
    assert again.returncode == 0, again.stderr
    return out


def test_a_finished_run_is_rejudged_by_the_judge_its_kind_declares(judged):
    from memeval.benchmarks.locomo_plus.judge import LocomoPlusJudge
    from memeval.engine import registry
    from memeval.qa import choices
    from memeval.scoring.judges import JUDGES

    kind = json.loads((judged / "manifest.json").read_text())["command"]
    assert registry.judges(kind) == {"locomo_plus": "memeval.benchmarks.locomo_plus.judge:LocomoPlusJudge"}
    assert JUDGES["locomo_plus"] is LocomoPlusJudge
    assert "locomo_plus" not in registry.judges("locomo run") and "locomo_plus" not in choices.JUDGE_CHOICES
    rows = read_records(judged / "judgments.jsonl", JudgmentRow)
    assert {r.protocol for r in rows} == {"locomo_plus"} and {r.category for r in rows} == {2, 4, 5, 6}
    assert len({(r.system, r.sample_id) for r in rows}) == 2 * (6 + 5)


def test_results_table_a_locomo_plus_run_by_its_categories(judged, cli):
    done = cli("results", judged, "--by-category", "--no-progress", check=True)
    text = done.stdout
    assert text.startswith("## LoCoMo-Plus runs\n") and "metric (categories 1–6 unless named)" in text
    assert "- Categories 1–6 pooled, every row counting once, as the benchmark's evaluation script (llm_as_judge.py) " \
           "averages its judge's scores; its pinned repository publishes no table.\n" in text
    assert "published tables" not in text
    lines = {line.split("|")[2].strip(): line for line in text.splitlines() if line.startswith("| full_context")}
    assert "J (locomo_plus), Cognitive (6)" in lines and "J (locomo_plus)" in lines
    assert lines["J (locomo_plus), Cognitive (6)"].split("|")[3].strip() == "100 [57, 100] Wilson", "as for LoCoMo"
    document = json.loads(cli("results", judged, "--by-category", "--format", "json", "--no-progress",
                              check=True).stdout)
    assert [r["kind"] for r in document["runs"]] == ["locomo-plus run"]
    cognitive = [c for c in document["cells"] if c["group"] == "Cognitive (6)" and c["metric"].startswith("J (")]
    assert {c["system"] for c in cognitive} == {"rag_turns", "full_context"}
    assert all(c["interval"] is not None and c["n"] == 5 for c in cognitive)
    overall = [c for c in document["cells"] if c["group"] == "overall (1–6)" and c["metric"] == "J (locomo_plus judge)"]
    assert [c["n"] for c in overall] == [11, 11], "the overall is every judged row, Cognitive included"


def test_view_and_load_run_accept_a_locomo_plus_run(judged, cli):
    from memeval import api
    from memeval.errors import InputError
    from memeval.viewer import read_embedded

    cli("view", judged, check=True)
    page = read_embedded((judged / "view.html").read_text())
    assert page["categories"]["6"] == "Cognitive" and page["protocols"][0]["name"] == "locomo_plus"
    html = (judged / "view.html").read_text()
    legend = html.split('$("convention").textContent = ', 1)[1].split(";\n", 1)[0]
    assert "averaged over categories 1–6 (multi-hop (1)" in legend and "over categories 1–6, pooled" in legend
    assert "1–4" not in legend and not any("1–4" in n for n in page["notes"]), "the header's note and legend agree"
    assert "Caroline: Caroline talks about the garden in session 1." in page["turns"]["text"]
    j = page["runs"][0]["scores"][0]["j"]["0"]
    assert j["n"] == 11
    run = api.load_run(judged)
    assert run.kind == "locomo-plus run" and set(run.answers) == {"rag_turns", "full_context"}
    assert {len(rows) for rows in run.judgments["locomo_plus"].values()} == {11}
    with pytest.raises(InputError, match="an answer key applies to LoCoMo runs only"):
        api.load_run(judged, key="corrected")


def test_runs_of_two_kinds_are_tabled_apart_and_never_paired(files, tmp_path, cli):  # noqa: F811
    plus_run(cli, files, tmp_path / "plus_run", "--items", "none")
    cli("locomo", "run", "--data", files[1], "--systems", "rag_turns,full_context", "--no-progress", "--out",
        tmp_path / "locomo", check=True)
    text = cli("results", tmp_path / "locomo", tmp_path / "plus_run", "--no-progress", check=True).stdout
    titles = [line for line in text.splitlines() if line.startswith("## ")]
    assert titles == ["## LoCoMo runs", "## Which differences are real (paired, clustered by conversation, 80% power "
                      "at α = 0.05) (LoCoMo)", "## J beside answer length and the judge's leniency (LoCoMo)",
                      "## LoCoMo-Plus runs", "## Which differences are real (paired, clustered by conversation, 80% "
                      "power at α = 0.05) (LoCoMo-Plus)", "## J beside answer length and the judge's leniency "
                      "(LoCoMo-Plus)"]
    assert " − " not in text.split("\n", 3)[2], "the same questions under two benchmarks are not paired"
    assert "- Categories 1–4 as the published tables average them (adversarial 5 is scored by a refusal rule).\n" in text


def test_a_kind_no_registration_holds_answer_rows_for_is_refused_by_name(tmp_path, cli):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps({"command": "graph80 run"}))
    refused = cli("results", tmp_path / "run", "--no-progress")
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("command: 'graph80 run' results are not tabled here (locomo run, "
                                           "locomo-plus run and memaudit sweep are)")


def test_view_shows_every_turn_each_item_saw_under_its_own_stitched_conversation(files, tmp_path, cli):  # noqa: F811
    """Items 0 and 2 both go into conv-1 (cyclic) and their cues both become D5:*; the page gives each item its own
    conversation, and every turn of it (LoCoMo's and its cue's, the cue dated as stitched) its own text."""
    from memeval.viewer import read_embedded
    from tests.test_locomo_plus import ITEMS, locomo_rows, reference

    out = tmp_path / "plus_run"
    plus_run(cli, files, out, "--items", "3", "--questions", "none")
    cli("view", out, check=True)
    page = read_embedded((out / "view.html").read_text())
    turns, questions, rows = page["turns"], page["questions"], page["rows"]
    raws = {raw["sample_id"]: raw for raw in locomo_rows()}
    assert sorted(questions["id"]) == ["plus-0000", "plus-0001", "plus-0002"]
    conversations = set()
    for q, item in enumerate(questions["id"]):
        index = int(item.split("-")[1])
        base = ["conv-1", "conv-2"][index % 2]
        said, cue_at, _, _ = reference(ITEMS[index], raws[base])
        date = f"{cue_at.hour % 12 or 12}:{cue_at:%M} {'am' if cue_at.hour < 12 else 'pm'} on {cue_at.day} " \
               f"{cue_at:%B}, {cue_at.year}"
        cue = [f"{who}: {words} [{date}]" for who, words in said if not any(
            (who, words) == (t["speaker"], t["text"]) for s in range(1, 5) for t in raws[base]["conversation"][
                f"session_{s}"])]
        conversations.add(page["conversations"][questions["conv"][q]])
        assert [turns["text"][t] for t in questions["ev"][q]] == cue, item
        assert {page["conversations"][turns["conv"][t]] for t in questions["ev"][q]} == {f"{base}.{item}"}
        full = [r for r, (qq, s) in enumerate(zip(rows["q"], rows["s"], strict=True))
                if qq == q and page["systems"][s]["name"] == "full_context"]
        seen = [turns["text"][t] for item_ in page["sets"][rows["mem"][full[0]]] for t in page["items"][item_]]
        assert len(seen) == 8 + len(cue) and None not in seen and set(cue) <= set(seen), item
        assert [x for x in seen if x.endswith("]")] == cue, "LoCoMo's turns as LoCoMo's page shows them"
    assert conversations == {"conv-1.plus-0000", "conv-2.plus-0001", "conv-1.plus-0002"}
    assert None not in turns["text"]
    (files[0] / "locomo_plus.json").write_text(json.dumps(ITEMS[:3]))  # not the bytes the run read: no cue texts
    viewed = cli("view", out, "--output", tmp_path / "again.html", check=True)
    again = read_embedded((tmp_path / "again.html").read_text())
    assert {again["turns"]["text"][t] for ev in again["questions"]["ev"] for t in ev} == {None}
    why = [n for n in again["notes"] if "SHA-256" in n]
    assert len(why) == 1 and why[0].startswith(f"{files[0] / 'locomo_plus.json'}: its SHA-256 (") and \
        "differs from the run's" in why[0] and "(turn text not available)" in why[0], again["notes"]
    assert viewed.stderr.strip().splitlines() == [f"memeval view: {why[0]}"]
