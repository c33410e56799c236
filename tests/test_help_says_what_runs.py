"""What a new user reads in `--help` matches what the command does: the run kinds `results` and `view` read come
from the registrations, the flags offered are the ones the command uses, and no help names a flag the command
lacks."""

from __future__ import annotations

from memeval.engine.registry import answer_kinds
from tests.parsers import subcommand_parser


def _help(*words: str, dest: str) -> str:
    parser = subcommand_parser(words)
    return next(a.help for a in parser._actions if a.dest == dest)


def test_results_names_every_kind_holding_answer_rows_and_no_fixed_category_span():
    text = _help("results", dest="directories")
    kinds = set(answer_kinds().values())
    assert "locomo-plus run" in kinds
    assert all(f"`{kind}`" in text for kind in kinds), text
    assert "`memaudit sweep`" in text
    by_category = _help("results", dest="by_category")
    assert "1–5" not in by_category and "LoCoMo" not in by_category


def test_view_names_the_kinds_it_renders_and_says_it_refuses_the_others():
    from memeval.viewer import viewed_kinds

    text = _help("view", dest="runs")
    assert all(f"`{kind}`" in text for kind in viewed_kinds()), text
    assert "`locomo-plus run`" in text and "refused" in text
    assert "other tasks: their report.md" not in text


def test_natural_build_offers_only_the_model_role_it_calls():
    flags = {s for a in subcommand_parser(("natural", "build"))._actions for s in a.option_strings}
    assert "--extract-model" in flags
    assert not {"--answer-model", "--judge-model", "--embed-model"} & flags


def test_llm_help_names_prices_only_where_the_command_takes_prices():
    import argparse
    from dataclasses import dataclass

    from memeval.commands.llm_options import BACKEND
    from memeval.settings import add_config_arguments, flag

    @dataclass
    class Unpriced:  # as docs/layout.md's trivia example declares it: --llm, no --prices
        llm_backend: str = flag(BACKEND)

    parser = argparse.ArgumentParser()
    add_config_arguments(parser, Unpriced)
    unpriced = next(a.help for a in parser._actions if a.dest == "llm")
    assert "--prices" not in unpriced and "local: the named models" in unpriced
    for words in (("locomo", "run"), ("doctor",), ("natural", "build")):
        flags = {s for a in subcommand_parser(words)._actions for s in a.option_strings}
        assert "--prices" in flags and "unless --prices prices them" in _help(*words, dest="llm")


def test_natural_audit_llm_offers_only_the_judge_role_it_calls():
    flags = {s for a in subcommand_parser(("natural", "audit-llm"))._actions for s in a.option_strings}
    assert "--judge-model" in flags
    assert not {"--answer-model", "--extract-model", "--embed-model"} & flags
