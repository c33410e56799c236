"""LongMemEval's data set for `memeval data`: the cleaned release at a pinned revision (fetch, stats) and a
synthetic sample in its format (sample). Import-light: `memeval --help` reads the declaration."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memeval.data.fetch import DataSet, PinnedFile, read_source, store, verify
from memeval.errors import InputError
from memeval.safe_text import shown

# The cleaned LongMemEval release, pinned to one dataset revision (the pin several public projects use); only S has
# a known hash, so M and oracle need --sha256 from whoever vouches for their copy.
LONGMEMEVAL_REPO = "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned"
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"
LONGMEMEVAL_FILES = {"s": "longmemeval_s_cleaned.json", "m": "longmemeval_m_cleaned.json",
                     "oracle": "longmemeval_oracle.json"}
LONGMEMEVAL_SHA256 = {"longmemeval_s_cleaned.json": "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"}


def longmemeval_url(variant: str) -> str:
    return f"{LONGMEMEVAL_REPO}/resolve/{LONGMEMEVAL_REVISION}/{LONGMEMEVAL_FILES[variant]}"


LONGMEMEVAL = DataSet(
    name="longmemeval", title="LongMemEval", licence="MIT (LongMemEval's repository)",
    files=tuple(PinnedFile(name, longmemeval_url(variant), LONGMEMEVAL_SHA256.get(name), variant)
                for variant, name in LONGMEMEVAL_FILES.items()),
    fetch="memeval.benchmarks.longmemeval.datasets:fetch_command", dest="data/longmemeval",
    check="memeval.benchmarks.longmemeval.datasets:check_longmemeval",
    variant_help="LongMemEval: S (≈115k tokens a question), M (≈500 sessions) or oracle (evidence only)",
    stats="memeval.benchmarks.longmemeval.datasets:stats_command", stats_help="a LongMemEval file",
    sample="memeval.benchmarks.longmemeval.datasets:sample_command", sample_file="longmemeval_sample.json",
)
DATA_SETS = (LONGMEMEVAL,)


def check_longmemeval(data: bytes, name: str, source: str | None = None) -> None:
    """Every instance parses and no question id repeats: a file the loader would refuse is not kept."""
    from collections import Counter

    from memeval.benchmarks.longmemeval.data import parse_instance
    from memeval.safe_json import load_json_bytes

    doc = load_json_bytes(data, source or name, "json")
    if not isinstance(doc, list) or not doc:
        raise InputError(source or name, "top level", "expected a list of instances")
    seen: set[str] = set()
    for i, row in enumerate(doc):
        qid = parse_instance(row, f"{name}[{i}]", Counter()).question_id
        if qid in seen:  # the loader refuses a repeated id: a file it cannot load is not kept
            raise InputError(source or name, "question_id", f"repeated: {qid}")
        seen.add(qid)


def fetch_longmemeval(variant: str, dest: str | Path = "data/longmemeval", source: str | None = None,
                      sha256: str | None = None, timeout: float = 300.0) -> Path:
    """Fetch one LongMemEval variant (default: the pinned revision's URL) into `dest` as its release file name,
    verified by SHA-256 and parsed before anything is written."""
    if variant not in LONGMEMEVAL_FILES:
        raise InputError("--variant", variant, f"expected one of {', '.join(LONGMEMEVAL_FILES)}")
    name = LONGMEMEVAL_FILES[variant]
    expected = (sha256 or LONGMEMEVAL.pinned(name) or "").lower()
    if not expected:
        raise InputError(name, "sha256", "no pinned checksum for this variant; pass --sha256 HEX (of a copy you "
                         "trust)")
    data, _ = read_source(source or longmemeval_url(variant), timeout, "longmemeval", name)
    verify(data, expected, source or longmemeval_url(variant))
    check_longmemeval(data, name, source)
    return store(data, Path(dest) / name)


def fetch_command(args: argparse.Namespace) -> int:
    target = fetch_longmemeval(args.variant, args.dest or LONGMEMEVAL.dest, args.source, args.sha256)
    print(f"wrote {target} (SHA-256 verified, every instance parsed)")
    return 0


def sample_command(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.sample import SYNTHETIC, sample_instances, write_sample

    data, readme = write_sample(args.out)
    print(f"wrote {shown(data)} ({len(sample_instances())} questions, {SYNTHETIC}) and {shown(readme)}\n"
          f"next: memeval data stats --dataset longmemeval {shown(data)}\n"
          f"      memeval longmemeval run --data {shown(data)} --systems rag_turns,full_context --out runs/lme-sample")
    return 0


def stats_command(args: argparse.Namespace) -> int:
    from memeval.benchmarks.longmemeval.data import load_longmemeval, stats
    from memeval.benchmarks.longmemeval.sample import SYNTHETIC, is_synthetic

    if not args.path:
        raise InputError("data stats", "path", "name the LongMemEval file (memeval data fetch longmemeval writes it)")
    instances, report = load_longmemeval(args.path)
    result = {**stats(instances), "quirks": dict(sorted(report.quirks.items()))}
    if is_synthetic(instances):
        result["synthetic"] = True
    if args.json:
        print(json.dumps(result))
        return 0
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
