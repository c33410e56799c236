"""LoCoMo's natural packages as files (`memeval natural build`, the default source): the question scope
(LoCoMo-Natural-87, with the built-in stores' union packages and, through an LLM, the memory graph's) and the
conversation scope, byte-identical for the same input; and the conversations `memeval natural union` attributes
an exported store against."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from memeval.benchmarks.locomo import natural_conversation as scope
from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.natural_source import SOURCE_LABEL, build_natural
from memeval.conversations import Conversation
from memeval.data.fetch import data_hashes
from memeval.data.paths import find_locomo
from memeval.errors import InputError
from memeval.invocation import flag_args, invocation, path_text
from memeval.llm.client import LLMError
from memeval.natural.build import dump, one_writer, provenance, settle_output, write_build
from memeval.natural.defaults import SAMPLE_SEED, TARGET_ACCEPTED
from memeval.natural.examine import WINDOW
from memeval.natural.rules import RULE_VERSION, SUMMARY_MIN_SIMILARITY
from memeval.natural.source import NaturalSource
from memeval.natural.union import EXPORT_SYSTEMS, graph_exports, union_package
from memeval.rundir import MANIFEST

PACKAGE_PREFIX = "locomo-natural-"


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


@one_writer
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
        **provenance(),
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
    files[MANIFEST] = dump(manifest)

    write_build(out, files, (PACKAGE_PREFIX,))
    return manifest


@one_writer
def build_conversation_directory(out: str | Path, data: str | None = None, cost_rule: str = "words",
                                 union: bool = True, conversations: str = "all") -> dict:
    """`natural build --scope conversation`: one package per LoCoMo conversation (every turn, every question's
    evidence units) and, unless `union` is off, the built-in stores' union packages over it."""
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
        "data_sha256": data_hashes(data_path), **provenance(),
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
    files[MANIFEST] = dump(manifest)
    write_build(out, files, (scope.PACKAGE_PREFIX,))
    return manifest


def conversations(data: str | None) -> list[Conversation]:
    """The LoCoMo conversations at --data (else the documented search order)."""
    return load_locomo(find_locomo(data))


def build_command(args: argparse.Namespace) -> int:
    """`memeval natural build` for LoCoMo: the question scope (with the memory graph under --with-graph) or the
    conversation scope; prints the manifest's summary as one JSON line."""
    from memeval.commands.llm_options import llm_options, make_llm_client

    if args.scope == "conversation":
        if args.with_graph:
            raise InputError("natural build --scope conversation", "--source/--with-graph",
                             "conversation-scale packages are built from LoCoMo without the graph")
        manifest = build_conversation_directory(args.out, args.data, args.cost, union=not args.no_union,
                                                conversations=args.conversations, restart=args.restart)
        print(json.dumps({k: manifest[k] for k in ("scope", "source", "sizes", "union_systems", "tombstones")}))
        return 0
    if args.conversations != "all":  # the question scope samples Natural-87 across every conversation
        raise InputError("natural build", "--conversations", "applies to --scope conversation only; the question "
                         "scope builds LoCoMo-Natural-87 from every conversation (add --scope conversation)")
    llm = llm_options(args)
    client = None
    if args.with_graph:
        from memeval.memory.extraction import EXTRACTION_TEMPERATURE

        client = make_llm_client(llm)
        client.check_roles({"extract": EXTRACTION_TEMPERATURE})
        if llm.dry_run:
            from memeval.llm.count import token_counter

            requests = graph_requests(args.data, args.cost, args.target, args.seed)
            print(json.dumps(client.estimate(requests, expected_output_tokens=400, counter=token_counter(client)).as_dict(),
                             indent=2))
            return 0
    manifest = build_directory(args.out, args.data, args.cost, args.target, args.seed, union=not args.no_union,
                               graph_client=client, progress=not args.no_progress, restart=args.restart)
    print(json.dumps({k: manifest[k] for k in ("examined", "accepted", "rejected", "rejected_by_reason",
                                               "accepted_by_category", "rule_version", "union_systems",
                                               "union_not_exported")}))
    return 0


SOURCE = NaturalSource("locomo", (PACKAGE_PREFIX, scope.PACKAGE_PREFIX), build_command, conversations)
