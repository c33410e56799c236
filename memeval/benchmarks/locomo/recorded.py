"""Recorded judgments in the tables: the labels a published file's own judge gave (imported by `memeval locomo
import --format evermemos` as the judge `evermemos_recorded`), shown as the framework reports them — the per-run
mean (its primary figure) with the population standard deviation over runs, beside the majority vote — and said
everywhere to be recorded, never re-run by memeval.

They judged the file's gold, which is the original key's: under another key a question whose gold the key changes
or leaves out has no recorded judgment (it cannot be re-run), so it is left out of these figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from memeval.benchmarks.locomo.categories import QA_CATEGORIES, category_label
from memeval.benchmarks.locomo.published.detailed import RECORDED, is_recorded, recorded_stats
from memeval.reports.markdown import markdown_table, with_notes


def majority_metric(protocol: str) -> str:
    return f"J majority vote ({protocol} judge)"


def load_recorded(path: str | Path) -> list:
    """The latest recorded judgments of a run's judgments.jsonl ([] when it has none)."""
    from memeval.invocation import read_light_records
    from memeval.records import JudgmentRow, latest

    path = Path(path)
    if not path.is_file():
        return []
    rows = latest(read_light_records(path, JudgmentRow), lambda r: r.key).values()
    return [r for r in rows if is_recorded(r.protocol) and getattr(r, "answer_key", "original") == "original"]


def under_key(rows: Iterable, key=None) -> list:
    """The recorded judgments that still judge their question's gold under `key` (None or original: all), by the
    rule every J follows (memeval/benchmarks/locomo/keyed.py): a question whose gold the key changes or leaves out has none."""
    from memeval.benchmarks.locomo.keyed import keyed_judgments

    return keyed_judgments(list(rows), key)


def _by_system(rows: Iterable) -> dict[tuple[str, str], list]:
    out: dict[tuple[str, str], list] = {}
    for row in rows:
        if row.category in QA_CATEGORIES:
            out.setdefault((row.system, row.protocol), []).append(row)
    return out


def majority_cells(rows: Iterable, overall: str) -> dict[tuple[str, str, str], list[tuple[str, str, float]]]:
    """(system, `overall`, majority metric) → each question's majority vote (100 accepted by more than half of
    its runs, else 0) as (sample id, conversation, value), categories 1–4."""
    out: dict[tuple[str, str, str], list[tuple[str, str, float]]] = {}
    for (system, protocol), group in _by_system(rows).items():
        votes = [(r.sample_id, r.conversation_id, 100.0 if 2 * sum(s >= 50 for s in used) > len(used) else 0.0)
                 for r in group if (used := [s for s in r.scores if s >= 0])]
        if votes:
            out[(system, overall, majority_metric(protocol))] = votes
    return out


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def recorded_notes(rows: Iterable, key=None) -> list[str]:
    """One line per system with recorded judgments: who judged (as the file states it), the per-run mean ± the
    population std over runs, the run scores and the majority vote, categories 1–4."""
    notes = []
    for (system, protocol), group in _by_system(rows).items():
        stats = recorded_stats(group)
        models = sorted({r.judge_model or "not recorded" for r in group})
        notes.append(f"{system}: J ({protocol}) is {RECORDED} — the labels the imported file's producer recorded "
                     f"(judge model {', '.join(models)}), never sent by memeval: per-run mean "
                     f"{_pct(stats.mean)} ± {_pct(stats.std)} (population std over {stats.runs} runs: "
                     f"{', '.join(_pct(s) for s in stats.run_scores)}), majority vote {_pct(stats.majority)}, "
                     f"{stats.judged:,} questions of categories 1–4"
                     + ("" if key is None or key.mode == "original" else
                        f"; under the {key.mode} key the questions it changes are left out (their recorded "
                        "judgments graded the original gold)") + ".")
    return notes


def stated_prompt(row) -> str:
    """The judge prompt an imported row's producer stated (`locomo import --judge-prompt`), read back from the
    prompt version the importer wrote: "recorded, not re-run (prompt …)"."""
    from memeval.benchmarks.locomo.published.detailed import NOT_STATED

    version = getattr(row, "prompt_version", None) or ""
    head = f"{RECORDED} (prompt "
    return version[len(head):-1] if version.startswith(head) and version.endswith(")") else NOT_STATED


def _prompt_sentence(judgments: Mapping[str, Iterable]) -> str:
    """Which judge prompt each system's recorded judgments were made with, as its import stated it."""
    from memeval.benchmarks.locomo.published.detailed import NOT_STATED

    by_prompt: dict[str, list[str]] = {}
    for name, rows in judgments.items():
        for prompt in sorted({stated_prompt(r) for r in rows}):
            by_prompt.setdefault(prompt, []).append(name)
    if not by_prompt:  # no system has a recorded J here (none on this key)
        return ""
    if set(by_prompt) <= {NOT_STATED}:
        return "Their judge prompt is not stated by the file (`--judge-prompt` states it at import)."
    if len(by_prompt) == 1:
        (prompt,) = by_prompt
        return f"Their judge prompt: {prompt}."
    return "Their judge prompt: " + "; ".join(
        f"{', '.join(names)}: {prompt}"
        for prompt, names in by_prompt.items()) + "."


def recorded_table(judgments: Mapping[str, Iterable], protocol: str, leniency: str | None = None) -> str:
    """report.md's J table of a recorded protocol: per category and overall the per-run mean ± the population
    std over runs, the majority vote, the run scores and who judged (`leniency`: that judge's measured
    false-accept rate, when known)."""
    headers = ["System", "judge (as recorded)", *[category_label(c) for c in QA_CATEGORIES],
               "overall (1–4)", "majority vote", "runs", "n"]
    body = []
    for name, rows in judgments.items():
        rows = [r for r in rows if r.category in QA_CATEGORIES]
        if not rows:  # none that count on this key (memeval.benchmarks.locomo.keyed.unjudged_changes; the note says why)
            body.append([name, f"{protocol} ({RECORDED})", *["–"] * len(QA_CATEGORIES), "– (not judged on this key)",
                         "–", "–", 0])
            continue
        stats = recorded_stats(rows)
        models = ", ".join(sorted({r.judge_model or "not recorded" for r in rows}))
        cells = [f"{_pct(s.mean)} ± {_pct(s.std)}" if (s := stats.by_category.get(c)) and s.mean is not None
                 else "–" for c in QA_CATEGORIES]
        body.append([name, f"{models}, {protocol} ({RECORDED})", *cells,
                     f"{_pct(stats.mean)} ± {_pct(stats.std)}", _pct(stats.majority),
                     " / ".join(_pct(s) for s in stats.run_scores) or "–", stats.judged])
    notes = [f"{RECORDED.capitalize()}: the judge labels the imported file's producer recorded; memeval sent no "
             f"judge request for them. {_prompt_sentence(judgments)}".rstrip() + " Each cell is the mean of "
             "the per-run accuracies (the EverMemOS framework's primary figure) ± their population standard "
             "deviation (np.std over runs); a category's run divides by all its questions, as the framework does. "
             "Majority vote: a question counts when more than half of its runs accepted it.", leniency]
    return with_notes(markdown_table(headers, body), notes)
