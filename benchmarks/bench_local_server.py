"""The keyless route's speed on this machine, per shipped model (run on demand:
`.venv/bin/python benchmarks/bench_local_server.py [--models smollm2-135m,gemma3-270m] [--no-end-to-end]`).

For each model, memeval's own server (LocalServer, the model's default context) answers, through memeval's own
client (`--llm local`, a fresh cache per measurement, one call at a time as llama-cpp-python's server takes them):
- reader calls: the `--reader claude` prompts of conv-26's prototype questions over rag_turns' retrieval, built by
  memeval's own code (retrieve, answer_requests), as `memeval locomo run` builds them;
- judge calls: the binary judge's requests (memeval.scoring.judge.binary_request, this project's prompt with its
  json_schema response format, the default) on those replies;
each with calls a second, output tokens a second and the share kept (reader: not cut, not empty) or parsed (judge:
a label under the binary rule). Then, for the default model, the README's keyless commands end to end as a user
runs them (`memeval locomo run --llm local ...`, binary then graded, a fresh MEMEVAL_CACHE_DIR and --out), wall
time each. Then an estimate for a whole-LoCoMo run per built-in system: reader calls (1,986), extraction calls (as
the dry run plans them: memory_graph's and Mem0's; the others ingest without a model) and binary judge calls
(1,540, categories 1-4) times the measured seconds a call, or the context the system needs when its largest
prompt does not fit the server (docs/context-needs.md). Writes benchmarks/results/local_server.json with the load
average before and after each measurement (two cores shared: the figures move with it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.manifest import base_manifest  # noqa: E402

MODELS = ("smollm2-135m", "gemma3-270m")
SYSTEMS = ("no_memory", "rag_turns", "rag_dense", "observations", "summaries", "full_context", "memory_graph", "mem0")
README_RUN = ("locomo run --llm local --conversations conv-26 --questions prototype --systems rag_turns "
              "--reader claude --answer-model {m} --judge-model {m}")
JUDGES = {"binary": "--judge binary", "graded": "--judge graded --judge-runs 1"}


def load() -> float:
    return round(os.getloadavg()[0], 2)


def timed(client, requests) -> tuple[dict, list]:
    """Send one at a time; (figures, each reply's text or None when it was not kept)."""
    from memeval.llm.errors import LLMError

    start, before = time.perf_counter(), load()
    texts = []
    for request in requests:
        try:
            texts.append(client.complete(request).text)
        except LLMError:  # a cut or empty reply: its time and tokens are spent, it is not kept
            texts.append(None)
    seconds = time.perf_counter() - start
    return {"calls": len(requests), "seconds": round(seconds, 1), "calls_per_s": round(len(requests) / seconds, 3),
            "s_per_call": round(seconds / len(requests), 2),
            "output_tokens_per_s": round(client.stats.output_tokens / seconds, 1),
            "load_average_before": before, "load_average_after": load()}, texts


def calls(server, model: str, tmp: Path) -> dict:
    """Reader then judge calls against `server`, through memeval's client."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.llm.client import make_client
    from memeval.llm.settings import ModelSettings
    from memeval.memory.registry import parse_system
    from memeval.qa.answer_pass import AnswerSettings, answer_requests, retrieve
    from memeval.qa.selection import select_questions
    from memeval.scoring.judge import binary_request, parse_binary

    os.environ["OPENAI_BASE_URL"] = server.base_url
    conversation = next(c for c in load_locomo(find_locomo(None)) if c.sample_id == "conv-26")
    questions = select_questions(conversation, "prototype")

    def client(name):
        return make_client("local", cache_dir=str(tmp / f"{model}-{name}"), settings=ModelSettings("local", models={"answer": model, "judge": model}))

    reader = client("reader")
    searched = retrieve(parse_system("rag_turns"), conversation, questions, AnswerSettings("claude", 10), reader)[1]
    figures, replies = timed(reader, answer_requests(searched, conversation, "claude"))
    figures["kept"] = sum(r is not None for r in replies)
    judge = client("judge")
    judged = [(qa, reply if reply is not None else "") for (qa, *_), reply in zip(searched, replies, strict=True)
              if qa.category != 5]
    judge_figures, labels = timed(judge, [binary_request(qa.question, str(qa.answer), reply) for qa, reply in judged])
    judge_figures["parsed"] = sum(t is not None and parse_binary(t)[1] is None for t in labels)
    judge_figures["correct"] = sum(t is not None and parse_binary(t) == (1.0, None) for t in labels)
    return {"reader": figures, "judge_binary": judge_figures}


def end_to_end(server, model: str, tmp: Path) -> dict:
    """The README's keyless commands as a user runs them: binary, then graded on the same --out."""
    out, env = tmp / "keyless", {**os.environ, "OPENAI_BASE_URL": server.base_url,
                                 "MEMEVAL_CACHE_DIR": str(tmp / "e2e-cache")}
    memeval = str(Path(sys.executable).with_name("memeval"))
    found = {}
    for judge, flags in JUDGES.items():
        command = [memeval, *README_RUN.format(m=model).split(), *flags.split(), "--out", str(out)]
        start, before = time.perf_counter(), load()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        found[judge] = {"command": "memeval " + " ".join(command[1:-1]) + " runs/keyless", "exit": done.returncode,
                        "seconds": round(time.perf_counter() - start, 1), "load_average_before": before,
                        "load_average_after": load()}
        if done.returncode:
            found[judge]["stderr_tail"] = done.stderr[-600:]
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    kept = [a for a in answers if a["error"] is None]
    scored = [a["f1"] for a in kept if a["category"] in (1, 2, 3, 4)]
    for judge in JUDGES:
        rows = [j for j in judgments if j["protocol"] == judge]
        eligible = [a for a in kept if judge == "graded" or a["category"] != 5]
        found[judge].update(parsed=len(rows), of=len(eligible),
                            j=round(sum(j["mean"] for j in rows) / len(rows), 2) if rows else None)
    found["answers"] = {"questions": len(answers), "kept": len(kept),
                        "f1_x100_categories_1_4": round(100 * sum(scored) / len(scored), 2) if scored else None}
    return found


def context_needs(model: str, conversations) -> dict[str, int]:
    """Each system's largest LoCoMo prompt plus its reply cap with `model`'s own tokenizer (what
    docs/context-needs.md tabulates, counted here by benchmarks/context_needs.py's code, not copied from it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from context_needs import Tokenizer, locomo_needs

    from memeval.llm.local_models import resolve

    tokenizer = Tokenizer(resolve(model).path)
    return {name: needs[0][0] for name, _, needs in locomo_needs(list(SYSTEMS), conversations, [tokenizer])}


def whole_locomo(model: str, n_ctx: int, measured: dict) -> dict:
    """Per built-in system: the calls a whole-LoCoMo run sends and the hours they take at the measured rates, or
    what it needs when its largest prompt does not fit."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo.task import build_system
    from memeval.data.paths import find_locomo
    from memeval.llm.client import make_client
    from memeval.memory.registry import parse_system

    conversations = load_locomo(find_locomo(None))
    questions = sum(len(c.qa) for c in conversations)
    judged = sum(qa.category != 5 for c in conversations for qa in c.qa)
    planner_client = make_client("replay", cache_dir=None)
    reader_s, judge_s = measured["reader"]["s_per_call"], measured["judge_binary"]["s_per_call"]
    needs = context_needs(model, conversations)
    found = {}
    for name in SYSTEMS:
        planner = getattr(build_system(parse_system(name), client=planner_client), "planned_requests", None)
        extraction = sum(len(planner(c)) for c in conversations) if planner else 0
        need = needs[name]
        row = {"reader_calls": questions, "extraction_calls": extraction, "judge_calls": judged, "needs_tokens": need}
        if need > n_ctx:
            row["estimate"] = f"does not fit the {n_ctx:,}-token context (needs {need:,})"
        else:
            seconds = questions * reader_s + extraction * judge_s + judged * judge_s
            row["hours"] = round(seconds / 3600, 1)
            row["estimate"] = f"{seconds / 3600:.1f} h"
        found[name] = row
    return found


def machine() -> dict:
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:")), None)
    return {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "mem_total_gib": round(int(memory) / 2**20, 1) if memory else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--no-end-to-end", action="store_true", help="skip the README's commands")
    args = parser.parse_args()
    models = args.models.split(",")
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        print(f"memeval: error: --models: {unknown[0]!r} is not one of {', '.join(MODELS)}", file=sys.stderr)
        return 2

    from memeval.llm.local_models import DEFAULT_MODEL
    from memeval.llm.local_server import LocalServer

    out = {"load_average_at_start": load(), "machine": machine(), "models_requested": models, "models": {}}
    for model in models:
        with tempfile.TemporaryDirectory() as tmp, LocalServer(model=model) as server:
            figures = {"n_ctx": server.n_ctx, "n_ctx_reason": server.n_ctx_reason, **calls(server, model, Path(tmp))}
            if model == DEFAULT_MODEL and not args.no_end_to_end:
                figures["readme_keyless"] = end_to_end(server, model, Path(tmp))
            figures["whole_locomo"] = whole_locomo(model, server.n_ctx, figures)
        out["models"][model] = figures
        print(json.dumps({model: figures}, indent=2), flush=True)
        write(out)  # after each model: an interrupted run keeps the models it finished
    return 0


def write(out: dict) -> None:
    out = {**out, "load_average_at_end": load(),
           "manifest": base_manifest(command="benchmarks/bench_local_server.py " + " ".join(sys.argv[1:]))}
    (ROOT / "benchmarks" / "results" / "local_server.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
