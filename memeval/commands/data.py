"""`memeval data fetch|stats`."""

from __future__ import annotations

import argparse
import json
import sys

from memeval.benchmarks.locomo.categories import CATEGORY_NAMES
from memeval.commands.arguments import command
from memeval.safe_text import shown


def register(subparsers: argparse._SubParsersAction) -> None:
    data = command(subparsers, "data", "fetch and inspect the LoCoMo and LongMemEval data (and fetch the anchors' "
                   "protocol files)", "memeval data fetch locomo\n  memeval data stats --json")
    sub = data.add_subparsers(dest="data_command", required=True)

    fetch = command(sub, "fetch", "download a data set and verify its SHA-256 (nothing is written on a mismatch)",
                    "memeval data fetch longmemeval --variant s\n  memeval data fetch protocols --source DIR")
    fetch.add_argument("dataset", choices=["locomo", "longmemeval", "nltk", "protocols", "locomo-audit"],
                       help="nltk: the English Punkt tables (punkt_tab.zip) that make B1 Mem0-exact; needs --sha256; "
                            "protocols: the anchors' own prompt files at pinned commits (Mem0's judge, LongMemEval's "
                            "judge and reader, the LoCoMo paper's reader, the EverMemOS framework's judge and answer "
                            "prompts), parsed into data/protocols/; locomo-audit: the "
                            "independent LoCoMo audit's ten files at a pinned commit (CC BY-NC 4.0), stored byte for "
                            "byte under data/locomo-audit/")
    fetch.add_argument("--variant", choices=["s", "m", "oracle"], default="s",
                       help="LongMemEval: S (≈115k tokens a question), M (≈500 sessions) or oracle (evidence only)")
    fetch.add_argument("--dest", default=None, help="directory to write into (default data/<dataset>)")
    fetch.add_argument("--source", default=None, action="append",
                       help="URL or local file (default: the public file; LongMemEval at a pinned revision); "
                            "protocols: a folder holding the source files (repository layout or the files alone) or "
                            "one of them; locomo-audit: folders or files, the flag repeated (repository layout, or loose "
                            "files matched by SHA-256)")
    fetch.add_argument("--sha256", default=None, help="expected SHA-256 (default: the known hash of the file)")
    fetch.set_defaults(handler=_fetch)

    st = command(sub, "stats", "counts of conversations or instances, questions by category or type, turns, "
                 "sessions, and the data's quirks", "memeval data stats --json")
    st.add_argument("path", nargs="?", default=None, help="file, directory or zip (default: discovered LoCoMo)")
    st.add_argument("--dataset", choices=["locomo", "longmemeval"], default="locomo",
                    help="what the path holds: locomo (default) or a LongMemEval file")
    st.add_argument("--json", action="store_true", help="print one JSON object")
    st.set_defaults(handler=_stats)

    status = command(sub, "status", "which fetched files memeval holds and whether each checks out: the anchors' "
                     "protocol files (MEMEVAL_PROTOCOLS_DIR, else data/protocols) and the LoCoMo audit's "
                     "(MEMEVAL_LOCOMO_AUDIT_DIR, else data/locomo-audit)", "memeval data status")
    status.set_defaults(handler=_status)

    sample = command(sub, "sample", "write a small synthetic sample in a benchmark's file format (this project's own "
                     "text, said to be synthetic wherever it is shown): LongMemEval offline, without a download",
                     "memeval data sample longmemeval --out data/sample\n  memeval longmemeval run --data "
                     "data/sample/longmemeval_sample.json --systems rag_turns,full_context --out runs/lme-sample")
    sample.add_argument("dataset", choices=["longmemeval"], help="the format: longmemeval")
    sample.add_argument("--out", required=True, metavar="DIR",
                        help="directory that receives longmemeval_sample.json and a README")
    sample.set_defaults(handler=_sample)


def _sample(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.sample import SYNTHETIC, sample_instances, write_sample

    data, readme = write_sample(args.out)
    print(f"wrote {shown(data)} ({len(sample_instances())} questions, {SYNTHETIC}) and {shown(readme)}\n"
          f"next: memeval data stats --dataset longmemeval {shown(data)}\n"
          f"      memeval longmemeval run --data {shown(data)} --systems rag_turns,full_context --out runs/lme-sample")
    return 0


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
    from memeval.data.fetch import NLTK_DATA_DIR, fetch_locomo, fetch_longmemeval, fetch_punkt_tables

    _check_dest(args.dest)
    if args.dataset == "locomo-audit":
        return _fetch_audit(args)
    if args.source is not None and len(args.source) > 1:
        from memeval.errors import InputError

        raise InputError("--source", args.source[1], f"given twice; {args.dataset} takes one source")
    args.source = args.source[0] if args.source else None
    if args.dataset == "protocols":
        return _fetch_protocols(args)

    if args.dataset == "nltk":
        from memeval.data.paths import project_root

        target = fetch_punkt_tables(args.dest or project_root() / NLTK_DATA_DIR, args.source, args.sha256)
        print(f"wrote {target} (SHA-256 verified, loaded by nltk); B1 is now Mem0-exact")
        return 0
    if args.dataset == "longmemeval":
        target = fetch_longmemeval(args.variant, args.dest or "data/longmemeval", args.source, args.sha256)
        print(f"wrote {target} (SHA-256 verified, every instance parsed)")
        return 0
    args.dest = args.dest or "data/locomo"
    target = fetch_locomo(args.dest, source=args.source, sha256=args.sha256)
    print(f"wrote {target} (SHA-256 verified)")
    return 0


def _fetch_protocols(args: argparse.Namespace) -> int:
    from memeval.commands.arguments import finish
    from memeval.errors import InputError
    from memeval.protocols.fetch import fetch_protocols

    if args.sha256:
        raise InputError("--sha256", args.sha256, "protocol files are pinned (memeval/protocols/sources.py); "
                         "no other checksum is taken")
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


def _fetch_audit(args: argparse.Namespace) -> int:
    from memeval.benchmarks.locomo.audit.fetch import fetch_audit
    from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_FILES, AUDIT_LICENCE, AUDIT_REPO
    from memeval.benchmarks.locomo.audit.store import audit_dir
    from memeval.errors import InputError

    if args.sha256:
        raise InputError("--sha256", args.sha256, "the audit's files are pinned (memeval/benchmarks/locomo/audit/sources.py); no other "
                         "checksum is taken")
    result = fetch_audit(args.source, args.dest)
    for file, path, where in result.stored:
        print(f"{file.name}: wrote {shown(path)} (SHA-256 verified; from {shown(where)})")
    have = len(AUDIT_FILES) - len(result.missing)
    print(f"{have} of {len(AUDIT_FILES)} files of {AUDIT_REPO}@{AUDIT_COMMIT[:12]} stored in {shown(audit_dir(args.dest))} "
          f"({AUDIT_LICENCE}: read on use, never committed)")
    for file in result.missing:
        print(f"still missing: {file.name} ({file.path})", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    """Fetched state only; a stored file that does not check out is shown as such, not raised, so one bad file
    does not hide the state of the others."""
    from memeval.benchmarks.locomo.audit.sources import AUDIT_COMMIT, AUDIT_FILES, AUDIT_REPO
    from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND, audit_dir, audit_path
    from memeval.errors import InputError
    from memeval.protocols import store
    from memeval.protocols.sources import SOURCES

    print(f"protocols ({shown(store.protocols_dir())}):")
    for name, source in SOURCES.items():
        try:
            state = "fetched" if store.load(name) is not None else "not fetched (paraphrased)"
        except InputError as exc:
            state = f"refused: {exc.problem}"
        print(f"  {name}: {shown(state)} — {source.origin}")
    print(f"locomo-audit ({AUDIT_REPO}@{AUDIT_COMMIT[:12]}, {shown(audit_dir())}):")
    missing = 0
    for name, file in AUDIT_FILES.items():
        try:
            state = "stored, SHA-256 verified" if audit_path(name) is not None else "not fetched"
        except InputError as exc:
            state = f"refused: {exc.problem}"
        missing += state != "stored, SHA-256 verified"
        print(f"  {name}: {shown(state)} — {file.path}")
    if missing:
        print(f"  {missing} of {len(AUDIT_FILES)} not usable; `{FETCH_COMMAND}` fetches them")
    return 0


def _stats(args: argparse.Namespace) -> int:
    if args.dataset == "longmemeval":
        return _longmemeval_stats(args)
    from memeval.benchmarks.locomo.data import load_locomo_with_report, stats
    from memeval.data.paths import find_locomo
    from memeval.errors import InputError

    path = find_locomo(args.path)
    try:
        conversations, report = load_locomo_with_report(path)
    except InputError as exc:
        if args.path is None or exc.field != "sample_id":
            raise
        raise InputError(exc.source, exc.field, f"{exc.problem} (read as LoCoMo; a LongMemEval file takes "
                         "--dataset longmemeval)") from None
    result = stats(conversations)
    if args.json:
        print(json.dumps({**result, "quirks": dict(sorted(report.quirks.items()))}, sort_keys=False))
        return 0
    print(f"source: {shown(path)} ({report.layout})")
    for key in ("conversations", "questions", "turns", "sessions"):
        print(f"{key}: {result[key]}")
    print("by_category:")
    for cat, count in result["by_category"].items():
        print(f"  {cat} {CATEGORY_NAMES[int(cat)]}: {count}")
    if report.quirks:
        print("quirks (repaired or reported, not fatal):")
        for quirk, count in sorted(report.quirks.items()):
            print(f"  {shown(quirk)}: {count}")
    return 0


def _longmemeval_stats(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.data import load_longmemeval, stats
    from memeval.errors import InputError

    if not args.path:
        raise InputError("data stats", "path", "name the LongMemEval file (memeval data fetch longmemeval writes it)")
    instances, report = load_longmemeval(args.path)
    result = {**stats(instances), "quirks": dict(sorted(report.quirks.items()))}
    from memeval.benchmarks.longmemeval.sample import is_synthetic

    if is_synthetic(instances):
        result["synthetic"] = True
    if args.json:
        print(json.dumps(result))
        return 0
    from memeval.benchmarks.longmemeval.sample import SYNTHETIC

    print(f"source: {shown(args.path)}" + (f" ({SYNTHETIC})" if is_synthetic(instances) else ""))
    for key in ("instances", "abstention", "sessions", "sessions_per_question_mean", "turns", "evidence_turns",
                "evidence_sessions"):
        value = result[key]
        print(f"{key}: {value:.1f}" if isinstance(value, float) else f"{key}: {value}")
    print("by_type:")
    for qtype, count in result["by_type"].items():
        print(f"  {shown(qtype)}: {count}")
    if result["quirks"]:
        print("quirks (reported, not fatal):")
        for quirk, count in result["quirks"].items():
            print(f"  {shown(quirk)}: {count}")
    return 0
