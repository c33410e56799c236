"""Rate-limit benchmark (run on demand: `.venv/bin/python benchmarks/bench_rate_limits.py [--scale 20]`).

The full-context Claude reader over all 1,986 LoCoMo questions through the real anthropic SDK against the fake
server holding Anthropic's tier-1 limits (50 requests, 30,000 input and 8,000 output tokens a minute; 2 s a reply;
tests/fake_limits.py). `--scale` compresses the minute and the latency by the same factor so the run takes minutes
(the limiter learns its rates from the headers, so it is the same arithmetic). Target: 0 error rows, 0 429-driven
failures, throughput close to the request limit (conv-41 and conv-43, ≈ 30,900 tokens each, only fit in pieces:
memeval/llm/prefix_pieces.py). Writes benchmarks/results/rate_limits.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.manifest import base_manifest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=20.0, help="how many times faster than real time")
    parser.add_argument("--questions", default="all")
    args = parser.parse_args()

    from memeval.benchmarks.locomo.task import LocomoRunConfig, run_locomo
    from memeval.data.paths import find_locomo
    from memeval.records import load_answers
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic
    from tests.fake_limits import TIER_1, TierLimits

    work = Path(tempfile.mkdtemp(prefix="bench-rate-"))
    with FakeAnthropic(responder=lambda body: "7 May 2023") as server:
        server.limits = TierLimits(TIER_1, window_s=60.0 / args.scale)
        server.latency_s = 2.0 / args.scale
        os.environ.update(ANTHROPIC_API_KEY=TEST_SECRET, ANTHROPIC_BASE_URL=server.url,
                          MEMEVAL_CACHE_DIR=str(work / "cache"))
        start = time.perf_counter()
        result = run_locomo(LocomoRunConfig(out=str(work / "run"), data=str(find_locomo()), questions=args.questions,
                                            systems=["full_context"], answerer="claude", progress=True))
        wall = time.perf_counter() - start
        rows = load_answers(work / "run" / "answers.jsonl")
        limits = server.limits
        pieces = sum(1 for body in server.received if body.get("max_tokens") == 1)
    errors = sum(1 for r in rows if r.error)
    calls = limits.admitted
    minutes = wall * args.scale / 60.0
    out = {
        "questions": len(rows), "error_rows": errors, "admitted": calls, "http_429": limits.limited,
        "cache_piece_requests": pieces, "max_counted_input_tokens": max(limits.uncached_seen),
        "wall_s": round(wall, 1), "scale": args.scale, "equivalent_real_minutes": round(minutes, 1),
        "requests_per_real_minute": round(calls / minutes, 1) if minutes else None,
        "request_limit_per_minute": TIER_1["requests"], "complete": result.complete,
        "manifest": base_manifest(),
    }
    target = ROOT / "benchmarks" / "results" / "rate_limits.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "manifest"}, indent=2))


if __name__ == "__main__":
    main()
