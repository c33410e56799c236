"""What the Mem0 library sends to ingest one LoCoMo conversation and answer its questions' searches, counted on the
wire (run on demand: `.venv/bin/python benchmarks/bench_mem0_calls.py [--conversation conv-26]`).

The `mem0` system runs against the contract fake of OpenAI's API (tests/fake_openai.py; gpt-4o-mini and
text-embedding-3-small, as Mem0's setting), whose chat replies play Mem0's extractor: one memory per message of the
speaker's own in the new messages. So the number of calls, the prompts' characters and the embedding inputs are
Mem0's own, given memories of that kind; the tokens are the fake's count (4 characters a token), not tiktoken's.
Writes benchmarks/results/mem0_calls.json and prints a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def extractor(body: dict) -> str:
    user = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
    if "## New Messages" not in user:
        return "ok"
    new = user.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
    lines = [line.split(": ", 1)[1] for line in new.strip().splitlines() if line.startswith("user: ")]
    return json.dumps({"memory": [{"text": text} for text in lines]})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="conv-26")
    args = parser.parse_args()

    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.llm.client import make_client
    from memeval.llm.settings import ModelSettings
    from memeval.memory.mem0_system import Mem0System, add_calls
    from tests.fake_openai import TEST_KEY, FakeOpenAI

    conversation = next(c for c in load_locomo(find_locomo(None)) if c.sample_id == args.conversation)
    with FakeOpenAI(responder=extractor) as server, tempfile.TemporaryDirectory() as cache:
        os.environ["OPENAI_API_KEY"], os.environ["OPENAI_BASE_URL"] = TEST_KEY, server.url
        client = make_client("openai", cache_dir=cache, settings=ModelSettings("openai", models={"extract": "gpt-4o-mini",
                                                                "embed": "text-embedding-3-small"}))
        system = Mem0System()
        system.client = client
        start = time.perf_counter()
        system.ingest(conversation)
        ingest_s = time.perf_counter() - start
        chat = list(server.received)
        embedded = list(server.embedded)
        start = time.perf_counter()
        for qa in conversation.qa:
            system.search(qa.question, 10)
        search_s = time.perf_counter() - start
        search_embeds = server.embedded[len(embedded):]
        memories = len(system.native_store())
    prompt_chars = [sum(len(m["content"]) for m in body["messages"]) for body in chat]
    inputs = [body["input"] if isinstance(body["input"], list) else [body["input"]] for body in embedded]
    result = {
        "conversation": conversation.sample_id,
        "turns": sum(len(s.turns) for s in conversation.sessions),
        "sessions": len(conversation.sessions),
        "add_calls": len(add_calls(conversation)),
        "ingest": {
            "chat_requests": len(chat),
            "prompt_chars_total": sum(prompt_chars),
            "prompt_chars_median": statistics.median(prompt_chars),
            "system_prompt_chars": len(chat[0]["messages"][0]["content"]),
            "prompt_tokens_at_4_chars": sum(prompt_chars) // 4,
            "embedding_requests": len(embedded),
            "embedding_inputs": sum(len(i) for i in inputs),
            "embedding_chars": sum(len(t) for i in inputs for t in i),
            "memories_written": memories,
            "seconds_against_the_fake": round(ingest_s, 1),
        },
        "search": {"questions": len(conversation.qa), "embedding_requests": len(search_embeds),
                   "chat_requests": 0, "seconds": round(search_s, 1)},
        "note": "replies from the contract fake (one memory per own message); tokens at 4 characters a token",
    }
    out = ROOT / "benchmarks" / "results" / "mem0_calls.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
