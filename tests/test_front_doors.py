"""The front doors as users use them: every command's --help as a real process, every command the README and
docs/ show run as written in a shell, progress bars on a real terminal (a pseudo-terminal), and docs/layout.md
naming every module and every command.

A command added to the parser or to a doc is covered without editing this file: the help test walks the parser,
and the doc test runs every shell command it finds in a fenced block. Only tables opt out or fill in: NOT_RUN
(commands that cannot run here, each with its reason; an entry no doc shows any more fails), PLACEHOLDERS (the
inputs a doc's reader would bring, made small and real in the working directory), SMALL_LOCOMO (the data the
commands find) and SLOW_DOCS (docs whose commands leave `make test-fast`)."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import shlex
import shutil
import struct
import subprocess
import sys
import termios
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from memeval.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the environment's scripts: `memeval`, `papermill`
TRACEBACK = "Traceback (most recent call last)"


def _memeval() -> str:
    found = shutil.which("memeval", path=str(BIN))
    if not found:
        pytest.fail(f"no `memeval` script beside {sys.executable}: install the package (make setup)")
    return found


# --- every command's --help, as a process -------------------------------------------------------------------


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(path, parser) for the root and every command and subcommand, aliases included."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from command_paths(child, (*prefix, name))


def test_every_command_help_runs_as_a_process():
    memeval = _memeval()
    runs = [[*path, "--help"] for path, _ in command_paths(build_parser())] + [["-h"]]

    def run(args):
        return args, subprocess.run([memeval, *args], capture_output=True, text=True, timeout=120)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, runs))
    failures = []
    for args, proc in results:
        path = [a for a in args if not a.startswith("-")]
        usage = "usage: " + " ".join(["memeval", *path])
        if proc.returncode != 0 or not proc.stdout.startswith(usage) or TRACEBACK in proc.stdout + proc.stderr:
            failures.append(f"memeval {' '.join(args)}: exit {proc.returncode}\n{proc.stdout[:300]}{proc.stderr[-600:]}")
    assert not failures, "\n\n".join(failures)
    assert len(results) > 30  # the walk found the tree, not just the root


def test_every_option_and_command_has_help_text():
    missing = []
    for path, parser in command_paths(build_parser()):
        where = " ".join(["memeval", *path])
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                described = {choice.dest for choice in action._choices_actions if choice.help}
                missing += [f"{where} {name} (no one-line help)" for name in action.choices if name not in described]
                continue
            if action.help is None or action.help == argparse.SUPPRESS or not str(action.help).strip():
                missing.append(f"{where} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, "options without help text:\n" + "\n".join(missing)


def test_reader_is_one_flag_with_the_old_spelling_kept():
    leaves = dict(command_paths(build_parser()))
    for path in (("locomo", "run"), ("longmemeval", "run"), ("graph80", "run")):
        flags = {s: a for a in leaves[path]._actions for s in a.option_strings}
        assert "--reader" in flags, path
        if "--answerer" in flags:  # the older spelling is the same option, not a second one
            assert flags["--answerer"] is flags["--reader"], path
    run = leaves[("locomo", "run")]
    assert run.parse_args(["--reader", "claude", "--out", "x"]).answerer == "claude"
    assert run.parse_args(["--answerer", "claude_official", "--out", "x"]).answerer == "claude_official"


# --- every documented command, run as written -----------------------------------------------------------------

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_FENCES = {"", "bash", "sh", "shell", "console", "text"}
RUNNABLE = ("memeval ", ".venv/bin/memeval ", "make ", ".venv/bin/python benchmarks/")
_ASSIGNMENT = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")

# Commands a doc shows that cannot run inside the test suite, with the reason. An entry that no doc shows any more
# fails test_not_run_and_slow_tables_are_current, so this table cannot go stale.
AUDIT_COPY = "reads the reader's copy of the LoCoMo audit (see above)"
ADDED_BY_THE_READER = "needs the benchmark folder the doc has its reader add (tests/test_adding_a_benchmark.py)"
SERVER_STARTED = "sends one request per role to the model server the doc starts (llama.cpp, vLLM, Ollama: not here)"
NOT_RUN = {
    "make test": "runs this test suite, which would run itself",
    "make reproduce": "executes every notebook (minutes) into the clone's reports/ and figures/; tests/test_notebooks.py "
                      "executes each notebook and tests/test_reproduce.py the `memeval reproduce` runner behind it",
    # The README's audit commands read the reader's copy of dial481/locomo-audit (CC BY-NC 4.0, never in this
    # repository; its files' SHA-256 are pinned, so no stand-in passes): tests/test_audit_fetch.py,
    # test_import_evermemos.py, test_answer_key_modes.py, test_trust.py and test_judge_calibration.py run each
    # path on files of the tests' own wording with the pins swapped in-process.
    "memeval data fetch locomo-audit --source ~/src/locomo-audit": AUDIT_COPY,
    "memeval data fetch protocols --source ~/src/EverMemOS/evaluation/config/prompts.yaml":
        "needs the reader's copy of EverMind-AI/EverMemOS (tests/test_evermemos_protocol.py)",
    "memeval locomo import ~/src/locomo-audit/fc-baseline/results/gpt-4.1-mini-cot/eval_results.json --format "
    "evermemos --system fc-gpt-4.1-mini-cot --judge-prompt evermemos --out runs/published": AUDIT_COPY,
    "memeval results runs/published --key corrected": AUDIT_COPY,
    "memeval locomo trust runs/own --published --out reports/trust": AUDIT_COPY,
    "memeval judge calibrate --judge evermemos --recorded": AUDIT_COPY,
    # docs/openai-compatible.md: each server's start command and its doctor line (one request per role to that
    # server); its dry runs do run here (they send nothing). tests/test_routes.py runs `doctor --llm local` against
    # a local fake and tests/test_local_server.py the real `serve-local`.
    "memeval serve-local --port 8000": "serves until Ctrl-C; tests/test_local_server.py starts and stops the real one",
    # README's keyless section: its two `locomo run --llm local` commands do run here, against a local fake
    # OpenAI-compatible server; benchmarks/bench_local_server.py runs them against the real one.
    "make setup-local": "builds llama-cpp-python from source (about 15 minutes); CI's .ci/run runs it before the tests",
    "memeval serve-local": "serves until Ctrl-C; tests/test_local_server.py starts and stops the real one",
    **{f"memeval doctor --llm local --answer-model {m} --judge-model {m} --extract-model {m}": SERVER_STARTED
       for m in ("smollm2-135m", "qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", "qwen2.5:7b-instruct")},
    # docs/locomo-plus.md: the benchmark's files come from GitHub (no licence file, so never in this repository);
    # tests/test_locomo_plus.py runs the fetch against a local server and the run on files of the tests' own wording.
    "memeval locomo-plus fetch": "downloads the benchmark's files from GitHub (tests/test_locomo_plus.py: a local server)",
    "memeval locomo-plus run --systems rag_turns,full_context --questions none --out runs/plus":
        "reads the fetched files (tests/test_locomo_plus.py runs it on files of its own wording)",
    # docs/layout.md's worked example: a benchmark folder the reader adds, so the command exists only once added;
    # tests/test_adding_a_benchmark.py writes the doc's files into a copy of the package and runs these there.
    "memeval trivia run --data trivia.jsonl --out runs/trivia": ADDED_BY_THE_READER,
    "memeval ls runs": ADDED_BY_THE_READER,
}

# Docs whose commands take long enough as written (full sweeps, builds, certification) to leave `make test-fast`.
SLOW_DOCS = {
    "docs/memaudit.md": "a 500-seed sweep, a natural build, two natural sweeps (one with --certify milp), the "
                        "sensitivity analysis, the audits and hundreds of labelling calls: about a minute and a half",
    "docs/own-system.md": "a natural build and a natural sweep with union packages: about half a minute",
}


@dataclass(frozen=True)
class DocCommand:
    doc: str  # relative to the repository
    line: int
    text: str  # as written (continuations joined)
    command: str  # what runs: the comment and the `[optional]` parts left out
    expected_exit: int


def _split_comment(text: str) -> tuple[str, str]:
    """(command, comment): a `#` starting a word outside quotes begins the comment, as in the shell."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip(), text[i + 1:].strip()
    return text.rstrip(), ""


def _without_optional(command: str) -> str:
    """The docs write optional parts as `[--flag VALUE]` (usage syntax); a command runs without them."""
    while True:
        shorter = re.sub(r"\s*\[[^\[\]]*\]", "", command)
        if shorter == command:
            return command
        command = shorter


def doc_commands(path: Path) -> list[DocCommand]:
    """The shell commands of a Markdown file's fenced blocks (bash, sh, shell, console, text or untagged) that start
    with memeval, .venv/bin/memeval, make or .venv/bin/python benchmarks/ (after any VAR=value assignments and a
    `$ ` prompt), with backslash continuations joined."""
    found, fence, pending = [], None, None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("```"):
            fence = stripped[3:].strip().lower() if fence is None else None
            pending = None
            continue
        if fence is None or fence not in SHELL_FENCES:
            continue
        if pending is None:
            pending = (number, stripped[2:] if stripped.startswith("$ ") else stripped)
        else:
            pending = (pending[0], pending[1] + " " + stripped)
        if pending[1].endswith("\\"):  # a continuation: the logical line goes on
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        (first, text), pending = pending, None
        if not _ASSIGNMENT.sub("", text).startswith(RUNNABLE):
            continue
        command, comment = _split_comment(text)
        expected = re.search(r"\bexit (?:code )?(\d+)\b", comment)
        found.append(DocCommand(str(path.relative_to(REPO)), first, text, _without_optional(command),
                                int(expected.group(1)) if expected else 0))
    return found


def _write_plugin(cwd: Path, inputs) -> None:
    package = cwd / "my_package"
    if package.exists():
        return
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "memory.py").write_text('''"""A user's memory system: every turn, ranked by words shared with the question."""


class MySystem:
    def __init__(self, k=10):
        self.k = int(k)
        self.turns = []

    def ingest(self, conversation):
        self.turns = [turn for session in conversation.sessions for turn in session.turns]

    def search(self, question, k):
        asked = set(question.lower().split())
        scored = sorted(((len(asked & set(t.text.lower().split())), i) for i, t in enumerate(self.turns)),
                        key=lambda pair: (-pair[0], pair[1]))
        return [{"text": self.turns[i].text, "score": float(s), "source_ids": [self.turns[i].dia_id]}
                for s, i in scored[:min(k, self.k)] if s > 0]
''')


def _write_mem0_results(cwd: Path, inputs) -> None:
    target = cwd / "results.json"
    if target.exists():
        return
    first = inputs.conversations[0]
    target.write_text(json.dumps({"0": [{"question": q.question, "answer": q.answer, "category": q.category,
                                         "response": str(q.answer) if i % 2 else "not mentioned"}
                                        for i, q in enumerate(first.qa[:6]) if q.category != 5]}))


def _write_evermemos(cwd: Path, inputs, name: str, metadata: dict) -> None:
    """An EverMemOS `detailed_results` file over conv-26's first questions (this test's answers and labels)."""
    target = cwd / name
    if target.exists():
        return
    first = inputs.conversations[0]
    items = [{"question_id": f"locomo_0_qa{i}", "question": q.question, "golden_answer": str(q.answer),
              "generated_answer": str(q.answer) if i % 2 else "not mentioned", "category": str(q.category),
              "llm_judgments": {f"judgment_{r + 1}": bool(i % 2) or r == 0 for r in range(3)}}
             for i, q in enumerate(first.qa[:8]) if q.category != 5]
    target.write_text(json.dumps({"total_questions": len(items), "detailed_results": {"locomo_exp_user_0": items},
                                  **({"metadata": metadata} if metadata else {})}))


def _write_mem0_store(cwd: Path, inputs, name: str = "store.json") -> None:
    target = cwd / name
    if target.exists():
        return
    store = {}
    for conversation in inputs.conversations:
        store[conversation.sample_id] = [{"memory": turn.text, "created_at": session.date_time, "metadata": {}}
                                         for session in conversation.sessions[:3] for turn in session.turns[:6]]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(store))


def _copy(made: Path, target: Path) -> None:
    if not target.exists():
        shutil.copytree(made, target)


def _write_longmemeval(cwd: Path, inputs) -> None:
    target = cwd / "data" / "longmemeval" / "longmemeval_s_cleaned.json"
    if not target.exists():
        from tests.test_notebooks import write_small_longmemeval

        target.parent.mkdir(parents=True, exist_ok=True)
        write_small_longmemeval(target)


# What a doc's reader brings, made small and real in the command's working directory (under the name the doc
# uses) before the first command that reads it; no command's text is changed. A path named right after --out is
# what that command makes, not a placeholder.
PLACEHOLDERS = {
    "my_package.memory:MySystem": ("a plug-in memory system, importable from the working directory (PYTHONPATH)",
                                   _write_plugin),
    "results.json": ("another harness's answers in Mem0's results format (conv-26's first questions)",
                     _write_mem0_results),
    "eval_results.json": ("an EverMemOS `detailed_results` file with its metadata (conv-26's first questions)",
                          lambda cwd, inputs: _write_evermemos(cwd, inputs, "eval_results.json",
                                                               {"judge_model": "gpt-4o-mini", "num_runs": 3})),
    "ap_eval_results_scored.json": ("an EverMemOS `detailed_results` file without metadata, as the audit's scored "
                                    "files", lambda cwd, inputs: _write_evermemos(cwd, inputs,
                                                                                   "ap_eval_results_scored.json", {})),
    "store.json": ("a Mem0 store export: turns of conv-26's first sessions as memories", _write_mem0_store),
    "runs/mem0/stores/mem0.json": ("the store a `--systems mem0` run keeps (Mem0's get_all shape)",
                                   lambda cwd, inputs: _write_mem0_store(cwd, inputs, "runs/mem0/stores/mem0.json")),
    "natural87": ("a `memeval natural build` directory", lambda cwd, inputs: _copy(inputs.natural(), cwd / "natural87")),
    "DIR": ("a `memeval natural build` directory", lambda cwd, inputs: _copy(inputs.natural(), cwd / "DIR")),
    "runs/full": ("a `memeval locomo run` directory (conv-26; observations, summaries, rag_turns)",
                  lambda cwd, inputs: _copy(inputs.locomo_run(), cwd / "runs" / "full")),
    "data/longmemeval/longmemeval_s_cleaned.json": ("a LongMemEval file in the published format (three questions)",
                                                    _write_longmemeval),
}


def _placeholders_read(command: str) -> list[str]:
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    return [key for key in PLACEHOLDERS
            if any((token == key or token.startswith(key + ":")) and (i == 0 or tokens[i - 1] != "--out")
                   for i, token in enumerate(tokens))]


# The LoCoMo the docs' commands find (through MEMEVAL_DATA_LOCOMO, the documented search order): conv-26 with its
# first 90 questions, the prototype's 20 among them, so that "all conversations, all questions" is a few seconds.
SMALL_LOCOMO = {"26.json": 90}


class Inputs:
    """The inputs placeholders are made from, each built once per session and only when a doc needs it."""

    def __init__(self, root: Path, locomo_dir: Path):
        from memeval.benchmarks.locomo.data import load_locomo

        self.root, self._made = root, {}
        self.locomo = root / "locomo"
        (self.locomo / "locomo10_v2").mkdir(parents=True)
        for name, questions in SMALL_LOCOMO.items():
            sample = json.loads((locomo_dir / "locomo10_v2" / name).read_text(encoding="utf-8"))
            sample["qa"] = sample["qa"][:questions]
            (self.locomo / "locomo10_v2" / name).write_text(json.dumps(sample), encoding="utf-8")
        self.conversations = load_locomo(self.locomo)

    def _once(self, name: str, argv: list[str]) -> Path:
        if name not in self._made:
            from memeval.cli import main

            out, before = self.root / name, os.environ.get("MEMEVAL_CACHE_DIR")
            os.environ["MEMEVAL_CACHE_DIR"] = str(self.root / "cache")  # never the clone's .memeval/cache
            try:
                assert main([*argv, "--data", str(self.locomo), "--out", str(out), "--no-progress"]) == 0, argv
            finally:
                if before is None:
                    os.environ.pop("MEMEVAL_CACHE_DIR", None)
                else:
                    os.environ["MEMEVAL_CACHE_DIR"] = before
            self._made[name] = out
        return self._made[name]

    def natural(self) -> Path:
        return self._once("natural", ["natural", "build"])

    def locomo_run(self) -> Path:
        return self._once("locomo_run", ["locomo", "run", "--systems", "observations,summaries,rag_turns", "--json"])


@pytest.fixture(scope="session")
def inputs(tmp_path_factory, locomo_dir) -> Inputs:
    return Inputs(tmp_path_factory.mktemp("doc-inputs"), locomo_dir)


def _judge_everything(body: dict) -> str:
    """One reply every protocol parses: graded score, binary label, audit value, LongMemEval's "yes"."""
    return json.dumps({"score": 100, "label": "CORRECT", "value": 1, "reason": "yes", "explanation": "yes",
                       "reasoning": "yes"})


def _doc_env(cwd: Path, tmp: Path, inputs: Inputs, anthropic_url: str, openai_url: str) -> dict:
    from tests.fake_anthropic import TEST_SECRET
    from tests.fake_openai import TEST_KEY

    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(cwd),
            "MEMEVAL_DATA_LOCOMO": str(inputs.locomo),
            "MEMEVAL_CACHE_DIR": str(tmp / "cache"), "MEMEVAL_ARTIFACTS": str(tmp / "artifacts"),
            "MEMEVAL_FIGURES": str(tmp / "figures"), "MEMEVAL_PROGRESS": "0",
            "ANTHROPIC_API_KEY": TEST_SECRET, "ANTHROPIC_BASE_URL": anthropic_url,
            "OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": openai_url}


def _workdir(tmp: Path) -> Path:
    """An empty directory where a reader of the docs would stand: the environment (`.venv`), the notebooks and
    copies of the examples and benchmarks (so nothing a command writes lands in the clone)."""
    cwd = tmp / "work"
    cwd.mkdir()
    for name in (".venv", "notebooks"):
        if (REPO / name).exists():
            (cwd / name).symlink_to(REPO / name)
    for name in ("examples", "benchmarks"):
        shutil.copytree(REPO / name, cwd / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    return cwd


def _doc_params():
    params = []
    for path in DOCS:
        name = str(path.relative_to(REPO))
        marks = [pytest.mark.slow] if name in SLOW_DOCS else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("doc", _doc_params())
def test_documented_commands_run_as_written(doc, tmp_path, inputs):
    """Each command of the doc, in document order, in one working directory (later commands read what earlier
    ones wrote), against local Anthropic- and OpenAI-compatible servers instead of the real APIs. Each must exit
    with 0 (or the code its comment names) and print no traceback."""
    from tests.fake_anthropic import FakeAnthropic
    from tests.fake_openai import FakeOpenAI

    commands = doc_commands(REPO / doc)
    cwd = _workdir(tmp_path)
    failures, timings = [], []
    with FakeAnthropic(responder=_judge_everything) as anthropic, FakeOpenAI(responder=_judge_everything) as openai, \
            FakeOpenAI(responder=_judge_everything, local=True) as local:
        env = _doc_env(cwd, tmp_path, inputs, anthropic.url, openai.url)
        # `--llm local` commands reach a local server (any model id served), as the docs' `export OPENAI_BASE_URL`
        local_env = {**env, "OPENAI_BASE_URL": local.url}
        for cmd in commands:
            if cmd.command in NOT_RUN:
                continue
            for key in _placeholders_read(cmd.command):
                PLACEHOLDERS[key][1](cwd, inputs)
            start = time.perf_counter()
            proc = subprocess.run(["bash", "-c", cmd.command], cwd=REPO if cmd.command.startswith("make ") else cwd,
                                  env=local_env if "--llm local" in cmd.command else env, capture_output=True,
                                  text=True, timeout=900)
            timings.append(f"{time.perf_counter() - start:6.1f} s  {cmd.doc}:{cmd.line}")
            output = proc.stdout + proc.stderr
            if proc.returncode != cmd.expected_exit or TRACEBACK in output:
                failures.append(f"{cmd.doc}:{cmd.line}: {cmd.command}\n  exit {proc.returncode} (expected "
                                f"{cmd.expected_exit})\n  " + "\n  ".join(output.strip().splitlines()[-15:]))
    print("\n".join(timings))
    assert not failures, "documented commands that fail as written:\n\n" + "\n\n".join(failures)


def test_not_run_and_slow_tables_are_current():
    commands = {c.command for path in DOCS for c in doc_commands(path)}
    stale = [c for c in NOT_RUN if c not in commands]
    assert not stale, f"NOT_RUN names commands no doc shows any more: {stale}"
    assert not [d for d in SLOW_DOCS if not (REPO / d).is_file()], "SLOW_DOCS names a doc that is gone"
    assert commands, "no documented commands found: the fence parser is broken"


def test_doc_command_parser():
    doc = REPO / "docs" / "memaudit.md"
    parsed = {c.text.split("#")[0].strip(): c for c in doc_commands(doc)}
    solve = next(c for t, c in parsed.items() if t.startswith("memeval memaudit solve"))
    assert solve.command == "memeval memaudit solve pkg.json --budget 4"
    assert _split_comment('memeval x --systems "a#b" # note, exit 2') == ('memeval x --systems "a#b"', "note, exit 2")
    assert _placeholders_read("memeval natural union --packages natural87 --store store.json --out natural87") == [
        "store.json", "natural87"]
    assert _placeholders_read("memeval natural build --out natural87") == []
    assert _placeholders_read('memeval locomo run --systems "my_package.memory:MySystem:k=5,rag_turns"') == [
        "my_package.memory:MySystem"]


# --- progress bars on a terminal ----------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_pty(argv: list[str], env: dict, cwd: Path, timeout: float = 600) -> tuple[int, str]:
    """Run a command with a pseudo-terminal (40 rows × 120 columns) as stdin, stdout and stderr, as a person in a
    terminal would; returns its exit code and everything it drew."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.25)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:  # exited, and nothing more came (worker processes may hold the pty)
                break
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{' '.join(argv)} still running after {timeout} s:\n{b''.join(chunks).decode()[-2000:]}")
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
    return code, _ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def _last_line(screen: str) -> str:
    """The last non-empty thing drawn: lines split at newlines and at carriage returns (a bar's redraws)."""
    return [part for part in re.split(r"[\r\n]", screen) if part.strip()][-1].strip()


@pytest.fixture()
def terminal_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMEVAL_PROGRESS", "ANTHROPIC_API_KEY",
                                                             "ANTHROPIC_BASE_URL")}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "MEMEVAL_CACHE_DIR": str(tmp_path / "cache"),
            "MEMEVAL_ARTIFACTS": str(tmp_path / "artifacts"), "MEMEVAL_FIGURES": str(tmp_path / "figures"),
            "TERM": "xterm"}


@pytest.mark.parametrize("argv", [
    ["memaudit", "sweep", "small", "--n-seeds", "5", "--budgets", "2,4", "--out", "sweep"],
    ["locomo", "run", "--conversations", "conv-26", "--questions", "first:5", "--systems", "rag_turns", "--out", "run"],
], ids=["memaudit-sweep", "locomo-run"])
def test_long_commands_draw_progress_bars_on_a_terminal(argv, tmp_path, terminal_env, locomo_dir):
    code, screen = run_on_pty([_memeval(), *argv], terminal_env, tmp_path)
    assert code == 0 and TRACEBACK not in screen, screen[-3000:]
    assert "100%|" in screen, f"no finished progress bar was drawn:\n{screen[-3000:]}"


def test_a_failure_under_an_open_bar_ends_with_the_error_line(tmp_path, terminal_env, locomo_dir):
    """The answer model answers three questions, then the API rejects the request (a deterministic 400): the run
    stops, and the one-line error is the last thing on the terminal, not a bar's redraw."""
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, error

    with FakeAnthropic() as server:
        server.faults = [("sleep", 0)] * 3 + [error(400)] * 50
        env = {**terminal_env, "ANTHROPIC_API_KEY": TEST_SECRET, "ANTHROPIC_BASE_URL": server.url}
        code, screen = run_on_pty([_memeval(), "locomo", "run", "--conversations", "conv-26", "--questions", "first:8",
                                   "--systems", "rag_turns", "--reader", "claude", "--out", "run"], env, tmp_path)
    assert code == 1 and TRACEBACK not in screen, screen[-3000:]
    assert "%|" in screen, f"no bar was open when the run failed:\n{screen[-3000:]}"
    last = _last_line(screen)
    assert last.startswith("memeval: error:") and "400" in last, f"last line: {last!r}\n\n{screen[-3000:]}"


@pytest.mark.notebook
def test_a_notebook_runs_under_papermill_on_a_terminal_with_progress_on(tmp_path, terminal_env):
    """Notebook 03 on small parameters, executed by papermill's own command on a terminal with progress bars on
    (a person's JupyterLab or shell, not `memeval reproduce`, which turns them off): it must finish, and the
    sweep's bar is in the executed notebook."""
    from memeval.notebook_runner import QUICK_PARAMETERS

    papermill = shutil.which("papermill", path=str(BIN))
    assert papermill, f"no papermill beside {sys.executable}"
    params = {**QUICK_PARAMETERS["03_memaudit_small"], "seeds": 4, "budgets": [2, 4], "certify": "none",
              "artifacts_dir": str(tmp_path / "artifacts"), "figures_dir": str(tmp_path / "figures")}
    executed = tmp_path / "03_memaudit_small.ipynb"
    code, screen = run_on_pty([papermill, str(REPO / "notebooks" / "03_memaudit_small.ipynb"), str(executed),
                               "--cwd", str(REPO), "-y", json.dumps(params)], terminal_env, tmp_path)
    assert code == 0 and TRACEBACK not in screen and "PapermillExecutionError" not in screen, screen[-3000:]
    assert "100%|" in screen, f"papermill drew no progress bar:\n{screen[-3000:]}"
    outputs = [o for c in json.loads(executed.read_text())["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("100%|" in "".join(o.get("text", "")) for o in outputs if o.get("name") == "stderr"), \
        "the kernel drew no progress bar (was MEMEVAL_PROGRESS=0 inherited?)"


# --- docs/layout.md names every module and every command ----------------------------------------------------


def test_layout_names_every_module_and_every_command():
    text = (REPO / "docs" / "layout.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    missing = []
    for module in sorted((REPO / "memeval").rglob("*.py")):
        relative = module.relative_to(REPO / "memeval")
        if module.name == "__init__.py" or "__pycache__" in relative.parts:
            continue
        if f"`{relative.as_posix()}`" in text:
            continue
        package = relative.parent.as_posix()
        row = [line for line in lines if package != "." and line.startswith(f"| `{package}/`")]
        if package == "." and re.search(rf"`{re.escape(module.name)}`", text):
            continue
        if row and f"`{module.name}`" in row[0]:
            continue
        missing.append(f"memeval/{relative.as_posix()}")
    for path, parser in command_paths(build_parser()):
        if not path or any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            continue  # the root and the groups: their leaves are named
        command = "memeval " + " ".join(path)
        if not re.search(re.escape(command) + r"(?![\w-])", text):
            missing.append(command)
    assert not missing, ("docs/layout.md does not name (a module: in its package's row of the module table, as "
                         "`name.py`; a command: as `memeval ...`):\n" + "\n".join(missing))
