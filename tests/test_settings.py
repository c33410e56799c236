"""A run setting is declared once, on its configuration's field (memeval.settings): the command's flags, the
configuration read back from them, the checks `memeval.api` and notebook parameters run, and the recorded rerun
command are all derived from it, so nothing has to be kept in step by hand."""

import argparse
from dataclasses import fields

import pytest

from memeval.benchmarks.graph80.config import StudyConfig
from memeval.benchmarks.locomo.config import LocomoRunConfig
from memeval.benchmarks.longmemeval.config import LongMemEvalConfig
from memeval.cli import build_parser
from memeval.errors import InputError
from memeval.settings import config_from, setting_fields

RUNS = [(("locomo", "run"), LocomoRunConfig, ["--out", "o"]),
        (("longmemeval", "run"), LongMemEvalConfig, ["--data", "d", "--out", "o"]),
        (("graph80", "run"), StudyConfig, ["--data", "d", "--out", "o"])]


def _parser(words):
    parser = build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


@pytest.mark.parametrize("words, config_class, required", RUNS)
def test_the_generator_gives_every_setting_its_flags(words, config_class, required):
    """Every field declared with `flag()` is an argument of its command, under its spelling and every older one
    (one per role for the models), and nothing but those fields and `--json` is left hand-written."""
    parser = _parser(words)
    accepted = {s for action in parser._actions for s in action.option_strings}
    wanted = set()
    for f in setting_fields(config_class):
        setting, roles = f.metadata["setting"], f.metadata["models"]
        wanted |= {f"--{role}-model" for role in roles} if roles else {setting.spelling, *setting.aliases}
    assert wanted and wanted <= accepted, wanted - accepted
    llm_only = {"--dry-run", "--answer-model", "--judge-model", "--extract-model", "--embed-model", "--llm",
                "--sampling", "--response-format", "--context-tokens", "--budget-usd", "--prices",
                "--max-concurrency"}
    assert accepted - wanted <= {"-h", "--help", "--json"} | llm_only


@pytest.mark.parametrize("words, config_class, required", RUNS)
def test_a_command_without_flags_is_the_configuration_with_its_defaults(words, config_class, required):
    """The flags' defaults are the fields' defaults: the bare command builds the configuration a script gets."""
    args = build_parser().parse_args([*words, *required])
    built = config_from(args, config_class)
    given = {"data": "d", "out": "o"} if config_class is not LocomoRunConfig else {"out": "o"}
    if config_class is StudyConfig:
        given["systems"] = ["memory_graph:hops=0", "memory_graph:hops=1", "memory_graph:hops=2", "chunks"]
    assert built == config_class(**given)


def test_the_rerun_command_parses_back_to_the_same_configuration():
    """`command_from` writes each setting as its flag reads it: parsing the recorded line gives the configuration
    back (`--restart` and the progress bars are how a command runs, not recorded)."""
    argv = ["locomo", "run", "--out", "o", "--conversations", "conv-26", "--questions", "sample:5",
            "--question-seed", "3", "--systems", "rag_turns:chunk_tokens=64,k=2;full_context", "--answerer", "claude",
            "--judge", "binary", "--judge-runs", "2", "--k", "5", "--llm", "replay", "--budget-usd", "1.5",
            "--judge-model", "claude-sonnet-4-6", "--key", "corrected", "--restart", "--no-progress"]
    config = config_from(build_parser().parse_args(argv), LocomoRunConfig)
    assert config.restart and not config.progress and config.systems == ["rag_turns:chunk_tokens=64,k=2",
                                                                           "full_context"]
    line = config.command_line()
    assert "--restart" not in line and "--no-progress" not in line and "--reader" in line
    again = config_from(build_parser().parse_args(line[1:]), LocomoRunConfig)
    assert again == LocomoRunConfig(**{**{f.name: getattr(config, f.name) for f in fields(config)},
                                       "restart": False, "progress": True})


@pytest.mark.parametrize("run, fields_, flag", [
    ("run_locomo", {"k": 0}, "--k"),
    ("run_locomo", {"judge_runs": True}, "--judge-runs"),
    ("run_locomo", {"answerer": "gpt"}, "--reader"),
    ("run_locomo", {"max_concurrency": 10_000}, "--max-concurrency"),
    ("run_locomo", {"question_seed": "3"}, "--question-seed"),
    ("run_longmemeval", {"data": "d", "questions": 0}, "--questions"),
    ("run_longmemeval", {"data": "d", "budget_usd": float("nan")}, "--budget-usd"),
    ("run_graph80", {"data": "d", "systems": ["chunks"], "repeats": 1000}, "--repeats"),
    ("run_graph80", {"data": "d", "systems": ["chunks"], "judge": "three-dim"}, "--judge")])
def test_the_api_refuses_a_bad_setting_in_one_line_and_creates_nothing(tmp_path, run, fields_, flag):
    """A value the flag would refuse is refused from Python too, by the same declaration, before anything is
    written."""
    from memeval import api

    out = tmp_path / "run"
    with pytest.raises(InputError) as caught:
        getattr(api, run)(out=str(out), progress=False, **fields_)
    assert caught.value.source == flag and "\n" not in str(caught.value)
    assert not out.exists()


def test_a_notebook_parameter_is_read_by_its_fields_declaration():
    """A notebook's run parameters are the run configuration's fields: bounds and choices come from the field."""
    from memeval.parameters import ParameterError, checked_parameters, known_parameters

    assert checked_parameters("01_prototype_scoring", {"k": "5"})["k"] == 5
    with pytest.raises(ParameterError, match="--k"):
        checked_parameters("01_prototype_scoring", {"k": "5000"})
    with pytest.raises(ParameterError, match="--judge-mode"):
        checked_parameters("02_full_run", {"judge_mode": "later"})
    with pytest.raises(ParameterError, match="--repeats"):
        checked_parameters("06_memory_graph_study", {"repeats": "0"})
    assert {"k", "judge_runs", "llm", "answer_model"} <= known_parameters("02_full_run")
