"""LoCoMo-Plus on small files in its formats written here: the stitching against an independent implementation in
this file, the conversation choice, an offline run with the extractive reader (resumable, its identity holding the
seed), and the judge against the fake servers."""

import json
import random
from datetime import datetime, timedelta

import pytest

from memeval.records import AnswerRow, JudgmentRow, read_records

DATES = {  # two conversations, four sessions each (LoCoMo's date format); conv-2's last two share an instant
    "conv-1": ["1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023", "9:00 am on 1 August, 2023",
               "4:04 pm on 20 September, 2023"],
    "conv-2": ["7:31 pm on 21 January, 2022", "2:01 pm on 23 February, 2022", "8:10 am on 10 March, 2022",
               "8:10 am on 10 March, 2022"],
}
SPEAKERS = {"conv-1": ("Caroline", "Melanie"), "conv-2": ("Jon", "Gina")}
ITEMS = [  # each exercises one rule of the stitching
    {"cue_dialogue": "A: I finally learned to say no to extra work.\nB: Protecting your time matters.",
     "trigger_query": "A: I volunteered for that project and now I am overwhelmed.", "time_gap": "two weeks later",
     "relation_type": "causal"},
    {"cue_dialogue": "A: My sister is allergic to peanuts.\nnot a turn\nB: Good to know.",
     "trigger_query": "A: Planning a peanut cake for her birthday!", "time_gap": "six months later"},
    {"cue_dialogue": "B: I moved to Denver last spring.", "trigger_query": "A: How is the new city?",
     "time_gap": "several months later"},  # no countable gap: the cue sits just before the trigger
    {"cue_dialogue": "A: I started running marathons.", "trigger_query": "A: My knees hurt lately.",
     "time_gap": "a year after"},  # before every session
    {"cue_dialogue": "A: Honesty is non-negotiable for me.", "trigger_query": "A: My boss asked me to bend the truth.",
     "time_gap": "about 3 weeks later"},
    {"cue_dialogue": "A: I adopted a cat named Milo.", "trigger_query": "A: Milo knocked over my plants.",
     "time_gap": "one week later"},  # conv-2: exactly the instant of its last two sessions
]


def locomo_rows():
    rows = []
    for cid, dates in DATES.items():
        a, b = SPEAKERS[cid]
        conv = {"speaker_a": a, "speaker_b": b}
        for n, date in enumerate(dates, 1):
            conv[f"session_{n}_date_time"] = date
            conv[f"session_{n}"] = [
                {"speaker": a, "dia_id": f"D{n}:1", "text": f"{a} talks about the garden in session {n}."},
                {"speaker": b, "dia_id": f"D{n}:2", "text": f"{b} answers about painting in session {n}."}]
        qa = [{"question": "What does Caroline talk about?", "answer": "the garden", "evidence": ["D1:1"],
               "category": 4},
              {"question": "When did they first talk?", "answer": "8 May 2023", "evidence": ["D1:1; D1:2"],
               "category": 2},
              {"question": "What is her dog called?", "adversarial_answer": "Rex", "evidence": ["D9:9"],
               "category": 5}]
        rows.append({"sample_id": cid, "conversation": conv, "qa": qa})
    return rows


@pytest.fixture()
def files(tmp_path):
    plus = tmp_path / "plus"
    plus.mkdir()
    (plus / "locomo_plus.json").write_text(json.dumps(ITEMS))
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps(locomo_rows()))
    return plus, locomo


# --- an independent stitching, from the benchmark's description, over the raw JSON --------------------------------
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def days_back(gap):
    words = gap.lower().replace("weeks", "week").replace("months", "month").replace("years", "year").split()
    for count, unit in zip(words, words[1:], strict=False):
        if unit in ("week", "month", "year") and (count.isdigit() or count in NUMBERS):
            return (int(count) if count.isdigit() else NUMBERS[count]) * {"week": 7, "month": 30, "year": 365}[unit]
    return 0


def reference(item, raw):
    conv = raw["conversation"]
    names = {"A": conv["speaker_a"], "B": conv["speaker_b"]}
    dated = []
    n = 1
    while f"session_{n}" in conv:
        dated.append((datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"),
                      [(t["speaker"], t["text"]) for t in conv[f"session_{n}"]]))
        n += 1
    query = dated[-1][0] + timedelta(days=7)
    cue_at = query - timedelta(days=days_back(item["time_gap"]))
    cue = [(names[line.strip()[0]], line.strip()[2:].strip()) for line in item["cue_dialogue"].splitlines()
           if line.strip()[:2] in ("A:", "B:")]
    before = [turns for t, turns in dated if t <= cue_at]
    after = [turns for t, turns in dated if t > cue_at]
    turns = [x for s in before for x in s] + cue + [x for s in after for x in s]
    trigger = [(names[line.strip()[0]], line.strip()[2:].strip()) for line in item["trigger_query"].splitlines()
               if line.strip()[:2] in ("A:", "B:")]
    return turns, cue_at, trigger, len(before) - 1 if before else None


def test_stitching_matches_an_independent_implementation(files):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo_plus.data import assign, load_items, stitch

    plus_dir, locomo_path = files
    raws = locomo_rows()
    conversations = load_locomo(locomo_path)
    for item, conversation in assign(load_items(plus_dir / "locomo_plus.json"), conversations, "cyclic"):
        stitched = stitch(item, conversation)
        turns, cue_at, trigger, cue_after = reference(ITEMS[item.index], raws[item.index % 2])
        assert [(t.speaker, t.text) for s in stitched.conversation.sessions for t in s.turns] == turns, item.index
        assert (stitched.cue_time, stitched.cue_after) == (cue_at, cue_after), item.index
        assert list(stitched.trigger) == trigger and stitched.qa.question == trigger[0][1]
        cue = next(s for s in stitched.conversation.sessions if s.index == 5)
        assert cue.date == cue_at and datetime.strptime(cue.date_time, "%I:%M %p on %d %B, %Y") == cue_at
        assert stitched.qa.evidence_ids == tuple(t.dia_id for t in cue.turns) and stitched.qa.category == 6
    # the rules each item is there for
    first = stitch(*assign(load_items(plus_dir / "locomo_plus.json"), conversations, "cyclic")[3])
    assert first.cue_after is None and first.conversation.sessions[0].index == 5, "a year back: before session 1"
    tie = stitch(*assign(load_items(plus_dir / "locomo_plus.json"), conversations, "cyclic")[5])
    assert [s.index for s in tie.conversation.sessions] == [1, 2, 3, 4, 5], "a session at the cue's instant comes first"


def test_the_choice_is_cyclic_or_a_seeded_draw_and_a_subset_keeps_its_conversations(files):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo_plus.data import assign, load_items

    plus_dir, locomo_path = files
    conversations, items = load_locomo(locomo_path), load_items(plus_dir / "locomo_plus.json")
    assert [c.sample_id for _, c in assign(items, conversations, "cyclic")] == ["conv-1", "conv-2"] * 3
    rng = random.Random(7)
    drawn = [rng.choice(["conv-1", "conv-2"]) for _ in items]
    assert [c.sample_id for _, c in assign(items, conversations, "random", 7)] == drawn
    assert [c.sample_id for _, c in assign(items[3:], conversations, "random", 7)] == drawn[3:]
    assert len({tuple(c.sample_id for _, c in assign(items, conversations, "random", s)) for s in range(8)}) > 1


def test_offline_run_resumes_and_records_the_choice_in_its_identity(files, tmp_path, cli):
    plus_dir, locomo_path = files
    out = tmp_path / "run"
    args = ["locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns,full_context",
            "--no-progress", "--out", out]
    result = cli(*args, check=True)
    rows = {r.key: r for r in read_records(out / "answers.jsonl", AnswerRow)}
    assert len(rows) == 2 * (6 + 6) and all(r.error is None for r in rows.values())
    cognitive = rows[("full_context", "plus-0000")]
    assert cognitive.category == 6 and cognitive.gold is None and cognitive.evidence_recall == 1.0
    assert cognitive.conversation_id == "conv-1" and cognitive.evidence_ids == ["D5:1", "D5:2"]
    assert rows[("rag_turns", "conv-1:q0000")].prediction and "| Cognitive |" in result.stdout
    assert "J not measured" in result.stdout and "cyclic" in result.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["identity"]["fixed"]["choice"] == {"rule": "cyclic", "seed": None}
    assert manifest["stitching"]["cue_before_first_session"] == 2 and manifest["stitching"]["zero_gap"] == 1

    lines = (out / "answers.jsonl").read_text().splitlines()
    (out / "answers.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # a run killed before its last row
    again = cli(*args, "--json", check=True)
    counts = json.loads(again.stdout)["answers"]
    assert counts["written"] == 1 and counts["already_done"] == len(rows) - 1
    assert len(read_records(out / "answers.jsonl", AnswerRow)) == len(rows)

    refused = cli(*args[:-2], "--choice", "random", "--seed", "3", "--out", out)
    assert refused.returncode == 2 and "choice" in refused.stderr, refused.stderr
    seeded = cli(*args[:-2], "--choice", "random", "--seed", "3", "--out", tmp_path / "seeded", check=True)
    identity = json.loads((tmp_path / "seeded" / "manifest.json").read_text())["identity"]["fixed"]
    assert identity["choice"] == {"rule": "random", "seed": 3} and seeded.returncode == 0


def test_bad_settings_write_nothing(files, tmp_path, cli):
    plus_dir, locomo_path = files
    base = ["locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path]
    assert cli(*base, "--items", "-2", "--out", tmp_path / "a").returncode == 2
    (plus_dir / "prompt.py").write_text("PROMPT_TEMPLATES = {}\n")
    bad = cli(*base, "--judge", "locomo_plus", "--out", tmp_path / "b")
    assert bad.returncode == 2 and "not the pinned file" in bad.stderr and len(bad.stderr.splitlines()) == 1
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def judge_reply(body):
    """A label per question, from what the prompt holds (the evidence or the answer); one reply is unreadable."""
    text = json.dumps(body)
    if "Milo" in text:
        return "Incorrect, I think."
    if "Evidence" in text or "said earlier" in text:
        return 'Sure: {"label": "correct", "reason": "it recalls the cue"}'
    return '```json\n{"label": "partial", "reason": "close"}\n```'


def test_judge_through_the_openai_sdk_scores_labels_and_never_an_unreadable_reply(files, tmp_path, cli,
                                                                                    fake_openai, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = judge_reply
    plus_dir, locomo_path = files
    args = ["locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "full_context",
            "--questions", "none", "--judge", "locomo_plus", "--llm", "openai", "--no-progress", "--out",
            tmp_path / "run"]
    first = cli(*args)
    assert first.returncode == 4, "the unreadable reply leaves the run incomplete"
    judged = {j.sample_id: j for j in read_records(tmp_path / "run" / "judgments.jsonl", JudgmentRow)}
    assert set(judged) == {f"plus-{i:04d}" for i in range(5)} and "plus-0005" not in judged
    assert all(j.scores == [100.0] and j.protocol == "locomo_plus" and j.judge_model == "gpt-4o-mini"
               for j in judged.values())
    bodies = fake_openai.received
    assert all(b["temperature"] == 0.0 and b["max_completion_tokens"] == 512 and b["model"] == "gpt-4o-mini" for b in bodies)
    assert "paraphrased" in first.stdout and "| full_context |" in first.stdout
    sent = len(fake_openai.received)
    cli(*args)
    assert len(fake_openai.received) == sent + 1, "a rerun asks only the unreadable one again"


def test_judge_through_the_anthropic_sdk_grades_loCoMo_questions(files, tmp_path, cli, fake, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = judge_reply
    plus_dir, locomo_path = files
    cli("locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns", "--items",
        "none", "--conversations", "conv-1", "--judge", "locomo_plus", "--no-progress", "--out", tmp_path / "run",
        check=True)
    judged = {j.sample_id: j for j in read_records(tmp_path / "run" / "judgments.jsonl", JudgmentRow)}
    assert [judged[f"conv-1:q000{i}"].mean for i in range(3)] == [50.0, 50.0, 50.0]
    prompts = [json.dumps(b) for b in fake.received]
    assert sum("Rex" in p for p in prompts) == 0 and any("Caroline\\uff1aCaroline talks" in p or
                                                         "Caroline\uff1aCaroline talks" in p for p in prompts)


def test_labels_are_read_from_json_only():
    from memeval.benchmarks.locomo_plus.judge import parse_label

    assert parse_label('{"label": "Correct", "reason": "ok"}') == ("correct", "ok")
    assert parse_label('verdict {"reason": "r", "label": "wrong"} done')[0] == "wrong"
    assert parse_label("incorrect")[0] is None and parse_label('{"label": "maybe"}')[0] is None


def test_published_templates_are_read_as_data_never_run(tmp_path):
    from memeval.benchmarks.locomo_plus.prompts import CATEGORY_NAMES, read_templates
    from memeval.errors import InputError

    names = list(CATEGORY_NAMES.values())
    text = "raise SystemExit('executed')\nPROMPT_TEMPLATES = {" + ", ".join(
        f"{n!r}: 'T {n} {{pred}}'" for n in names) + "}\n"
    assert read_templates(text, "p.py")["Cognitive"] == "T Cognitive {pred}"
    with pytest.raises(InputError, match="no template for multi-hop.*Cognitive"):
        read_templates("PROMPT_TEMPLATES = {'temporal': 'x'}", "p.py")
    with pytest.raises(InputError, match="no literal dict"):
        read_templates("PROMPT_TEMPLATES = make()", "p.py")


@pytest.fixture()
def mirror(tmp_path):
    """A local server holding a file at each pinned path (the repository's layout), and its URL."""
    import functools
    import http.server
    import threading

    from memeval.benchmarks.locomo_plus.datasets import PATHS

    served = tmp_path / "served"
    for name, path in PATHS.items():
        (served / path).parent.mkdir(parents=True, exist_ok=True)
        (served / path).write_text(f"content of {name}")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _pins_of_served(monkeypatch, url=None):
    """The declared files pinned to what the mirror serves (at `url`: the published URLs replaced too)."""
    import dataclasses
    import hashlib

    from memeval.benchmarks.locomo_plus import datasets

    files = tuple(dataclasses.replace(f, url=f"{url}/{datasets.PATHS[f.name]}" if url else f.url,
                                      sha256=hashlib.sha256(f"content of {f.name}".encode()).hexdigest())
                  for f in datasets.LOCOMO_PLUS.files)
    monkeypatch.setattr(datasets, "LOCOMO_PLUS", dataclasses.replace(datasets.LOCOMO_PLUS, files=files))


def test_data_fetch_checks_every_file_before_writing_any(tmp_path, mirror, cli, monkeypatch):
    served, url = mirror
    dest = tmp_path / "dest"
    refused = cli("data", "fetch", "locomo-plus", "--source", url, "--dest", dest)
    assert refused.returncode == 2 and "checksum mismatch" in refused.stderr and "nothing written" in refused.stderr
    assert not dest.exists()
    assert cli("data", "fetch", "locomo-plus", "--sha256", "0" * 64, "--dest", dest).returncode == 2
    _pins_of_served(monkeypatch)
    fetched = cli("data", "fetch", "locomo-plus", "--source", url, "--dest", dest, check=True)
    assert sorted(p.name for p in dest.iterdir()) == ["locomo_plus.json", "prompt.py"]
    assert "SHA-256 verified" in fetched.stdout and "no licence file" in fetched.stdout
    cli("data", "fetch", "locomo-plus", "--source", served, "--dest", tmp_path / "from-folder", check=True)
    assert (tmp_path / "from-folder" / "prompt.py").read_text() == "content of prompt.py"


def test_locomo_plus_fetch_is_the_same_fetch_and_data_status_shows_it(tmp_path, mirror, cli, monkeypatch):
    _, url = mirror
    _pins_of_served(monkeypatch, url)
    monkeypatch.setenv("MEMEVAL_LOCOMO_PLUS_DIR", str(tmp_path / "plus"))
    status = cli("data", "status", check=True).stdout
    assert "locomo_plus.json: not fetched" in status and "prompt.py: not fetched" in status
    fetched = cli("locomo-plus", "fetch", check=True)
    assert fetched.stdout == cli("data", "fetch", "locomo-plus", check=True).stdout
    assert "locomo_plus.json: stored, SHA-256 verified" in cli("data", "status", check=True).stdout
    (tmp_path / "plus" / "prompt.py").write_text("changed")
    assert "prompt.py: not the pinned file" in cli("data", "status", check=True).stdout


def test_both_spellings_of_the_fetch_take_the_same_flags(tmp_path, mirror, cli, monkeypatch):
    """`memeval locomo-plus fetch` is `memeval data fetch locomo-plus`: a mirror folder by --source, and the same
    refusals in the same words."""
    served, _ = mirror
    spellings = (("locomo-plus", "fetch"), ("data", "fetch", "locomo-plus"))
    refused = [cli(*argv, "--source", served, "--source", served, "--dest", tmp_path / "x").stderr for argv in spellings]
    assert refused[0] == refused[1] and "given twice" in refused[0]
    checksum = [cli(*argv, "--sha256", "0" * 64, "--dest", tmp_path / "x").stderr for argv in spellings]
    assert checksum[0] == checksum[1] and "pinned" in checksum[0]
    assert not (tmp_path / "x").exists()
    _pins_of_served(monkeypatch)
    for n, argv in enumerate(spellings):
        fetched = cli(*argv, "--source", served, "--dest", tmp_path / str(n), check=True)
        assert "SHA-256 verified" in fetched.stdout
        assert (tmp_path / str(n) / "prompt.py").read_text() == "content of prompt.py"


def test_the_declaration_names_the_categories_and_the_overall_over_every_judged_row():
    from memeval.benchmarks import declaration, load
    from memeval.benchmarks.locomo_plus.prompts import CATEGORY_NAMES
    from memeval.engine.registry import categories

    declared = categories("locomo-plus run")
    assert declared is load(declaration("locomo_plus").categories)
    assert declared.names == {1: "multi-hop", 2: "temporal", 3: "common-sense", 4: "single-hop", 5: "adversarial",
                              6: "Cognitive"} == CATEGORY_NAMES
    assert declared.headline == (1, 2, 3, 4, 5, 6) and declared.apart == ()


def test_the_llm_reader_replies_to_the_trigger_from_the_memories(files, tmp_path, cli, fake, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    plus_dir, locomo_path = files
    cli("locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "full_context", "--items", "1",
        "--questions", "none", "--reader", "claude", "--no-progress", "--out", tmp_path / "run", check=True)
    (row,) = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    (body,) = fake.received
    prompt = body["messages"][0]["content"][0]["text"] if isinstance(body["messages"][0]["content"], list) \
        else body["messages"][0]["content"]
    assert "You are Melanie" in prompt and "(4:04 pm on 27 September, 2023) Caroline says" in prompt
    assert "Caroline: I volunteered for that project" in prompt and "I finally learned to say no" in prompt
    assert body["max_tokens"] == 200 and body["temperature"] == 0.0
    assert row.prediction.startswith("echo: You are Melanie") and row.request_keys and row.category == 6


def test_run_settings_are_declared_once_on_the_configuration():
    """`locomo-plus run`'s flags come from LocomoPlusConfig's fields (memeval.settings): every field is a flag, the
    bare command is the configuration's defaults, the rerun command parses back to the same configuration, and a
    value refused on the command line is refused the same way when a script builds the configuration."""
    from memeval.benchmarks.locomo_plus.config import LocomoPlusConfig
    from memeval.cli import build_parser
    from memeval.errors import InputError
    from memeval.settings import check_settings, config_from, setting_fields
    from tests.parsers import subcommand_parser as _parser

    accepted = {s for action in _parser(("locomo-plus", "run"))._actions for s in action.option_strings}
    wanted = set()
    for f in setting_fields(LocomoPlusConfig):
        setting, roles = f.metadata["setting"], f.metadata["models"]
        wanted |= {f"--{role}-model" for role in roles} if roles else {setting.spelling, *setting.aliases}
    assert wanted and wanted <= accepted and accepted - wanted == {"-h", "--help", "--json", "--dry-run"}
    parse = build_parser().parse_args
    assert config_from(parse(["locomo-plus", "run", "--out", "o"]), LocomoPlusConfig) == LocomoPlusConfig(out="o")
    config = config_from(parse(["locomo-plus", "run", "--out", "o", "--choice", "random", "--seed", "3", "--items",
                                "2", "--systems", "rag_turns:chunk_tokens=64,k=2;full_context", "--judge",
                                "locomo_plus", "--judge-model", "m", "--k", "4"]), LocomoPlusConfig)
    line = config.command_line()
    assert line[:3] == ["memeval", "locomo-plus", "run"] and "--seed" in line
    again = config_from(parse(line[1:]), LocomoPlusConfig)
    assert again == LocomoPlusConfig(**{f.name: getattr(config, f.name) for f in setting_fields(LocomoPlusConfig)
                                        if f.name not in ("out", "progress", "restart")}, out=again.out)
    for bad in ({"seed": -1}, {"choice": "sometimes"}, {"k": 0}, {"judge": "graded"}):
        with pytest.raises(InputError, match=next(iter(bad))):
            check_settings(LocomoPlusConfig(out="o", **bad))


@pytest.mark.parametrize("field", ["cue_dialogue", "trigger_query"])
def test_an_item_without_speaker_lines_is_refused_when_the_file_is_read(files, tmp_path, cli, field):
    """A cue or trigger with no "A:"/"B:" line holding words gives the benchmark's build_conv.py nothing to stitch:
    refused in one line naming the file, the item and the field, before anything is written."""
    plus_dir, locomo_path = files
    items = [dict(item) for item in ITEMS]
    items[1][field] = "Alice: I moved to Denver.\nB:"  # neither line is a speaker line with words
    (plus_dir / "locomo_plus.json").write_text(json.dumps(items))
    refused = cli("locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns",
                  "--no-progress", "--out", tmp_path / "run")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert str(plus_dir / "locomo_plus.json") in refused.stderr and f"[1] (plus-0001).{field}" in refused.stderr
    assert not (tmp_path / "run").exists()
    items[1][field] = "  B:  Still here.\nnot a turn"  # one speaker line is enough, stripped as the benchmark does
    (plus_dir / "locomo_plus.json").write_text(json.dumps(items))
    cli("locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns", "--no-progress",
        "--out", tmp_path / "run", check=True)


def test_a_gap_is_counted_as_the_benchmarks_regex_counts_it(files):
    """build_conv.py's regex wants a whole word before the unit: "1.5 years later" is 5 years, "5years" and "a couple
    of months" are none (docs/locomo-plus.md says so)."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo_plus.data import PlusItem, gap_days, stitch

    expected = {"1.5 years later": 1825, "2.5 months later": 150, "about 3 weeks later": 21, "A Month later": 30,
                "an year on": 365, "5years later": 0, "a couple of months later": 0, "thirteen weeks later": 0,
                "several years later": 0, "two weeks, then three months": 14}
    assert {gap: gap_days(gap) for gap in expected} == expected
    _, locomo_path = files
    stitched = stitch(PlusItem(0, "A: I moved.", "A: How is it?", "1.5 years later"), load_locomo(locomo_path)[0])
    assert stitched.query_time - stitched.cue_time == timedelta(days=1825) and stitched.cue_after is None


def test_the_docs_example_items_file_reads(tmp_path):
    """docs/locomo-plus.md's items file, written as a user would copy it, loads as one item."""
    from pathlib import Path

    from memeval.benchmarks.locomo_plus.data import load_items

    doc = (Path(__file__).resolve().parents[1] / "docs" / "locomo-plus.md").read_text()
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    (tmp_path / "locomo_plus.json").write_text(example)
    (item,) = load_items(tmp_path / "locomo_plus.json")
    assert item.item_id == "plus-0000" and item.time_gap == "two weeks later" and item.cue_dialogue.startswith("A: ")


def test_the_report_counts_one_in_the_singular(files, tmp_path, cli):
    plus_dir, locomo_path = files
    base = ["locomo-plus", "run", "--data", plus_dir, "--locomo", locomo_path, "--systems", "rag_turns",
            "--no-progress"]
    one = cli(*base, "--conversations", "conv-2", "--items", "2", "--questions", "first:1", "--out", tmp_path / "one",
              check=True)  # item 1 alone goes into conv-2, six months back: before its first session
    report = (tmp_path / "one" / "report.md").read_text()
    assert "- Data: 1 Cognitive item from a locomo_plus.json" in report and "; 1 LoCoMo question.\n" in report
    assert "(0 items name no countable gap and sit just before the trigger; 1 cue falls before" in report
    assert " 1 items" not in one.stdout + report
    cli(*base, "--conversations", "conv-1", "--items", "4", "--questions", "none", "--out", tmp_path / "two",
        check=True)  # items 0 and 2 go into conv-1, item 2 with no countable gap
    report = (tmp_path / "two" / "report.md").read_text()
    assert "Data: 2 Cognitive items" in report and "; 0 LoCoMo questions.\n" in report
    assert "(1 item names no countable gap and sits just before the trigger; 0 cues fall before" in report
