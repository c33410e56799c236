"""`memeval score PREDICTIONS.jsonl`: per-category F1 from rows of prediction, answer and category."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memeval.categories import CATEGORY_NAMES, category_label
from memeval.commands.arguments import command
from memeval.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    score = command(subparsers, "score", "score a JSONL of predictions with token F1 (per category)",
                    "memeval score predictions.jsonl --mode mem0 --json")
    score.add_argument("predictions", help="JSONL rows with prediction, answer (or gold) and category")
    score.add_argument("--mode", choices=["locomo", "seed", "mem0"], default="locomo")
    score.add_argument("--json", action="store_true")
    score.set_defaults(handler=_score)


def score_rows(path: Path, mode: str) -> tuple[list[dict], list[dict]]:
    """Scored rows and bad rows (line number, reason); a bad row never stops the others."""
    if not path.is_file():
        raise InputError(path, "predictions", "no such file")

    from memeval.scoring.f1 import score_f1

    scored, bad = [], []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                bad.append({"line": line_no, "error": f"not valid JSON ({exc.msg})"})
                continue
            if not isinstance(row, dict):
                bad.append({"line": line_no, "error": "not a JSON object"})
                continue
            answer = row.get("answer", row.get("gold"))
            category = row.get("category")
            prediction = row.get("prediction")
            if not isinstance(category, int) or isinstance(category, bool) or category not in CATEGORY_NAMES:
                bad.append({"line": line_no, "error": f"category: expected 1-5, got {category!r}"})
                continue
            if not isinstance(prediction, str):
                bad.append({"line": line_no, "error": f"prediction: expected string, got {type(prediction).__name__}"})
                continue
            if answer is None and category != 5:
                bad.append({"line": line_no, "error": "answer: missing"})
                continue
            value = score_f1(prediction, answer, category, mode)
            scored.append({**row, "category": category, "f1": value, "line": line_no})
    return scored, bad


def _score(args: argparse.Namespace) -> int:
    from memeval.reports.tables import markdown_table
    from memeval.scoring.aggregate import by_category, overall_mean


    scored, bad = score_rows(Path(args.predictions), args.mode)
    for b in bad:
        print(f"{args.predictions}:{b['line']}: {b['error']} (row skipped)", file=sys.stderr)
    stats = by_category(scored)
    if args.json:
        print(
            json.dumps(
                {
                    "mode": args.mode,
                    "scored": sum(s.count for s in stats.values()),
                    "overall": overall_mean(scored),
                    "by_category": {
                        str(c): {"name": CATEGORY_NAMES[c], "mean_f1": s.mean, "count": s.count,
                                 "min_f1": s.min, "max_f1": s.max}
                        for c, s in stats.items()
                    },
                    "bad_rows": bad,
                }
            )
        )
    else:
        rows = [[category_label(c), f"{s.mean:.4f}", s.count, f"{s.min:.4f}", f"{s.max:.4f}"] for c, s in stats.items()]
        rows.append(["overall", f"{overall_mean(scored):.4f}", sum(s.count for s in stats.values()), "", ""])
        print(f"F1 mode: {args.mode}")
        print(markdown_table(["category", "mean F1", "count", "min", "max"], rows))
        if bad:
            print(f"{len(bad)} bad row(s) skipped; see stderr")
    return 0 if scored or not bad else 1
