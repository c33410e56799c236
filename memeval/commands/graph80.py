"""`memeval graph80 generate|run`: the memory-graph study's corpus and comparison."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memeval.commands.llm_options import add_llm_arguments, llm_options, make_llm_client


def register(subparsers: argparse._SubParsersAction) -> None:
    g = subparsers.add_parser("graph80", help="the memory-graph study (synthetic graph80 corpus)")
    sub = g.add_subparsers(dest="graph80_command", required=True)
    gen = sub.add_parser("generate", help="write documents.jsonl, questions.jsonl, triples.jsonl")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", required=True)
    gen.set_defaults(handler=_generate)
    run = sub.add_parser("run", help="compare memory systems on graph80")
    run.add_argument("--data", required=True, help="a `graph80 generate` directory")
    run.add_argument("--systems", default="memory_graph:hops=0;memory_graph:hops=1;memory_graph:hops=2;chunks",
                     help="';'- or ','-separated; parameters as memory_graph:hops=1")
    run.add_argument("--extractor", choices=["gold", "llm"], default="gold")
    run.add_argument("--answerer", choices=["extractive", "claude"], default="extractive")
    run.add_argument("--judge", choices=["none", "three_dim"], default="none")
    run.add_argument("--repeats", type=int, default=3)
    run.add_argument("--out", required=True)
    add_llm_arguments(run)
    run.set_defaults(handler=_run)


def write_corpus(out: str | Path, seed: int) -> dict:
    from memeval.graph80.generate import generate_graph80

    documents, questions, triples = generate_graph80(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "documents.jsonl": [d.as_row() for d in documents],
        "questions.jsonl": [q.as_row() for q in questions],
        "triples.jsonl": [vars(t) for t in triples],
    }
    for name, rows in files.items():
        tmp = out / (name + ".tmp")
        tmp.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows),
                       encoding="utf-8")
        tmp.replace(out / name)
    return {"seed": seed, "documents": len(documents), "questions": len(questions), "triples": len(triples)}


def _generate(args: argparse.Namespace) -> int:
    print(json.dumps(write_corpus(args.out, args.seed)))
    return 0


def _run(args: argparse.Namespace) -> int:
    from memeval.commands.locomo import split_systems
    from memeval.graph80.study import StudyConfig, planned_requests, role_temperatures, run_study

    llm = llm_options(args)
    config = StudyConfig(args.data, args.out, split_systems(args.systems), args.extractor, args.answerer,
                         args.judge, args.repeats)
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

        print(json.dumps(client.estimate(planned_requests(config), counter=token_counter(client)), indent=2))
        return 0
    summary = run_study(config, client)
    for row in summary["rows"]:
        if row["type"] == "all":
            print(f"{row['system']:<28} score {row['score_mean']:.3f} ± {row['score_std']:.3f}  path recall "
                  f"{row['path_recall']:.3f}  entity recall {row['entity_recall']:.3f}  tokens "
                  f"{row['context_tokens']:.0f}")
    print(f"score: {summary['score_kind']} -> {args.out}/summary.json")
    return 0
