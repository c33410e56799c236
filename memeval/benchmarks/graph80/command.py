"""`memeval graph80 generate|run`: the memory-graph study's corpus and comparison."""

from __future__ import annotations

import argparse
import json

from memeval.benchmarks.graph80.config import GenerateConfig, StudyConfig
from memeval.commands.arguments import command, finish, split_systems
from memeval.commands.llm_options import add_llm_arguments, llm_options, make_llm_client
from memeval.settings import add_config_arguments, config_from


def register(subparsers: argparse._SubParsersAction) -> None:
    g = command(subparsers, "graph80", "the memory-graph study (synthetic graph80 corpus)",
                "memeval graph80 generate --out graph80\n  memeval graph80 run --data graph80 --out graph80_run")
    sub = g.add_subparsers(dest="graph80_command", required=True)
    gen = command(sub, "generate", "write documents.jsonl, questions.jsonl, triples.jsonl",
                  "memeval graph80 generate --seed 0 --out graph80")
    add_config_arguments(gen, GenerateConfig, "seed", "out")
    gen.set_defaults(handler=_generate)
    run = command(sub, "run", "compare memory systems on graph80",
                  "memeval graph80 run --data graph80 --systems 'memory_graph:hops=1;chunks' --out graph80_run")
    add_config_arguments(run, StudyConfig, "data", "systems", "extractor", "answerer", "judge", "repeats", "out",
                         "restart", "progress")
    add_llm_arguments(run)
    run.set_defaults(handler=_run)


def _generate(args: argparse.Namespace) -> int:
    from memeval.benchmarks.graph80.data import write_corpus

    config = config_from(args, GenerateConfig)
    print(json.dumps(write_corpus(config.out, config.seed)))
    return 0


def _check_counts(specs: list[str]) -> None:
    """`memory_graph:top_k=abc` or `chunks:k=0`: one line naming the parameter, before anything is written."""
    from memeval.errors import InputError
    from memeval.memory.base import SystemConfig, count_parameter

    for spec in specs:
        try:
            params = SystemConfig.parse(spec).params
        except ValueError as exc:
            raise InputError("--systems", spec, str(exc)) from None
        for name in ("top_k", "k", "extract_max_tokens"):
            if name in params:
                try:
                    count_parameter(name, params[name])
                except ValueError as exc:
                    raise InputError("--systems", spec, str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    from memeval.benchmarks.graph80.task import planned_requests, role_temperatures, run_study

    llm = llm_options(args)
    _check_counts(split_systems(args.systems))
    config = config_from(args, StudyConfig)
    roles = role_temperatures(config)
    client = None
    if roles:
        client = make_llm_client(llm)
        client.check_roles(roles)
    if llm.dry_run:
        if client is None:
            print(json.dumps({"requests": 0, "note": "this configuration calls no LLM"}))
            return 0
        from memeval.llm.count import token_counter

        print(json.dumps(client.estimate(planned_requests(config), counter=token_counter(client)).as_dict(), indent=2))
        return 0
    summary = run_study(config, client)
    from memeval.benchmarks.graph80.task import fmt
    from memeval.rundir import incomplete_line

    for row in summary["rows"]:
        if row["type"] == "all":
            print(f"{row['system']:<28} score {fmt(row['score_mean'])} ± {fmt(row['score_std'])}  path recall "
                  f"{fmt(row['path_recall'])}  entity recall {fmt(row['entity_recall'])}  tokens "
                  f"{fmt(row['context_tokens'], '{:.0f}')}")
    print(f"score: {summary['score_kind']} -> {args.out}/summary.json")
    return finish(incomplete_line(summary.get("missing") or {}))
