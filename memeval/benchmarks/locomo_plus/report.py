"""The LoCoMo-Plus report: J by category under the benchmark's judge (correct 1, partial 0.5, wrong 0, shown ×100)
with the benchmark's overall mean (every judged row, Cognitive and adversarial included) and 95% intervals
resampling whole LoCoMo conversations; evidence recall by category, which needs no model (for a Cognitive item: the
cue's turns among the memories given); what the run stitched and how it differs from the published setting."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memeval.benchmarks.locomo_plus.baselines import BASELINES, BASELINES_NOTE
from memeval.benchmarks.locomo_plus.categories import COGNITIVE, LOCOMO_PLUS_CATEGORIES
from memeval.benchmarks.locomo_plus.datasets import COMMIT, ITEMS_FILE, LICENCE, REPO, pinned
from memeval.benchmarks.locomo_plus.prompts import CATEGORY_NAMES, PARAPHRASED
from memeval.reports.markdown import markdown_table, md_markup

CATEGORIES = LOCOMO_PLUS_CATEGORIES.ids
N_BOOT = 2000


def _name(category: int) -> str:
    return f"{CATEGORY_NAMES[category]} ({category})" if category != COGNITIVE else "Cognitive"


def _cell(values: Sequence[float], scale: float = 1.0) -> str:
    return f"{scale * sum(values) / len(values):.2f} ({len(values)})" if values else "–"


def _interval(values: Sequence[float], clusters: Sequence[str]) -> str:
    """95% percentile bootstrap of the mean, resampling conversations (items when only one is present)."""
    from memeval.scoring.aggregate import bootstrap_mean, cluster_bootstrap

    if len(values) < 2:
        return "n/a"
    if len(set(clusters)) >= 2:
        interval = cluster_bootstrap(values, clusters, n_boot=N_BOOT, seed=0)
    else:
        interval = bootstrap_mean(values, n_boot=N_BOOT, seed=0)
    return f"{interval.low:.2f}–{interval.high:.2f}"


def judge_table(answers: Sequence, judgments: Sequence, systems: Sequence[str]) -> str:
    by_key = {(j.system, j.sample_id): j for j in judgments if j.mean is not None}
    conversation = {(a.system, a.sample_id): a.conversation_id for a in answers}
    headers = ["System", *(_name(c) for c in CATEGORIES), "overall", "95% CI", "Cognitive 95% CI", "judged"]
    body = []
    for system in systems:
        rows = [(j, conversation.get((system, j.sample_id), "")) for (s, _), j in by_key.items() if s == system]
        scores = {c: [j.mean for j, _ in rows if j.category == c] for c in CATEGORIES}
        every = [j.mean for j, _ in rows]
        cognitive = [(j.mean, conv) for j, conv in rows if j.category == COGNITIVE]
        body.append([system, *(_cell(scores[c]) for c in CATEGORIES), _cell(every),
                     _interval(every, [conv for _, conv in rows]),
                     _interval([v for v, _ in cognitive], [conv for _, conv in cognitive]), len(rows)])
    return markdown_table(headers, body)


def recall_table(answers: Sequence, systems: Sequence[str]) -> str:
    headers = ["System", *(_name(c) for c in CATEGORIES), "Cognitive 95% CI"]
    body = []
    for system in systems:
        rows = [a for a in answers if a.system == system and a.error is None and a.evidence_recall is not None]
        recall = {c: [a.evidence_recall for a in rows if a.category == c] for c in CATEGORIES}
        cognitive = [a for a in rows if a.category == COGNITIVE]
        body.append([system, *(_cell(recall[c], 100.0) for c in CATEGORIES),
                     _interval([100.0 * a.evidence_recall for a in cognitive], [a.conversation_id for a in cognitive])])
    return markdown_table(headers, body)


def stitching_summary(stitched: Sequence) -> dict:
    """Where the items went: per conversation, how many cues fell before the first session, and zero gaps."""
    return {"items": len(stitched),
            "by_conversation": dict(Counter(s.base.sample_id for s in stitched)),
            "cue_before_first_session": sum(1 for s in stitched if s.cue_after is None),
            "cue_after_last_session": sum(1 for s in stitched if s.cue_after == len(s.base.sessions) - 1),
            "zero_gap": sum(1 for s in stitched if s.gap_days == 0)}


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def setting_notes(task) -> list[str]:
    """What this run is beside the published setting (said before any row is made)."""
    config, notes = task.config, []
    from_pin = task.items_sha256 == pinned(ITEMS_FILE).sha256
    notes.append(f"Data: {_count(len(task.stitched), 'Cognitive item')} from "
                 + (f"{REPO}@{COMMIT[:12]}:data/locomo_plus.json (the pinned file; {LICENCE})" if from_pin else
                    f"a locomo_plus.json that is not the pinned file (sha256 {task.items_sha256[:16]}…): not the "
                    "published items")
                 + f"; {_count(sum(len(qs) for _, qs in task.selection), 'LoCoMo question')}.")
    rule = ("cyclic (item i into conversation i mod 10, as the benchmark's unified_input.py builds its evaluation "
            "input)" if config.choice == "cyclic" else
            f"random, seed {config.seed} (Python's random.choice per item in file order, as build_conv.py draws, "
            "seeded)")
    summary = stitching_summary(task.stitched)
    zero, early = summary["zero_gap"], summary["cue_before_first_session"]
    notes.append(f"Stitching: conversation choice {rule}; the trigger 7 days after the conversation's last session, "
                 f"the cue `time_gap` before it ({_count(zero, 'item')} {'names' if zero == 1 else 'name'} no "
                 f"countable gap and {'sits' if zero == 1 else 'sit'} just before the trigger; {_count(early, 'cue')} "
                 f"{'falls' if early == 1 else 'fall'} before the first session). "
                 "The cue is a session the systems ingest, dated in LoCoMo's format; the trigger is the question, "
                 "asked on its date. The benchmark's own input shows the stitched turns without any dates.")
    if config.reader == "extractive":
        notes.append("Reader: the extractive no-LLM baseline (best-overlapping sentence), not a model's answers.")
    else:
        notes.append("Reader: the answer model over each system's memories — this project's memory prompt for LoCoMo's "
                     "questions and its own reply prompt for the triggers; the benchmark gives its model the whole "
                     "stitched conversation in one prompt, so this is not the published answering setting.")
    if config.judge != "none":
        source = task.prompts.source
        notes.append("Judge: LoCoMo-Plus's per-category prompts byte for byte (" + source + "), temperature 0, "
                     "512 output tokens; the benchmark used gpt-4o-mini." if source != PARAPHRASED else
                     f"Judge: {PARAPHRASED} (`memeval locomo-plus fetch` fetches the benchmark's prompt.py); "
                     "temperature 0, 512 output tokens.")
        notes.append("Judge replies without a readable correct/partial/wrong label are not scored (the benchmark's "
                     "script scores them 0 or guesses a label from words in the reply); a rerun asks again.")
    return notes


def plus_report(answers: Sequence, judgments: Sequence, notes: Sequence[str], systems: Sequence[str],
                judge_model: str | None) -> str:
    lines = ["# LoCoMo-Plus evaluation report", ""]
    lines += [f"- {md_markup(n)}" for n in notes]
    lines += ["", "## J: the benchmark's judge (correct 100, partial 50, wrong 0; mean (n))", ""]
    if judgments:
        lines += [judge_table(answers, judgments, systems), "",
                  "- overall: the mean over every judged row, as the benchmark's summary computes it (adversarial "
                  "and Cognitive included). Intervals: percentile bootstrap "
                  f"({N_BOOT:,} resamples) over whole LoCoMo conversations (10 at most, so rough)."
                  + (f" Judge model: {md_markup(judge_model)}." if judge_model else "")]
    else:
        lines += ["Not measured: no judgment in this run."]
    lines += ["", "## Evidence recall of the memories given (%, mean (n))", "", recall_table(answers, systems), "",
              "- Cognitive: the share of the cue's turns among the memories the reader got; LoCoMo's categories: "
              "their annotated evidence turns."]
    lines += ["", "## Published results", "", BASELINES_NOTE if not BASELINES else ""]
    return "\n".join(lines).rstrip() + "\n"
