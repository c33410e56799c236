"""Every request the test suite sends to the fakes, logged so two source trees can be compared request by request:
issue 44's "every request the suite sends is byte-identical before and after" for a redesign of memeval/llm/.

Usage:
  python benchmarks/request_bodies.py run --tree DIR --out OUT [--subset all|client] [PYTEST ARGS...]
  python benchmarks/request_bodies.py compare A B

`run` runs pytest in the source tree DIR (cwd and PYTHONPATH DIR, this interpreter, under `nice`) with
MEMEVAL_FAKE_REQUEST_LOG=OUT/requests.jsonl: every fake server of tests/ built on tests/loopback.py appends each
request it receives (the test's node id, the fake, method, path, contract headers, whether a key was sent, the
body's SHA-256 and the body). Without PYTEST ARGS it runs the test files of DIR that talk to the fakes (they name
fake_anthropic, fake_openai, fake_limits or tests.loopback, or take the `fake` / `fake_openai` fixtures) except
the real llama-server tests (REAL_SERVER). OUT/meta.json holds the command, the tree's commit, which memeval was
imported, pytest's exit code and summary, and the counts.

`compare` reads two OUTs (or two requests.jsonl) and, per test, compares the multiset of (phase, method, path, body
SHA-256) after normalising only what differs between two runs of the same tree (NORMALISE: each rule names what it
strips; RACY and "scheduling only": which of a test's concurrent requests went out). Tests that sent requests on
one side only, and each differing request with a short diff of its body against the nearest body on the other
side, are listed; exit 1 if any differ. The script imports nothing of
memeval, so it runs unchanged on any tree.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

FAKES = re.compile(r"fake_anthropic|fake_openai|fake_limits|tests\.loopback|"
                   r"\bdef test_\w+\([^)]*\bfake(_openai)?\b")
# they start llama-cpp-python's server on a real model (CPU-heavy, and no fake logs them)
REAL_SERVER = ("tests/test_local_server.py", "tests/test_local_launch.py")
REAL_SERVER_TESTS = ("tests/test_embeddings.py::test_the_real_servers_embeddings_are_cached_and_replayed",
                     "tests/test_embeddings.py::test_rag_dense_and_mem0_end_to_end_against_the_real_server")
# `--subset client`: the files that drive the LLM client itself against the fakes (a few minutes; the default
# selection, every fake-talking file with the notebooks and end-to-end runs, takes over an hour on a loaded machine)
CLIENT = ("test_llm_client", "test_claude_contract", "test_openai_provider", "test_thinking_models", "test_llm_batch",
          "test_batch_lifecycle", "test_rate_limits", "test_fit", "test_prices_file", "test_token_estimates",
          "test_hostile_replies", "test_unusable_replies", "test_unusable_judgments", "test_llm_bounds", "test_routes",
          "test_embeddings", "test_judge", "test_official_prompt", "test_evermemos_protocol",
          "test_operational_errors", "test_dry_run_sends_nothing", "test_longmemeval_empty_reply")
# (name, pattern, replacement): what two runs of one tree send differently, and nothing else. Two runs of the client
# subset at 5016447 sent byte-identical bodies (no id, timestamp or temporary path reaches a body): none so far.
NORMALISE: list[tuple[str, re.Pattern, str]] = []
# Concurrent calls racing a queued fault or a refusal: which requests go out (not what each holds) depends on thread
# scheduling (three runs of one tree at 5016447: 6 tests). A test whose requests differ only so — the same number
# per (phase, method, path) and every body one sent also sent somewhere (any test) in the other run — is listed as
# "scheduling only" and not counted (`--strict` counts it); a body of a new shape, or one request more or fewer, is
# still a difference. RACY names the tests whose number of requests itself varies; they are compared by set.
RACY = {
    "tests/test_rate_limits.py::test_without_the_limiter_the_same_fan_out_is_refused":
        "the fan-out stops at the first refusal; how many questions were sent by then varies",
    "tests/test_prices_file.py::test_a_live_run_stops_at_the_budget_and_its_manifest_names_the_table":
        "up to 8 calls are in flight when the budget trips; how many were sent by then varies (16-19 on one tree)",
    "tests/test_protocols.py::test_longmemeval_judge_is_sent_byte_for_byte_for_every_type":
        "two questions ask the same judge request at once: sent once or twice (8 or 9 requests on one tree)",
    "tests/test_judge_calibration.py::test_an_interrupted_calibration_resumes_without_sending_a_request_twice":
        "the interrupt lands while calls are in flight; how many were sent by then varies (26-27 on one tree)",
}


def default_selection(tree: Path, subset: str = "all") -> list[str]:
    files = sorted(p.relative_to(tree).as_posix() for p in (tree / "tests").glob("test_*.py")
                   if FAKES.search(p.read_text(encoding="utf-8")) and (subset == "all" or p.stem in CLIENT))
    kept = [f for f in files if f not in REAL_SERVER]
    return kept + [f"--deselect={t}" for t in REAL_SERVER_TESTS if t.split("::")[0] in kept]


def run(tree: Path, out: Path, selection: list[str], subset: str = "all") -> int:
    tree, out = tree.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "requests.jsonl"
    log.unlink(missing_ok=True)
    selection = selection or default_selection(tree, subset)
    env = {**os.environ, "MEMEVAL_FAKE_REQUEST_LOG": str(log), "PYTHONPATH": str(tree)}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    imported = subprocess.run([sys.executable, "-c", "import memeval; print(memeval.__file__)"], cwd=tree, env=env,
                              capture_output=True, text=True).stdout.strip()
    if not imported.startswith(str(tree) + os.sep):
        print(f"request_bodies: {tree} imports memeval from {imported or 'nowhere'}, not from the tree",
              file=sys.stderr)
        return 2
    command = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE",
               *selection]
    started = time.time()
    with open(out / "pytest.txt", "w", encoding="utf-8") as stdout:
        code = subprocess.run(command, cwd=tree, env=env, stdout=stdout, stderr=subprocess.STDOUT).returncode
    rows = read(log)
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout
    summary = (out / "pytest.txt").read_text(encoding="utf-8").strip().splitlines()
    meta = {"tree": str(tree), "commit": commit.strip(), "dirty": bool(dirty.strip()), "memeval": imported,
            "command": command, "exit": code, "pytest": summary[-1] if summary else "",
            "failed": [line for line in summary if line.startswith(("FAILED", "ERROR"))],
            "seconds": round(time.time() - started, 1), "requests": len(rows),
            "tests": len({r["test"] for r in rows}), "by_fake": dict(collections.Counter(r["fake"] for r in rows))}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: meta[k] for k in ("commit", "dirty", "exit", "pytest", "seconds", "requests", "tests",
                                           "by_fake")}))
    return code


def read(path: Path) -> list[dict]:
    path = path / "requests.jsonl" if path.is_dir() else path
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def normalised(body: str) -> str:
    for _, pattern, replacement in NORMALISE:
        body = pattern.sub(replacement, body)
    return body


def keyed(rows: list[dict]) -> dict[str, collections.Counter]:
    """Per test: the multiset of (phase, method, path, SHA-256 of the normalised body), and the bodies by key."""
    tests: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        body = normalised(r["body"])
        sha = r["sha256"] if body == r["body"] else hashlib.sha256(body.encode()).hexdigest()
        tests[r["test"]][(r["phase"], r["method"], r["path"], sha)] += 1
        BODIES[sha] = body
    return tests


BODIES: dict[str, str] = {}


def _pretty(body: str) -> list[str]:
    try:
        return json.dumps(json.loads(body), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    except ValueError:
        return body.splitlines()


def body_diff(a: str, b: str, lines: int = 12) -> list[str]:
    diff = [d for d in difflib.unified_diff(_pretty(a), _pretty(b), "A", "B", n=0, lineterm="")
            if not d.startswith(("---", "+++", "@@"))]
    return [d[:160] for d in diff[:lines]] + ([f"... {len(diff) - lines} more lines"] if len(diff) > lines else [])


def _routes(counter: collections.Counter) -> collections.Counter:
    routes: collections.Counter = collections.Counter()
    for key, n in counter.items():
        routes[key[:3]] += n
    return routes


def compare(a_path: Path, b_path: Path, strict: bool = False) -> int:
    a, b = keyed(read(a_path)), keyed(read(b_path))
    differing, racy, scheduling = 0, [], []
    sent_a, sent_b = ({k for c in side.values() for k in c} for side in (a, b))
    for test in sorted(set(a) | set(b)):
        if not strict and test in a and test in b and a[test] != b[test] and _routes(a[test]) == _routes(b[test]) \
                and all(k in sent_b for k in a[test]) and all(k in sent_a for k in b[test]):
            scheduling.append(test)
            continue
        if test in RACY and test in a and test in b:
            strays = [("A", k) for k in a[test] if k not in sent_b] + [("B", k) for k in b[test] if k not in sent_a]
            racy.append(test)
            if strays:
                differing += 1
                print(f"{test} (racy: compared by set): {len(strays)} body/bodies the other run never sent")
                for side, key in strays:
                    print(f"  {side} {key[0]} {key[1]} {key[2]} {key[3][:12]}")
            continue
        only_a, only_b = a.get(test, collections.Counter()) - b.get(test, collections.Counter()), \
            b.get(test, collections.Counter()) - a.get(test, collections.Counter())
        if not only_a and not only_b:
            continue
        differing += 1
        print(f"{test}: {sum(only_a.values())} request(s) only in A, {sum(only_b.values())} only in B")
        for key, n in sorted(only_a.items()):
            print(f"  A {n}x {key[0]} {key[1]} {key[2]} {key[3][:12]}")
            near = [k for k in only_b if k[:3] == key[:3]]
            if near:
                other = max(near, key=lambda k: difflib.SequenceMatcher(None, BODIES[key[3]][:4000],
                                                                        BODIES[k[3]][:4000]).quick_ratio())
                for line in body_diff(BODIES[key[3]], BODIES[other[3]]):
                    print(f"    {line}")
        for key, n in sorted(only_b.items()):
            print(f"  B {n}x {key[0]} {key[1]} {key[2]} {key[3][:12]}")
    total_a, total_b = sum(sum(c.values()) for c in a.values()), sum(sum(c.values()) for c in b.values())
    print(f"A: {total_a} requests in {len(a)} tests; B: {total_b} requests in {len(b)} tests; "
          f"{differing} test(s) differ; normalised: {', '.join(n for n, _, _ in NORMALISE) or 'nothing'}; "
          f"{len(racy)} racy test(s) compared by set (RACY); {len(scheduling)} differ by scheduling only"
          + "".join(f"\n  scheduling only: {t}" for t in scheduling))
    return 1 if differing else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="request_bodies.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run pytest in a tree with the fakes logging every request")
    run_parser.add_argument("--tree", type=Path, required=True)
    run_parser.add_argument("--out", type=Path, required=True)
    run_parser.add_argument("--subset", choices=("all", "client"), default="all",
                            help="without PYTEST ARGS: every fake-talking test file, or the client's own (CLIENT)")
    compare_parser = commands.add_parser("compare", help="compare two runs' requests, per test")
    compare_parser.add_argument("a", type=Path)
    compare_parser.add_argument("b", type=Path)
    compare_parser.add_argument("--strict", action="store_true",
                                help="count a test whose requests differ by scheduling only (see RACY)")
    args, rest = parser.parse_known_args(argv)
    if args.command == "run":
        return run(args.tree, args.out, rest, args.subset)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return compare(args.a, args.b, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
