"""The one engine: the graph study is a task, so it resumes after a kill and derives the same rows; a
configuration's declared flags are its command's. The worked example of docs/layout.md (a benchmark folder added
from the doc alone) runs in tests/test_adding_a_benchmark.py."""

import pytest


def test_graph80_resumes_after_a_kill_and_derives_the_same_rows(tmp_path, cli):
    cli("graph80", "generate", "--seed", "0", "--out", tmp_path / "d", check=True)
    args = ("graph80", "run", "--data", tmp_path / "d", "--systems", "chunks,no_memory", "--repeats", "2",
            "--out", tmp_path / "run", "--no-progress")
    cli(*args, check=True)
    rows = (tmp_path / "run" / "rows.jsonl").read_bytes()
    summary = (tmp_path / "run" / "summary.json").read_bytes()
    answers = tmp_path / "run" / "answers.jsonl"
    kept = answers.read_text().splitlines()[:100]
    answers.write_text("\n".join(kept) + "\n")  # killed after 100 of its 320 answers
    cli(*args, check=True)
    assert len(answers.read_text().splitlines()) == 320, "only the missing answers were made again"
    assert (tmp_path / "run" / "rows.jsonl").read_bytes() == rows
    assert (tmp_path / "run" / "summary.json").read_bytes() == summary
    from memeval import api

    stored = api.load_run(tmp_path / "run")
    assert stored.kind == "graph80 run" and {s: len(rows) for s, rows in stored.answers.items()} == {
        "chunks": 160, "no_memory": 160}


@pytest.mark.parametrize("words, config_class", [
    (("locomo", "run"), "memeval.benchmarks.locomo.task:LocomoRunConfig"),
    (("longmemeval", "run"), "memeval.benchmarks.longmemeval.task:LongMemEvalConfig"),
    (("graph80", "run"), "memeval.benchmarks.graph80.task:StudyConfig"),
    (("locomo-plus", "run"), "memeval.benchmarks.locomo_plus.task:LocomoPlusConfig")])
def test_a_configuration_declares_flags_its_command_accepts(words, config_class):
    """The rerun command a manifest records is built from the configuration's own declarations; each must be a
    flag of that command, so the two cannot drift apart."""
    import importlib

    from memeval.cli import build_parser
    from memeval.invocation import declared_flags
    from tests.test_front_doors import command_paths

    module, name = config_class.split(":")
    declared = declared_flags(getattr(importlib.import_module(module), name))
    parser = dict(command_paths(build_parser()))[words]
    accepted = {s for action in parser._actions for s in action.option_strings}
    assert declared and not set(declared) - accepted, set(declared) - accepted
