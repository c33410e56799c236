"""`memeval results` and `memeval ls` run as a user types them (the installed `memeval` script, in a subprocess) on
small real run directories: runs in columns, the paired difference only where two runs share questions, every
output format, the cache that keeps the second call fast, the `ls` line, and one-line errors for bad files."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

MEMEVAL = Path(sys.executable).with_name("memeval")


def memeval(*argv, cwd: Path | None = None, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMEVAL_PROGRESS": "0", "COLUMNS": "100"}  # `ls` fits the terminal: a fixed one here
    if cache is not None:
        env["MEMEVAL_CACHE_DIR"] = str(cache)
    return subprocess.run([str(MEMEVAL), *map(str, argv)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600)


def ok(*argv, **kwargs) -> str:
    result = memeval(*argv, **kwargs)
    assert result.returncode == 0, (argv, result.stderr)
    return result.stdout


def _locomo(locomo_dir, out, conversations, systems, *extra):
    ok("locomo", "run", "--data", locomo_dir, "--conversations", conversations, "--questions", "first:6",
       "--systems", systems, "--out", out, "--no-progress", "--json", *extra)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, locomo_dir) -> Path:
    """a: two systems on conv-26 and conv-30; b: rag_turns again at another k on the same questions;
    c: rag_turns on conv-41 (no question in common with a); sweep: a small MEMAUDIT sweep."""
    root = tmp_path_factory.mktemp("results")
    _locomo(locomo_dir, root / "runs" / "a", "conv-26,conv-30", "rag_turns,observations")
    _locomo(locomo_dir, root / "runs" / "b", "conv-26,conv-30", "rag_turns", "--k", "3")
    _locomo(locomo_dir, root / "runs" / "c", "conv-41", "rag_turns")
    ok("memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "2,4", "--methods", "opt,gvt,density_only",
       "--jobs", "1", "--out", root / "sweep", "--no-progress")
    return root


def _answers(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]


def _f1(run: Path, system: str) -> dict[str, float]:
    """sample id → F1 ×100 of `system`'s answers in categories 1–4, read straight from the file."""
    return {r["sample_id"]: 100 * r["f1"] for r in _answers(run)
            if r["system"] == system and r["category"] in (1, 2, 3, 4) and r["error"] is None}


def _table(markdown: str, title: str | None = None) -> list[list[str]]:
    """The cells of the first table (after `## title` when given) of a Markdown text."""
    text = markdown.split(f"## {title}\n", 1)[1] if title else markdown
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines if not line.startswith("|--")]


def _cells(text: str) -> tuple[float, float, float]:
    value, low, high = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", text).groups()
    return float(value), float(low), float(high)


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_runs_are_columns_and_shared_questions_get_a_paired_difference(runs):
    a, b = runs / "runs" / "a", runs / "runs" / "b"
    printed = ok("results", a, b, cwd=runs)
    header, *rows = _table(printed)
    sha = json.loads((a / "manifest.json").read_text())["git_sha"][:7]
    assert header[:2] == ["system", "metric (categories 1–4)"]
    assert header[2].startswith(f"a @ {sha}") and header[3].startswith("b @ ") and header[4] == "b − a"
    by_label = {(r[0], r[1]): r[2:] for r in rows}
    assert [r[0] for r in rows] == ["rag_turns"] * 3 + ["observations"] * 3
    in_a, in_b, difference = by_label["rag_turns", "F1 ×100"]
    f1_a, f1_b = _f1(a, "rag_turns"), _f1(b, "rag_turns")
    for text, exact in ((in_a, statistics.fmean(f1_a.values())), (in_b, statistics.fmean(f1_b.values()))):
        value, low, high = _cells(text)
        places = len(text.split()[0].partition(".")[2])
        assert abs(value - exact) <= 0.5 * 10 ** -places + 1e-9 and low <= value <= high
    shared = sorted(f1_a.keys() & f1_b.keys())
    assert len(shared) == 12
    exact = statistics.fmean(f1_b[s] - f1_a[s] for s in shared)
    value, low, high = _cells(difference)
    assert abs(value - exact) <= 0.5 * 10 ** -len(difference.split()[0].partition(".")[2]) + 1e-9
    assert low <= value <= high
    assert by_label["observations", "F1 ×100"][1:] == ["–", "–"]  # not in b: no value, no difference
    assert "b − a: paired difference" in printed and "n = 12)" in printed
    assert str(runs) not in printed, "paths are shown relative to the working directory"

    rows = _csv(ok("results", a, b, "--format", "csv"))
    paired = [r for r in rows if r["kind"] == "paired difference"]
    assert {(r["system"], r["metric"]) for r in paired} == {
        ("rag_turns", "F1 ×100 (official scorer)"), ("rag_turns", "BLEU-1 ×100 (Mem0's B1)"),
        ("rag_turns", "evidence recall ×100 (at the run's k)")}
    f1 = next(r for r in paired if r["metric"].startswith("F1"))
    assert float(f1["value"]) == pytest.approx(exact, abs=1e-9) and int(f1["n"]) == 12
    assert f1["directory"] == f"{b} − {a}" and float(f1["ci_low"]) <= float(f1["value"]) <= float(f1["ci_high"])


def test_runs_without_shared_questions_get_no_paired_difference(runs):
    a, c = runs / "runs" / "a", runs / "runs" / "c"
    printed = ok("results", a, c, cwd=runs)
    header, *_ = _table(printed)
    assert len(header) == 4 and not any("−" in h for h in header)
    assert "share no questions" in printed and "different question sets" in printed
    assert not [r for r in _csv(ok("results", a, c, "--format", "csv")) if r["kind"] == "paired difference"]
    header, *_ = _table(ok("results", c, a, runs / "runs" / "b", cwd=runs))  # b pairs with a, the run it shares with
    assert [h.split(" @ ")[0] for h in header[2:]] == ["c", "a", "b", "b − a"]


def test_runs_sharing_one_conversation_get_an_item_level_paired_interval(runs, tmp_path, locomo_dir):
    """Two configurations on conv-41 alone: no conversation-clustered interval exists, so the paired difference
    resamples the shared questions and says so (rather than "n/a")."""
    d = tmp_path / "d"
    _locomo(locomo_dir, d, "conv-41", "rag_turns", "--k", "2")
    rows = _csv(ok("results", runs / "runs" / "c", d, "--format", "csv"))
    paired = [r for r in rows if r["kind"] == "paired difference"]
    assert paired and all(r["resampled"] == "questions" and r["ci_low"] != "" and r["ci_high"] != "" for r in paired)
    recall = next(r for r in paired if r["metric"].startswith("evidence recall"))
    assert float(recall["ci_low"]) <= float(recall["value"]) <= float(recall["ci_high"])
    printed = ok("results", runs / "runs" / "c", d)
    assert "item level: it holds for that conversation" in printed and "n/a (1 conversation)" not in printed
    refused = memeval("results", runs / "runs" / "c", "--out", tmp_path / "cmp.html")
    assert refused.returncode == 2 and "--out is the directory" in refused.stderr and not (tmp_path / "cmp.html").exists()


def test_every_format(runs, tmp_path):
    dirs = [runs / "runs" / "a", runs / "runs" / "b", runs / "sweep"]
    rows = _csv(ok("results", *dirs, "--format", "csv"))
    assert {r["kind"] for r in rows} == {"locomo run", "memaudit sweep", "paired difference", "paired systems"}
    summary = json.loads((runs / "sweep" / "summary.json").read_text())
    gvt = next(r for r in summary["rows"] if r["method"] == "gvt" and r["budget"] == 4)
    sweep_row = next(r for r in rows if r["system"] == "gvt" and r["group"] == "base, B = 4")
    assert float(sweep_row["value"]) == gvt["mean_ratio"] and int(sweep_row["n"]) == 3

    refused = memeval("results", *dirs, "--format", "parquet")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == ["memeval: error: results: --format: parquet is binary and is not "
                                                   "printed: add --output FILE.parquet"]
    import pandas as pd

    ok("results", *dirs, "--format", "parquet", "--output", tmp_path / "r.parquet")
    frame = pd.read_parquet(tmp_path / "r.parquet")
    assert len(frame) == len(rows) and list(frame.columns) == list(rows[0])
    assert frame["value"].tolist() == [float(r["value"]) for r in rows]

    page = ok("results", *dirs, "--format", "html")
    assert page.startswith("<!doctype html>") and page.count("<table>") == 4  # runs, power, J and length, sweeps
    assert "<th class=\"n\">b − a</th>" in page and "ratio to OPT, B = 4" in page
    assert ok("results", *dirs, "--format", "html", "--output", tmp_path / "r.html").startswith("written: ")
    assert (tmp_path / "r.html").read_text() == page

    printed = ok("results", *dirs, "--out", tmp_path / "cmp")
    table, written = printed.split("written: ")
    assert (tmp_path / "cmp" / "results.md").read_text() == table
    assert written.split(", ")[-1].strip() == str(tmp_path / "cmp" / "results.parquet")
    assert (tmp_path / "cmp" / "results.csv").read_text() == ok("results", *dirs, "--format", "csv")
    assert [t.split("\n")[0] for t in table.split("## ")[1:]] == [
        "LoCoMo runs", "Which differences are real (paired, clustered by conversation, 80% power at α = 0.05)",
        "J beside answer length and the judge's leniency", "MEMAUDIT sweeps"]
    sweep = _table(table, "MEMAUDIT sweeps")
    assert [r[:2] for r in sweep[1:]] == [["gvt", "ratio to OPT, B = 2"], ["gvt", "ratio to OPT, B = 4"],
                                          ["density_only", "ratio to OPT, B = 2"],
                                          ["density_only", "ratio to OPT, B = 4"]]


def test_json_is_typed_rows_with_the_csv_numbers(runs, tmp_path):
    """--format json: the runs by short name, one object per system × metric (value, interval, n, run) and the
    paired differences naming both runs — the same numbers the CSV holds, to stdout or --output."""
    from memeval.records import ResultsDocument

    a, b, sweep = runs / "runs" / "a", runs / "runs" / "b", runs / "sweep"
    printed = ok("results", a, b, sweep, "--format", "json", cwd=runs)
    doc = ResultsDocument.model_validate(json.loads(printed))
    assert [(r.name, r.kind) for r in doc.runs] == [("a", "locomo run"), ("b", "locomo run"),
                                                     ("sweep", "memaudit sweep")]
    rows = _csv(ok("results", a, b, sweep, "--format", "csv"))
    cells = [r for r in rows if r["kind"] not in ("paired difference", "paired systems")]
    assert len(doc.cells) == len(cells) and len(doc.paired) == len(rows) - len(cells)
    assert len([d for d in doc.paired if d.run != d.minus]) == 3
    by_key = {(c.run, c.system, c.group, c.metric): c for c in doc.cells}
    for r in cells:
        c = by_key[Path(r["directory"]).name, r["system"], r["group"], r["metric"]]
        assert c.value == float(r["value"]) and c.n == int(r["n"])
        assert c.interval == ((float(r["ci_low"]), float(r["ci_high"])) if r["ci_low"] else None)
    f1 = next(d for d in doc.paired if d.metric.startswith("F1"))
    exact = statistics.fmean(_f1(b, "rag_turns")[s] - _f1(a, "rag_turns")[s]
                             for s in _f1(a, "rag_turns").keys() & _f1(b, "rag_turns").keys())
    assert (f1.run, f1.minus, f1.n) == ("b", "a", 12) and f1.difference == pytest.approx(exact, abs=1e-9)
    assert f1.interval[0] <= f1.difference <= f1.interval[1]
    ok("results", a, b, sweep, "--format", "json", "--output", tmp_path / "r.json", cwd=runs)
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(printed)


def test_json_on_a_terminal_is_ascii(runs, tmp_path):
    """A directory named with an OSC 52 clipboard write and a C1 CSI reaches stdout as \\u escapes only."""
    hostile = tmp_path / "run\x1b]52;c;SGVsbG8=\x07\u009b31m"
    shutil.copytree(runs / "runs" / "a", hostile)
    printed = ok("results", hostile, "--format", "json")
    assert printed.isascii() and not [c for c in printed if ord(c) < 32 and c != "\n"]
    assert json.loads(printed)["runs"][0]["directory"] == str(hostile)


def test_judgments_and_categories_add_rows(runs, tmp_path):
    from tests.rows import judgment_row

    run = tmp_path / "judged"
    shutil.copytree(runs / "runs" / "a", run)
    means = {}
    with open(run / "judgments.jsonl", "w") as handle:
        for n, r in enumerate(a for a in _answers(run) if a["system"] == "rag_turns"):
            means[r["sample_id"]] = mean = float(10 * (n % 7))
            handle.write(json.dumps(judgment_row(r["sample_id"], category=r["category"], system="rag_turns",
                                                 mean=mean, std=0.0, scores=[mean])) + "\n")
    rows = _csv(ok("results", run, "--format", "csv", "--by-category"))
    j = next(r for r in rows if r["metric"] == "J (graded judge)")
    qa = [m for s, m in means.items() if next(a for a in _answers(run) if a["sample_id"] == s)["category"] < 5]
    assert float(j["value"]) == pytest.approx(statistics.fmean(qa), abs=1e-12) and int(j["n"]) == len(qa)
    categories = {r["group"] for r in rows if r["system"] == "rag_turns" and r["metric"].startswith("F1")}
    present = {a["category"] for a in _answers(run)}
    names = {1: "multi-hop (1)", 2: "temporal (2)", 3: "open-domain (3)", 4: "single-hop (4)", 5: "adversarial (5)"}
    assert categories == {"overall (1–4)", *(names[c] for c in present)}
    labels = [r[1] for r in _table(ok("results", run, "--by-category"))[1:] if r[0] == "rag_turns"]
    assert labels[0] == "F1 ×100" and "J (graded)" in labels and labels[-1] == "evidence recall ×100"


def test_the_second_call_reads_the_cache_and_a_changed_file_is_read_again(runs, tmp_path):
    run = tmp_path / "a"
    shutil.copytree(runs / "runs" / "a", run)
    first = ok("results", run, cache=tmp_path / "cache", cwd=tmp_path)
    [entry] = (tmp_path / "cache" / "results").glob("*-answers.json")
    assert ok("results", run, cache=tmp_path / "cache", cwd=tmp_path) == first
    entry.write_text("{torn")  # a damaged entry is rebuilt, never an error
    assert ok("results", run, cache=tmp_path / "cache", cwd=tmp_path) == first
    assert json.loads(entry.read_text())["source"] == str((run / "answers.jsonl").resolve())
    rows = _answers(run)
    extra = next(r for r in rows if r["system"] == "observations" and r["category"] == 4)
    with open(run / "answers.jsonl", "a") as handle:  # a rerun's row supersedes the earlier one
        handle.write(json.dumps({**extra, "f1": 1.0 if extra["f1"] < 1 else 0.0}) + "\n")
    assert ok("results", run, cache=tmp_path / "cache", cwd=tmp_path) != first
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("x")  # a cache that cannot be written costs time, not the answer
    assert _table(ok("results", runs / "runs" / "a", cache=blocked, cwd=runs / "runs")) == _table(first)


def test_ls_prints_one_short_line_per_directory(runs, tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(runs / "runs", root / "runs")
    shutil.copytree(runs / "sweep", root / "sweep")
    shutil.copytree(runs / "runs" / "c", root / "runs" / "c.replaced-20260101T000000Z")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        import socket

        (root / "runs" / "b" / ".memeval.lock").write_text(json.dumps(
            {"pid": holder.pid, "host": socket.gethostname(), "command": "memeval locomo run"}))
        printed = ok("ls", "tree", cwd=tmp_path)
    finally:
        holder.kill()
        holder.wait()
    header, *lines = printed.splitlines()
    assert header.split() == ["KIND", "STATUS", "ROWS", "COMMIT", "AGE", "PATH"]
    assert all(len(line) <= 100 for line in printed.splitlines())
    sha = json.loads((root / "runs" / "a" / "manifest.json").read_text())["git_sha"]
    commit = sha[:7] + ("+" if sha.endswith("-dirty") else "")
    want = {"tree/runs/a": ("locomo run", "complete", "24 answers"),
            "tree/runs/b": ("locomo run", "running", "12 answers"),
            "tree/runs/c": ("locomo run", "complete", "6 answers"),
            "tree/runs/c.replaced-20260101T000000Z": ("locomo run", "replaced", "6 answers"),
            "tree/sweep": ("memaudit sweep", "complete", "18 rows")}
    seen = {}
    for line in lines[:len(want)]:
        match = re.fullmatch(r"(\S+(?: \S+)?) +(\S+) +(\d+ \w+) +(\S+) +(\d+ (?:s|min)) +(\S+)", line)
        assert match, line
        kind, status, rows, shown_commit, _, path = match.groups()
        seen[path] = (kind, status, rows)
        assert shown_commit == commit
    assert seen == want
    assert len(_answers(root / "runs" / "a")) == 24
    listed = json.loads(ok("ls", root, "--json"))
    assert {Path(r["directory"]).name: r["status"] for r in listed}["b"] == "complete"  # the holder is gone
    assert all(set(r) == {"directory", "kind", "status", "rows", "failed", "commit", "created_utc",
                          "command_line", "commands"} for r in listed)
    long = ok("ls", root, "--long").splitlines()
    assert any(line.startswith("    command: memeval memaudit sweep small") for line in long)
    # a pipe gets every path whole, however long (grep and scripts read it); a terminal gets lines that fit it
    assert "…" not in "\n".join(long) and not any(line.startswith("    path:") for line in long)
    assert sum(line.endswith(f"  {root}/runs/c.replaced-20260101T000000Z") for line in long) == 1
    from memeval.commands.inventory import listing

    fitted = listing(listed, long=True, width=100)
    assert all(len(line) <= 100 for line in fitted if not line.startswith("    "))
    cut = [(line, below) for line, below in zip(fitted, fitted[1:], strict=False) if "  …" in line]
    assert cut, "absolute temporary paths do not fit: shortened from the left"
    for line, below in cut:  # --long gives the whole path under a shortened one
        assert below.startswith(f"    path: {tmp_path}") and below.endswith(line.rsplit("…", 1)[1])


def test_ls_counts_the_latest_row_and_failures_without_reading_whole_rows(runs, tmp_path):
    run = tmp_path / "a"
    shutil.copytree(runs / "runs" / "a", run)
    rows = _answers(run)
    with open(run / "answers.jsonl", "a") as handle:  # two retries: one failed again, one answered
        handle.write(json.dumps({**rows[0], "error": "TransientError: 529"}) + "\n")
        handle.write(json.dumps({**rows[1], "prediction": "again"}) + "\n")
    [listed] = json.loads(ok("ls", tmp_path, "--json"))
    assert listed["rows"] == {"answers": 24} and listed["failed"] == {"answers": 1}
    assert "24 answers (1 failed)" in ok("ls", tmp_path)


def _bad_type(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["category"] = "x"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("damage, needle", [
    (lambda p: p.write_text(p.read_text().replace("\n", "\n{oops\n", 1)), ":2: line: not valid JSON"),
    (_bad_type, " line 1: category: "),
    (lambda p: (p.unlink(), p.mkdir()), "answers.jsonl: results: a directory, not a regular file"),
    (lambda p: p.unlink(), "answers.jsonl: file: not found"),
])
def test_a_damaged_run_is_one_line_naming_the_file(damage, needle, runs, tmp_path):
    run = tmp_path / "a"
    shutil.copytree(runs / "runs" / "a", run)
    path = run / "answers.jsonl"
    damage(path)
    result = memeval("results", run, runs / "runs" / "b", cache=tmp_path / "cache")
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memeval: error: ") and str(path) in lines[0], result.stderr
    assert needle in lines[0] and "Traceback" not in result.stderr


def test_a_torn_sweep_summary_is_one_line(runs, tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(runs / "sweep", sweep)
    (sweep / "summary.json").write_text('{"rows": [')
    result = memeval("results", sweep)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert str(sweep / "summary.json") in result.stderr


def test_the_fast_reader_agrees_with_the_records_reader(runs):
    from memeval.engine.registry import run_kinds, task_class
    from memeval.invocation import read_light_records
    from memeval.records import AnswerRow, read_records

    for kind, run in run_kinds().items():  # the names `ls` counts with are each task's own records
        task = task_class(kind)
        named = tuple(n.rpartition(":")[2] for n in (run.answer_record, run.judgment_record))  # or "module:Class"
        assert named == (task.answer_record.__name__, task.judgment_record.__name__)
    path = runs / "runs" / "a" / "answers.jsonl"
    whole = read_records(path, AnswerRow)
    assert any(r.retrieved_ids for r in whole) and any(r.recall_curve for r in whole)
    light = read_light_records(path, AnswerRow)
    assert light == [r.replace(retrieved_ids=[], recall_curve=None if r.recall_curve is None else [])
                     for r in whole]


def test_cells_print_to_the_precision_their_interval_justifies():
    from memeval.records import ResultRow
    from memeval.reports.results import cell, decimals

    assert [decimals(5.66, 7.42, 1), decimals(-0.08, 0.10, 1), decimals(0.8485, 0.8536, 3), decimals(3, 17, 1)] \
        == [1, 2, 4, 0]
    assert decimals(1.0, 1.0, 3) == 3 and decimals(None, None, 1) == 1

    def row(value, low, high, kind="locomo run", n=40, resampled="conversations", metric="F1 ×100 (official scorer)"):
        return ResultRow(directory="d", kind=kind, system="s", group="g", metric=metric, value=value, ci_low=low,
                         ci_high=high, n=n, resampled=resampled, commit=None, command=None)

    assert cell(row(6.562, 5.661, 7.424)) == "6.6 [5.7, 7.4]"
    assert cell(row(0.007, -0.077, 0.103, kind="paired difference")) == "+0.01 [-0.08, +0.10]"
    assert cell(row(-0.0004, -0.01, 0.01, kind="paired difference")) == "0.000 [-0.010, +0.010]"
    assert cell(row(3.26, None, None)) == "3.3 n/a (1 conversation)"
    assert cell(row(0.5, None, None, n=1, resampled="packages", metric="ratio to OPT")) == "0.500 n/a (1 package)"
