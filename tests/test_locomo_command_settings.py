"""LoCoMo's and graph80's other commands (`locomo import`, `locomo trust`, `judge calibrate`, `graph80 generate`)
declare their settings once (memeval/benchmarks/locomo/command_config.py, graph80/config.py): their parsers, the
configuration read back, the rerun lines their manifests record and the notebook parameters read as their flags
are built from those declarations, and memeval.parameters builds no parser."""

import argparse
import inspect
import json
import shlex

import pytest

from memeval.benchmarks.graph80.config import GenerateConfig
from memeval.benchmarks.locomo.command_config import ImportConfig, TrustConfig
from memeval.cli import build_parser
from memeval.invocation import path_text
from memeval.settings import config_from, setting_fields
from tests.parsers import subcommand_parser


def _line_as_recorded_before(source, fmt, system, out, data=None, skip_invalid=False, from_system=None,
                             judge_model=None, judge_prompt=None):
    """The `locomo import` line as memeval recorded it before the declaration (written out by hand)."""
    return ["memeval", "locomo", "import", path_text(source), "--format", fmt, "--system", system,
            *(["--data", path_text(data)] if data else []), *(["--skip-invalid"] if skip_invalid else []),
            *(["--from-system", from_system] if from_system else []),
            *(["--judge-model", judge_model] if judge_model else []),
            *(["--judge-prompt", judge_prompt] if judge_prompt else []),
            "--out", path_text(out)]


@pytest.mark.parametrize("given", [
    {},
    {"data": "data/locomo"},
    {"skip_invalid": True, "from_system": "rag_turns"},
    {"judge_model": "gpt-4o-mini", "judge_prompt": "evermemos", "data": "/elsewhere/locomo10.json"},
    {"from_system": "a b", "skip_invalid": True, "data": "data/locomo", "judge_model": "m", "judge_prompt": "evermemos"},
])
@pytest.mark.parametrize("where", ["runs/mem0", "/tmp/outside/run"])
def test_the_import_line_is_the_one_recorded_before(given, where):
    fmt = "evermemos" if "judge_prompt" in given else "mem0"
    config = ImportConfig(source="results/mem0 file.json", format=fmt, system="mem0-harness", out=where, **given)
    assert config.command_line() == _line_as_recorded_before("results/mem0 file.json", fmt, "mem0-harness", where,
                                                             **given)


def test_an_import_through_the_cli_records_the_same_line(cli, conversations, locomo_dir, tmp_path):
    """End to end: the manifest's command line, byte for byte as before, and it parses back to the import."""
    qa = conversations[0].qa[:2]
    source = tmp_path / "answers file.json"
    source.write_text(json.dumps({"0": [{"question": q.question, "response": "x", "answer": q.answer,
                                         "category": q.category} for q in qa]}))
    data = locomo_dir / "locomo10_v2"
    out = tmp_path / "run"
    cli("locomo", "import", source, "--format", "mem0", "--system", "outside", "--data", data, "--out", out,
        "--skip-invalid", check=True)
    entry = json.loads((out / "manifest.json").read_text())["imported"]["outside"]
    expected = _line_as_recorded_before(source, "mem0", "outside", out, data=str(data), skip_invalid=True)
    assert entry["command_line"] == shlex.join(expected)
    again = config_from(build_parser().parse_args(shlex.split(entry["command_line"])[1:]), ImportConfig)
    assert (again.source, again.format, again.system, again.skip_invalid) == (path_text(source), "mem0", "outside",
                                                                               True)


def _calibrate_line_before(args, sets):
    """`judge calibrate`'s line as memeval recorded it before the declaration (written out by hand)."""
    line = ["memeval", "judge", "calibrate", "--judge", args.judge, "--sets", ",".join(sets), "--out", args.out]
    for flag, value in (("--judge-runs", args.judge_runs), ("--questions", args.questions), ("--data", args.data),
                        ("--judge-model", args.judge_model), ("--llm", None if args.llm == "auto" else args.llm)):
        if value is not None:
            line += [flag, str(value)]
    return line


@pytest.mark.parametrize("argv", [
    ["--judge", "binary", "--out", "runs/c"],
    ["--judge", "graded", "--sets", "gold,gold,vague_wrong", "--out", "runs/c", "--questions", "20"],
    ["--out", "/abs/c", "--judge", "evermemos", "--judge-runs", "2", "--data", "data/locomo", "--judge-model", "m1",
     "--llm", "openai", "--restart", "--no-progress", "--json"],
    ["--judge", "binary", "--sets", "specific_wrong,vague_wrong,gold", "--out", "c", "--llm", "auto"],
])
def test_the_calibration_line_is_the_one_recorded_before(argv):
    from memeval.benchmarks.locomo.judge_command import _command_line, _sets

    args = build_parser().parse_args(["judge", "calibrate", *argv])
    sets = _sets(args.sets)
    assert _command_line(args, sets) == _calibrate_line_before(args, sets)


def test_trust_and_generate_read_their_settings_from_the_declarations():
    trust = config_from(build_parser().parse_args(["locomo", "trust", "a", "b", "--ambiguous", "drop", "--out", "o"]),
                        TrustConfig)
    assert (trust.runs, trust.ambiguous, trust.published, trust.out) == (["a", "b"], "drop", False, "o")
    bare = build_parser().parse_args(["locomo", "trust", "--published", "--out", "o"])
    assert list(bare.runs) == [] and bare.published
    generate = config_from(build_parser().parse_args(["graph80", "generate", "--seed", "7", "--out", "g"]),
                           GenerateConfig)
    assert generate == GenerateConfig(seed=7, out="g")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["graph80", "generate", "--seed", "-1", "--out", "g"])


def test_every_declared_command_configuration_is_its_commands_arguments():
    """Each configuration a benchmark declares for a command (Benchmark.configs, RunKind.config) is what that
    command's parser takes: every setting under its spelling, a positional under its name."""
    from memeval.benchmarks import declarations, load
    from memeval.parameters import command_configs

    declared = command_configs()
    assert {"locomo import", "locomo trust", "judge calibrate", "graph80 generate"} <= set(declared)
    for b in declarations():
        for command in [*b.configs, *(k for k, r in b.tasks.items() if r.config)]:
            parser = subcommand_parser(command.split())
            accepted = {s for a in parser._actions for s in a.option_strings} | {
                a.dest for a in parser._actions if not a.option_strings}
            for f in setting_fields(load(declared[command])):
                setting, roles = f.metadata["setting"], f.metadata["models"]
                wanted = {f"--{r}-model" for r in roles} if roles else {setting.spelling, *setting.aliases}
                assert wanted <= accepted, (command, wanted - accepted)


def test_notebook_parameters_are_read_by_declarations_without_building_a_parser(monkeypatch):
    """06's `seed` is `graph80 generate --seed`, 09's `ambiguous` is `locomo trust --ambiguous`: both read from
    their declarations, with no argparse parser built (memeval.parameters has none to build)."""
    from memeval import parameters
    from memeval.parameters import FLAGS, ParameterError, _reader, checked_parameters

    def refused(*args, **kwargs):
        raise AssertionError("memeval.parameters built an argparse parser")

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", refused)
    assert checked_parameters("06_memory_graph_study", {"seed": "3"})["seed"] == 3
    with pytest.raises(ParameterError, match=r"graph80 generate --seed"):
        checked_parameters("06_memory_graph_study", {"seed": "-1"})
    assert checked_parameters("09_trust", {"ambiguous": "drop"})["ambiguous"] == "drop"
    with pytest.raises(ParameterError, match=r"locomo trust --ambiguous"):
        checked_parameters("09_trust", {"ambiguous": "sometimes"})
    for notebook, flags in FLAGS.items():
        for name, (command, flag) in flags.items():
            assert _reader(notebook, name)[1].spelling == flag, (notebook, name, command)
    assert "ArgumentParser" not in inspect.getsource(parameters)
