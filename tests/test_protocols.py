"""Published protocols: templates parsed out of source files laid out like the anchors' (the wording here is this
test's own), checksums refused, stored files guarded, and the fetched prompts sent byte for byte through the real
openai SDK to the local fake — with the label "published protocol" only then, "paraphrased" otherwise."""

import dataclasses
import hashlib
import json
import textwrap

import pytest

from memeval.errors import InputError
from memeval.protocols import extract, store
from memeval.protocols.sources import SOURCES
from memeval.protocols.status import judge_status
from tests.fake_openai import user_text

MEM0_FILE = textwrap.dedent('''
    import json
    from openai import OpenAI

    client = OpenAI()

    ACCURACY_PROMPT = """
    Grade one answer.
    Q: {question}
    Expected: {gold_answer}
    Got: {generated_answer}
    Return json: {{"label": "CORRECT"}} or {{"label": "WRONG"}}.
    """


    def evaluate_llm_judge(question, gold_answer, generated_answer):
        raise SystemExit("never run by the tests")
''')

LME_JUDGE_FILE = textwrap.dedent('''
    import sys


    def get_anscheck_prompt(task, question, answer, response, abstention=False):
        if not abstention:
            if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
                template = "STANDARD check.\\nQ: {}\\nA: {}\\nR: {}\\nyes or no?"
                prompt = template.format(question, answer, response)
            elif task == 'temporal-reasoning':
                template = "TEMPORAL check, off by one is fine.\\nQ: {}\\nA: {}\\nR: {}\\nyes or no?"
                prompt = template.format(question, answer, response)
            elif task == 'knowledge-update':
                template = "UPDATE check.\\nQ: {}\\nA: {}\\nR: {}\\nyes or no?"
                prompt = template.format(question, answer, response)
            elif task == 'single-session-preference':
                template = "PREFERENCE check.\\nQ: {}\\nRubric: {}\\nR: {}\\nyes or no?"
                prompt = template.format(question, answer, response)
            else:
                raise NotImplementedError
        else:
            template = "ABSTENTION check.\\nQ: {}\\nWhy: {}\\nR: {}\\nyes or no?"
            prompt = template.format(question, answer, response)
        return prompt


    if __name__ == '__main__':
        sys.exit("never run by the tests")
''')

LME_READER_FILE = textwrap.dedent('''
    def prepare_prompt(entry, retriever_type, topk_context, useronly, history_format, cot, tokenizer,
                       tokenizer_backend, max_retrieval_length, merge_key_expansion_into_value, con=False):
        if retriever_type == 'no-retrieval':
            answer_prompt_template = '{}'
        else:
            if merge_key_expansion_into_value is None or merge_key_expansion_into_value == 'none':
                if cot:
                    answer_prompt_template = 'Chats, step by step:\\n{}\\nDate: {}\\nQ: {}\\nA (steps):'
                else:
                    answer_prompt_template = 'Chats:\\n{}\\nDate: {}\\nQ: {}\\nA:'
            elif merge_key_expansion_into_value == 'merge':
                answer_prompt_template = 'Merged facts {} {} {}'
            else:
                raise NotImplementedError
        history_string = ''
        for i, (chunk_date, sess_string) in enumerate([]):
            history_string += '\\n## Block {}: {}\\n{}\\n### Session'.format(i + 1, chunk_date, sess_string)
            history_string += '\\n### Session {}:\\nOn {}\\n{}\\n'.format(i + 1, chunk_date, sess_string)
        return answer_prompt_template.format(history_string, entry['question_date'], entry['question'])
''')

LOCOMO_FILE = textwrap.dedent('''
    import random

    QA_PROMPT = """
    Using the context, answer briefly.

    Question: {} Answer:
    """

    QA_PROMPT_CAT_5 = """
    Using the context, pick one.

    Question: {} Answer:
    """

    CONV_START_PROMPT = "Two people talk: {} and {}.\\n\\n"


    def get_answers(ann_file, out_file, args):
        for qa in []:
            if qa['category'] == 2:
                questions.append(qa['question'] + ' Answer with a date.')
            elif qa['category'] == 5:
                question = qa['question'] + " Options: (a) {} (b) {}. "
                if random.random() < 0.5:
                    question = question.format('Never said', qa['answer'])
                else:
                    question = question.format(qa['answer'], 'Never said')
            else:
                questions.append(qa['question'])
''')

# EverMemOS's layout: the judge's prompts under llm_judge, the answer prompts under online_api.default (block scalars
# whose trailing blank lines and indentation the framework's YAML reader keeps)
EVERMEMOS_FILE = textwrap.dedent('''
    # prompts of a harness
    llm_judge:
      system_prompt: |
        You check answers.

      user_prompt: |
        Check one answer.
        Q: {question}
        Gold: {golden_answer}
        Got: {generated_answer}
        Return json with a "label".


    online_api:
      default:
        answer_prompt_mem0: |
          Short answer from these notes.

          {context}

          Question: {question}

          Answer:

        answer_prompt_memos: |
          Very short answer, notes below.

          {context}

          Question: {question}
          Answer:
        answer_prompt_cot: |
          Think in steps, end with FINAL ANSWER: then the answer.

          ---

          {context}

          Question: {question}

          Now think:

        answer_prompt_zep: |
          Not read. {facts}
      templates:
        default: |
          Memories for {speaker_1}: {speaker_1_memories}
    ''')

FILES = {"mem0_judge": MEM0_FILE, "longmemeval_judge": LME_JUDGE_FILE, "longmemeval_reader": LME_READER_FILE,
         "locomo_reader": LOCOMO_FILE, "evermemos_prompts": EVERMEMOS_FILE}


@pytest.fixture()
def pinned(monkeypatch, tmp_path):
    """The test files, pinned in place of the anchors' (same repositories, commits and paths; these hashes), written
    in the repository layout under `tmp_path/src`; protocols are stored under `tmp_path/protocols`."""
    root = tmp_path / "src"
    for name, text in FILES.items():
        real = SOURCES[name]
        path = root / real.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        templates = store.templates_sha256(extract.EXTRACTORS[name](text, real.path))
        monkeypatch.setitem(SOURCES, name, dataclasses.replace(real, sha256=hashlib.sha256(text.encode()).hexdigest(),
                                                               templates_sha256=templates))
    monkeypatch.setenv(store.PROTOCOLS_ENV, str(tmp_path / "protocols"))
    return root


def test_each_layout_yields_its_templates():
    assert extract.mem0_judge(MEM0_FILE)["accuracy"] == (
        '\nGrade one answer.\nQ: {question}\nExpected: {gold_answer}\nGot: {generated_answer}\n'
        'Return json: {{"label": "CORRECT"}} or {{"label": "WRONG"}}.\n')
    judge = extract.longmemeval_judge(LME_JUDGE_FILE)
    assert set(judge) == {"single-session-user", "single-session-assistant", "multi-session", "temporal-reasoning",
                          "knowledge-update", "single-session-preference", "abstention"}
    assert judge["multi-session"] == judge["single-session-user"] == "STANDARD check.\nQ: {}\nA: {}\nR: {}\nyes or no?"
    assert judge["single-session-preference"].startswith("PREFERENCE") and judge["abstention"].startswith("ABSTENTION")
    reader = extract.longmemeval_reader(LME_READER_FILE)
    assert reader == {"answer": "Chats:\n{}\nDate: {}\nQ: {}\nA:",
                      "answer_cot": "Chats, step by step:\n{}\nDate: {}\nQ: {}\nA (steps):",
                      "session": "\n## Block {}: {}\n{}\n### Session"}  # the first `.format` naming a session
    assert extract.locomo_reader(LOCOMO_FILE) == {
        "qa": "\nUsing the context, answer briefly.\n\nQuestion: {} Answer:\n",
        "qa_choice": "\nUsing the context, pick one.\n\nQuestion: {} Answer:\n",
        "conversation_start": "Two people talk: {} and {}.\n\n", "date_hint": " Answer with a date.",
        "choice": " Options: (a) {} (b) {}. ", "not_mentioned": "Never said"}


def test_an_f_string_becomes_a_named_template_and_other_expressions_are_refused():
    assert extract.mem0_judge('x = 1\nACCURACY_PROMPT = f"Q {question} G {gold_answer} A {generated_answer} {{x}}"\n'
                              )["accuracy"] == "Q {question} G {gold_answer} A {generated_answer} {{x}}"
    with pytest.raises(extract.ExtractionError, match="no template for accuracy"):
        extract.mem0_judge('ACCURACY_PROMPT = f"Q {question.upper()} {gold_answer} {generated_answer}"\n')
    with pytest.raises(extract.ExtractionError, match="fields"):
        extract.mem0_judge('ACCURACY_PROMPT = "Q {question} G {gold} A {generated_answer}"\n')
    with pytest.raises(extract.ExtractionError, match="no template for knowledge-update"):
        extract.longmemeval_judge(LME_JUDGE_FILE.replace("task == 'knowledge-update'", "task == 'ku'"))
    with pytest.raises(extract.ExtractionError, match="not Python source"):
        extract.locomo_reader("QA_PROMPT = (")


def test_fetch_stores_every_protocol_and_a_changed_byte_is_refused_with_nothing_written(pinned, tmp_path, cli):
    done = cli("data", "fetch", "protocols", "--source", pinned)
    assert done.returncode == 0, done.stderr
    stored = {p.name for p in (tmp_path / "protocols").iterdir()}
    assert stored == {f"{name}.json" for name in FILES}
    record = json.loads((tmp_path / "protocols" / "mem0_judge.json").read_text())
    assert record["commit"] == SOURCES["mem0_judge"].commit and record["path"] == "evaluation/metrics/llm_judge.py"
    assert record["source_sha256"] == hashlib.sha256(MEM0_FILE.encode()).hexdigest()

    tampered = pinned / SOURCES["locomo_reader"].path
    tampered.write_text(LOCOMO_FILE + "\n# one more line\n")
    before = {p.name: p.read_bytes() for p in (tmp_path / "protocols").iterdir()}
    refused = cli("data", "fetch", "protocols", "--source", pinned)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "sha256: checksum mismatch for snap-research/locomo@92286325a407:task_eval/evaluate_claude.py" \
        in refused.stderr and "nothing written" in refused.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "protocols").iterdir()} == before

    alone = cli("data", "fetch", "protocols", "--source", pinned / SOURCES["mem0_judge"].path, "--dest",
                tmp_path / "one")
    assert alone.returncode == 0 and [p.name for p in (tmp_path / "one").iterdir()] == ["mem0_judge.json"]
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "llm_judge.py").write_text(MEM0_FILE)
    some = cli("data", "fetch", "protocols", "--source", partial, "--dest", tmp_path / "two")
    assert some.returncode == 4 and some.stderr.strip().endswith(f"incomplete: 4 of 5 protocol files not found in "
                                                                 f"{partial}")


def test_a_stored_protocol_edited_by_hand_is_refused(pinned, tmp_path, cli):
    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    path = tmp_path / "protocols" / "longmemeval_judge.json"
    record = json.loads(path.read_text())
    record["templates"]["abstention"] += " Be lenient."
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match="templates: changed since they were fetched"):
        store.load("longmemeval_judge")
    record["templates_sha256"] = store.templates_sha256(record["templates"])  # the edit, its hash recomputed
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match="templates: changed since they were fetched"):
        store.load("longmemeval_judge")
    assert store.load("mem0_judge").templates["accuracy"].startswith("\nGrade one answer.")


def test_the_pinned_hashes_are_the_anchors_files():
    """Every pin names a full commit and both hashes (what `store.build` and `store.load` check against)."""
    for source in SOURCES.values():
        assert len(source.commit) == 40 and len(source.sha256) == 64 and len(source.templates_sha256) == 64


def test_status_says_published_only_for_published_prompts_and_the_anchors_model():
    assert judge_status("binary", "gpt-4o-mini", "0123abcd") == \
        "`binary`: paraphrased prompts — not the published protocol"
    assert "the published protocol (the Mem0 paper's judge" in judge_status("binary", "gpt-4o-mini", "published:ab")
    assert "not the published protocol" in judge_status("binary", "claude-sonnet-4-6", "published:ab")
    assert "paraphrased" in judge_status("longmemeval", "gpt-4o-2024-08-06", {"published:ab", "0123"})
    assert "the published protocol (LongMemEval's judge" in judge_status("longmemeval", "gpt-4o-2024-08-06",
                                                                          {"published:ab"})
    assert judge_status("graded", "gpt-4o-mini", "published:ab") == ""


def test_mem0_judge_is_sent_byte_for_byte_without_a_cap(pinned, fake_openai, locomo_dir, tmp_path, monkeypatch, cli):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.records import load_answers, load_judgments

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: '```json\n{"label": "CORRECT"}\n```'
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:4", "--systems",
               "rag_turns", "--judge", "binary", "--judge-model", "gpt-4o-mini", "--llm", "openai", "--no-progress",
               "--out", tmp_path / "run", check=True)
    qa = {q.sample_id: q for c in load_locomo(locomo_dir) for q in c.qa}
    answers = {a.sample_id: a for a in load_answers(tmp_path / "run" / "answers.jsonl")}
    judged = [a for a in answers.values() if a.category != 5]
    assert len(fake_openai.received) == len(judged) > 0
    template = extract.mem0_judge(MEM0_FILE)["accuracy"]
    expected = sorted(template.format(question=qa[a.sample_id].question, gold_answer=qa[a.sample_id].answer,
                                      generated_answer=a.prediction) for a in judged)
    assert sorted(user_text(b) for b in fake_openai.received) == expected
    for body in fake_openai.received:
        assert set(body) == {"model", "messages", "temperature", "response_format"}, "no output cap, as Mem0"
        assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.0
    rows = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert {r.prompt_version for r in rows} == {store.load("mem0_judge").version} and all(r.mean == 100.0
                                                                                           for r in rows)
    assert "the published protocol (the Mem0 paper's judge" in done.stdout
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "evaluation/metrics/llm_judge.py" in json.dumps(manifest["identity"])


def test_longmemeval_judge_is_sent_byte_for_byte_for_every_type(pinned, fake_openai, tmp_path, monkeypatch, cli):
    from memeval.benchmarks.longmemeval.task import LMEJudgmentRow
    from memeval.records import read_records
    from tests.test_longmemeval_data import instance

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    rows = [instance("u1", "single-session-user"), instance("a1", "single-session-assistant"),
            instance("m1", "multi-session", answer=3), instance("t1", "temporal-reasoning"),
            instance("k1", "knowledge-update"), instance("p1", "single-session-preference", answer="Likes hikes"),
            instance("x_abs_1", "temporal-reasoning", answer="Never said where")]
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(rows))
    fake_openai.responder = lambda body: "Yes."
    done = cli("longmemeval", "run", "--data", data, "--systems", "rag_turns", "--judge", "longmemeval",
               "--judge-model", "gpt-4o-2024-08-06", "--llm", "openai", "--no-progress", "--out", tmp_path / "run",
               check=True)
    templates = extract.longmemeval_judge(LME_JUDGE_FILE)
    from memeval.benchmarks.longmemeval.task import LMEAnswerRow

    answers = read_records(tmp_path / "run" / "answers.jsonl", LMEAnswerRow)
    expected = {templates["abstention" if "_abs" in a.question_id else a.question_type].format(
        a.question, next(r["answer"] for r in rows if r["question_id"] == a.question_id), a.prediction)
        for a in answers}  # u1 and a1 ask the same request: sent once or twice, never another text
    assert {user_text(b) for b in fake_openai.received} == expected and len(expected) == 6
    assert all(b["max_tokens"] == 10 and b["temperature"] == 0.0 and "max_completion_tokens" not in b
               for b in fake_openai.received)
    judged = read_records(tmp_path / "run" / "judgments.jsonl", LMEJudgmentRow)
    assert all(j.label for j in judged) and len(judged) == 7
    assert "the published protocol (LongMemEval's judge" in done.stdout


def test_without_fetched_prompts_nothing_says_published(fake_openai, locomo_dir, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake_openai.responder = lambda body: '{"reasoning": "same", "label": "CORRECT"}'
    done = cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
               "rag_turns", "--judge", "binary", "--judge-model", "gpt-4o-mini", "--llm", "openai", "--no-progress",
               "--out", tmp_path / "run", check=True)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "paraphrased prompts — not the published protocol" in done.stdout + report
    assert "published protocol (" not in done.stdout + report and "protocol as published" not in report


def paper_query(conversation, qa, templates, options) -> str:
    """The paper's reader prompt at batch size 1, built as its script builds it: sessions walked from the last to
    the first, each one's turns prepended in reverse under a DATE header, a blank-line pair added per session."""
    context = ""
    for session in sorted(conversation.sessions, key=lambda s: s.index, reverse=True):
        context += "\n\n"
        for turn in reversed(session.turns):
            line = turn.speaker + ' said, "' + turn.text + '"'
            if turn.img_url and turn.blip_caption:
                line += " [shares %s]" % turn.blip_caption
            context = line + "\n" + context
        context = "\nDATE: " + session.date_time + "\nCONVERSATION:\n" + context
    start = templates["conversation_start"].format(conversation.speaker_a, conversation.speaker_b)
    if qa.category == 2:
        question = templates["qa"].format(qa.question + templates["date_hint"])
    elif qa.category == 5:
        question = templates["qa_choice"].format(qa.question + templates["choice"].format(*options))
    else:
        question = templates["qa"].format(qa.question)
    return start + context + "\n\n" + question


def test_locomo_paper_reader_is_sent_byte_for_byte_with_full_context(pinned, fake, locomo_dir, tmp_path, monkeypatch,
                                                                      cli):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo.paper_reader import paper_options
    from memeval.records import load_answers
    from tests.fake_anthropic import first_text

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    fake.responder = lambda body: " (b) " if "Options:" in first_text(body) else " Paris "
    cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "all", "--systems",
        "full_context", "--reader", "claude_official", "--no-progress", "--out", tmp_path / "run", check=True)
    conversation = next(c for c in load_locomo(locomo_dir) if c.sample_id == "conv-26")
    published = store.load("locomo_reader")
    templates = extract.locomo_reader(LOCOMO_FILE)
    by_category = {}
    for qa in conversation.qa:
        by_category.setdefault(qa.category, qa)
    sent = [first_text(b) for b in fake.received]
    for qa in by_category.values():  # one question of each category, its prompt exactly as the paper's
        assert paper_query(conversation, qa, templates, paper_options(qa, published)) in sent, qa.category
    assert all(b["max_tokens"] == 50 and "temperature" not in b for b in fake.received)
    assert all(isinstance(b["messages"][0]["content"], list) for b in fake.received), "the shared context is cached"
    answers = {a.sample_id: a for a in load_answers(tmp_path / "run" / "answers.jsonl")}
    five = by_category[5]
    a, b = paper_options(five, published)
    assert answers[five.sample_id].prediction == b.strip() != a.strip(), "the paper's rule: '(b)' is option b"
    assert answers[by_category[1].sample_id].prediction == "Paris"


def test_longmemeval_reader_is_sent_byte_for_byte_with_sessions_by_date(pinned, fake_openai, tmp_path, monkeypatch,
                                                                         cli):
    from tests.test_longmemeval_data import instance

    cli("data", "fetch", "protocols", "--source", pinned, check=True)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    row = instance("q1", "single-session-user", haystack_dates=["2023/05/22 (Mon) 08:00", "2023/05/21 (Sun) 09:00"])
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([row]))
    fake_openai.responder = lambda body: "Denver"
    done = cli("longmemeval", "run", "--data", data, "--systems", "full_context", "--reader", "llm", "--llm", "openai",
               "--answer-model", "gpt-4o-mini", "--no-progress", "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    reader = extract.longmemeval_reader(LME_READER_FILE)
    later, earlier = row["haystack_sessions"]  # the file lists the later session first
    history = "".join(reader["session"].format(n, date, "\n" + json.dumps(
        [{"role": t["role"], "content": t["content"]} for t in turns]))
        for n, (date, turns) in enumerate([(row["haystack_dates"][1], earlier), (row["haystack_dates"][0], later)],
                                          start=1))
    [body] = fake_openai.received
    assert user_text(body) == reader["answer"].format(history, row["question_date"], row["question"])
    assert body["max_completion_tokens"] == 500 and body["temperature"] == 0.0
    assert "LongMemEval's reader prompt byte for byte" in done.stdout
