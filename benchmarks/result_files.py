"""Every result file of every `memeval` command, digested so two source trees can be compared file by file.

Usage:
  python benchmarks/result_files.py run --tree DIR --out OUT [--data LOCOMO] [--skip-reproduce]
  python benchmarks/result_files.py digest OUT > digest.json
  python benchmarks/result_files.py compare A.json B.json

`run` types a fixed list of commands as a user would, offline, from the source tree DIR
(`PYTHONPATH=DIR python -m memeval ...`, cwd a fresh temporary directory, no provider key in the environment,
HOME, the LLM cache, protocols, audit and calibration directories all inside that temporary directory), each into
OUT/<step>/ with its stdout, stderr and exit code beside it (`_stdout.txt`, `_stderr.txt`, `_exit.txt`). The judged
steps talk to the repository's fake OpenAI server (DIR/tests/fake_openai.py) on 127.0.0.1:18767 with a
scripted, deterministic responder, one call at a time (`--max-concurrency 1`: the fake simulates prompt caching,
so with concurrent calls which reply reads the cached prefix depends on arrival order). The script imports
nothing of memeval: it only runs the CLI and reads files, so it runs unchanged on any tree. OUT/_meta/ (timings, the tree's commit, which memeval was imported) is not digested.

`digest` hashes every file under OUT (but OUT/_meta/) with SHA-256 after normalising only what legitimately
differs between two runs of the same code on the same inputs. Each rule and what it strips:

- every string (JSON values, text, stdout): the OUT directory, the tree DIR and the temporary working directory
  (as recorded in OUT/_meta/run.json, also JSON-escaped, and OUT relative to the tree) become <OUT>, <TREE>,
  <WORK>; `127.0.0.1:PORT` and `localhost:PORT` lose the port; the tree's commit (7 to 40 hex digits starting
  with the first 7 of any commit HEAD pointed at during the run, checked before each step, as others may commit
  meanwhile), with its dirty mark ("+" or " with uncommitted changes (+)"), becomes <GIT>;
  ISO timestamps (date and time) and compact `YYYYMMDDTHHMMSSZ` stamps become <T>; the UTC dates the run spanned
  (`YYYY-MM-DD`) become <DATE>; "memeval X.Y" / "python X.Y.Z" become "<VERSION>".
- JSON, JSONL, notebooks and a stdout that is JSON, by key name (scalars only): `created_utc` and any `*_utc`,
  `latency_*_s`, `*runtime_s`, `wall_time_s`, `elapsed*`, `duration*`, `*seconds` (times, durations) -> <T>; `commit`,
  `git_sha` -> <GIT>; `python`, `platform`, `sdk_version` -> <VERSION>; `hostname`, `pid` -> <HOST>;
  `first_request_id`, `request_id` (ids the server assigns) -> <REQUEST-ID>; `bytes` in `cache stats` output (the
  SQLite file's size) -> <BYTES>; a list under `ms` (the viewer's per-answer latencies) -> <T> per item. Key
  order is kept. JSONL rows keep their order, except a sweep's `raw_results.jsonl`, whose rows are sorted (its
  parallel jobs append them in completion order).
- Notebooks (.ipynb) also drop `metadata.papermill`, `metadata.language_info.version` and each cell's
  `metadata.execution` / `metadata.papermill` (papermill's start/end times and durations); each output's text
  (stream, text/plain, text/markdown, text/html) gets the text rules below. Embedded PNGs are kept as bytes.
- Text, Markdown, CSV, HTML and stdout/stderr also: elapsed phrases ("1.2 s", "12 ms", "3 min", "40 sec") ->
  <DURATION>; runs of spaces become one and the dashes of a Markdown rule row one (the padding a placeholder of
  another width, or a dirty "+", shifts in a whole aligned table); in a Markdown table, the cells under a header
  naming a timing ("(ms)", p50, p95, latency, "(s)" or "(s,", elapsed, runtime, "time to") -> <T>, except rows
  of published figures, and the same columns of HTML tables (nbconvert's pages); the line "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." (Jupyter's kernel
  shutdown race, printed by some runs of `reproduce` and not others) is dropped.
- HTML: the viewer's embedded `application/gzip+base64` data is decoded and normalised as JSON (compressed, one
  latency changes every byte after it).
- Parquet: compared as its schema and rows (pyarrow), normalised as JSON; the writer's version metadata is not read.
- PDF: /CreationDate and /ModDate; SVG: `<dc:date>`. PNG and everything else: bytes as written.
Nothing else is stripped; any other difference is a finding.

`compare` lists files whose digests differ or that exist on one side only; exit 1 if any.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PYTHON = "/work/main/.venv/bin/python"
DEFAULT_DATA = "/work/shared/data/locomo"
FAKE_PORT = 18767  # fixed, so the base URL inside each request's cache key is the same in every run

TIME_KEY = re.compile(r"^(\w*_utc|latency_\w+_s|\w*runtime_s|wall_time_s|elapsed\w*|duration\w*|\w*seconds)$")
GIT_KEYS = {"commit", "git_sha"}
VERSION_KEYS = {"python", "platform", "sdk_version"}
HOST_KEYS = {"hostname", "pid"}
REQUEST_KEYS = {"first_request_id", "request_id"}
TIMING_HEADER = re.compile(r"\(ms\)|\bp50\b|\bp95\b|\blatency\b|\(s[,)]|\belapsed\b|\bruntime\b|\btime to\b", re.I)
KERNEL_NOISE = re.compile(r"^\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.\n", re.M)
DURATION = re.compile(r"(?<![\w.])\d+(\.\d+)?\s?(s|sec|seconds|ms|min)(?![\w])")
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
COMPACT_UTC = re.compile(r"\b\d{8}T\d{6}Z?\b")
PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")
VERSION_TEXT = re.compile(r"\b(memeval|Python|python) v?\d+\.\d+(\.\d+)?[\w.+-]*")
PADDED = re.compile(r" {2,}")
RULE_ROW = re.compile(r"^\|[-:| ]+\|$", re.M)


@dataclass
class Step:
    name: str
    argv: list[str]
    prepare: Callable[[], None] | None = None


# ---- writing the inputs -------------------------------------------------------------------------------------------

def lme_instance(qid: str, qtype: str, where: str, evidence: bool = True) -> dict:
    """One LongMemEval instance in the release's shape (as tests/test_longmemeval_data.py writes them)."""
    return {"question_id": qid, "question_type": qtype, "question": f"Where did I move, case {qid}?", "answer": where,
            "question_date": "2023/06/01 (Thu) 10:00", "haystack_session_ids": [f"{qid}_s1", f"answer_{qid}_s2"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 09:00"],
            "haystack_sessions": [
                [{"role": "user", "content": "Any hiking tips for the foothills?"},
                 {"role": "assistant", "content": "Start early and carry water."}],
                [{"role": "user", "content": f"I just moved to {where}!", "has_answer": evidence},
                 {"role": "assistant", "content": "Congratulations on the move."}]],
            "answer_session_ids": [f"answer_{qid}_s2"] if evidence else []}


def write_longmemeval(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [lme_instance("q1", "single-session-user", "Denver"), lme_instance("q2", "multi-session", "Lisbon"),
            lme_instance("q3", "knowledge-update", "Oslo"), lme_instance("q4", "temporal-reasoning", "Kyoto"),
            lme_instance("q5_abs", "single-session-user", "Quito", evidence=False)]
    path.write_text(json.dumps(rows, indent=1))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_imports(run_dir: Path, data: Path, into: Path) -> None:
    """Each import format, written from a native run's answers.jsonl (nothing invented) and the LoCoMo file."""
    into.mkdir(parents=True, exist_ok=True)
    rows = [r for r in read_jsonl(run_dir / "answers.jsonl") if r.get("system") == "rag_turns"]
    fixed = [{k: (0.25 if k.startswith("latency") else v) for k, v in r.items()} for r in rows]
    (into / "answers.memeval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in fixed))
    (into / "answers.jsonl").write_text("".join(json.dumps(
        {"question": r["question"], "prediction": r["prediction"], "conversation_id": r["conversation_id"],
         "latency_s": 0.5, "retrieved_ids": r.get("retrieved_ids", [])}) + "\n" for r in rows))
    mem0: dict[str, list] = {}
    for r in rows:
        mem0.setdefault("0", []).append({"question": r["question"], "answer": r["gold"], "response": r["prediction"],
                                         "category": r["category"], "speaker_1_memory_time": 0.1,
                                         "speaker_2_memory_time": 0.1, "response_time": 0.3})
    (into / "mem0.json").write_text(json.dumps(mem0))
    conversations = sorted((data / "locomo10_v2").glob("*.json"), key=lambda p: int(p.stem))
    qa = json.loads(conversations[0].read_text())["qa"]
    items = []
    for n, q in enumerate(qa):
        if q.get("category") in (1, 2, 3, 4) and len(items) < 6:
            items.append({"question_id": f"locomo_0_qa{n}", "question": q["question"], "golden_answer": q["answer"],
                          "generated_answer": f"answer {n}", "category": str(q["category"]),
                          "llm_judgments": {"judgment_1": n % 2 == 0, "judgment_2": True, "judgment_3": n % 3 == 0}})
    (into / "evermemos.json").write_text(json.dumps({"total_questions": len(items), "correct": 0, "accuracy": 0.0,
                                                     "detailed_results": {"locomo_exp_user_0": items}}))


FAKE_LAUNCHER = '''
import hashlib, json, sys
from tests.fake_openai import FakeOpenAI


def reply_for(schema, seed):
    out = {}
    for key, spec in schema.get("properties", {}).items():
        kind = spec.get("type")
        if key == "label":
            out[key] = "CORRECT" if seed % 3 else "WRONG"
        elif kind == "integer" or kind == "number":
            out[key] = seed % 101
        elif kind == "array":
            out[key] = []
        elif kind == "boolean":
            out[key] = bool(seed % 2)
        elif kind == "object":
            out[key] = reply_for(spec, seed)
        else:
            out[key] = "scripted"
    return out


def respond(body):
    text = "\\n".join(str(m.get("content")) for m in body.get("messages", []))
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(reply_for(fmt["json_schema"].get("schema", {}), seed))
    if '"label"' in text or "CORRECT" in text:
        return json.dumps({"reasoning": "scripted", "label": "CORRECT" if seed % 3 else "WRONG"})
    if '"score"' in text:
        return json.dumps({"score": seed % 101, "explanation": "scripted"})
    if "yes or no" in text.lower() or "answer yes" in text.lower():
        return "yes" if seed % 2 else "no"
    return f"scripted answer {seed % 1000}"


class Fixed(FakeOpenAI):
    port = int(sys.argv[1])


with Fixed(responder=respond) as server:
    print(server.url, flush=True)
    sys.stdin.read()
'''


# ---- the commands -------------------------------------------------------------------------------------------------

def plan(out: Path, data: Path, work: Path, tree: Path, reproduce: bool) -> list[Step]:
    lme = work / "inputs" / "lme.json"
    imports = work / "inputs" / "imports"
    run1 = out / "locomo_run_extractive" / "run"
    sample = out / "locomo_run_sample" / "run"
    judged = out / "locomo_run_openai_binary" / "run"
    graded = out / "locomo_run_openai_graded" / "run"
    pkg = out / "memaudit_generate" / "base-7.json"
    natural = out / "natural_build_locomo" / "natural"
    graph = out / "graph80_generate" / "graph80"
    d = str(data)
    s = [
        Step("version", ["--version"]),
        Step("help", ["--help"]),
        Step("data_stats_locomo", ["data", "stats", "--dataset", "locomo", d, "--json"]),
        Step("data_stats_locomo_text", ["data", "stats", "--dataset", "locomo", d]),
        Step("data_stats_longmemeval", ["data", "stats", "--dataset", "longmemeval", str(lme), "--json"],
             prepare=lambda: write_longmemeval(lme)),
        Step("data_status", ["data", "status"]),
        Step("data_sample_longmemeval", ["data", "sample", "longmemeval", "--out",
                                         str(out / "data_sample_longmemeval" / "sample")]),
        Step("locomo_run_extractive", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                       "prototype", "--systems",
                                       "full_context,rag_turns,observations,summaries,memory_graph,no_memory",
                                       "--out", str(run1), "--no-progress"]),
        Step("locomo_run_extractive_json", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                            "prototype", "--systems", "rag_turns", "--out",
                                            str(out / "locomo_run_extractive_json" / "run"), "--no-progress",
                                            "--json"]),
        Step("locomo_run_sample", ["locomo", "run", "--data", d, "--conversations", "conv-26,conv-30", "--questions",
                                   "sample:12", "--question-seed", "3", "--systems", "rag_turns,full_context",
                                   "--out", str(sample), "--no-progress"]),
        Step("locomo_run_key_corrected", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                          "prototype", "--key", "corrected", "--out",
                                          str(out / "locomo_run_key_corrected" / "run"), "--no-progress"]),
        Step("locomo_run_dry_run", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                    "prototype", "--systems", "rag_turns", "--reader", "claude", "--judge", "graded",
                                    "--llm", "replay", "--dry-run", "--out",
                                    str(out / "locomo_run_dry_run" / "run")]),
        Step("locomo_import_memeval", ["locomo", "import", str(imports / "answers.memeval.jsonl"), "--format",
                                       "memeval", "--system", "outside", "--from-system", "rag_turns", "--data", d,
                                       "--out", str(out / "locomo_import_memeval" / "run"), "--json"],
             prepare=lambda: write_imports(run1, data, imports)),
        Step("locomo_import_mem0", ["locomo", "import", str(imports / "mem0.json"), "--format", "mem0", "--system",
                                    "mem0-harness", "--data", d, "--out",
                                    str(out / "locomo_import_mem0" / "run")]),
        Step("locomo_import_jsonl", ["locomo", "import", str(imports / "answers.jsonl"), "--format", "jsonl",
                                     "--system", "outside-jsonl", "--data", d, "--out",
                                     str(out / "locomo_import_jsonl" / "run")]),
        Step("locomo_import_evermemos", ["locomo", "import", str(imports / "evermemos.json"), "--format", "evermemos",
                                         "--system", "published", "--judge-model", "gpt-4o-mini", "--judge-prompt",
                                         "evermemos", "--data", d, "--out",
                                         str(out / "locomo_import_evermemos" / "run")]),
        Step("locomo_import_table", ["locomo", "run", "--data", d, "--systems", "outside", "--out",
                                     str(out / "locomo_import_memeval" / "run"), "--no-progress"]),
        Step("score_by_category", ["score", str(run1 / "answers.jsonl")]),
        Step("score_by_system_json", ["score", str(run1 / "answers.jsonl"), "--by", "system", "--json"]),
        Step("score_mem0_mode", ["score", str(sample / "answers.jsonl"), "--mode", "mem0", "--by", "system"]),
        Step("judge_calibrate_no_audit", ["judge", "calibrate", "--judge", "binary", "--llm", "replay", "--data", d,
                                          "--out",
                                          str(out / "judge_calibrate_no_audit" / "run"), "--no-progress"]),
        Step("locomo_run_openai_binary", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                          "first:6", "--systems", "rag_turns,rag_dense,full_context", "--reader",
                                          "claude", "--answer-model", "gpt-4o-mini", "--judge", "binary",
                                          "--judge-model", "gpt-4o-mini", "--embed-model", "text-embedding-3-small",
                                          "--llm", "openai", "--max-concurrency", "1", "--out", str(judged), "--no-progress"]),
        Step("locomo_run_openai_graded", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                          "first:4", "--systems", "rag_turns", "--reader", "claude",
                                          "--answer-model", "gpt-4o-mini", "--judge", "graded", "--judge-runs", "3",
                                          "--judge-model", "gpt-4o-mini", "--llm", "openai", "--max-concurrency", "1", "--out", str(graded),
                                          "--no-progress"]),
        Step("locomo_run_replay_binary", ["locomo", "run", "--data", d, "--conversations", "conv-26", "--questions",
                                          "first:6", "--systems", "rag_turns,rag_dense,full_context", "--reader",
                                          "claude", "--answer-model", "gpt-4o-mini", "--judge", "binary",
                                          "--judge-model", "gpt-4o-mini", "--embed-model", "text-embedding-3-small",
                                          "--llm", "replay", "--out",
                                          str(out / "locomo_run_replay_binary" / "run"), "--no-progress"]),
        Step("longmemeval_run", ["longmemeval", "run", "--data", str(lme), "--systems", "rag_turns,full_context",
                                 "--out", str(out / "longmemeval_run" / "run"), "--no-progress"]),
        Step("longmemeval_run_openai", ["longmemeval", "run", "--data", str(lme), "--systems", "rag_turns",
                                        "--reader", "llm", "--answer-model", "gpt-4o-mini", "--judge", "longmemeval",
                                        "--judge-model", "gpt-4o-2024-08-06", "--llm", "openai", "--max-concurrency", "1", "--out",
                                        str(out / "longmemeval_run_openai" / "run"), "--no-progress"]),
        Step("memaudit_generate", ["memaudit", "generate", "small", "--distribution", "base", "--seed", "7",
                                   "--output", str(pkg)]),
        Step("memaudit_generate_update_chain", ["memaudit", "generate", "small", "--distribution", "update_chain",
                                                "--seed", "3", "--output",
                                                str(out / "memaudit_generate_update_chain" / "uc-3.json")]),
        Step("memaudit_validate", ["memaudit", "validate", str(pkg)]),
        Step("memaudit_solve_both", ["memaudit", "solve", str(pkg), "--budget", "6", "--method", "both", "--json"]),
        Step("memaudit_solve_greedy", ["memaudit", "solve", str(pkg), "--budget", "4", "--method", "greedy"]),
        Step("memaudit_sweep_small", ["memaudit", "sweep", "small", "--distribution", "base", "--n-seeds", "4",
                                      "--budgets", "2,4,6", "--certify", "parts", "--out",
                                      str(out / "memaudit_sweep_small" / "sweep"), "--no-progress"]),
        Step("natural_build_locomo", ["natural", "build", "--data", d, "--target", "6", "--out", str(natural),
                                      "--no-progress"]),
        Step("natural_build_longmemeval", ["natural", "build", "--source", "longmemeval", "--data", str(lme),
                                           "--target", "3", "--out",
                                           str(out / "natural_build_longmemeval" / "natural"), "--no-progress"]),
        Step("natural_sweep", ["memaudit", "sweep", "natural", "--packages", str(natural), "--budgets", "20,40",
                               "--out", str(out / "natural_sweep" / "sweep"), "--no-progress"]),
        Step("natural_sensitivity", ["natural", "sensitivity", "--packages", str(natural), "--budgets", "20,40",
                                     "--noise-seeds", "2", "--output",
                                     str(out / "natural_sensitivity" / "sensitivity.json")]),
        Step("natural_audit_export", ["natural", "audit-export", "--packages", str(natural), "--seed", "1",
                                      "--output", str(out / "natural_audit_export" / "audit.csv")]),
        Step("graph80_generate", ["graph80", "generate", "--seed", "0", "--out", str(graph)]),
        Step("graph80_run", ["graph80", "run", "--data", str(graph), "--systems", "memory_graph:hops=1;chunks",
                             "--out", str(out / "graph80_run" / "run"), "--no-progress"]),
        Step("results_md", ["results", str(run1), str(sample), "--no-progress"]),
        Step("results_by_category", ["results", str(run1), str(sample), "--by-category", "--no-progress"]),
        Step("results_json", ["results", str(run1), str(judged), "--format", "json", "--no-progress"]),
        Step("results_files", ["results", str(run1), str(sample), "--format", "csv", "--output",
                               str(out / "results_files" / "table.csv"), "--no-progress"]),
        Step("results_html", ["results", str(run1), str(sample), "--format", "html", "--output",
                              str(out / "results_html" / "table.html"), "--no-progress"]),
        Step("results_sweep", ["results", str(out / "memaudit_sweep_small" / "sweep"), "--no-progress"]),
        Step("results_out_dir", ["results", str(run1), str(graded), "--out", str(out / "results_out_dir" / "table"),
                                 "--no-progress"]),
        Step("view", ["view", str(run1), str(sample), "--output", str(out / "view" / "page.html")]),
        Step("view_judged", ["view", str(judged), "--output", str(out / "view_judged" / "page.html")]),
        Step("trust", ["locomo", "trust", str(run1), str(judged), "--data", d, "--out", str(out / "trust" / "t")]),
        Step("ls", ["ls", str(out)]),
        Step("ls_json", ["ls", "--json", "-l", str(out)]),
        Step("doctor_replay", ["doctor", "--llm", "replay", "--json"]),
        Step("doctor_openai", ["doctor", "--llm", "openai", "--judge-model", "gpt-4o-mini", "--answer-model",
                               "gpt-4o-mini"]),
        Step("cache_stats", ["cache", "stats", "--dir", str(work / "cache"), "--json"]),
        Step("cache_batches", ["cache", "batches", "list", "--dir", str(work / "cache"), "--json"]),
    ]
    if reproduce:
        s += [Step("reproduce", ["reproduce", "--notebooks", str(tree / "notebooks"), "--out",
                                 str(out / "reproduce" / "reports"), "--figures", str(out / "reproduce" / "figures"),
                                 "--no-progress"]),
              Step("publish", ["publish", "--artifacts", str(out / "reproduce" / "reports" / "artifacts"),
                               "--figures", str(out / "publish" / "figures"), "--json"])]
    return s


def start_fake(tree: Path, work: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    launcher = work / "fake_openai_launcher.py"
    launcher.write_text(FAKE_LAUNCHER)
    proc = subprocess.Popen([PYTHON, str(launcher), str(FAKE_PORT)], cwd=str(tree), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise SystemExit(f"result_files.py: the fake OpenAI server did not start (got {url!r})")
    return proc, url


def head(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout


def run(tree: Path, out: Path, data: Path, reproduce: bool) -> int:
    tree, out, data = tree.resolve(), out.resolve(), data.resolve()
    if out.exists():
        raise SystemExit(f"result_files.py: {out} exists; give a new --out")
    out.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="result_files_"))
    (work / "home").mkdir()
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("MEMEVAL_", "ANTHROPIC_", "OPENAI_")) and k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    base.update({"PYTHONPATH": str(tree), "HOME": str(work / "home"), "TZ": "UTC",
                 "MEMEVAL_CACHE_DIR": str(work / "cache"), "MEMEVAL_PROTOCOLS_DIR": str(work / "protocols"),
                 "MEMEVAL_LOCOMO_AUDIT_DIR": str(work / "no-audit"),
                 "MEMEVAL_JUDGE_CALIBRATIONS_DIR": str(work / "judge-calibrations"),
                 "MEMEVAL_LOCAL_MODEL_DIR": str(work / "models"), "MEMEVAL_ARTIFACTS": str(work / "artifacts"),
                 "MEMEVAL_FIGURES": str(work / "figures"), "MEMEVAL_DATA_LOCOMO": str(data)})
    fake, url = start_fake(tree, work, base)
    with_fake = {**base, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-proj-test-SECRET-do-not-store-9876543210"}
    meta = out / "_meta"
    meta.mkdir()
    commit = head(tree)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout
    where = subprocess.run([PYTHON, "-c", "import memeval; print(memeval.__file__)"], env=base, cwd=str(work),
                           capture_output=True, text=True).stdout.strip()
    (meta / "run.json").write_text(json.dumps({"out": str(out), "tree": str(tree), "work": str(work),
                                               "data": str(data), "commit": commit.strip(),
                                               "dirty_files": dirty.splitlines(), "memeval_imported_from": where,
                                               "fake_openai": url}, indent=1))
    timings = {}
    total = time.monotonic()
    dates = {time.strftime("%Y-%m-%d", time.gmtime())}
    commits = {commit.strip()}
    try:
        for step in plan(out, data, work, tree, reproduce):
            step_dir = out / step.name
            step_dir.mkdir(parents=True, exist_ok=True)
            if step.prepare is not None:
                step.prepare()
            env = with_fake if "openai" in step.argv else base
            commits.add(head(tree).strip())
            started = time.monotonic()
            done = subprocess.run([PYTHON, "-m", "memeval", *step.argv], cwd=str(work), env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            timings[step.name] = round(time.monotonic() - started, 2)
            (step_dir / "_stdout.txt").write_text(done.stdout)
            (step_dir / "_stderr.txt").write_text(done.stderr)
            (step_dir / "_exit.txt").write_text(f"{done.returncode}\n")
            print(f"{step.name}: exit {done.returncode} in {timings[step.name]} s", file=sys.stderr, flush=True)
    finally:
        fake.stdin.close()
        fake.send_signal(signal.SIGTERM)
        fake.wait(timeout=10)
        timings["_total"] = round(time.monotonic() - total, 2)
        dates.add(time.strftime("%Y-%m-%d", time.gmtime()))
        info = json.loads((meta / "run.json").read_text())
        commits.add(head(tree).strip())
        (meta / "run.json").write_text(json.dumps({**info, "dates": sorted(dates), "commits": sorted(commits - {""})},
                                                  indent=1))
        (meta / "timings.json").write_text(json.dumps(timings, indent=1))
        shutil.rmtree(work, ignore_errors=True)
    return 0


# ---- the digest ---------------------------------------------------------------------------------------------------

class Marks:
    """The run's own paths, commit and dates (from OUT/_meta/run.json), and the rules applied to strings."""

    def __init__(self, out: Path):
        info = json.loads((out / "_meta" / "run.json").read_text())
        pairs = [(info["out"], "<OUT>"), (info["work"], "<WORK>"), (info["tree"], "<TREE>")]
        real = [(os.path.realpath(p), name) for p, name in pairs]
        # a notebook run from the tree prints OUT relative to it ("../RF-head/reproduce/figures")
        relative = [(os.path.relpath(info["out"], info["tree"]) + "/", "<OUT>/")]
        self.pairs = sorted({*pairs, *real, *relative}, key=lambda pair: -len(pair[0]))
        commits = "|".join(c[:7] for c in info.get("commits", [info["commit"]]) if c)
        self.commit = re.compile(rf"\b({commits})[0-9a-f]{{0,33}}\b\+?") if commits else None
        self.dates = info.get("dates", [])

    def string(self, value: str) -> str:
        """Paths, ports, the commit, the run's timestamps and dates: applied to every string, JSON or text."""
        for path, name in self.pairs:
            value = value.replace(path, name).replace(json.dumps(path)[1:-1], name)
        value = PORT.sub(r"\1:<PORT>", value)
        if self.commit is not None:
            value = self.commit.sub("<GIT>", value).replace("<GIT> with uncommitted changes (+)", "<GIT>")
        value = COMPACT_UTC.sub("<T>", ISO_TIME.sub("<T>", value))
        for date in self.dates:
            value = value.replace(date, "<DATE>")
        return VERSION_TEXT.sub(r"\1 <VERSION>", value)

    def text(self, value: str) -> str:
        """Text files and stdout: the string rules, elapsed phrases ("1.2 s", "12 ms", "3 min"), the padding a
        column of them leaves, and the timing columns of Markdown tables."""
        value = PADDED.sub(" ", DURATION.sub("<DURATION>", self.string(KERNEL_NOISE.sub("", value))))
        return RULE_ROW.sub(lambda m: re.sub(r"-+", "-", m.group(0)), _timing_columns(value))


def _timing_columns(text: str) -> str:
    """Cells under a Markdown header naming a timing ("(ms)", p50, p95, latency, "(s)", elapsed, runtime), except
    in rows of published figures."""
    out, timing = [], set()
    for line in text.split("\n"):
        if not line.startswith("|"):
            timing = set()
        elif not timing and not line.startswith("|---"):
            cells = line.split("|")
            timing = {i for i, cell in enumerate(cells) if TIMING_HEADER.search(cell)}
            timing = timing or {-1}
        elif line.startswith("|---") or "(published)" in line:
            pass
        else:
            cells = line.split("|")
            for i in timing:
                if 0 < i < len(cells) - 1:
                    cells[i] = " <T> "
            line = "|".join(cells)
        out.append(line)
    return "\n".join(out)


HTML_TABLE = re.compile(r"<table.*?</table>", re.S)
HTML_ROW = re.compile(r"<tr.*?</tr>", re.S)
HTML_CELL = re.compile(r"(<t[hd][^>]*>)(.*?)(</t[hd]>)", re.S)


def _blank_cells(row: str, columns: set[int]) -> str:
    count = iter(range(len(row)))
    return HTML_CELL.sub(lambda c: f"{c.group(1)}<T>{c.group(3)}" if next(count) in columns else c.group(0), row)


def _html_timing_columns(text: str) -> str:
    """The same rule as `_timing_columns` for tables rendered to HTML (nbconvert's pages)."""
    def table(match: re.Match) -> str:
        rows = HTML_ROW.findall(match.group(0))
        if not rows:
            return match.group(0)
        header = [cell[1] for cell in HTML_CELL.findall(rows[0])]
        timing = {i for i, cell in enumerate(header) if TIMING_HEADER.search(cell)}
        if not timing:
            return match.group(0)
        body = match.group(0)
        for row in rows[1:]:
            if "(published)" in row:
                continue
            body = body.replace(row, _blank_cells(row, timing), 1)
        return body

    return HTML_TABLE.sub(table, text)


def _json(value, marks: Marks, key: str = "", rel: str = ""):
    if not isinstance(value, (dict, list)):
        if TIME_KEY.match(key):
            return "<T>"
        if key in GIT_KEYS:
            return "<GIT>"
        if key in VERSION_KEYS:
            return "<VERSION>"
        if key in HOST_KEYS:
            return "<HOST>"
        if key in REQUEST_KEYS:
            return "<REQUEST-ID>"
        if key == "bytes" and rel.startswith("cache_stats/"):
            return "<BYTES>"
    if key == "ms" and isinstance(value, list):
        return ["<T>"] * len(value)
    if isinstance(value, dict):
        return {k: _json(v, marks, k, rel) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v, marks, "", rel) for v in value]
    if isinstance(value, str):
        return marks.string(value)
    return value


def _notebook(doc: dict, marks: Marks) -> dict:
    """papermill's times go; each output's text (a list of lines) gets the text rules as one string."""
    doc.get("metadata", {}).pop("papermill", None)
    doc.get("metadata", {}).get("language_info", {}).pop("version", None)
    for cell in doc.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        cell.get("metadata", {}).pop("papermill", None)
        for output in cell.get("outputs", []):
            places = [(output, "text")] + [(output.get("data", {}), kind) for kind in ("text/plain", "text/markdown",
                                                                                         "text/html")]
            for holder, kind in places:
                if isinstance(holder.get(kind), list):
                    holder[kind] = marks.text("".join(holder[kind])).splitlines(keepends=True)
    return doc


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _jsonl(text: str, marks: Marks, rel: str) -> list[str]:
    rows = []
    for line in text.splitlines():
        try:
            rows.append(_dumps(_json(json.loads(line), marks, "", rel)))
        except json.JSONDecodeError:
            rows.append(marks.text(line))
    if rel.endswith("raw_results.jsonl"):
        rows.sort()
    return rows


GZIP_BLOB = re.compile(r'(type="application/gzip\+base64">)([A-Za-z0-9+/=\s]+)(<)')


def _html(text: str, marks: Marks) -> str:
    def blob(match: re.Match) -> str:
        import base64
        import gzip

        inner = gzip.decompress(base64.b64decode(match.group(2))).decode()
        try:
            inner = _dumps(_json(json.loads(inner), marks))
        except json.JSONDecodeError:
            inner = marks.text(inner)
        return f"{match.group(1)}{hashlib.sha256(inner.encode()).hexdigest()}{match.group(3)}"

    return _html_timing_columns(marks.text(GZIP_BLOB.sub(blob, text)))


def normalised(path: Path, marks: Marks, rel: str) -> bytes:
    raw = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return _dumps({"schema": [f"{f.name}:{f.type}" for f in table.schema],
                       "rows": _json(table.to_pylist(), marks, "", rel)}).encode()
    if suffix == ".pdf":
        return re.sub(rb"/(CreationDate|ModDate) \(D:[^)]*\)", rb"/\1 (<T>)", raw)
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return raw
    if suffix == ".svg":
        return re.sub(r"<dc:date>[^<]*</dc:date>", "<dc:date><T></dc:date>", text).encode()
    if suffix in {".json", ".ipynb"} or path.name == "_stdout.txt" and text.lstrip().startswith(("{", "[")):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return "\n".join(_jsonl(text, marks, rel)).encode() if suffix != ".ipynb" else marks.text(text).encode()
        if suffix == ".ipynb":
            doc = _notebook(doc, marks)
        return _dumps(_json(doc, marks, "", rel)).encode()
    if suffix == ".jsonl":
        return "\n".join(_jsonl(text, marks, rel)).encode()
    if suffix in {".html", ".htm"}:
        return _html(text, marks).encode()
    return marks.text(text).encode()


def digest(out: Path) -> dict[str, str]:
    out = out.resolve()
    marks = Marks(out)
    result = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        if rel.startswith("_meta/"):
            continue
        result[rel] = hashlib.sha256(normalised(path, marks, rel)).hexdigest()
    return result


def compare(a: dict[str, str], b: dict[str, str]) -> list[str]:
    lines = []
    for rel in sorted(a.keys() | b.keys()):
        if rel not in b:
            lines.append(f"only in A: {rel}")
        elif rel not in a:
            lines.append(f"only in B: {rel}")
        elif a[rel] != b[rel]:
            lines.append(f"differs: {rel}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tree", required=True, type=Path)
    r.add_argument("--out", required=True, type=Path)
    r.add_argument("--data", default=DEFAULT_DATA, type=Path)
    r.add_argument("--skip-reproduce", action="store_true")
    d = sub.add_parser("digest")
    d.add_argument("out", type=Path)
    n = sub.add_parser("normalised", help="print one file as the digest sees it (to diagnose a difference)")
    n.add_argument("out", type=Path)
    n.add_argument("file")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.tree, args.out, args.data, not args.skip_reproduce)
    if args.command == "digest":
        print(json.dumps(digest(args.out), indent=1, sort_keys=True))
        return 0
    if args.command == "normalised":
        out = args.out.resolve()
        sys.stdout.buffer.write(normalised(out / args.file, Marks(out), args.file))
        return 0
    lines = compare(json.loads(args.a.read_text()), json.loads(args.b.read_text()))
    print("\n".join(lines) if lines else "identical")
    return 1 if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
