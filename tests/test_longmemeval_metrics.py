"""LongMemEval's numbers as the benchmark computes them, checked against values worked out by hand on tiny
haystacks written in the release's layout (session ids `answer_…` for evidence sessions, `has_answer` flags)."""

import json
import math

import pytest

from memeval.benchmarks.longmemeval.data import load_longmemeval
from memeval.benchmarks.longmemeval.metrics import (
    QA_TYPES,
    correct_ids,
    dcg,
    haystack_from_entry,
    mean_retrieval,
    qa_metrics,
    ranking_scores,
    retrieval_scored,
    session_corpus_ids,
    session_ranking_scores,
    turn_corpus_ids,
    turn_ranking_scores,
)
from memeval.benchmarks.longmemeval.task import (
    answer_instance,
    benchmark_retrieval,
    by_session_date,
    ranked_user_turns,
    reader_request,
)
from memeval.qa.answer import Memory
from memeval.qa.evidence import recall_curve as evidence_recall_curve


def user(text, evidence=None):
    turn = {"role": "user", "content": text}
    if evidence is not None:
        turn["has_answer"] = evidence
    return turn


def bot(text, evidence=None):
    turn = {"role": "assistant", "content": text}
    if evidence is not None:
        turn["has_answer"] = evidence
    return turn


def entry(qid="q1", qtype="multi-session", sessions=None, question="Which pottery class did I sign up for?"):
    """One question in the release's layout; by default four sessions:
    - sharegpt_a: chit-chat, two user turns (ids _1 and _3);
    - answer_b: an evidence session whose second user turn (turn 3) holds the answer;
    - answer_c: named as evidence but no user turn has_answer (only the assistant's does);
    - ultrachat_d: chit-chat."""
    sessions = sessions or {
        "sharegpt_a": ("2023/05/02 (Tue) 10:00", [user("Recipes for lentil soup?"), bot("Sure."),
                                                  user("And a vegan variant?"), bot("Of course.")]),
        "answer_b": ("2023/05/01 (Mon) 09:00", [user("Hi there", False), bot("Hello."),
                                                user("I signed up for a wheel-throwing pottery class.", True),
                                                bot("Fun!")]),
        "answer_c": ("2023/04/20 (Thu) 08:00", [user("Tell me about kilns.", False),
                                                bot("Kilns fire pottery.", True)]),
        "ultrachat_d": ("2023/05/03 (Wed) 12:00", [user("Weather tomorrow?"), bot("Sunny.")]),
    }
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": "wheel-throwing",
            "question_date": "2023/06/01 (Thu) 10:00", "haystack_session_ids": list(sessions),
            "haystack_dates": [d for d, _ in sessions.values()],
            "haystack_sessions": [turns for _, turns in sessions.values()],
            "answer_session_ids": [s for s in sessions if s.startswith("answer_")]}


TURN_CORPUS = ["sharegpt_a_1", "sharegpt_a_3", "noans_b_1", "answer_b_3", "noans_c_1", "ultrachat_d_1"]


# --- corpus ids and credit --------------------------------------------------------------------------------------

def test_only_user_turns_are_corpus_items_with_one_based_suffixes_and_noans_without_has_answer():
    corpus = turn_corpus_ids(haystack_from_entry(entry()))
    assert [c for _, _, c in corpus] == TURN_CORPUS
    assert [(s, i) for s, i, _ in corpus][:4] == [("sharegpt_a", 0), ("sharegpt_a", 2), ("answer_b", 0),
                                                  ("answer_b", 2)]
    assert correct_ids(TURN_CORPUS) == {"answer_b_3"}
    # session granularity: answer_c has no user has_answer turn, so it earns no credit either
    assert session_corpus_ids(haystack_from_entry(entry())) == ["sharegpt_a", "answer_b", "noans_c", "ultrachat_d"]


def test_a_session_earns_credit_only_through_its_has_answer_turns():
    # the evidence session's small-talk turn ranks first: at session level that is session "noans_b", no credit
    scores = turn_ranking_scores(["noans_b_1", "sharegpt_a_1", "answer_b_3"], TURN_CORPUS, ks=(1, 2))
    assert scores["session"]["recall_any@1"] == 0.0 and scores["turn"]["recall_any@1"] == 0.0
    assert scores["session"]["recall_any@2"] == 0.0  # noans_b and sharegpt_a: two sessions, neither credited
    # answer_c's user turn alone never helps, whatever its rank
    assert turn_ranking_scores(["noans_c_1"], TURN_CORPUS, ks=(1,))["session"]["recall_all@1"] == 0.0


def test_session_level_widens_k_until_k_distinct_sessions_are_seen():
    ranked = ["sharegpt_a_1", "sharegpt_a_3", "answer_b_3", "ultrachat_d_1"]
    scores = turn_ranking_scores(ranked, TURN_CORPUS, ks=(1, 2))
    # turn level @2: the two sharegpt turns only
    assert scores["turn"]["recall_any@2"] == 0.0
    # session level @2: sharegpt_a, sharegpt_a is one session, so k grows to 3 turns and reaches answer_b
    assert scores["session"]["recall_any@2"] == 1.0 and scores["session"]["recall_all@2"] == 1.0
    # ndcg over the widened 3 turns: gains 0, 0, 1 → 1/log2(3); ideal (one relevant turn) → 1
    assert scores["session"]["ndcg_any@2"] == pytest.approx(1 / math.log2(3))
    assert scores["session"]["recall_any@1"] == 0.0  # one session seen after one turn: no widening


def test_widening_stops_past_the_corpus_when_sessions_run_out():
    # a two-session corpus asked for 5 distinct sessions: every ranked turn counts, ideal DCG over the corpus
    corpus = ["sharegpt_a_1", "answer_b_3"]
    scores = turn_ranking_scores(["sharegpt_a_1", "answer_b_3"], corpus, ks=(5,))
    assert scores["session"]["recall_all@5"] == 1.0 and scores["session"]["ndcg_any@5"] == 1.0


def test_ndcg_uses_the_benchmarks_discount_and_an_ideal_over_the_whole_corpus():
    assert dcg([1.0, 1.0, 1.0]) == pytest.approx(1 + 1 + 1 / math.log2(3))
    corpus = ["x_1", "answer_p_1", "answer_q_1", "y_1", "z_1"]
    correct = correct_ids(corpus)
    # relevant at ranks 1 and 3 of two relevant: (1 + 1/log2 3) / (1 + 1) = 0.8154648767857288
    _, _, ndcg = ranking_scores(["answer_p_1", "x_1", "answer_q_1", "y_1", "z_1"], corpus, correct, 5)
    assert ndcg == pytest.approx(0.8154648767857288)
    # rank 2 weighs as much as rank 1 here (1/log2 2): one relevant at rank 2 scores 1.0 at k=2 ...
    single = ["x_1", "answer_p_1", "y_1"]
    assert ranking_scores(single, single, {"answer_p_1"}, 2)[2] == 1.0
    # ... and 0 at k=1
    assert ranking_scores(single, single, {"answer_p_1"}, 1) == (0.0, 0.0, 0.0)
    # a ranking that stops early: one relevant found of two in the corpus → dcg 1, ideal 2
    recall_any, recall_all, ndcg = ranking_scores(["answer_p_1"], corpus, correct, 5)
    assert (recall_any, recall_all, ndcg) == (1.0, 0.0, 0.5)


def test_recall_any_and_all_differ_with_two_evidence_turns():
    corpus = ["answer_p_1", "x_1", "answer_q_1"]
    assert ranking_scores(["answer_p_1", "x_1", "answer_q_1"], corpus, correct_ids(corpus), 2)[:2] == (1.0, 0.0)
    assert ranking_scores(["answer_p_1", "x_1", "answer_q_1"], corpus, correct_ids(corpus), 3)[:2] == (1.0, 1.0)


def test_a_session_granularity_ranking_scores_sessions_directly():
    corpus = ["sharegpt_a", "answer_b", "noans_c", "ultrachat_d"]
    scores = session_ranking_scores(["noans_c", "answer_b", "sharegpt_a"], corpus, ks=(1, 2))
    assert scores["session"]["recall_any@1"] == 0.0 and scores["session"]["recall_any@2"] == 1.0
    assert scores["session"]["ndcg_any@2"] == 1.0 and scores["turn"] == {}


def test_abstention_and_questions_without_a_user_has_answer_turn_are_not_scored():
    assert retrieval_scored("q1", haystack_from_entry(entry()))
    assert not retrieval_scored("q1_abs", haystack_from_entry(entry()))
    assert not retrieval_scored("q1_abs_2", haystack_from_entry(entry()))  # `_abs` anywhere, not only at the end
    only_assistant = entry(qtype="single-session-assistant", sessions={
        "answer_e": ("2023/05/01 (Mon) 09:00", [user("Suggest a kiln temperature.", False),
                                                bot("Cone 6, about 1220 °C.", True)])})
    assert not retrieval_scored("q2", haystack_from_entry(only_assistant))
    scored = turn_ranking_scores(["answer_b_3"], TURN_CORPUS, ks=(1,))
    means, n = mean_retrieval([None, scored, None])
    assert n == 1 and means["turn"]["recall_any@1"] == 1.0 and means["session"]["ndcg_any@1"] == 1.0
    half = turn_ranking_scores(["sharegpt_a_1"], TURN_CORPUS, ks=(1,))
    assert mean_retrieval([scored, half])[0]["turn"]["recall_any@1"] == 0.5


def _instances(tmp_path, *entries):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(list(entries)))
    return load_longmemeval(path)[0]


def test_a_systems_ranking_keeps_user_turns_only_and_skipped_questions_get_no_numbers(tmp_path):
    answerable, abstention, assistant_only = _instances(tmp_path, entry("q1"), entry("q2_abs"), entry(
        "q3", "single-session-assistant", sessions={
            "answer_e": ("2023/05/01 (Mon) 09:00", [user("Suggest a kiln temperature.", False),
                                                    bot("Cone 6, about 1220 °C.", True)])}))
    corpus_id_of = {"answer_b:0": "noans_b_1", "answer_b:2": "answer_b_3", "sharegpt_a:0": "sharegpt_a_1"}
    # assistant turn answer_b:3 and an unknown id take no rank; a repeated turn counts once
    assert ranked_user_turns([("answer_b:3", "nowhere:1"), ("answer_b:2",), ("answer_b:2", "sharegpt_a:0")],
                             corpus_id_of) == ["answer_b_3", "sharegpt_a_1"]
    # the evidence turn second among memories but first among user turns: turn recall_any@1 = 1
    scores = benchmark_retrieval(answerable, [("answer_b:1",), ("answer_b:2",), ("sharegpt_a:0",)])
    assert scores["turn"]["recall_any@1"] == 1.0 and scores["turn"]["ndcg_any@1"] == 1.0
    assert benchmark_retrieval(abstention, [("answer_b:2",)]) is None
    assert benchmark_retrieval(assistant_only, [("answer_e:1",)]) is None


def test_rag_turns_rows_carry_the_benchmarks_numbers(tmp_path):
    (instance,) = _instances(tmp_path, entry("q1"))
    row, _ = answer_instance(instance, "rag_turns", k=2)
    # "pottery" and "class" match only answer_b's third turn (and answer_c's assistant turn, not in the corpus):
    # the evidence turn is the first user turn ranked
    assert row.retrieval["turn"]["recall_any@1"] == 1.0 and row.retrieval["session"]["recall_all@1"] == 1.0
    # memeval's evidence_recall keeps its own definition: both answer sessions and both has_answer turns (the
    # assistant's in answer_c included) are evidence there, so one memory finds half of each
    assert (row.turn_recall[0], row.session_recall[0]) == (0.5, 0.5)
    full, _ = answer_instance(instance, "full_context", k=2)
    assert full.retrieval is None


def test_evidence_recall_is_memevals_share_of_evidence_found():
    assert evidence_recall_curve({"a", "b"}, [{"x"}, {"a"}, {"b", "y"}], 4) == [0.0, 0.5, 1.0, 1.0]
    assert evidence_recall_curve(set(), [{"x"}], 2) is None


# --- accuracy ---------------------------------------------------------------------------------------------------

ROWS = [
    ("u1", "single-session-user", True), ("u2", "single-session-user", False),
    ("u3_abs", "single-session-user", True),  # counts in its type: 2 of 3, not 1 of 2
    ("p1", "single-session-preference", True), ("s1", "single-session-assistant", True),
    ("m1", "multi-session", False), ("m2", "multi-session", False), ("m3", "multi-session", True),
    ("m4_abs_2", "multi-session", False),  # `_abs` inside the id is still abstention
    ("t1", "temporal-reasoning", True), ("k1", "knowledge-update", True),
]


def test_accuracy_counts_abstention_inside_its_type_and_task_average_differs_from_overall():
    m = qa_metrics(ROWS)
    assert m.by_type["single-session-user"] == pytest.approx(2 / 3) and m.counts["single-session-user"] == 3
    assert m.by_type["multi-session"] == pytest.approx(1 / 4)
    # (2/3 + 1 + 1 + 1/4 + 1 + 1) / 6 by hand
    assert m.task_averaged == pytest.approx(0.8194444444444444)
    assert m.overall == pytest.approx(7 / 11) and m.judged == 11
    assert (m.abstention, m.abstention_count) == (0.5, 2)
    assert list(m.by_type) == list(QA_TYPES)


def test_task_average_is_undefined_until_every_type_is_judged_and_unknown_types_are_refused():
    m = qa_metrics(r for r in ROWS if r[1] != "knowledge-update")
    assert m.task_averaged is None and m.by_type["knowledge-update"] is None and m.overall == pytest.approx(0.6)
    none = qa_metrics([])
    assert (none.overall, none.abstention, none.abstention_count) == (None, None, 0)
    with pytest.raises(ValueError, match="trivia"):
        qa_metrics([("x", "trivia", True)])


# --- reader order -----------------------------------------------------------------------------------------------

def test_the_reader_sees_memories_sorted_by_date_string_stably(tmp_path):
    memories = [Memory("first on May 2", "2023/05/02 (Tue) 10:00"), Memory("May 1", "2023/05/01 (Mon) 09:00"),
                Memory("second on May 2", "2023/05/02 (Tue) 10:00"), Memory("April", "2023/04/30 (Sun) 08:00")]
    assert [m.text for m in by_session_date(memories)] == ["April", "May 1", "first on May 2", "second on May 2"]
    (instance,) = _instances(tmp_path, entry("q1"))
    prompt = reader_request(instance, memories).messages[0][1]
    positions = [prompt.index(t) for t in ("April", "May 1", "first on May 2", "second on May 2")]
    assert positions == sorted(positions)
