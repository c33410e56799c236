"""A benchmark added from docs/layout.md alone runs end to end: each file its worked example shows is written into
a copy of the package, the one line it adds to `REGISTERED` is made there, and the commands it shows run as a user
types them (a real `memeval` process, the judge against a local server speaking Anthropic's API). The checkout
itself is never edited."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_anthropic import first_text

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "layout.md"
SECTION = "## How to add a benchmark, a judge or a table"
BLOCK = re.compile(r"<!-- (file|edit): (\S+)[^>]*-->\n```python\n(.*?)```", re.S)
ITEMS = [{"id": "t1", "question": "Where does Ana live?", "answer": "Lisbon",
          "context": "Ana lives in Lisbon. She likes tea."},
         {"id": "t2", "question": "What does Ana like?", "answer": "coffee",
          "context": "Ana lives in Lisbon. She likes tea."},
         {"id": "t3", "question": "Who owns the red bike?", "answer": "Kofi",
          "context": "The red bike belongs to Kofi. The blue one is Ana's."}]


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:] if end == -1 else text[start:end]


def blocks() -> list[tuple[str, str, str]]:
    """(file or edit, path, code) of each marked block, in document order."""
    return BLOCK.findall(section())


def doc_commands() -> list[str]:
    shell = re.findall(r"```bash\n(.*?)```", section(), re.S)
    return [line.strip() for block in shell for line in block.splitlines() if line.strip().startswith("memeval ")]


def gold_in_answer(prompt: str) -> bool:
    gold = re.search(r"Gold answer: (.*)", prompt).group(1)
    return gold.lower() in re.search(r"\nAnswer: (.*)", prompt).group(1).lower()


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """A copy of the package with the example's files written and its registration line made, as a user would."""
    root = tmp_path_factory.mktemp("src")
    shutil.copytree(REPO / "memeval", root / "memeval", ignore=shutil.ignore_patterns("__pycache__"))
    for mode, path, code in blocks():
        target = root / path
        if mode == "file":
            assert not (REPO / path).exists(), f"{path}: the doc's new file is already in the checkout"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code, encoding="utf-8")
        else:
            line = code.strip()
            name = line.split("=")[0].strip()
            text = target.read_text(encoding="utf-8")
            old = re.search(rf"^{name} = .*$", text, re.M)
            assert old and "\n" not in line, f"{path}: the doc's edit is not one line replacing `{name} = ...`"
            target.write_text(text.replace(old.group(0), line), encoding="utf-8")
    return root


def memeval(package: Path, cwd: Path, command: str, **env) -> subprocess.CompletedProcess:
    """`command` as typed (`memeval ...`), run by the copy of the package in a process of its own."""
    words = shlex.split(command)
    assert words[0] == "memeval"
    environment = {**os.environ, "PYTHONPATH": str(package), "MEMEVAL_PROGRESS": "0",
                   "MEMEVAL_CACHE_DIR": str(cwd / "cache"), **env}
    environment = {k: v for k, v in environment.items() if v is not None}
    return subprocess.run([sys.executable, "-m", "memeval", *words[1:]], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def workdir(tmp_path: Path, items=ITEMS) -> Path:
    (tmp_path / "trivia.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    return tmp_path


def test_the_doc_adds_a_benchmark_in_three_files_and_one_line():
    from memeval.benchmarks import REGISTERED

    found = blocks()
    assert [(mode, path) for mode, path, _ in found] == [
        ("file", "memeval/benchmarks/trivia/__init__.py"), ("file", "memeval/benchmarks/trivia/command.py"),
        ("file", "memeval/benchmarks/trivia/task.py"), ("edit", "memeval/benchmarks/__init__.py")]
    registered = found[-1][2].strip()
    assert registered == f"REGISTERED = {(*REGISTERED, 'trivia')!r}".replace("'", '"'), \
        "the doc's registration line must be today's REGISTERED with trivia added"
    assert sum(len(code.splitlines()) for _, _, code in found) < 140, "a user reads it in five minutes"
    assert doc_commands()[0] == "memeval trivia run --data trivia.jsonl --out runs/trivia"
    assert not (REPO / "memeval" / "benchmarks" / "trivia").exists(), "the test never writes into the checkout"


def test_the_documented_benchmark_runs_judges_and_resumes(package, fake, tmp_path):
    fake.responder = lambda body: "yes" if gold_in_answer(first_text(body)) else "no"
    cwd = workdir(tmp_path)
    run = cwd / "runs" / "trivia"

    help_text = memeval(package, cwd, "memeval --help")
    assert help_text.returncode == 0 and re.search(r"^\s+trivia\s+questions with a context", help_text.stdout, re.M)
    run_help = memeval(package, cwd, "memeval trivia run --help")
    assert run_help.returncode == 0, run_help.stderr
    assert all(f in run_help.stdout for f in ("--data", "--llm", "--judge-model", "--out", "--restart",
                                              "--no-progress")), run_help.stdout

    first, again, listing = (memeval(package, cwd, command) for command in doc_commands())
    assert first.returncode == 0, first.stderr
    assert "| extractive | 3 | 2 |" in first.stdout
    assert len(fake.received) == 3 and all(b["model"] == "claude-sonnet-4-6" and b["max_tokens"] == 5
                                           for b in fake.received), "the judge role's model, sent as asked"
    answers = [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]
    judgments = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == ["t1", "t2", "t3"] and answers[0]["prediction"] == "Ana lives in Lisbon."
    assert {(j["id"], j["correct"]) for j in judgments} == {("t1", True), ("t2", False), ("t3", True)}
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["command"] == "trivia run" and manifest["complete"] is True
    assert manifest["command_line"] == "memeval trivia run --data trivia.jsonl --out runs/trivia"
    assert manifest["identity"]["additive"]["judges"]["yes_no"]["model"] == "claude-sonnet-4-6"
    assert (run / "report.md").read_text().strip() == first.stdout.strip()

    assert again.returncode == 0, again.stderr
    assert len(fake.received) == 3 and len((run / "answers.jsonl").read_text().splitlines()) == 3, \
        "a rerun of a complete run asks nothing and writes no row"
    assert listing.returncode == 0, listing.stderr
    line = next(line for line in listing.stdout.splitlines() if "runs/trivia" in line)
    assert "trivia run" in line and "complete" in line and "3 answers, 3 judgments" in line, listing.stdout

    (run / "judgments.jsonl").write_text(json.dumps(judgments[0]) + "\n")  # killed after its first judgment
    resumed = memeval(package, cwd, doc_commands()[0])
    assert resumed.returncode == 0 and "| extractive | 3 | 2 |" in resumed.stdout, resumed.stderr
    assert len(fake.received) == 3, "the two judgments made again came from the cache"
    assert len((run / "judgments.jsonl").read_text().splitlines()) == 3

    (cwd / "other.jsonl").write_text(json.dumps(ITEMS[0]) + "\n")
    refused = memeval(package, cwd, "memeval trivia run --data other.jsonl --out runs/trivia")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "data" in refused.stderr and "Traceback" not in refused.stderr
    assert len((run / "answers.jsonl").read_text().splitlines()) == 3, "a refused run writes nothing"


def test_the_documented_benchmark_without_a_model_says_it_was_not_judged(package, tmp_path):
    """No key and an empty cache: the answers are made, no judgment is invented, the report says so, exit 4."""
    cwd = workdir(tmp_path)
    done = memeval(package, cwd, doc_commands()[0], ANTHROPIC_API_KEY=None, OPENAI_API_KEY=None)
    assert done.returncode == 4, done.stderr
    assert "| extractive | 3 | – (not judged) |" in done.stdout
    assert done.stdout.startswith("judge yes_no incomplete: 3 questions were not judged because no LLM")
    assert len((cwd / "runs" / "trivia" / "answers.jsonl").read_text().splitlines()) == 3
    assert (cwd / "runs" / "trivia" / "judgments.jsonl").read_text() == ""


def test_a_bad_data_file_is_one_line_naming_the_field(package, tmp_path):
    cwd = workdir(tmp_path, [{"id": "t1", "question": "Where?", "context": "Here."}])
    refused = memeval(package, cwd, doc_commands()[0])
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "trivia.jsonl" in refused.stderr and "missing answer" in refused.stderr
    assert not (cwd / "runs" / "trivia").exists(), "nothing half-written"
