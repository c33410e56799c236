"""`memeval graph80 generate|run`: the memory-graph study's corpus and comparison."""

from __future__ import annotations

import argparse
import json

from memeval.commands.arguments import (
    add_data,
    add_out_dir,
    add_progress,
    add_restart,
    add_systems,
    bounded,
    command,
    finish,
    split_systems,
)
from memeval.commands.llm_options import add_llm_arguments, llm_options, make_llm_client


def register(subparsers: argparse._SubParsersAction) -> None:
    g = command(subparsers, "graph80", "the memory-graph study (synthetic graph80 corpus)",
                "memeval graph80 generate --out graph80\n  memeval graph80 run --data graph80 --out graph80_run")
    sub = g.add_subparsers(dest="graph80_command", required=True)
    gen = command(sub, "generate", "write documents.jsonl, questions.jsonl, triples.jsonl",
                  "memeval graph80 generate --seed 0 --out graph80")
    gen.add_argument("--seed", type=bounded("--seed"), default=0, help="the corpus seed")
    add_out_dir(gen, "corpus directory")
    gen.set_defaults(handler=_generate)
    run = command(sub, "run", "compare memory systems on graph80",
                  "memeval graph80 run --data graph80 --systems 'memory_graph:hops=1;chunks' --out graph80_run")
    add_data(run, "a `graph80 generate` directory", required=True)
    add_systems(run, "memory_graph:hops=0;memory_graph:hops=1;memory_graph:hops=2;chunks", "memory_graph:hops=1")
    run.add_argument("--extractor", choices=["gold", "llm"], default="gold",
                     help="gold: the corpus's own triples (default, no LLM); llm: triples extracted by the model")
    run.add_argument("--reader", "--answerer", dest="answerer", choices=["extractive", "claude"],
                     default="extractive",
                     help="who answers from the memories: extractive (no LLM, the default) or claude; "
                          "--answerer: older spelling, still accepted")
    run.add_argument("--judge", choices=["none", "three_dim"], default="none",
                     help="none: gold-answer containment, labelled as such (default); three_dim: the "
                          "three-dimension LLM judge (entity, relation, no wrong information)")
    run.add_argument("--repeats", type=bounded("--repeats"), default=3, help="runs of every question per system (default 3)")
    add_out_dir(run, "study directory (answers.jsonl, judgments.jsonl, rows.jsonl, summary.json, report.md, "
                         "manifest.json; a rerun resumes, another configuration is refused)")
    add_restart(run)
    add_progress(run)
    add_llm_arguments(run)
    run.set_defaults(handler=_run)


def _generate(args: argparse.Namespace) -> int:
    from memeval.benchmarks.graph80.data import write_corpus

    print(json.dumps(write_corpus(args.out, args.seed)))
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
    from memeval.benchmarks.graph80.task import StudyConfig, planned_requests, role_temperatures, run_study

    llm = llm_options(args)
    _check_counts(split_systems(args.systems))
    config = StudyConfig(args.data, args.out, split_systems(args.systems), args.extractor, args.answerer,
                         args.judge, args.repeats, progress=not args.no_progress, restart=args.restart)
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
