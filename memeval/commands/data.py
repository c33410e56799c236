"""`memeval data fetch|stats|status|sample`: over the data sets the benchmarks declare (`Benchmark.fetches`) and the
shared ones declared here (nltk's Punkt tables, the anchors' protocol files)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from memeval.commands.arguments import JSON, OUT, command
from memeval.data.fetch import PUNKT_TAB_URL, DataSet, PinnedFile
from memeval.protocols.sources import SOURCES
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, flag

NLTK = DataSet(
    name="nltk", title="nltk's English Punkt tables", licence=None,
    files=(PinnedFile("punkt_tab.zip", PUNKT_TAB_URL, None),),
    fetch="memeval.commands.data:fetch_nltk", dest="data/nltk",
    fetch_help="nltk: the English Punkt tables (punkt_tab.zip) that make B1 Mem0-exact; needs --sha256")
PROTOCOLS = DataSet(
    name="protocols", title="the anchors' protocol files", licence=None,  # each source's own (protocols/sources.py)
    files=tuple(PinnedFile(s.name, s.url, s.sha256) for s in SOURCES.values()),
    fetch="memeval.commands.data:fetch_protocols", dest="data/protocols",
    fetch_help="protocols: the anchors' own prompt files at pinned commits (Mem0's judge, LongMemEval's judge and "
               "reader, the LoCoMo paper's reader, the EverMemOS framework's judge and answer prompts), parsed into "
               "data/protocols/",
    source_help="protocols: a folder holding the source files (repository layout or the files alone) or one of them",
    status="memeval.commands.data:protocols_status",
    status_help="the anchors' protocol files (MEMEVAL_PROTOCOLS_DIR, else data/protocols)")
SHARED = (NLTK, PROTOCOLS)


@dataclass
class FetchConfig:
    """`data fetch`'s settings (and a benchmark's own fetch command's, without `dataset`); the data sets' names,
    variants and helps are the registered ones, given when the parser is built."""

    dataset: str = flag("dataset")
    variant: str | None = flag("--variant", None)
    dest: str | None = flag("--dest", None)
    source: list[str] | None = flag("--source", None, action="append")
    sha256: str | None = flag("--sha256", None, help="expected SHA-256 (default: the known hash of the file)")


@dataclass
class StatsConfig:
    path: str | None = flag("path", None, nargs="?")
    dataset: str | None = flag("--dataset", None)  # default: the first benchmark's own data
    json: bool = flag(JSON, False, help="print one JSON object")


@dataclass
class SampleConfig:
    dataset: str = flag("dataset")
    out: str = flag(OUT)


def data_sets() -> list[DataSet]:
    """Every data set by name order of `data fetch`: each benchmark's own data (in registration order), the shared
    ones, then the files beside a benchmark's data (its audit)."""
    from memeval.benchmarks import declarations, load

    declared = [d for b in declarations() if b.fetches for d in load(b.fetches)]
    return [*(d for d in declared if not d.companion), *SHARED, *(d for d in declared if d.companion)]


def _named(sets: list[DataSet], name: str) -> DataSet:
    return next(d for d in sets if d.name == name)  # argparse has checked `name` against the same list


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _both(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def register(subparsers: argparse._SubParsersAction) -> None:
    sets = data_sets()
    own = [d for d in sets if d.stats]  # a benchmark's own data: what stats reads
    data = command(subparsers, "data", f"fetch and inspect the {_both([d.title for d in own])} data (and fetch the "
                   "anchors' protocol files)", f"memeval data fetch {sets[0].name}\n  memeval data stats --json")
    sub = data.add_subparsers(dest="data_command", required=True)

    fetch = command(sub, "fetch", "download a data set and verify its SHA-256 (nothing is written on a mismatch)",
                    "memeval data fetch longmemeval --variant s\n  memeval data fetch protocols --source DIR")
    add_config_arguments(fetch, FetchConfig, "dataset", adjust={"dataset": {
        "choices": [d.name for d in sets], "help": "; ".join(d.fetch_help for d in sets if d.fetch_help)}})
    add_fetch_arguments(fetch, sets, "data/<dataset>")

    st = command(sub, "stats", "counts of conversations or instances, questions by category or type, turns, "
                 "sessions, and the data's quirks", "memeval data stats --json")
    add_config_arguments(st, StatsConfig, adjust={
        "path": {"help": f"file, directory or zip (default: discovered {own[0].title})"},
        "dataset": {"choices": [d.name for d in own], "cli_default": own[0].name,
                    "help": "what the path holds: " + _either([f"{own[0].stats_help} (default)",
                                                               *(d.stats_help for d in own[1:])])}})
    st.set_defaults(handler=_stats)

    watched = [d for d in sets if d.status]
    status = command(sub, "status", "which fetched files memeval holds and whether each checks out: "
                     + _both([d.status_help for d in watched]), "memeval data status")
    status.set_defaults(handler=_status)

    samples = [d for d in sets if d.sample]
    sample = command(sub, "sample", "write a small synthetic sample in a benchmark's file format (this project's own "
                     f"text, said to be synthetic wherever it is shown): {_either([d.title for d in samples])} "
                     "offline, without a download",
                     f"memeval data sample {samples[0].name} --out data/sample\n  memeval data stats --dataset "
                     f"{samples[0].name} data/sample/{samples[0].sample_file}")
    add_config_arguments(sample, SampleConfig, adjust={
        "dataset": {"choices": [d.name for d in samples], "help": "the format: " + _either([d.name for d in samples])},
        "out": {"help": f"directory that receives {_either([d.sample_file for d in samples])} and a README"}})
    sample.set_defaults(handler=_sample)


def add_fetch_arguments(parser: argparse.ArgumentParser, sets: list[DataSet], dest_default: str) -> None:
    """The flags of `memeval data fetch` and its handler, defined once: a benchmark's own fetch command (`memeval
    locomo-plus fetch`) takes them for its one data set from here, so the two spellings cannot drift apart."""
    variants = [d for d in sets if d.variants]
    sources = [d.source_help for d in sets if d.source_help]
    adjust = {"dest": {"help": f"directory to write into (default {dest_default})"},
              "source": {"help": "; ".join(["URL or local file (default: the public file, at its pinned revision "
                                            "where one is declared)", *sources])}}
    if variants:
        adjust["variant"] = {"choices": list(dict.fromkeys(v for d in variants for v in d.variants)),
                             "cli_default": variants[0].variants[0],
                             "help": "; ".join(d.variant_help for d in variants if d.variant_help)}
    add_config_arguments(parser, FetchConfig, *(["variant"] if variants else []), "dest", "source", "sha256",
                         adjust=adjust)
    parser.set_defaults(handler=_fetch, **({"dataset": sets[0].name} if len(sets) == 1 else {}))


def _sample(args: argparse.Namespace) -> int:
    from memeval.benchmarks import load

    return load(_named(data_sets(), args.dataset).sample)(args)


def _stats(args: argparse.Namespace) -> int:
    from memeval.benchmarks import load

    sets = data_sets()
    _check_stats_path(args.path, args.dataset, [d.name for d in sets if d.stats])
    return load(_named(sets, args.dataset).stats)(args)


def _check_stats_path(path: str | None, dataset: str, names: list[str]) -> None:
    """A PATH that is not there is refused naming the argument the user gave (the readers behind `data stats` are
    shared with the run commands, whose errors name their `--data`), and a data set's name given as PATH is told
    that --dataset names it."""
    from pathlib import Path

    from memeval.errors import InputError

    if path is None or Path(path).exists():
        return
    if path in names:
        raise InputError(path, "path", f"no such file or directory; a data set is named by --dataset: `memeval data "
                         f"stats --dataset {path} FILE`")
    raise InputError(path, "path", f"no such file or directory (read as {dataset}; `memeval data fetch {dataset}` "
                     "fetches it)")


def _check_dest(dest: str | None) -> None:
    """`--dest DIR` names a folder or nothing yet: a file there, or on the way there, is refused before anything
    is fetched, naming the flag (not mkdir's EEXIST after the download)."""
    from pathlib import Path

    from memeval.errors import InputError

    if dest is None:
        return
    path = Path(dest)
    for place in (path, *path.parents):
        if place.is_dir():
            return
        if place.exists() or place.is_symlink():
            what = "a file" if place.is_file() else "not a folder"
            raise InputError(dest, "--dest", f"{shown(place)} is {what}, not a folder; --dest names the folder the "
                             "fetched files are stored under")


def _fetch(args: argparse.Namespace) -> int:
    from memeval.benchmarks import load

    _check_dest(args.dest)
    declared = _named(data_sets(), args.dataset)
    if not declared.many_sources:
        if args.source is not None and len(args.source) > 1:
            from memeval.errors import InputError

            raise InputError("--source", args.source[1], f"given twice; {args.dataset} takes one source")
        args.source = args.source[0] if args.source else None
    return load(declared.fetch)(args)


def fetch_nltk(args: argparse.Namespace) -> int:
    from memeval.data.fetch import NLTK_DATA_DIR, fetch_punkt_tables
    from memeval.data.paths import project_root

    target = fetch_punkt_tables(args.dest or project_root() / NLTK_DATA_DIR, args.source, args.sha256)
    print(f"wrote {target} (SHA-256 verified, loaded by nltk); B1 is now Mem0-exact")
    return 0


def fetch_protocols(args: argparse.Namespace) -> int:
    from memeval.commands.arguments import finish
    from memeval.data.fetch import pinned_only
    from memeval.protocols.fetch import fetch_protocols

    pinned_only(args.sha256, "protocol files", "memeval/protocols/sources.py")
    results = fetch_protocols(args.source, args.dest)
    for r in results:
        if r.path is not None:
            print(f"{r.name}: wrote {r.path} (from {r.origin}, SHA-256 verified)")
    missing = [r for r in results if r.path is None]
    for r in missing:
        where = f"not found (looked for {', '.join(r.looked_in)})" if r.looked_in else "not fetched yet"
        print(f"{r.name}: {where}; it stays paraphrased", file=sys.stderr)
    if missing and not any(r.looked_in for r in missing):  # one file named: the rest simply were not asked for
        return 0
    return finish(f"incomplete: {len(missing)} of {len(results)} protocol files not found in {args.source}"
                  if missing else None)


def protocols_status() -> int:
    from memeval.errors import InputError
    from memeval.protocols import store

    print(f"protocols ({shown(store.protocols_dir())}):")
    missing = 0
    for name, source in SOURCES.items():
        try:
            state = "fetched" if store.load(name) is not None else "not fetched (paraphrased)"
        except InputError as exc:
            state = f"refused: {exc.problem}"
        missing += state != "fetched"
        print(f"  {name}: {shown(state)} — {source.origin}")
    return missing


def _status(args: argparse.Namespace) -> int:
    """Fetched state only; a stored file that does not check out is shown as such, not raised, so one bad file
    does not hide the state of the others. Under a data set with files not usable, the command that fetches them."""
    from memeval.benchmarks import load

    for declared in data_sets():
        if declared.status and (missing := load(declared.status)()):
            print(f"  {missing} of {len(declared.files)} not usable; `memeval data fetch {declared.name}` fetches "
                  "them")
    return 0
