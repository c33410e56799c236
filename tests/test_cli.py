"""The command line as a whole: grouped verbs and their aliases, shared flags, examples, inventory commands."""

import json
import subprocess
import sys

import pytest

from memeval.cli import build_parser


def _commands(parser, prefix=()):
    """Every leaf command of the parser, as (path, parser)."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, child in subs[0].choices.items():
        yield from _commands(child, (*prefix, name))


def _pages(parser, prefix=()):
    """Every help page of the parser, groups and the top level included, as (path, parser)."""
    import argparse

    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _pages(child, (*prefix, name))


def test_every_help_page_ends_with_an_example():
    pages = dict(_pages(build_parser()))
    assert {(), ("locomo",), ("memaudit",), ("natural",), ("data",), ("cache",), ("cache", "batches")} <= set(pages)
    for path, parser in pages.items():
        text = parser.format_help()
        assert "example:\n  memeval " in text, path
        assert text.rstrip().rsplit("example:", 1)[1].strip().startswith("memeval "), path


def test_locomo_run_help_lists_the_systems_and_the_released_conversations(locomo_dir, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps at hyphens on a narrow terminal
    from memeval.benchmarks.locomo.command import RELEASED_CONVERSATIONS
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.memory.registry import BUILTIN

    text = " ".join(dict(_pages(build_parser()))[("locomo", "run")].format_help().split())
    assert all(name in text for name in BUILTIN)
    assert [c.sample_id for c in load_locomo(locomo_dir)] == list(RELEASED_CONVERSATIONS)
    assert ", ".join(RELEASED_CONVERSATIONS) in text


def test_every_command_shows_an_example_and_long_ones_take_no_progress():
    leaves = dict(_commands(build_parser()))
    assert ("memaudit", "sweep") in leaves and ("sweep",) in leaves and ("cache", "prune") in leaves
    for path, parser in leaves.items():
        assert "example:\n  memeval " in (parser.epilog or ""), path
    for path in (("locomo", "run"), ("memaudit", "sweep"), ("sweep",), ("natural", "build"), ("graph80", "run"),
                 ("reproduce",)):
        assert any("--no-progress" in a.option_strings for a in leaves[path]._actions), path
    for path, parser in leaves.items():  # --out is a directory everywhere; one file is --output
        for action in parser._actions:
            if "--out" in action.option_strings and "--output" not in action.option_strings:
                assert action.metavar == "DIR", path


def test_cli_start_imports_no_heavy_module():
    code = ("import sys, memeval.cli; memeval.cli.build_parser(); "
            "print(sorted(m for m in ('nltk', 'anthropic', 'scipy', 'cvxpy', 'pandas', 'sklearn', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _top_level(parser) -> list[str]:
    import argparse

    return list(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


def test_a_command_a_benchmark_contributes_comes_from_its_declaration(monkeypatch):
    """`memeval judge` is LoCoMo's (Benchmark.commands), registered after every benchmark's own command and before
    the shared ones that follow them; a declaration without it leaves no `judge` command."""
    import dataclasses

    import memeval.benchmarks.locomo as locomo
    from memeval.benchmarks import declaration, declarations

    names = _top_level(build_parser())
    last_benchmark = max(names.index(b.name.replace("_", "-")) for b in declarations())  # each group by its name
    assert names[last_benchmark + 1:last_benchmark + 3] == ["judge", "memaudit"]
    assert build_parser().parse_args(["judge", "calibrate", "--judge", "binary", "--recorded"]).judge == "binary"
    monkeypatch.setattr(locomo, "BENCHMARK", dataclasses.replace(locomo.BENCHMARK, commands=()))
    declaration.cache_clear()
    try:
        assert "judge" not in _top_level(build_parser())
    finally:
        monkeypatch.undo()
        declaration.cache_clear()


def test_aliases_and_grouped_verbs_do_the_same(tmp_path, cli):
    cli("memaudit", "generate", "small", "--seed", "3", "--output", tmp_path / "p.json", check=True)
    grouped = json.loads(cli("memaudit", "solve", tmp_path / "p.json", "--budget", "4", "--json", check=True).stdout)
    alias = json.loads(cli("solve", tmp_path / "p.json", "--budget", "4", "--json", check=True).stdout)
    assert {k: v for k, v in grouped.items() if k != "runtime_s"} == {k: v for k, v in alias.items()
                                                                     if k != "runtime_s"}
    a = cli("memaudit", "sweep", "small", "--n-seeds", "3", "--budgets", "4", "--methods", "opt,gvt", "--jobs", "1",
            "--out", tmp_path / "a", "--no-progress", check=True)
    b = cli("sweep", "small", "--seeds", "3", "--budgets", "4", "--methods", "opt,gvt", "--jobs", "1",
            "--out", tmp_path / "b", "--quiet", check=True)
    assert a.stdout.replace(str(tmp_path / "a"), "X") == b.stdout.replace(str(tmp_path / "b"), "X")
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["argv"][:4] == ["memeval", "memaudit", "sweep", "small"]
    assert manifest["command_line"].startswith(
        "memeval memaudit sweep small --n-seeds 3 --budgets 4 --methods opt,gvt --jobs 1 --out ")


def test_ls_lists_results_with_their_recorded_commands(tmp_path, cli):
    cli("memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "4", "--methods", "opt", "--jobs", "1",
        "--out", tmp_path / "sweeps" / "one", "--no-progress", check=True)
    listed = json.loads(cli("ls", tmp_path / "sweeps", "--json", check=True).stdout)
    assert [r["directory"] for r in listed] == [str(tmp_path / "sweeps" / "one")]
    assert listed[0]["kind"] == "memaudit sweep" and listed[0]["command_line"].startswith("memeval memaudit sweep small")
    assert "memeval memaudit sweep small" in cli("ls", tmp_path / "sweeps", "--long", check=True).stdout
    (tmp_path / "empty").mkdir()  # a missing directory is an error (tests/test_operational_errors.py)
    assert "no results" in cli("ls", tmp_path / "empty", check=True).stdout


def test_cache_stats_and_prune(tmp_path, cli):
    from memeval.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c")
    for i, model in enumerate(["claude-opus-4-6", "claude-opus-4-6", "claude-sonnet-4-6"]):
        cache.put(f"k{i}", {"model": model, "messages": [i]}, {"text": "x"})
    stats = json.loads(cli("cache", "stats", "--dir", tmp_path / "c", "--json", check=True).stdout)
    assert stats["responses"] == 3 and stats["by_model"] == {"claude-opus-4-6": 2, "claude-sonnet-4-6": 1}
    dry = cli("cache", "prune", "--dir", tmp_path / "c", "--model", "claude-opus-4-6", "--dry-run", check=True)
    assert "2 cached responses and 0 embeddings would be deleted" in dry.stdout
    assert len(ResponseCache(tmp_path / "c")) == 3
    assert cli("cache", "prune", "--dir", tmp_path / "c", "--older-than", "1").stdout.startswith("0 cached")
    cli("cache", "prune", "--dir", tmp_path / "c", "--model", "claude-opus-4-6", check=True)
    assert len(ResponseCache(tmp_path / "c")) == 1
    refused = cli("cache", "prune", "--dir", tmp_path / "c")
    assert refused.returncode == 2 and "say what to prune" in refused.stderr


def test_cache_prune_deletes_a_models_embeddings_too(tmp_path, cli):
    import numpy as np

    from memeval.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c")
    cache.put_vectors([(f"e{i}", {"model": model, "text": str(i)}, np.ones(3, dtype=np.float32))
                       for i, model in enumerate(["text-embedding-3-small", "text-embedding-3-small", "m2"])])
    out = cli("cache", "prune", "--dir", tmp_path / "c", "--model", "text-embedding-3-small", check=True).stdout
    assert "0 cached responses and 2 embeddings were deleted" in out
    assert ResponseCache(tmp_path / "c").stats()["embeddings"] == 1


@pytest.mark.parametrize("argv", [["sweep", "small", "--budgets", "x"], ["memaudit", "nope"]])
def test_bad_arguments_exit_2_without_a_traceback(argv, cli):
    result = cli(*argv)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_version(cli):
    from importlib.metadata import version

    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"memeval {version('memeval')}"


def test_results_puts_runs_and_sweeps_side_by_side(locomo_dir, tmp_path, cli):
    import pandas as pd

    from memeval.qa.answer_pass import load_answers
    from memeval.scoring.aggregate import overall_mean

    run = tmp_path / "run"
    cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26,conv-30", "--questions", "first:6",
        "--systems", "rag_turns,observations", "--out", run, "--no-progress", "--json", check=True)
    cli("memaudit", "sweep", "small", "--n-seeds", "4", "--budgets", "4", "--methods", "opt,density_only",
        "--jobs", "1", "--out", tmp_path / "sweep", "--no-progress", check=True)
    result = cli("results", run, tmp_path / "sweep", "--out", tmp_path / "cmp", check=True)
    frame = pd.read_parquet(tmp_path / "cmp" / "results.parquet")
    assert frame.equals(pd.read_csv(tmp_path / "cmp" / "results.csv").astype(frame.dtypes.to_dict()))
    rag = frame[(frame.system == "rag_turns") & (frame.group == "overall (1–4)")].iloc[0]
    rows = [r for r in load_answers(run / "answers.jsonl") if r.system == "rag_turns" and r.category in (1, 2, 3, 4)]
    assert rag.value == pytest.approx(100 * overall_mean(rows), rel=1e-12, abs=0)
    assert rag.n == len(rows) and rag.resampled == "conversations"
    assert rag.ci_low <= rag.value <= rag.ci_high and rag.command.startswith("memeval locomo run --data ")
    density = frame[(frame.system == "density_only")].iloc[0]
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    assert density.value == next(r["mean_ratio"] for r in summary["rows"] if r["method"] == "density_only")
    assert density.group == "base, B = 4" and density.kind == "memaudit sweep"
    row = next(line for line in result.stdout.splitlines() if line.startswith("| rag_turns ") and "| F1 ×100 " in line)
    value, low, high = row.split("|")[3].replace("[", " ").replace("]", " ").replace(",", " ").split()
    places = len(value.partition(".")[2])  # printed to the precision the interval justifies
    for text, exact in ((value, rag.value), (low, rag.ci_low), (high, rag.ci_high)):
        assert abs(float(text) - exact) <= 0.5 * 10 ** -places + 1e-12 and len(text.partition(".")[2]) == places
    assert (tmp_path / "cmp" / "results.md").read_text() == result.stdout.split("written: ")[0].rstrip("\n") + "\n"
    missing = cli("results", tmp_path / "nothing")
    assert missing.returncode == 2 and "manifest.json: not found" in missing.stderr
