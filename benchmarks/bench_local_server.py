"""The real model server's speed on this machine (run on demand: `.venv/bin/python benchmarks/bench_local_server.py`).

Starts `memeval serve-local`'s server (llama.cpp, Gemma 3 270M Q4_K_M, CPU) and sends, through the project's own
client and the openai SDK, N short calls (16 output tokens) and N judge-sized ones (a ≈160-token prompt, 200
output tokens), one at a time, none cached. Writes benchmarks/results/local_server.json: calls a second and output
tokens a second of each kind, with the machine's load average at the start (the figure moves with it).
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

JUDGE_PROMPT = ("Question: When did Caroline go to the LGBTQ support group?\nGold answer: 7 May 2023\n"
                "Generated answer: She went on the seventh of May, 2023, the day before her talk.\n" * 4
                + "Is the generated answer correct? Reply CORRECT or WRONG with one sentence of reasons.")


def timed(client, requests) -> dict:
    start = time.perf_counter()
    outputs = 0
    for request in requests:
        try:
            outputs += client.complete(request).output_tokens
        except Exception as exc:  # noqa: BLE001 — a cut reply still took its time and tokens
            outputs += getattr(exc, "output_tokens", 0)
    seconds = time.perf_counter() - start
    return {"calls": len(requests), "seconds": round(seconds, 1), "calls_per_s": round(len(requests) / seconds, 3),
            "output_tokens_per_s": round(client.stats.output_tokens / seconds, 1) if seconds else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()

    from memeval.llm import LLMRequest
    from memeval.llm.client import make_client
    from memeval.llm.local_server import MODEL_ID, LocalServer

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, LocalServer(n_ctx=4096) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        results = {}
        for name, prompt, cap in (("short", "Say hello to {i}.", 16), ("judge_sized", JUDGE_PROMPT + " ({i})", 200)):
            client = make_client("local", cache_dir=str(Path(tmp) / name), models={"answer": MODEL_ID})
            requests = [LLMRequest(model=MODEL_ID, messages=(("user", prompt.format(i=i)),), max_tokens=cap,
                                   temperature=0.0, template_version="bench", role="answer")
                        for i in range(args.calls)]
            results[name] = timed(client, requests)
    out = {"model": MODEL_ID, "load_average_at_start": round(load, 2), "cpu_count": os.cpu_count(), **results,
           "manifest": base_manifest(command="benchmarks/bench_local_server.py")}
    target = ROOT / "benchmarks" / "results" / "local_server.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "manifest"}, indent=2))


if __name__ == "__main__":
    main()
