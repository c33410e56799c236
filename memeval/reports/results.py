"""Several stored runs and sweeps in one long table: one `ResultRow` per (directory, system or writer, group,
metric), with its 95% interval, count, and the commit and command recorded in the directory's manifest.

LoCoMo runs give F1 ×100 per system and category plus overall (1–4) and (1–5), with conversation-clustered
intervals (item-level when one conversation), and J per judge protocol; sweeps give each writer's mean ratio to
OPT per distribution and budget, with the bootstrap interval their summary already holds. An interval over fewer
than two resampled units (one question, one package) has no bounds and prints "n/a (1 package)"; the notes under
the table name the methods the rows used, and each system's n when systems were measured on different question
sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from memeval.categories import ADVERSARIAL, CATEGORY_NAMES, QA_CATEGORIES
from memeval.errors import InputError
from memeval.invocation import load_manifest, recorded_commands
from memeval.records import AnswerRow, ResultRow
from memeval.rundir import MANIFEST, RunDir

N_BOOT = 2000


def _commit(manifest: dict) -> str | None:
    sha = manifest.get("git_sha")
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "") if sha else None


def _interval(values: Sequence[float], clusters: Sequence[str]):
    """(estimate, low, high, what was resampled); low and high are None when fewer than two units were."""
    from memeval.scoring.aggregate import bootstrap_mean, cluster_bootstrap

    if len(set(clusters)) >= 2:
        interval, unit = cluster_bootstrap(values, clusters, n_boot=N_BOOT, seed=0), "conversations"
    else:
        interval, unit = bootstrap_mean(values, n_boot=N_BOOT, seed=0), "questions"
    if not interval.defined:
        return interval.estimate, None, None, unit
    return interval.estimate, interval.low, interval.high, unit


def locomo_rows(run: Path, manifest: dict) -> list[ResultRow]:
    from memeval.records import load_answers, load_judgments

    base = {"directory": str(run), "kind": "locomo run", "commit": _commit(manifest),
            "command": (recorded_commands(run) or [None])[-1]}
    by_system: dict[str, list[AnswerRow]] = {}
    for row in load_answers(RunDir(run).answers):
        if row.final:
            by_system.setdefault(row.system, []).append(row)
    out = []
    for system, rows in by_system.items():
        groups = [(f"{CATEGORY_NAMES[c]} ({c})", [r for r in rows if r.category == c]) for c in CATEGORY_NAMES]
        groups += [("overall (1–4)", [r for r in rows if r.category in QA_CATEGORIES]),
                   ("overall (1–5)", rows if any(r.category == ADVERSARIAL for r in rows) else [])]
        for group, members in groups:
            scored = [r for r in members if r.f1 is not None]
            if not scored:
                continue
            value, low, high, unit = _interval([100 * r.f1 for r in scored], [r.conversation_id for r in scored])
            out.append(ResultRow(**base, system=system, group=group, metric="F1 ×100 (official scorer)",
                                 value=value, ci_low=low, ci_high=high, n=len(scored), resampled=unit))
    judged: dict[tuple[str, str], list] = {}
    for j in load_judgments(RunDir(run).judgments):
        if j.mean is not None and j.category in QA_CATEGORIES:
            judged.setdefault((j.system, j.protocol), []).append(j)
    for (system, protocol), rows in sorted(judged.items()):
        value, low, high, unit = _interval([j.mean for j in rows], [j.conversation_id for j in rows])
        out.append(ResultRow(**base, system=system, group="overall (1–4)", metric=f"J ({protocol} judge)",
                             value=value, ci_low=low, ci_high=high, n=len(rows), resampled=unit))
    return out


def sweep_rows(sweep: Path, manifest: dict) -> list[ResultRow]:
    if not (sweep / "summary.json").is_file():
        from memeval.errors import InputError

        raise InputError(sweep, "summary.json", "not written yet: the sweep did not finish (see `memeval ls`); rerun "
                         "its command to resume it")
    summary = json.loads((sweep / "summary.json").read_text())
    base = {"directory": str(sweep), "kind": "memaudit sweep", "commit": _commit(manifest),
            "command": (recorded_commands(sweep) or [None])[-1]}
    out = []
    for r in summary["rows"]:
        if r.get("mean_ratio") is None:
            continue
        one = r["n"] < 2  # a bootstrap over one package repeats its ratio: no interval
        out.append(ResultRow(**base, system=r["method"], group=f"{r['distribution']}, B = {r['budget']:g}",
                             metric="ratio to OPT", value=r["mean_ratio"], ci_low=None if one else r["ci_low"],
                             ci_high=None if one else r["ci_high"], n=r["n"], resampled="packages"))
    return out


def collect(directories: Iterable[str | Path]) -> list[ResultRow]:
    """Every result row of the given run and sweep directories (each must hold a manifest.json)."""
    out = []
    for directory in map(Path, directories):
        path = RunDir(directory).manifest
        if not path.is_file():
            raise InputError(directory, MANIFEST, "not found: expected a `locomo run` or `memaudit sweep` "
                             "directory")
        manifest = load_manifest(path)
        kind = manifest.get("command")
        if kind in ("locomo run", "memeval locomo run"):
            out += locomo_rows(directory, manifest)
        elif kind in ("memaudit sweep", "sweep"):
            out += sweep_rows(directory, manifest)
        else:
            raise InputError(path, "command", f"{kind!r} results are not tabled here (locomo run and memaudit "
                             "sweep are)")
    return out


def _number(value: float | None, metric: str) -> str:
    """×100 scores to 2 decimals, ratios to 3; "–" for a missing value."""
    if value is None or value != value:
        return "–"
    return f"{value:.3f}" if metric == "ratio to OPT" else f"{value:.2f}"


UNITS = {"conversations": "conversation", "questions": "question", "packages": "package"}
METHODS = {"conversations": "percentile bootstrap ({boot}) resampling whole conversations (groups spanning two or "
                            "more conversations)",
           "questions": "percentile bootstrap ({boot}) over questions, item level (groups from one conversation, "
                        "where a clustered interval is undefined)",
           "packages": "percentile bootstrap over packages, as the sweep's summary.json holds it"}


def _ci(r: ResultRow) -> str:
    from memeval.reports.tables import ci_cell

    unit = UNITS.get(r.resampled, r.resampled)
    if r.ci_low is None or r.ci_high is None:  # too few units to resample: one question, package or conversation
        return ci_cell(None, None, str, r.n if r.resampled in ("questions", "packages") else 1, unit)
    return f"[{_number(r.ci_low, r.metric)}, {_number(r.ci_high, r.metric)}]"


def question_sets(rows: Sequence[ResultRow]) -> dict[str, frozenset]:
    """The sample ids each LoCoMo system of `rows` was measured on, read back from its run directory; labelled by
    system, or "directory · system" when the rows come from several directories."""
    from memeval.records import load_answers

    runs = list(dict.fromkeys(r.directory for r in rows if r.kind == "locomo run"))
    sets: dict[str, frozenset] = {}
    for run in runs:
        ids: dict[str, set] = {}
        for row in load_answers(RunDir(run).answers):
            if row.final:
                ids.setdefault(row.system, set()).add(row.sample_id)
        for system, members in ids.items():
            sets[system if len(runs) == 1 else f"{run} · {system}"] = frozenset(members)
    return sets


def notes(rows: Sequence[ResultRow]) -> list[str]:
    """What the 95% CI column's numbers actually are, and the question sets when they differ."""
    from memeval.reports.tables import different_sets_note

    boot = f"{N_BOOT:,} resamples"
    out = [f"95% CI, rows resampling {unit}: {METHODS[unit].format(boot=boot)}."
           for unit in METHODS if any(r.resampled == unit for r in rows)]
    if any(r.ci_low is None for r in rows):
        out.append("n/a: fewer than two units to resample (one question, package or conversation), so there is no "
                   "interval; a bootstrap would only repeat the value.")
    different = different_sets_note(question_sets(rows))
    return out + ([different] if different else [])


def markdown(rows: Sequence[ResultRow], compact: bool = False) -> str:
    """The comparison table and its notes; `compact` (one directory, as `memaudit sweep` prints it) leaves out the
    directory, commit and command columns."""
    from memeval.reports.tables import markdown_table

    def cells(r: ResultRow) -> list:
        return [r.system, r.group, r.metric, _number(r.value, r.metric), _ci(r), r.n, r.resampled]

    headers = ["system / writer", "group", "metric", "value", "95% CI", "n", "resampled"]
    below = "\n".join(f"- {n}" for n in notes(rows))
    if compact:
        return markdown_table(headers, [cells(r) for r in rows]) + (f"\n\n{below}" if below else "")
    table = markdown_table(["directory", *headers, "commit"],
                           [[r.directory, *cells(r), r.commit or "–"] for r in rows])
    commands = dict.fromkeys((r.directory, r.command) for r in rows)
    lines = "\n".join(f"- `{d}`: `{c}`" if c else f"- `{d}`: (no command recorded)" for d, c in commands)
    parts = [table, *([below] if below else []), f"Commands recorded in each directory's manifest:\n\n{lines}\n"]
    return "\n\n".join(parts)


def write(rows: Sequence[ResultRow], out: Path) -> list[Path]:
    """results.md, results.csv and results.parquet in `out`."""
    import pandas as pd

    from memeval.atomic import atomic_open, write_text_atomic

    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame([r.to_row() for r in rows], columns=list(ResultRow.model_fields))
    paths = [write_text_atomic(out / "results.md", markdown(rows)), out / "results.csv", out / "results.parquet"]
    write_text_atomic(paths[1], frame.to_csv(index=False))
    with atomic_open(paths[2], "wb") as fh:
        frame.to_parquet(fh, index=False)
    return paths
