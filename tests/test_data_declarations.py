"""`memeval data` and `memeval natural` know a benchmark only through its declaration: its data sets
(`Benchmark.fetches`) and its natural-package source (`Benchmark.natural_source`). The built-in choices keep their
spelling and order, every declared hook resolves, and a benchmark added to the registry appears in both commands
with no edit to them."""

import argparse
import hashlib
import json
import re

import pytest

import memeval.benchmarks as benchmarks
from memeval.benchmarks import Benchmark, declarations, load
from memeval.cli import Parser
from memeval.commands import data as data_command
from memeval.data.fetch import DataSet, PinnedFile
from memeval.errors import InputError
from memeval.natural.source import NaturalSource, natural_source, package_prefixes, source_names


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memeval")
    data_command.register(parser.add_subparsers(dest="command", required=True))
    return parser


def _choices(parser: argparse.ArgumentParser, *path: str, dest: str) -> list:
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    action = next(a for a in parser._actions if a.dest == dest)
    return list(action.choices), action.default


def test_the_builtin_choices_keep_their_spelling_and_order():
    parser = _parser()
    assert _choices(parser, "data", "fetch", dest="dataset") == (
        ["locomo", "longmemeval", "locomo-plus", "nltk", "protocols", "locomo-audit"], None)
    assert _choices(parser, "data", "fetch", dest="variant") == (["s", "m", "oracle"], "s")
    assert _choices(parser, "data", "stats", dest="dataset") == (["locomo", "longmemeval"], "locomo")
    assert _choices(parser, "data", "sample", dest="dataset") == (["longmemeval"], None)
    assert source_names() == ["locomo", "longmemeval"]


def test_every_declared_hook_resolves_and_every_pin_is_a_sha256():
    sets = data_command.data_sets()
    assert len({d.name for d in sets}) == len(sets), "a data set name is declared twice"
    for declared in sets:
        for hook in (declared.fetch, declared.check, declared.stats, declared.sample, declared.status):
            if hook:
                assert callable(load(hook)), f"{declared.name}: {hook}"
        for file in declared.files:
            assert file.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", file.sha256), (declared.name, file.name)
    lme = next(d for d in sets if d.name == "longmemeval")
    assert lme.variants == ("s", "m", "oracle") and lme.pinned("longmemeval_s_cleaned.json").startswith("d6f21ea9")
    assert lme.pinned("longmemeval_oracle.json") is None, "only S has a pin; M and oracle take --sha256"
    for source in (natural_source(b.name) for b in declarations() if b.natural_source):
        assert isinstance(source, NaturalSource) and source.package_prefixes
    assert set(package_prefixes()) == {"locomo-natural-", "locomo-conversation-", "longmemeval-natural-"}


@pytest.mark.parametrize(("dataset", "line"), [
    ("locomo-audit", "the audit's files are pinned (memeval/benchmarks/locomo/audit/sources.py)"),
    ("protocols", "protocol files are pinned (memeval/protocols/sources.py)"),
    ("locomo-plus", "LoCoMo-Plus's files are pinned (memeval/benchmarks/locomo_plus/datasets.py)"),
])
def test_a_data_set_pinned_file_by_file_refuses_sha256_in_one_line_before_anything_is_made(dataset, line, tmp_path,
                                                                                            cli):
    result = cli("data", "fetch", dataset, "--sha256", "abc", "--dest", tmp_path / "d")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"memeval: error: --sha256: abc: {line}; no other checksum is taken\n"
    assert not (tmp_path / "d").exists()


# --- a toy benchmark, added to the registry only --------------------------------------------------------------
TOY_FILE = "toy.json"


def toy_fetch(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memeval.data.fetch import read_source, store, verify

    data, _ = read_source(args.source, 10.0, "file", TOY_FILE)
    verify(data, args.sha256 or TOY.pinned(TOY_FILE), args.source)
    print(f"toy: {store(data, Path(args.dest) / TOY_FILE)}")
    return 0


def toy_stats(args: argparse.Namespace) -> int:
    print(json.dumps({"toy_items": len(json.loads(open(args.path, encoding="utf-8").read()))}))
    return 0


TOY = DataSet(name="toy", title="Toy", licence="CC0", files=(PinnedFile(TOY_FILE, None, "0" * 64),),
              fetch=f"{__name__}:toy_fetch", dest="data/toy", stats=f"{__name__}:toy_stats", stats_help="a toy file")
TOY_SETS = (TOY,)


def toy_build(args: argparse.Namespace) -> int:
    print(f"toy build into {args.out}")
    return 0


TOY_SOURCE = NaturalSource("toy", ("toy-natural-",), toy_build)


@pytest.fixture()
def toy_registered(monkeypatch):
    toy = Benchmark(name="toy", command="memeval.benchmarks.locomo.command", fetches=f"{__name__}:TOY_SETS",
                    natural_source=f"{__name__}:TOY_SOURCE")
    real = benchmarks.declarations()
    monkeypatch.setattr(benchmarks, "declarations", lambda: [*real, toy])


def test_a_registered_benchmark_is_fetched_counted_and_built_with_no_edit_to_the_commands(toy_registered, tmp_path,
                                                                                          capsys):
    parser = _parser()
    assert _choices(parser, "data", "fetch", dest="dataset")[0] == [
        "locomo", "longmemeval", "locomo-plus", "toy", "nltk", "protocols", "locomo-audit"]
    assert _choices(parser, "data", "stats", dest="dataset")[0] == ["locomo", "longmemeval", "toy"]
    data_help = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["data"]
    assert "fetch and inspect the LoCoMo, LongMemEval and Toy data" in data_help.format_help()

    source = tmp_path / "in.json"
    source.write_text("[1, 2, 3]")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    args = parser.parse_args(["data", "fetch", "toy", "--source", str(source), "--dest", str(tmp_path / "d")])
    with pytest.raises(InputError, match="checksum mismatch"):  # the declared pin is not this file's
        args.handler(args)
    assert not (tmp_path / "d" / TOY_FILE).exists(), "nothing is written on a mismatch"
    args = parser.parse_args(["data", "fetch", "toy", "--source", str(source), "--sha256", digest, "--dest",
                              str(tmp_path / "d")])
    assert args.handler(args) == 0 and (tmp_path / "d" / TOY_FILE).read_bytes() == source.read_bytes()
    args = parser.parse_args(["data", "stats", "--dataset", "toy", str(tmp_path / "d" / TOY_FILE)])
    assert args.handler(args) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"toy_items": 3}

    assert source_names() == ["locomo", "longmemeval", "toy"]
    assert natural_source("toy").build(argparse.Namespace(out="x")) == 0
    assert "toy-natural-" in package_prefixes()


def test_an_unknown_source_and_a_source_without_conversations_are_one_line(tmp_path):
    from memeval.benchmarks.longmemeval.natural_source import build_longmemeval_directory
    from memeval.natural.stores import union_from_store
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    with pytest.raises(InputError, match="offers no natural packages"):
        natural_source("nope")
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([_with_turn("q1", "single-session-user", LONG_TURN)]))
    packages = tmp_path / "packages"
    assert build_longmemeval_directory(packages, str(data), target=1)["accepted"] == 1
    store = tmp_path / "store.json"
    store.write_text(json.dumps({"0": [{"text": "moved to Denver", "source_ids": []}]}))
    with pytest.raises(InputError, match="longmemeval's natural packages take no union"):
        union_from_store(packages, store, "memeval", "mine", tmp_path / "out")
    assert not (tmp_path / "out").exists(), "nothing is written"
