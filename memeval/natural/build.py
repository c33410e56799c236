"""`memeval natural build`: the natural packages of LoCoMo as files, byte-identical for the same input.

Everything is computed before anything is written; the manifest carries no timestamp so that two builds of
the same data with the same code are identical byte for byte.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from pathlib import Path

from memeval.atomic import write_text_atomic
from memeval.benchmarks.locomo.data import load_locomo
from memeval.data.fetch import data_hashes
from memeval.data.paths import find_locomo
from memeval.invocation import flag_args, invocation, path_text
from memeval.llm.client import LLMError
from memeval.manifest import git_sha, package_versions
from memeval.natural.construct import SAMPLE_SEED, SOURCE_LABEL, TARGET_ACCEPTED, WINDOW, build_natural
from memeval.natural.rules import RULE_VERSION, SUMMARY_MIN_SIMILARITY
from memeval.natural.union import EXPORT_SYSTEMS, graph_exports, union_package
from memeval.rundir import MANIFEST
from memeval.safe_paths import check_package_id, inside

PACKAGE_PREFIX = "locomo-natural-"


def _dump(obj) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def graph_conversation_ids(examined) -> list[str]:
    """The conversations whose memory graph `--with-graph` extracts: those holding an accepted package."""
    return sorted({e.package.meta["conversation"] for e in examined if e.accepted})


def graph_requests(data: str | None = None, cost_rule: str = "words", target: int = TARGET_ACCEPTED,
                   seed: int = SAMPLE_SEED) -> list:
    """The extraction calls a `--with-graph` build would make (for its dry run); nothing is written."""
    from memeval.memory.registry import build_system

    conversations = {c.sample_id: c for c in load_locomo(find_locomo(data))}
    examined = build_natural(list(conversations.values()), target, seed, cost_rule)
    system = build_system("memory_graph")
    return [r for cid in graph_conversation_ids(examined) for r in system.planned_requests(conversations[cid])]



def _one_writer(build):
    """A build holds its directory's lock from before `--restart` moves anything until its last file is written,
    as a run does: a second build, or a `--restart` while this one computes, is refused in one line, never moved
    or interleaved with it."""
    @functools.wraps(build)
    def locked(out, *args, restart: bool = False, **kwargs):
        from memeval.rundir import DirectoryLock, move_aside

        out = Path(out)
        made = [p for p in (out, *out.parents) if not p.exists()]  # deepest first: what the lock's mkdir creates
        lock = DirectoryLock(out, "memeval natural build")
        lock.acquire()
        try:
            if restart and (moved := move_aside(out, lock)) is not None:
                print(f"memeval: note: --restart moved the previous contents of {out} to {moved}", file=sys.stderr)
            return build(out, *args, **kwargs)
        finally:
            lock.release()
            for place in made:  # made only to hold the lock: a refused build leaves nothing
                try:
                    place.rmdir()
                except OSError:
                    break
    return locked


@_one_writer
def build_directory(out: str | Path, data: str | None = None, cost_rule: str = "words",
                    target: int = TARGET_ACCEPTED, seed: int = SAMPLE_SEED, union: bool = True,
                    graph_client=None, progress: bool = False) -> dict:
    """`graph_client`: an LLM client whose extractions (cached or live) give the memory graph's union
    packages; without one the graph is not exported and the manifest says why."""
    data_path = find_locomo(data)
    identity = settle_output(out, {"source": SOURCE_LABEL, "scope": "question", "cost_rule": cost_rule,
                                   "target": target, "seed": seed, "union": union,
                                   "with_graph": graph_client is not None, "rule_version": RULE_VERSION,
                                   "data_sha256": data_hashes(data_path)})
    conversations = {c.sample_id: c for c in load_locomo(data_path)}
    examined = build_natural(list(conversations.values()), target, seed, cost_rule, progress)
    accepted = [e for e in examined if e.accepted]
    rejected = [e for e in examined if not e.accepted]
    line = ["memeval", "natural", "build", *flag_args(
        {"data": data, "cost": cost_rule, "target": target, "seed": seed, "no_union": not union,
         "with_graph": graph_client is not None},
        {"data": None, "cost": "words", "target": TARGET_ACCEPTED, "seed": SAMPLE_SEED, "no_union": False,
         "with_graph": False},
        {"data": "--data", "cost": "--cost", "target": "--target", "seed": "--seed", "no_union": "--no-union",
         "with_graph": "--with-graph"}, paths=("data",)), "--out", path_text(out)]
    manifest = {
        **invocation(line),
        "command": "natural build",
        "source": SOURCE_LABEL,
        "examined": len(examined),
        "accepted": len(accepted),
        "rejected": len(rejected),
        "rejected_by_reason": dict(sorted(Counter(e.reason for e in rejected).items())),
        "accepted_by_category": dict(sorted(Counter(str(e.package.meta["category"]) for e in accepted).items())),
        "target": target,
        "seed": seed,
        "window": WINDOW,
        "cost_rule": cost_rule,
        "rule_version": RULE_VERSION,
        "summary_min_similarity": SUMMARY_MIN_SIMILARITY,
        "data_sha256": data_hashes(data_path),
        "git_sha": git_sha(),
        "package_versions": package_versions(),
        "packages": [e.package.package_id for e in accepted],
        "union_systems": list(EXPORT_SYSTEMS) if union else [],
        "union_not_exported": {},
        "identity": identity,
        "complete": True,  # written last, after every package file
    }
    graphs = None
    if union and graph_client is not None:
        try:
            graphs = graph_exports([conversations[c] for c in graph_conversation_ids(examined)], graph_client)
            manifest["union_systems"].append("memory_graph")
        except LLMError as exc:
            manifest["union_not_exported"]["memory_graph"] = f"extraction failed: {type(exc).__name__}"
    elif union:
        manifest["union_not_exported"]["memory_graph"] = "needs an LLM extractor (pass --with-graph)"
    files = {f"{e.package.package_id}.json": e.package.to_json() for e in accepted}
    if union:
        for e in accepted:
            conversation = conversations[e.package.meta["conversation"]]
            for system in EXPORT_SYSTEMS:
                u = union_package(e.package, conversation, system)
                files[f"union/{u.package_id}.json"] = u.to_json()
            if graphs is not None:
                u = union_package(e.package, conversation, "memory_graph", graphs[conversation.sample_id])
                files[f"union/{u.package_id}.json"] = u.to_json()
    files["rejected.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in rejected)
    files["examined.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in examined)
    files[MANIFEST] = _dump(manifest)

    targets = {inside(out, name): text for name, text in files.items()}  # names from data: checked before writing
    out = Path(out)
    (out / "union").mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob(f"{PACKAGE_PREFIX}*.json"), *(out / "union").glob(f"{PACKAGE_PREFIX}*.json")]:
        if str(stale.relative_to(out)) not in files:
            stale.unlink()
    for target, text in targets.items():
        write_text_atomic(target, text)
    return manifest


@_one_writer
def build_conversation_directory(out: str | Path, data: str | None = None, cost_rule: str = "words",
                                 union: bool = True, conversations: str = "all") -> dict:
    """`natural build --scope conversation`: one package per LoCoMo conversation (every turn, every question's
    evidence units) and, unless `union` is off, the built-in stores' union packages over it."""
    from memeval.natural import conversation_scope as scope
    from memeval.qa.selection import select_conversations

    data_path = find_locomo(data)
    chosen = select_conversations(load_locomo(data_path), conversations)
    identity = settle_output(out, {"source": scope.SOURCE_LABEL, "scope": "conversation", "cost_rule": cost_rule,
                                   "union": union, "conversations": [c.sample_id for c in chosen],
                                   "rule_version": RULE_VERSION, "data_sha256": data_hashes(data_path)})
    packages = [scope.build_conversation_package(c, cost_rule) for c in chosen]
    line = ["memeval", "natural", "build", "--scope", "conversation", *flag_args(
        {"data": data, "cost": cost_rule, "no_union": not union, "conversations": conversations},
        {"data": None, "cost": "words", "no_union": False, "conversations": "all"},
        {"data": "--data", "cost": "--cost", "no_union": "--no-union", "conversations": "--conversations"},
        paths=("data",)), "--out", path_text(out)]
    manifest = {
        **invocation(line), "command": "natural build", "scope": "conversation", "source": scope.SOURCE_LABEL,
        "packages": [p.package_id for p in packages],
        "sizes": {p.package_id: {"candidates": p.compiled.n_candidates, "units": len(p.units),
                                 "groups": len(p.experiences), "questions": p.meta["questions"],
                                 "total_cost": float(p.compiled.costs.sum())} for p in packages},
        "tombstones": scope.NO_TOMBSTONES, "cost_rule": cost_rule, "rule_version": RULE_VERSION,
        "data_sha256": data_hashes(data_path), "git_sha": git_sha(), "package_versions": package_versions(),
        "union_systems": list(EXPORT_SYSTEMS) if union else [],
        "union_not_exported": {"memory_graph": "needs an LLM extractor (question-level builds take --with-graph)"}
        if union else {},
        "identity": identity,
        "complete": True,  # written last, after every package file
    }
    files = {f"{p.package_id}.json": p.to_json() for p in packages}
    if union:
        by_id = {c.sample_id: c for c in chosen}
        for p in packages:
            for system in EXPORT_SYSTEMS:
                u = union_package(p, by_id[p.meta["conversation"]], system)
                files[f"union/{u.package_id}.json"] = u.to_json()
    files[MANIFEST] = _dump(manifest)
    targets = {inside(out, name): text for name, text in files.items()}  # names from data: checked before writing
    out = Path(out)
    (out / "union").mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob(f"{scope.PACKAGE_PREFIX}*.json"), *(out / "union").glob(f"{scope.PACKAGE_PREFIX}*.json")]:
        if str(stale.relative_to(out)) not in files:
            stale.unlink()
    for target, text in targets.items():
        write_text_atomic(target, text)
    return manifest


@_one_writer
def build_longmemeval_directory(out: str | Path, data: str, cost_rule: str = "words", target: int = TARGET_ACCEPTED,
                                seed: int = SAMPLE_SEED, progress: bool = False) -> dict:
    """`natural build --source longmemeval`: the same files as LoCoMo's build (packages, rejected.jsonl,
    examined.jsonl, manifest.json), no union packages (LongMemEval has no annotated stores to export)."""
    from memeval.benchmarks.longmemeval import natural_source as lme
    from memeval.benchmarks.longmemeval.data import load_longmemeval

    instances, _ = load_longmemeval(data)
    identity = settle_output(out, {"source": lme.SOURCE_LABEL, "scope": "question", "cost_rule": cost_rule,
                                   "target": target, "seed": seed, "rule_version": RULE_VERSION,
                                   "data_sha256": data_hashes(data)})
    examined = lme.build_lme_natural(instances, target, seed, cost_rule, progress)
    accepted = [e for e in examined if e.accepted]
    rejected = [e for e in examined if not e.accepted]
    line = ["memeval", "natural", "build", "--source", "longmemeval", *flag_args(
        {"data": data, "cost": cost_rule, "target": target, "seed": seed},
        {"data": None, "cost": "words", "target": TARGET_ACCEPTED, "seed": SAMPLE_SEED},
        {"data": "--data", "cost": "--cost", "target": "--target", "seed": "--seed"}, paths=("data",)),
        "--out", path_text(out)]
    manifest = {
        **invocation(line), "command": "natural build", "source": lme.SOURCE_LABEL, "examined": len(examined),
        "eligible": len(lme.eligible(instances)), "accepted": len(accepted), "rejected": len(rejected),
        "rejected_by_reason": dict(sorted(Counter(e.reason for e in rejected).items())),
        "accepted_by_type": dict(sorted(Counter(e.package.meta["question_type"] for e in accepted).items())),
        "target": target, "seed": seed, "window": WINDOW, "cost_rule": cost_rule, "rule_version": RULE_VERSION,
        "data_sha256": data_hashes(data), "git_sha": git_sha(), "package_versions": package_versions(),
        "packages": [e.package.package_id for e in accepted], "union_systems": [],
        "union_not_exported": {"all": "LongMemEval has no annotated observations or summaries to export; score "
                                      "your own store with `memeval natural union --store`"},
        "identity": identity,
        "complete": True,  # written last, after every package file
    }
    files = {f"{e.package.package_id}.json": e.package.to_json() for e in accepted}
    files["rejected.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in rejected)
    files["examined.jsonl"] = "".join(json.dumps(e.as_row(), sort_keys=True) + "\n" for e in examined)
    files[MANIFEST] = _dump(manifest)
    targets = {inside(out, name): text for name, text in files.items()}  # names from data: checked before writing
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(f"{lme.PACKAGE_PREFIX}*.json"):
        if stale.name not in files:
            stale.unlink()
    for target, text in targets.items():
        write_text_atomic(target, text)
    return manifest


def settle_output(out: str | Path, fixed: dict) -> dict:
    """A build directory holds one build: the same settings rebuild it (byte for byte), other settings are refused
    in one line before anything is computed (`--restart` has moved the old build aside by then: `_one_writer`).
    Returns the identity recorded in the manifest."""
    from memeval.rundir import Identity, check, read_manifest

    identity = Identity("natural build", fixed=fixed)
    out = Path(out)
    previous = read_manifest(out) or {}
    legacy = None
    if previous and "identity" not in previous:  # built before identities were recorded
        legacy = Identity("natural build", fixed={k: previous[k] for k in ("cost_rule", "target", "seed",
                                                                          "rule_version") if k in previous})
    check(out, identity, legacy)
    return identity.as_dict()


def load_packages(directory: str | Path, union: bool = False) -> list:
    """The base natural packages of a build directory (or, with union=True, its union packages), in name order."""
    from memeval.benchmarks.longmemeval.natural_source import PACKAGE_PREFIX as LME_PREFIX
    from memeval.errors import InputError
    from memeval.memaudit.package import load_package
    from memeval.natural.conversation_scope import PACKAGE_PREFIX as CONVERSATION_PREFIX

    root = Path(directory) / ("union" if union else "")
    paths = sorted([p for prefix in (PACKAGE_PREFIX, LME_PREFIX, CONVERSATION_PREFIX)
                    for p in root.glob(f"{prefix}*.json")])
    if not paths:
        raise InputError(root, "packages", "no natural package files here; run `memeval natural build` first")
    packages = [load_package(p) for p in paths]
    for path, package in zip(paths, packages, strict=True):  # ids name the files union packages are written to
        check_package_id(package.package_id, path)
    return packages
