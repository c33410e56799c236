"""The viewer at 20,000 answers (run on demand: `.venv/bin/python benchmarks/bench_viewer.py [--rows N]`).

Synthesises a `locomo run` directory in the run format from the real LoCoMo questions (every question of the
data, under as many systems as it takes to reach N rows: full context, one-turn retrieval, multi-turn
observations and whole-session summaries, as the built-in systems store them) with a graded judge of 10 runs and
an explanation per run on every answer — the heaviest page a full reproduce run makes. Then times `write_viewer`
(median of 3; and how much of it is reading the JSONL records), the page's size (and its JSON's before gzip), and
in headless Chromium the page load and the time from a keystroke in the search box (or a system chosen) to the next
painted frame. Writes benchmarks/results/viewer.json and prints the numbers.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("full_context", "rag_turns", "observations", "summaries")
WORDS = ("the answer names the same date as the gold", "the response gives a different place", "it matches the "
         "gold in substance", "only part of the list is given", "the answer is vague about when",
         "no relevant detail is given", "the year is right but the month is wrong", "it adds a detail the gold lacks")


def synthetic_run(out: Path, data: Path, rows: int = 20_000, judged: bool = True, seed: int = 0) -> dict:
    """A `locomo run` directory of `rows` answers over the LoCoMo questions in `data`; returns what it holds
    (systems, the rows' system and prediction per row) so a test can count what a filter should show."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.records import AnswerRow, JudgmentRow
    from memeval.scoring.f1 import locomo_f1

    rng = random.Random(seed)
    conversations = load_locomo(data)
    questions = [(c, qa) for c in conversations for qa in c.qa]
    n_systems = -(-rows // len(questions))
    systems = [f"s{n:02d}_{KINDS[n % len(KINDS)]}" for n in range(n_systems)]
    out.mkdir(parents=True, exist_ok=True)
    answers, judgments, written = [], [], []
    for system_number, system in enumerate(systems):
        kind = KINDS[system_number % len(KINDS)]
        for c, qa in questions:
            if len(written) == rows:
                break
            turns = c.turns
            if kind == "full_context":
                retrieved = [[t.dia_id] for t in turns]
            elif kind == "rag_turns":
                retrieved = [[t.dia_id] for t in rng.sample(turns, 10)]
            elif kind == "observations":
                retrieved = [[t.dia_id for t in rng.sample(turns, rng.randint(1, 3))] for _ in range(10)]
            else:
                sessions = rng.sample(c.sessions, min(10, len(c.sessions)))
                retrieved = [[t.dia_id for t in s.turns] for s in sessions]
            if kind != "full_context" and qa.evidence_ids and rng.random() < 0.5:
                retrieved[rng.randrange(min(10, len(retrieved)))] = [qa.evidence_ids[0]]
            prediction = qa.answer if qa.answer and rng.random() < 0.25 else rng.choice(turns).text
            given = {i for item in retrieved for i in item}
            recall = (sum(1 for e in qa.evidence_ids if e in given) / len(qa.evidence_ids)
                      if qa.evidence_ids else None)
            row = AnswerRow(sample_id=qa.sample_id, conversation_id=c.sample_id, category=qa.category,
                            question=qa.question, gold=qa.answer, prediction=prediction, system=system,
                            answerer="claude-sonnet-4-6", k=None if kind == "full_context" else 10,
                            f1=locomo_f1(prediction, qa.answer, qa.category), evidence_ids=list(qa.evidence_ids),
                            evidence_recall=recall, recall_curve=None, retrieved_ids=retrieved,
                            latency_search_s=rng.uniform(0.0001, 0.01), latency_total_s=rng.uniform(0.5, 3.0),
                            context_tokens=rng.randint(200, 25_000), error=None)
            answers.append(row.to_row())
            written.append((system, prediction, qa.question, qa.answer or "", qa.category))
            if judged:
                scores = [float(rng.choice((0, 20, 50, 80, 100))) for _ in range(10)]
                explanations = [f"{rng.choice(WORDS).capitalize()}; {rng.choice(WORDS)} ({rng.randint(1, 999)})."
                                for _ in scores]
                mean = sum(scores) / len(scores)
                judgments.append(JudgmentRow(
                    sample_id=qa.sample_id, conversation_id=c.sample_id, category=qa.category, system=system,
                    protocol="graded", prompt_version="graded-v1", judge_model="claude-sonnet-4-6", scores=scores,
                    mean=mean, std=statistics.stdev(scores), run_count=10, warning=None, errors=[],
                    explanations=explanations).to_row())
    (out / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    if judged:
        (out / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in judgments))
    judge = {"graded": {"model": "claude-sonnet-4-6", "provider": "anthropic", "runs": 10,
                        "temperature_sent": 0.5, "prompt_version": "graded-v1"}} if judged else {}
    manifest = {"command": "locomo run", "complete": True, "created_utc": "2026-01-01T00:00:00+00:00",
                "git_sha": "0123456789abcdef0123456789abcdef01234567",
                "command_line": f"memeval locomo run --systems {','.join(systems)} --reader claude --judge graded "
                                f"--out {out}",
                "data": {"path": str(data)}, "systems": [{"label": s, "name": s, "params": {}} for s in systems],
                "models": {"answerer": "claude-sonnet-4-6", "judge": "claude-sonnet-4-6" if judged else None},
                "identity": {"kind": "locomo run", "fixed": {"reader": "claude", "k": 10, "answer_max_tokens": 64,
                                                             "answer": {"model": "claude-sonnet-4-6",
                                                                        "temperature_sent": 0.0}},
                             "additive": {"systems": {s: {"name": s, "params": {}} for s in systems},
                                          "judges": judge}}}
    (out / "manifest.json").write_text(json.dumps(manifest))
    return {"systems": systems, "rows": written}


def browser_timings(page_path: Path, chromium: str) -> dict:
    """Load time, and per keystroke the time from the input event to the next painted frame."""
    from playwright.sync_api import sync_playwright

    keystroke = """async ([id, value]) => {
        const box = document.getElementById(id), t0 = performance.now();
        box.value = value; box.dispatchEvent(new Event("input", {bubbles: true}));
        await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0; }"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto(page_path.as_uri())
        page.wait_for_function("document.getElementById('count').textContent.length > 0")
        load = time.perf_counter() - start
        typed = [page.evaluate(keystroke, ["q", "tattoo"[:n]]) for n in range(1, 7)]
        cleared = page.evaluate(keystroke, ["q", ""])
        system = page.evaluate(keystroke, ["system", "1"])
        count = page.locator("#count").inner_text()
        browser.close()
    return {"load_s": round(load, 3), "keystroke_ms": [round(t, 1) for t in typed],
            "keystroke_ms_max": round(max(typed), 1), "clear_ms": round(cleared, 1),
            "system_select_ms": round(system, 1), "count_after_system_select": count}


def main() -> None:
    from memeval.data.paths import find_locomo
    from memeval.manifest import base_manifest
    from memeval.records import load_answers, load_judgments
    from memeval.viewer import page_data, page_json, write_viewer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    try:
        run = work / "run"
        synthetic_run(run, find_locomo(), rows=args.rows)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            page = write_viewer(run)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        load_answers(run / "answers.jsonl"), load_judgments(run / "judgments.jsonl")
        reading = time.perf_counter() - start
        result = {"manifest": base_manifest(command="benchmarks/bench_viewer.py"), "rows": args.rows,
                  "answers_jsonl_bytes": (run / "answers.jsonl").stat().st_size,
                  "judgments_jsonl_bytes": (run / "judgments.jsonl").stat().st_size,
                  "write_viewer_s": [round(t, 2) for t in times],
                  "write_viewer_median_s": round(statistics.median(times), 2),
                  "of_which_reading_the_jsonl_records_s": round(reading, 2),
                  "json_bytes": len(page_json(page_data(run))), "page_bytes": page.stat().st_size}
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        result["browser"] = browser_timings(page, chromium) if chromium else "no chromium on this machine"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = ROOT / "benchmarks" / "results" / "viewer.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "manifest"}, indent=2))


if __name__ == "__main__":
    main()
