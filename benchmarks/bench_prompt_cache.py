"""Prompt-caching benchmark (run on demand: `.venv/bin/python benchmarks/bench_prompt_cache.py`).

The LoCoMo paper's reader setting (`--answerer claude_official`) with full context over all 1,986 questions,
through `memeval locomo run` and the real SDK, against the loopback server of tests/fake_anthropic.py, which
enforces the API contract and reports prompt-cache usage the way the API does (a prefix ending at a
`cache_control` block is written once when it reaches the model's floor, then read; tokens = characters/4).
Records the dry-run estimate (no key: characters/4) and, from the run, the share of context tokens read from
the cache and the dollars at the profile's prices, beside the same run priced without caching. Writes
benchmarks/results/prompt_cache.json.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.benchmarks.locomo.task import LocomoRunConfig, estimate_run, run_locomo  # noqa: E402
from memeval.llm.profiles import cost_usd  # noqa: E402
from memeval.manifest import base_manifest  # noqa: E402
from tests.fake_anthropic import TEST_SECRET, FakeAnthropic  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMEVAL_CACHE_DIR"] = str(Path(tmp) / "cache")
        os.environ.pop("ANTHROPIC_API_KEY", None)
        config = LocomoRunConfig(out=str(Path(tmp) / "run"), conversations="all", questions="all",
                                 systems=["full_context"], answerer="claude_official", progress=False)
        estimate = estimate_run(config).stages["answers"].as_dict()
        with FakeAnthropic(responder=lambda body: "not mentioned") as server:
            os.environ["ANTHROPIC_API_KEY"] = TEST_SECRET
            os.environ["ANTHROPIC_BASE_URL"] = server.url
            start = time.perf_counter()
            result = run_locomo(config)
            seconds = time.perf_counter() - start
        llm = result.llm
        model = "claude-opus-4-6"
        context = llm["cache_creation_input_tokens"] + llm["cache_read_input_tokens"]
        total_in = llm["input_tokens"] + context
        uncached = cost_usd(model, total_in, llm["output_tokens"])
        out = {
            "questions": result.answer_counts["written"], "requests_sent": llm["requests_sent"],
            "rejected_by_server": len(server.rejected), "seconds": round(seconds, 1),
            "input_tokens_total": total_in, "cache_write_tokens": llm["cache_creation_input_tokens"],
            "cache_read_tokens": llm["cache_read_input_tokens"],
            "share_of_cached_context_read": round(llm["cache_read_input_tokens"] / context, 4) if context else 0,
            "share_of_all_input_read_from_cache": round(llm["cache_read_input_tokens"] / total_in, 4),
            "usd_with_caching": round(llm["cost_usd"], 2), "usd_without_caching": round(uncached, 2),
            "dry_run": {k: estimate[k] for k in ("to_send", "input_tokens_est", "cache_write_tokens_est",
                                                 "cache_read_tokens_est", "usd_est", "token_count")},
            "manifest": base_manifest(command="benchmarks/bench_prompt_cache.py"),
        }
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    (ROOT / "benchmarks" / "results" / "prompt_cache.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "manifest"}, indent=2))


if __name__ == "__main__":
    main()
