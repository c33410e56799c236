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
from tests.parsers import subcommand_parser

RUNS = [(("locomo", "run"), LocomoRunConfig, ["--out", "o"]),
        (("longmemeval", "run"), LongMemEvalConfig, ["--data", "d", "--out", "o"]),
        (("graph80", "run"), StudyConfig, ["--data", "d", "--out", "o"])]


@pytest.mark.parametrize("words, config_class, required", RUNS)
def test_the_generator_gives_every_setting_its_flags(words, config_class, required):
    """Every field declared with `flag()` is an argument of its command, under its spelling and every older one
    (one per role for the models), and nothing but those fields and `--json` is left hand-written."""
    parser = subcommand_parser(words)
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


# The forms the shared commands declare (memeval/commands/): each read by argparse, checked and rerun as declared.

def _shared_forms():
    from dataclasses import dataclass

    from memeval.settings import Setting, flag

    @dataclass
    class Forms:
        names: list[str] = flag("names", nargs="+", metavar="NAME", rerun=False, help="one or more")
        root: str | None = flag("root", None, nargs="?")
        only: list[str] | None = flag("--only", None, nargs="*")
        source: list[str] | None = flag("--source", None, action="append")
        where: str = flag(Setting("--where", always=True), "here")
        pick: str | None = flag("--pick", None)

    return Forms


def _forms_parser(**adjust):
    from memeval.settings import add_config_arguments

    parser = argparse.ArgumentParser(prog="forms")
    add_config_arguments(parser, _shared_forms(), adjust=adjust)
    return parser


def test_a_positional_takes_its_declared_count():
    """`nargs` on a positional: `+` needs one at least, `?` may be left out and reads its default."""
    parser = _forms_parser()
    assert parser.parse_args(["a", "b"]).names == ["a", "b"] and parser.parse_args(["a"]).root is None
    assert parser.parse_args(["a"]).names == ["a"]
    with pytest.raises(SystemExit):
        parser.parse_args([])
    assert "NAME [NAME ...]" in parser.format_usage()


def test_a_flag_with_nargs_star_takes_the_words_after_it():
    parser = _forms_parser()
    assert parser.parse_args(["a", "--only", "00", "03"]).only == ["00", "03"]
    assert parser.parse_args(["a", "--only"]).only == [] and parser.parse_args(["a"]).only is None


def test_an_append_flag_collects_each_time_it_is_given():
    parser = _forms_parser()
    assert parser.parse_args(["a", "--source", "x", "--source", "y"]).source == ["x", "y"]
    assert parser.parse_args(["a"]).source is None


def test_adjust_sets_what_only_the_parser_knows():
    """`adjust`: the registered choices, the command line's default and the help, given when the parser is built;
    the declaration itself is left as it was."""
    parser = _forms_parser(pick={"choices": ["p", "q"], "cli_default": "p", "help": "one of them"})
    assert parser.parse_args(["a"]).pick == "p" and parser.parse_args(["a", "--pick", "q"]).pick == "q"
    with pytest.raises(SystemExit):
        parser.parse_args(["a", "--pick", "r"])
    assert "one of them" in parser.format_help()
    fresh = _forms_parser()
    assert fresh.parse_args(["a"]).pick is None and "one of them" not in fresh.format_help()


def test_the_rerun_line_writes_a_list_as_words_and_an_always_setting_at_its_default():
    from memeval.invocation import command_from

    Forms = _shared_forms()
    line = command_from(Forms(names=["a"], only=["00", "03"]), ["memeval", "forms"])
    assert line == ["memeval", "forms", "--only", "00", "03", "--where", "here"]
    assert command_from(Forms(names=["a"], only=[]), ["x"]) == ["x", "--where", "here"]


def test_reproduce_records_the_line_it_recorded_before(monkeypatch, tmp_path):
    """Derived from its declaration, `reproduce`'s rerun line is the hand-written one: every directory always, the
    --only prefixes as words, an empty --only as none."""
    from memeval.commands.reproduce import _command_line
    from memeval.invocation import path_text

    monkeypatch.chdir(tmp_path)
    parser = subcommand_parser(["reproduce"])
    dirs = ["--notebooks", path_text("notebooks"), "--out", path_text("reports"), "--figures", path_text("figures")]
    assert _command_line(parser.parse_args([])) == ["memeval", "reproduce", *dirs]
    assert _command_line(parser.parse_args(["--only"])) == ["memeval", "reproduce", *dirs]
    assert _command_line(parser.parse_args(["--quick", "--only", "03", "05", "--judged", "--no-progress"])) == [
        "memeval", "reproduce", *dirs, "--only", "03", "05", "--judged", "--quick"]


def test_a_list_setting_is_checked_item_by_item():
    from memeval.settings import check_settings

    Forms = _shared_forms()
    check_settings(Forms(names=["a"], only=["00"], source=["x"]))
    for bad in (Forms(names=[]), Forms(names="a"), Forms(names=["a"], only=[3]), Forms(names=["a"], source="x")):
        with pytest.raises(InputError):
            check_settings(bad)
