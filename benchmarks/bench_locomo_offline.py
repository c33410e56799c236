"""The offline LoCoMo run benchmark (run on demand: `.venv/bin/python benchmarks/bench_locomo_offline.py`).

All 10 conversations x 1,986 questions x four LLM-free systems with the extractive reader, through the CLI
exactly as a user runs it (fresh run directory, process start included). Records wall time, search p50/p95 per
system (beside Mem0's published 0.148 s / 0.200 s), F1 per system and evidence recall@k, to
benchmarks/results/locomo_offline.json, and prints markdown for the README.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.benchmarks.locomo.report import recall_curve_means  # noqa: E402
from memeval.manifest import base_manifest  # noqa: E402
from memeval.qa.answer_pass import load_answers  # noqa: E402

SYSTEMS = "full_context,rag_turns,observations,summaries"
COMMAND = ["memeval", "locomo", "run", "--conversations", "all", "--questions", "all", "--systems", SYSTEMS,
           "--answerer", "extractive", "--judge", "none", "--k", "10", "--no-progress", "--json"]


def main() -> None:
    out = Path(tempfile.mkdtemp(prefix="bench-locomo-")) / "run"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", *COMMAND, "--out", str(out)], check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - start
    rows = load_answers(out / "answers.jsonl")
    systems = {}
    for name in SYSTEMS.split(","):
        mine = [r for r in rows if r["system"] == name]
        qa = [r for r in mine if r["category"] in (1, 2, 3, 4)]
        search = np.array([r["latency_search_s"] for r in mine])
        recall = [r["evidence_recall"] for r in mine if r["evidence_recall"] is not None]
        curve = recall_curve_means(mine)
        systems[name] = {
            "questions": len(mine),
            "f1_overall_1_4": float(np.mean([r["f1"] for r in qa])),
            "evidence_recall_at_run_k": float(np.mean(recall)),
            "recall_at": {k: curve[k - 1] for k in (1, 5, 10, 20, 50)} if curve else None,
            "search_p50_s": float(np.percentile(search, 50)),
            "search_p95_s": float(np.percentile(search, 95)),
            "context_tokens_mean": float(np.mean([r["context_tokens"] for r in mine])),
        }
    results = {"manifest": base_manifest(command="bench_locomo_offline"), "command": " ".join(COMMAND),
               "wall_s": wall, "rows": len(rows), "systems": systems}
    path = ROOT / "benchmarks" / "results" / "locomo_offline.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wall {wall:.1f} s for {len(rows)} rows ({results['manifest']['git_sha']})\n")
    print("| system | F1 (1–4) ×100 | evidence recall (k=10) | recall@1 | recall@5 | recall@10 | recall@50 | "
          "search p50 | search p95 | context tokens/q |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, s in systems.items():
        r = s["recall_at"] or {}
        cells = [f"{100 * r[k]:.1f}" if k in r else "–" for k in (1, 5, 10, 50)]
        print(f"| {name} | {100 * s['f1_overall_1_4']:.2f} | {100 * s['evidence_recall_at_run_k']:.1f} | "
              + " | ".join(cells) + f" | {1e3 * s['search_p50_s']:.3f} ms | {1e3 * s['search_p95_s']:.3f} ms | "
              f"{s['context_tokens_mean']:.0f} |")


if __name__ == "__main__":
    main()
