"""`memeval cache batches list|forget`: the Message Batches ids saved in the response cache, so a stale one can be
seen and cleared by hand (a run also forgets one the API says is gone, memeval/llm/batch.py)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from memeval.commands.arguments import DIR, JSON, command
from memeval.settings import add_config_arguments, flag


@dataclass
class BatchesListConfig:
    dir: str | None = flag(DIR, None)
    check: bool = flag("--check", False, switch=True,
                       help="ask the API for each batch's status (needs ANTHROPIC_API_KEY; reads only, forgets "
                            "nothing)")
    json: bool = flag(JSON, False, help="print the list as JSON")


@dataclass
class BatchesForgetConfig:
    batch_id: str = flag("batch_id", metavar="ID", help="the batch id, as `memeval cache batches list` shows it")
    dir: str | None = flag(DIR, None)


def register_batches(cache_commands: argparse._SubParsersAction) -> None:
    """Adds `batches` under `memeval cache`."""
    batches = command(cache_commands, "batches", "the batch ids saved in the cache, which a rerun resumes polling",
                      "memeval cache batches list --check")
    sub = batches.add_subparsers(dest="batches_command", required=True)
    ls = command(sub, "list", "each saved batch: run, id, when it was saved, how many requests, and with --check "
                 "its status as the API reports it", "memeval cache batches list --check")
    add_config_arguments(ls, BatchesListConfig)
    ls.set_defaults(handler=_list)
    forget = command(sub, "forget", "forget a saved batch id: the next run sends its uncached requests again in "
                     "a new batch (the batch itself is left alone on the API)",
                     "memeval cache batches forget msgbatch_013Zva2CMHLNnXjNJJKqJ2EF")
    add_config_arguments(forget, BatchesForgetConfig)
    forget.set_defaults(handler=_forget)


def _cache_file(args: argparse.Namespace):
    from pathlib import Path

    from memeval.llm.cache import default_cache_dir

    return (Path(args.dir) if args.dir else default_cache_dir()) / "responses.sqlite"


def _list(args: argparse.Namespace) -> int:
    from memeval.llm.cache import ResponseCache
    from memeval.reports.markdown import markdown_table

    path = _cache_file(args)
    if not path.exists():  # nothing to list, and nothing is created by looking
        print(f"no cache at {path.parent}: no saved batches")
        return 0
    saved = ResponseCache(path.parent).saved_batches()
    statuses = _statuses(saved) if args.check and saved else {}
    rows = [{"run": s.run, "batch_id": s.batch_id, "saved_utc": s.saved_utc, "requests": len(s.custom_ids),
             "status": statuses.get(s.name)} for s in saved]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no saved batches in {path}")
    else:
        print(markdown_table(["run", "batch id", "saved (UTC)", "requests", "status"],
                             [[r["run"], r["batch_id"], r["saved_utc"], f"{r['requests']:,}",
                               r["status"] or "not checked (--check asks the API)"] for r in rows]))
    return 0


def _statuses(saved) -> dict[str, str]:
    """name → status line from the API, one retrieve per batch; an error is that batch's status, not a crash."""
    import anthropic

    from memeval.llm.batch import NOT_FOUND_GRACE_S, describe, not_found
    from memeval.llm.client import AnthropicBackend
    from memeval.llm.profiles import API_VERSION_2023

    sdk = AnthropicBackend(timeout=30).client
    out = {}
    for s in saved:
        try:
            batch = sdk.messages.batches.retrieve(s.batch_id, extra_headers={"anthropic-version": API_VERSION_2023})
        except anthropic.NotFoundError as exc:
            if exc.type != "not_found_error":
                out[s.name] = f"unknown: 404 {exc.type or 'error'} (request-id {exc.request_id or '-'})"
            else:
                out[s.name] = ("gone: " if s.age_s() >= NOT_FOUND_GRACE_S else "unknown: ") + not_found(s)
        except anthropic.APIStatusError as exc:
            out[s.name] = f"unknown: {exc.status_code} {exc.type or 'error'} (request-id {exc.request_id or '-'})"
        except anthropic.APIError as exc:
            out[s.name] = f"unknown: {type(exc).__name__}: {' '.join(str(exc).split())}"
        else:
            out[s.name] = describe(batch)
    return out


def _forget(args: argparse.Namespace) -> int:
    from memeval.errors import InputError
    from memeval.llm.cache import ResponseCache

    path = _cache_file(args)
    if not path.exists():
        raise InputError(args.batch_id, "batch id", f"not saved (no cache at {path.parent})")
    forgotten = ResponseCache(path.parent).forget_batch_id(args.batch_id)
    if not forgotten:
        raise InputError(args.batch_id, "batch id", f"not saved in {path}; `memeval cache batches list` shows "
                         "the saved ones")
    for s in forgotten:
        print(f"forgot {s.batch_id} of {s.run} ({len(s.custom_ids):,} requests): the next run sends those not "
              "yet cached again in a new batch")
    return 0
