"""The EverMemOS evaluation framework as a fetched protocol: its prompts.yaml layout read (the wording here is this
test's own), the judge and the three answer prompts sent byte for byte through the real openai SDK to the local
fake, the framework's label rule, runs it would count WRONG kept unusable, and the status sentence both ways."""

import json

import pytest

from memeval.benchmarks.locomo.evermemos_judge import EverMemOSJudge, parse_label
from memeval.benchmarks.locomo.evermemos_reader import reader_request
from memeval.errors import InputError
from memeval.protocols import extract, store
from memeval.protocols.sources import SOURCES
from memeval.protocols.status import judge_status
from tests.fake_openai import user_text
from tests.test_protocols import EVERMEMOS_FILE, pinned  # noqa: F401  (pinned: the fixture)

JUDGE_USER = 'Check one answer.\nQ: {question}\nGold: {golden_answer}\nGot: {generated_answer}\nReturn json with a "label".'


def test_the_layout_yields_the_templates_as_the_framework_uses_them():
    """The judge's two prompts stripped (its `get_prompt`), the answer prompts as stored (its adapters read the YAML
    themselves), each with exactly the fields the framework fills."""
    templates = extract.evermemos_prompts(EVERMEMOS_FILE)
    assert templates == {
        "judge_system": "You check answers.",
        "judge_user": JUDGE_USER,
        "answer_mem0": "Short answer from these notes.\n\n{context}\n\nQuestion: {question}\n\nAnswer:\n",
        "answer_memos": "Very short answer, notes below.\n\n{context}\n\nQuestion: {question}\nAnswer:\n",
        "answer_cot": "Think in steps, end with FINAL ANSWER: then the answer.\n\n---\n\n{context}\n\nQuestion: "
                      "{question}\n\nNow think:\n"}
    with pytest.raises(extract.ExtractionError, match="no template for answer_cot"):
        extract.evermemos_prompts(EVERMEMOS_FILE.replace("answer_prompt_cot:", "answer_prompt_steps:"))
    with pytest.raises(extract.ExtractionError, match="template judge_user has fields"):
        extract.evermemos_prompts(EVERMEMOS_FILE.replace("{golden_answer}", "{gold}"))
    with pytest.raises(extract.ExtractionError, match="not YAML"):
        extract.evermemos_prompts("llm_judge: [unclosed\n")


def test_fetch_finds_the_file_where_the_repository_keeps_it_today(pinned, tmp_path, cli):  # noqa: F811
    source = SOURCES["evermemos_prompts"]
    today = tmp_path / "today"
    (today / "EverMemOS" / source.also_at[0]).parent.mkdir(parents=True)
    (today / "EverMemOS" / source.also_at[0]).write_text(EVERMEMOS_FILE)
    done = cli("data", "fetch", "protocols", "--source", today, "--dest", tmp_path / "got")
    assert done.returncode == 4 and "4 of 5 protocol files not found" in done.stderr  # the other four are elsewhere
    assert [p.name for p in (tmp_path / "got").iterdir()] == ["evermemos_prompts.json"]
    stored = store.load("evermemos_prompts", tmp_path / "got")
    assert stored.path == "evaluation/config/prompts.yaml" and stored.commit == source.commit
    assert stored.templates == extract.evermemos_prompts(EVERMEMOS_FILE)
    (today / "EverMemOS" / source.also_at[0]).write_text(EVERMEMOS_FILE.replace("You check", "You grade"))
    refused = cli("data", "fetch", "protocols", "--source", today, "--dest", tmp_path / "got")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "checksum mismatch" in refused.stderr


@pytest.mark.parametrize("reply, score", [
    ('{"label": "CORRECT"}', 1.0),
    ('Same topic.\n```json\n{"label": "correct "}\n```', 1.0),  # a fenced block; stripped and upper-cased
    ('It matches the gold. {"reasoning": "same city", "label": "CORRECT"} That is all.', 1.0),  # an object in prose
    ('{"label": "CORRECT", "why": {"city": 1}}', 1.0),  # nested: the whole reply is the JSON
    ('{"label": "WRONG"}', 0.0),
    ('Different year. {"label": "Partially correct"}', 0.0),  # any other label is WRONG
])
def test_the_framework_label_rule(reply, score):
    assert parse_label(reply) == (score, None)


@pytest.mark.parametrize("reply, why", [
    ("", "empty reply"),
    ("   \n", "no JSON in the reply"),
    ("CORRECT", "not JSON"),  # the bare word is no label to the framework
    ('{"label": ""}', "no label"),
    ('{"verdict": "CORRECT"}', "no label"),
    ('["CORRECT"]', "not an object"),
    ('{"label": true}', "not text"),
])
def test_what_the_framework_counts_wrong_for_want_of_a_label_is_unusable(reply, why):
    score, error = parse_label(reply)
    assert score == -1 and why in error and "EverMemOS counts this run WRONG" in error


def test_adversarial_questions_are_not_judged():
    from memeval.records import AnswerRow

    row = AnswerRow(sample_id="c:q1", conversation_id="c", category=5, question="q", gold=None, prediction="p",
                    system="s", answerer="extractive", k=1, f1=None, evidence_ids=[], evidence_recall=None,
                    recall_curve=None, retrieved_ids=[], latency_search_s=None, latency_total_s=None,
                    context_tokens=None, error=None)
    judge = EverMemOSJudge(fetched=None)
    assert not judge.accepts(row) and judge.accepts(row.replace(category=4)) and judge.runs == 3


def run_judged(cli, locomo_dir, tmp_path, *extra, reader="extractive", questions="first:4", out="run",
               answer_model="gpt-4.1-mini"):
    """The framework's models: gpt-4.1-mini reads (its config/systems/*.yaml), gpt-4o-mini judges."""
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", questions,
               "--systems", "full_context" if reader != "extractive" else "rag_turns", "--reader", reader,
               "--llm", "openai", "--answer-model", answer_model, "--judge-model", "gpt-4o-mini", "--no-progress",
               "--out", tmp_path / out, *extra)


def test_the_judge_is_sent_byte_for_byte_three_runs_a_question(pinned, fake_openai, locomo_dir, tmp_path,  # noqa: F811
                                                               monkeypatch, cli):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.records import load_answers, load_judgments

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: 'Same place.\n```json\n{"label": "CORRECT"}\n```'
    done = run_judged(cli, locomo_dir, tmp_path, "--judge", "evermemos")
    assert done.returncode == 0, done.stderr
    qa = {q.sample_id: q for c in load_locomo(locomo_dir) for q in c.qa}
    answers = load_answers(tmp_path / "run" / "answers.jsonl")
    expected = sorted(JUDGE_USER.format(question=qa[a.sample_id].question, golden_answer=qa[a.sample_id].answer, generated_answer=a.prediction)
                      for a in answers for _ in range(3))
    assert sorted(user_text(b) for b in fake_openai.received) == expected and len(expected) == 12
    for body in fake_openai.received:
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["messages"][0]["content"] == "You check answers."
        assert set(body) == {"model", "messages", "temperature"} and body["temperature"] == 0.0, "no cap, no format"
    rows = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert len(rows) == 4 and all(r.scores == [100.0] * 3 and r.protocol == "evermemos" for r in rows)
    assert {r.prompt_version for r in rows} == {store.load("evermemos_prompts").version}
    assert "`evermemos`: the published protocol (the EverMemOS evaluation framework's judge" in done.stdout
    assert "judge evermemos: the published prompts, byte for byte" in done.stderr
    identity = json.loads((tmp_path / "run" / "manifest.json").read_text())["identity"]["additive"]["judges"]
    assert identity["evermemos"]["runs"] == 3
    assert identity["evermemos"]["prompt_source"].endswith("evaluation/config/prompts.yaml")

    fewer = run_judged(cli, locomo_dir, tmp_path, "--judge", "evermemos", "--judge-runs", "1", out="one")
    assert fewer.returncode == 0, fewer.stderr
    one = json.loads((tmp_path / "one" / "manifest.json").read_text())["identity"]["additive"]["judges"]
    assert "1 judge runs a question, not the framework's 3: not the published protocol" in \
        one["evermemos"]["protocol_status"]


def test_a_run_without_a_label_is_never_a_score(pinned, fake_openai, locomo_dir, tmp_path, monkeypatch, cli):  # noqa: F811
    """One question gets a label, an empty reply and a bare word: it is judged on its one label. Another gets
    three replies without one: it has no judgment, the run is incomplete, and the note says how EverMemOS counts
    them."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.records import load_judgments

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    first, second = [q for c in load_locomo(locomo_dir) if c.sample_id == "conv-26" for q in c.qa][:2]
    seen: dict[str, int] = {}

    def reply(body):
        text = user_text(body)
        seen[text] = seen.get(text, 0) + 1
        if f"Q: {second.question}\n" in text:
            return "I cannot tell."
        if f"Q: {first.question}\n" in text:
            return ['{"label": "WRONG"}', "", "CORRECT"][seen[text] - 1]
        return '{"label": "CORRECT"}'

    fake_openai.responder = reply
    done = run_judged(cli, locomo_dir, tmp_path, "--judge", "evermemos", questions="first:2")
    assert done.returncode == 4 and "incomplete" in done.stderr.strip().splitlines()[-1]
    [row] = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert row.sample_id == first.sample_id and sorted(row.scores) == [-1.0, -1.0, 0.0] and row.mean == 0.0
    assert len(row.errors) == 2 and all("EverMemOS counts this run WRONG" in e for e in row.errors)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "no JSON label in any run; EverMemOS counts each WRONG" in report
    assert "EverMemOS's judge counts each as WRONG (rag_turns: 2 of 3 runs, J 0.0 as the framework counts)" in report


def reader_text(reader: str) -> str:
    return extract.evermemos_prompts(EVERMEMOS_FILE)["answer_" + reader.removeprefix("evermemos_")]


@pytest.mark.parametrize("reader", ["evermemos_mem0", "evermemos_memos", "evermemos_cot"])
def test_each_answer_prompt_is_sent_byte_for_byte_as_one_user_message(pinned, fake_openai, locomo_dir,  # noqa: F811
                                                                      tmp_path, monkeypatch, cli, reader):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.records import load_answers

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: "Step one: the notes.\nFINAL ANSWER:  a red kite \nFINAL ANSWER: again"
    done = run_judged(cli, locomo_dir, tmp_path, reader=reader, questions="first:2")
    assert done.returncode == 0, done.stderr
    conversation = next(c for c in load_locomo(locomo_dir) if c.sample_id == "conv-26")
    template = reader_text(reader)
    head, tail = template.split("{context}")
    for qa, body in zip(conversation.qa[:2], sorted(fake_openai.received, key=lambda b: user_text(b).endswith(
            tail.format(question=conversation.qa[1].question))), strict=True):
        [message] = body["messages"]
        text = message["content"]
        assert message["role"] == "user" and text.startswith(head) and text.endswith(tail.format(question=qa.question))
        context = text[len(head): len(text) - len(tail.format(question=qa.question))]
        assert all(turn.text in context for turn in conversation.turns), "full context: every turn given"
        assert body["temperature"] == 0.0 and body["max_completion_tokens"] == 32768
        assert set(body) == {"model", "messages", "temperature", "max_completion_tokens"}
        assert body["model"] == "gpt-4.1-mini"
    assert {a.prediction for a in load_answers(tmp_path / "run" / "answers.jsonl")} == {"a red kite"}
    assert f"`answer_prompt_{reader.removeprefix('evermemos_')}` byte for byte" in done.stdout


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_reader_model_that_cannot_write_the_framework_cap_is_refused_before_sending(
        pinned, fake_openai, locomo_dir, tmp_path, monkeypatch, cli, dry_run):  # noqa: F811
    """gpt-4o-mini writes at most 16,384 tokens a reply; the framework's readers ask for 32,768 (set for its
    gpt-4.1-mini). The run, and its dry run alike, is refused in one line before any request: none reaches the
    server and no row is written, never sent with a smaller cap (that would not be the published protocol)."""
    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    done = run_judged(cli, locomo_dir, tmp_path, "--judge", "evermemos", *(["--dry-run"] if dry_run else []),
                      reader="evermemos_cot", questions="first:2", answer_model="gpt-4o-mini")
    [refusal] = [line for line in done.stderr.splitlines() if not line.startswith("memeval: note:")]
    assert done.returncode == 2 and refusal.startswith("memeval: error: "), done.stderr
    assert ("--answer-model: gpt-4o-mini: writes at most 16,384 tokens a reply, but 32,768 are asked for by the "
            "evermemos_* readers (the EverMemOS framework's `llm.max_tokens`, set for its gpt-4.1-mini); nothing "
            "sent") in refusal
    assert fake_openai.headers == [] and fake_openai.received == [], "not one request, of any kind"
    assert not (tmp_path / "run" / "answers.jsonl").exists() and not (tmp_path / "run" / "judgments.jsonl").exists()


def test_a_cap_the_user_gives_is_named_as_the_flags():
    """`--answer-max-tokens` replaces the framework's cap (the note then says so): a refusal names the flag, not the
    framework, and a cap the model can write is sent as given."""
    from memeval.llm.client import LLMClient, ReplayBackend
    from memeval.llm.settings import ModelSettings
    from memeval.qa.reader_cap import capped

    asked = reader_request("evermemos_mem0", "Where?", "a note", None)
    client = LLMClient(ReplayBackend(), settings=ModelSettings(models={"answer": "gpt-4o-mini"}))
    with pytest.raises(InputError, match=r"but 32,768 are asked for by the evermemos_\* readers"):
        client.resolve(asked)
    with pytest.raises(InputError, match="but 20,000 are asked for by --answer-max-tokens; nothing sent"):
        client.resolve(capped([asked], 20000)[0])
    assert client.resolve(capped([asked], 16384)[0]).max_tokens_sent == 16384


def test_without_the_fetched_file_everything_says_paraphrased(fake_openai, locomo_dir, tmp_path, monkeypatch, cli):
    from memeval.prompts import load_prompt

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: "FINAL ANSWER: kite" if len(body["messages"]) == 1 else \
        '{"label": "CORRECT"}'
    done = run_judged(cli, locomo_dir, tmp_path, "--judge", "evermemos", reader="evermemos_cot", questions="first:1")
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "run" / "report.md").read_text()
    assert "`evermemos`: paraphrased prompts — not the published protocol" in report
    assert "`answer_prompt_cot` in this project's wording — paraphrased prompts" in report
    assert "published protocol (" not in done.stdout + report and "byte for byte" not in report
    assert "judge evermemos: paraphrased prompts" in done.stderr and "reader evermemos_cot: paraphrased" in done.stderr
    judged = [b for b in fake_openai.received if len(b["messages"]) == 2]
    assert len(judged) == 3 and judged[0]["messages"][0]["content"] == load_prompt("judge_evermemos_system").strip()


def test_status_says_published_only_for_the_fetched_prompts_and_gpt_4o_mini():
    assert judge_status("evermemos", "gpt-4o-mini", "0123abcd") == \
        "`evermemos`: paraphrased prompts — not the published protocol"
    assert "the published protocol (the EverMemOS evaluation framework's judge" in \
        judge_status("evermemos", "gpt-4o-mini-2024-07-18", "published:ab")
    assert "judged by gpt-4o, not gpt-4o-mini: not the published protocol" in \
        judge_status("evermemos", "gpt-4o", "published:ab")
    assert "no temperature was sent (--sampling model-default): not the published protocol" in \
        judge_status("evermemos", "gpt-4o-mini", "published:ab", "no temperature was sent (--sampling model-default)")


def test_a_stored_file_edited_by_hand_is_refused(pinned, tmp_path, cli):  # noqa: F811
    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    path = tmp_path / "protocols" / "evermemos_prompts.json"
    record = json.loads(path.read_text())
    record["templates"]["judge_system"] += " Be generous."
    record["templates_sha256"] = store.templates_sha256(record["templates"])
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match="templates: changed since they were fetched"):
        EverMemOSJudge()
