"""`memeval score PREDICTIONS.jsonl`: per-category F1 from rows of prediction, answer and category."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from memeval.commands.arguments import JSON, command
from memeval.errors import InputError
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, flag

SCORED_KIND = "locomo run"  # the rows scored are answers as that kind records them (scoring.f1's modes score them)


@cache
def _categories():
    """The CategorySet of the scored rows, from the benchmark that declares the kind."""
    from memeval.engine.registry import categories

    return categories(SCORED_KIND)


@dataclass
class ScoreConfig:
    predictions: str = flag("predictions", help="JSONL rows with prediction, answer (or gold), category (and system)")
    mode: str = flag("--mode", "locomo", choices=("locomo", "seed", "mem0"),
                     help="locomo: the official LoCoMo scorer (default); seed: plain token F1; mem0: the Mem0 "
                          "paper's set-based F1")
    by: str = flag("--by", "category", choices=("category", "system"),
                   help="category: one row per category; system: one row per `system` field, categories as columns")
    json: bool = flag(JSON, False, help="print the scores as JSON instead of a table")


def register(subparsers: argparse._SubParsersAction) -> None:
    score = command(subparsers, "score", "score a JSONL of predictions with token F1, by category or by system",
                    "memeval score predictions.jsonl --mode mem0 --by system")
    add_config_arguments(score, ScoreConfig)
    score.set_defaults(handler=_score)


@dataclass(frozen=True)
class ScoredRow:
    """One scored line of a predictions file: its category, its F1 (None where the mode does not score the
    category) and, scored by system, its system."""

    line: int
    category: int
    f1: float | None
    system: str | None = None


def score_rows(path: Path, mode: str, by: str = "category") -> tuple[list[ScoredRow], list[dict]]:
    """Scored rows and bad rows (line number, reason); a bad row never stops the others. An empty file is an
    input error: there is nothing to score."""
    if not path.exists():
        raise InputError(path, "predictions", "no such file")

    from memeval.safe_json import BOM, decode_utf8, parse_json, read_bytes
    from memeval.scoring.f1 import score_f1

    scored, bad, seen = [], [], 0
    data = read_bytes(path, "predictions", kind="predictions")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 (Windows tools write it): the whole file, in one line
        decode_utf8(data, path)
    for line_no, raw in enumerate(data.splitlines(), start=1):
        if line_no == 1 and raw.startswith(BOM):  # UTF-8 with a byte-order mark reads as every loader reads it
            raw = raw[len(BOM):]
        if not raw.strip():
            continue
        seen += 1
        try:  # each line on its own: a bad one (not UTF-8, not JSON, too deep, a huge integer) is a bad row
            row = parse_json(decode_utf8(raw, path), path, "line")
        except InputError as exc:
            bad.append({"line": line_no, "error": exc.problem})
            continue
        if not isinstance(row, dict):
            bad.append({"line": line_no, "error": "not a JSON object"})
            continue
        problem = _row_problem(row, by)
        if problem:
            bad.append({"line": line_no, "error": problem})
            continue
        answer = row.get("answer", row.get("gold"))
        value = score_f1(row["prediction"], answer, row["category"], mode)
        scored.append(ScoredRow(line_no, row["category"], value, row["system"] if by == "system" else None))
    if not seen:
        raise InputError(path, "predictions", "empty file: no rows to score")
    return scored, bad


def _row_problem(row: dict, by: str) -> str | None:
    category, categories = row.get("category"), _categories()
    if "category" not in row:
        return "category: missing"
    if not isinstance(category, int) or isinstance(category, bool) or category not in categories:
        return f"category: expected {min(categories.ids)}-{max(categories.ids)}, got {category!r}"
    if "prediction" not in row:
        return "prediction: missing"
    if not isinstance(row["prediction"], str):
        return f"prediction: expected string, got {type(row['prediction']).__name__}"
    answer = row.get("answer", row.get("gold"))
    if answer is None and not categories.is_apart(category):
        return "answer: missing (or gold)"
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, (str, int, float))):
        return f"answer: expected text, got {type(answer).__name__}"
    if by == "system" and not isinstance(row.get("system"), str):
        return "system: missing" if "system" not in row else "system: expected string"
    return None


def _summary(rows: list[ScoredRow]) -> dict:
    from memeval.scoring.aggregate import by_category, overall_mean

    categories = _categories()
    stats = by_category(rows)
    qa = [r for r in rows if r.category in categories.headline]

    def mean(selected: list[ScoredRow]) -> float | None:
        value = overall_mean(selected)
        return None if value != value else value

    return {"by_category": {str(c): {"name": categories.name(c), "mean_f1": s.mean, "count": s.count,
                                     "min_f1": s.min, "max_f1": s.max} for c, s in stats.items()},
            "overall_1_4": mean(qa),
            "overall_1_5": mean(rows) if any(c in stats for c in categories.apart) else None,
            "scored": sum(s.count for s in stats.values())}


def _x100(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _score(args: argparse.Namespace) -> int:
    from memeval.reports.markdown import markdown_table
    from memeval.scoring.aggregate import overall_mean

    categories = _categories()
    scored, bad = score_rows(Path(args.predictions), args.mode, args.by)
    if bad and not scored:  # nothing to score is bad input (exit 2): one error line, naming the first bad row
        raise InputError(args.predictions, "predictions", f"none of its {len(bad):,} rows could be scored (first: "
                         f"line {bad[0]['line']}: {bad[0]['error']})")
    for b in bad:
        print(shown(f"{args.predictions}:{b['line']}: {b['error']} (row skipped)"), file=sys.stderr)
    groups: dict[str, list[ScoredRow]] = {}
    if args.by == "system":
        for row in scored:
            groups.setdefault(row.system, []).append(row)
    overall = _summary(scored)
    if args.json:
        doc = {"mode": args.mode, "scale": "0-1", "scored": overall["scored"], "overall": overall_mean(scored),
               "overall_1_4": overall["overall_1_4"], "overall_1_5": overall["overall_1_5"],
               "by_category": overall["by_category"], "bad_rows": bad}
        if args.by == "system":
            doc["by_system"] = {name: _summary(rows) for name, rows in groups.items()}
        print(json.dumps(doc))
        return 0
    headline, every = f"overall ({categories.headline_span})", f"overall ({categories.all_span})"
    apart = ", ".join(str(c) for c in categories.apart)
    unscored = f" (category {apart} is not scored in this mode)" if args.mode == "mem0" else ""
    print(f"F1 mode: {args.mode}; values ×100{unscored}; {headline} averages questions of categories "
          f"{categories.headline_span}, {every} every question (as the LoCoMo paper's overall row)")
    if args.by == "system":
        headers = ["system", *[categories.label(c) for c in categories], headline, every, "n"]
        body = []
        for name, rows in groups.items():
            summary = _summary(rows)
            cells = [summary["by_category"].get(str(c)) for c in categories]
            body.append([name, *[_x100(c["mean_f1"]) if c else "–" for c in cells], _x100(summary["overall_1_4"]),
                         _x100(summary["overall_1_5"]), summary["scored"]])
        print(markdown_table(headers, body))
    else:
        rows = [[categories.label(int(c)), _x100(s["mean_f1"]), s["count"], _x100(s["min_f1"]), _x100(s["max_f1"])]
                for c, s in overall["by_category"].items()]
        rows.append([headline, _x100(overall["overall_1_4"]),
                     sum(s["count"] for c, s in overall["by_category"].items() if int(c) in categories.headline),
                     "", ""])
        rows.append([every, _x100(overall["overall_1_5"]), overall["scored"], "", ""])
        print(markdown_table(["category", "mean F1 ×100", "count", "min", "max"], rows))
    if bad:
        print(f"{len(bad)} bad row(s) skipped; see stderr")
    return 0
