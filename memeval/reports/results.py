"""`memeval results`: stored runs and sweeps side by side, one column per directory, one row per system (or
writer) and metric, each cell an estimate with its 95% interval; between LoCoMo runs that share questions, the
paired difference and its interval.

LoCoMo runs give, per system and over categories 1–4 (the published convention), F1 ×100 (official scorer),
BLEU-1 ×100 (Mem0's B1), J per judge protocol when judged, and evidence recall ×100 when recorded, with
conversation-clustered intervals (item-level when one conversation); `by_category` adds F1 per category. Sweeps
give each writer's mean ratio to OPT per budget with the bootstrap interval their summary already holds.

What a run's answers give these tables is kept in the cache directory, keyed by the answers file's path, size and
modification time: BLEU-1 needs nltk's tokenizer on every answer (seconds for a full run), and a full-context
run's answers file is tens of MB; the second `memeval results` on the same run reads a few hundred kB.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from memeval.answer_keys import ORIGINAL, answer_keys, without_keys
from memeval.errors import InputError
from memeval.invocation import directory_status, load_manifest, recorded_commands
from memeval.records import ResultRow, ResultsCell, ResultsDifference, ResultsDocument, ResultsRun
from memeval.reports.judge_leniency import NOT_MEASURED, leniency_by_protocol
from memeval.rundir import MANIFEST, RunDir

N_BOOT = 2000
SWEEP = "memaudit sweep"
SWEEP_KINDS = (SWEEP, "sweep")
PAIRED = "paired difference"
F1_METRIC = "F1 ×100 (official scorer)"
B1_METRIC = "BLEU-1 ×100 (Mem0's B1)"
RECALL_METRIC = "evidence recall ×100 (at the run's k)"
RATIO = "ratio to OPT"
WORDS_METRIC = "answer length (words, mean)"
PAIRED_SYSTEMS = "paired systems"


# ---- what a run's files give the tables, cached -----------------------------------------------------------------

class AnswerColumns(BaseModel):
    """The final (latest, error-free) answers of one answers.jsonl, one list per field, as the cache holds them;
    `b1` is None outside categories 1–4 and for an answer without a prediction."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    size: int
    mtime_ns: int
    b1_mode: str
    b1_tables: str  # where the English Punkt tables were found when B1 was computed ("" nowhere)
    system: list[str]
    sample_id: list[str]
    conversation_id: list[str]
    category: list[int]
    f1: list[float | None]
    evidence_recall: list[float | None]
    b1: list[float | None]
    words: list[int | None]  # the answer's length in whitespace tokens (None: no prediction)


class JudgmentColumns(BaseModel):
    """The latest judgments of one judgments.jsonl that have a mean, one list per field."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    size: int
    mtime_ns: int
    system: list[str]
    protocol: list[str]
    sample_id: list[str]
    conversation_id: list[str]
    category: list[int]
    mean: list[float]
    answer_key: list[str]  # the gold each was judged against (JudgmentRow.answer_key)


def _cache_path(source: Path, what: str) -> Path:
    from memeval.llm.cache import default_cache_dir

    digest = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:20]
    return default_cache_dir() / "results" / f"{digest}-{what}.json"


def _cached(model: type[BaseModel], source: Path, what: str, **expected) -> BaseModel | None:
    """The cache entry of `source` when it was made from the file as it is now (same size and modification
    time, and `expected` fields equal); None otherwise, also for an entry that cannot be read."""
    stat = source.stat()
    path = _cache_path(source, what)
    try:
        entry = model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    wanted = {"source": str(source.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, **expected}
    return entry if all(getattr(entry, k) == v for k, v in wanted.items()) else None


def _keep(entry: BaseModel, source: Path, what: str) -> None:
    """Write a cache entry; a cache that cannot be written (read-only, full) only costs the next call time."""
    from memeval.atomic import write_text_atomic

    try:
        write_text_atomic(_cache_path(source, what), entry.model_dump_json())
    except OSError:
        pass


def punkt_tables() -> str:
    """The places among nltk's usual search path (NLTK_DATA, ~/nltk_data, the interpreter's prefix, /usr and
    /usr/local, and `memeval data fetch nltk`'s data/nltk) that hold the English Punkt tables, so that cached
    BLEU-1 scores are recomputed once the tables are fetched, without importing nltk to ask."""
    import sys

    from memeval.data.paths import project_root

    roots = [*filter(None, os.environ.get("NLTK_DATA", "").split(os.pathsep)), os.path.expanduser("~/nltk_data"),
             *(os.path.join(sys.prefix, d) for d in ("nltk_data", "share/nltk_data", "lib/nltk_data")),
             "/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data",
             str(project_root() / "data" / "nltk")]
    return os.pathsep.join(r for r in roots if os.path.exists(os.path.join(r, "tokenizers", "punkt_tab", "english"))
                           or os.path.exists(os.path.join(r, "tokenizers", "punkt_tab.zip")))


def answer_columns(path: Path, progress: bool = False, kind: str | None = None) -> AnswerColumns:
    """`path`'s final answers and their B1 (over the headline categories of the run `kind`, default the first
    registered kind holding answer rows), from the cache when it holds them for the file as it is now."""
    if not path.exists():
        raise InputError(path, "file", "not found: the run has written no answers yet (see `memeval ls`)")
    tables = punkt_tables()
    hit = _cached(AnswerColumns, path, "answers", b1_tables=tables)
    if hit is not None:
        return hit
    from memeval.invocation import read_light_records
    from memeval.progress import ProgressBar
    from memeval.records import AnswerRow, latest
    from memeval.scoring.f1 import bleu1, bleu1_mode
    from memeval.scoring.power import words

    stat = path.stat()
    headline = _categories(kind).headline
    rows = [r for r in latest(read_light_records(path, AnswerRow), lambda r: r.key).values() if r.final]
    pairs = {(r.prediction, str(r.gold)): r.gold for r in rows if r.category in headline
             and r.prediction is not None and r.gold is not None}
    scores = {}
    with ProgressBar(len(pairs), f"BLEU-1 of {path.parent.name} (once: cached)", "answer", progress) as bar:
        for (prediction, text), gold in pairs.items():
            scores[prediction, text] = bleu1(prediction or "", gold)
            bar.update()
    entry = AnswerColumns(
        source=str(path.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns,
        b1_mode=bleu1_mode() if pairs else "", b1_tables=tables, system=[r.system for r in rows],
        sample_id=[r.sample_id for r in rows], conversation_id=[r.conversation_id for r in rows],
        category=[r.category for r in rows], f1=[r.f1 for r in rows], evidence_recall=[r.evidence_recall for r in rows],
        b1=[scores.get((r.prediction, str(r.gold))) if r.category in headline and r.gold is not None else None
            for r in rows],
        words=[None if r.prediction is None else words(r.prediction) for r in rows])
    _keep(entry, path, "answers")
    return entry


def judgment_columns(path: Path) -> JudgmentColumns | None:
    if not path.is_file():
        return None
    hit = _cached(JudgmentColumns, path, "judgments")
    if hit is not None:
        return hit
    from memeval.invocation import read_light_records
    from memeval.records import JudgmentRow, latest

    stat = path.stat()
    rows = [j for j in latest(read_light_records(path, JudgmentRow), lambda r: r.key).values() if j.mean is not None]
    entry = JudgmentColumns(source=str(path.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns,
                            system=[j.system for j in rows], protocol=[j.protocol for j in rows],
                            sample_id=[j.sample_id for j in rows], conversation_id=[j.conversation_id for j in rows],
                            category=[j.category for j in rows], mean=[float(j.mean) for j in rows],
                            answer_key=[j.answer_key for j in rows])
    _keep(entry, path, "judgments")
    return entry


# ---- cells ------------------------------------------------------------------------------------------------------

class _Judged(NamedTuple):
    """One cached judgment, as `keyed_judgments` chooses among a question's answer keys."""

    system: str
    protocol: str
    sample_id: str
    conversation_id: str
    category: int
    mean: float
    answer_key: str


class Scored(NamedTuple):
    """One question's score in one cell: what `paired_difference` pairs by sample id."""

    sample_id: str
    conversation_id: str
    value: float


@dataclass
class Column:
    """One directory of the comparison."""

    directory: str  # as given on the command line
    kind: str
    manifest: dict
    name: str = ""  # short and unique among the columns: the last path parts that tell them apart
    command: str | None = None
    status: str = "complete"  # `memeval ls`'s: complete, incomplete, running or replaced
    samples: dict[tuple[str, str, str], list[Scored]] = field(default_factory=dict)  # (system, group, metric)
    b1_mode: str = ""
    extra: dict[tuple[str, str, str], list[Scored]] = field(default_factory=dict)  # answer length, J by category
    leniency: dict[str, str] = field(default_factory=dict)  # judge protocol → its measured leniency sentence
    notes: list[str] = field(default_factory=list)  # recorded judgments: how the file's own judge scored
    unjudged: dict[tuple[str, str], int] = field(default_factory=dict)  # (system, protocol): no J on this key
    unparsed: set[tuple[str, str]] = field(default_factory=set)  # (system, protocol): the judge ran, nothing parsed
    commands: list[str] = field(default_factory=list)  # every command recorded, oldest first

    @property
    def commit(self) -> str | None:
        return _commit(self.manifest)

    @property
    def categories(self):
        return _categories(self.kind)

    @property
    def overall(self) -> str:
        return overall_group(self.categories)

    @property
    def header(self) -> str:
        return f"{self.name} @ {short_commit(self.commit)}"


def _commit(manifest: dict) -> str | None:
    sha = manifest.get("git_sha")
    if not isinstance(sha, str) or not sha:
        return None
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "")


def short_commit(commit: str | None) -> str:
    """Seven hex digits, "+" when the working tree had uncommitted changes."""
    return commit[:7] + ("+" if commit.endswith("-dirty") else "") if commit else "no commit"


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


def _categories(kind: str | None = None):
    """The CategorySet of a run kind, from the benchmark that declares it (None: the first registered kind holding
    answer rows)."""
    from memeval.engine.registry import categories, default_answer_kind

    return categories(kind or default_answer_kind())


def overall_group(categories) -> str:
    """The group of a run's headline cells: "overall (1–4)" for categories 1–4."""
    return f"overall ({categories.headline_span})"


def _is_overall(group: str) -> bool:
    return group.startswith("overall (")


def _references(column: Column) -> set[str]:
    """The systems of a run that are reference answer sets of its benchmark's answer keys (none without keys)."""
    hooks = answer_keys(column.kind)
    return hooks.reference_systems(column.manifest) if hooks is not None else set()


def _keyed_columns(run: Path, answers: AnswerColumns, key, headline) -> tuple[list, list, list, list]:
    """(kept, F1, B1, evidence recall) of every cached answer under `key` (memeval.answer_keys.Keyed): only the
    questions the key names are rescored, from the answers file read whole (their memories included)."""
    kept, f1, b1, recall = [True] * len(answers.f1), list(answers.f1), list(answers.b1), \
        list(answers.evidence_recall)
    if key.mode == "original":
        return kept, f1, b1, recall
    from memeval.records import AnswerRow, latest, read_records
    from memeval.scoring.f1 import bleu1

    rows = [r for r in latest(read_records(RunDir(run).answers, AnswerRow), lambda r: r.key).values()
            if r.final and key.affected(r.sample_id) is not None]
    keyed = {r.key: r for r in key.answers(rows)}
    position = {k: i for i, k in enumerate(zip(answers.system, answers.sample_id, strict=True))}
    for row in rows:
        i = position.get(row.key)
        if i is None:
            continue
        new = keyed.get(row.key)
        if new is None:
            kept[i] = False
            continue
        f1[i], recall[i] = new.f1, new.evidence_recall
        if str(new.gold) != str(row.gold) and row.category in headline:
            b1[i] = bleu1(new.prediction or "", new.gold)
    return kept, f1, b1, recall


def _locomo_samples(run: Path, by_category: bool, progress: bool, key=ORIGINAL,
                    unjudged: dict | None = None, kind: str | None = None) -> tuple[dict, str, dict]:
    """(system, group, metric) → the scored questions of that cell under the answer `key` (memeval.answer_keys:
    default the original), and the B1 mode; then the cells only the power and length tables show: answer length
    in words, and J per category when `by_category`. `unjudged` is filled with the (system, protocol) that have no
    J under the corrected key (`Keyed.unjudged`): their J cells are left out."""
    answers = answer_columns(RunDir(run).answers, progress, kind)
    out: dict[tuple[str, str, str], list[Scored]] = {}
    extra: dict[tuple[str, str, str], list[Scored]] = {}
    categories = _categories(kind)
    headline, overall = categories.headline, overall_group(categories)
    kept, f1s, b1s, recalls = _keyed_columns(run, answers, key, headline)
    columns = zip(answers.system, answers.sample_id, answers.conversation_id, answers.category, f1s,
                  b1s, recalls, answers.words, kept, strict=True)
    for system, sample, conversation, category, f1, b1, recall, length, keep in columns:
        if not keep:
            continue
        if length is not None and category in headline:
            extra.setdefault((system, overall, WORDS_METRIC), []).append(Scored(sample, conversation, length))
            if by_category:
                extra.setdefault((system, categories.label(category), WORDS_METRIC), []).append(
                    Scored(sample, conversation, length))
        for metric, value, scale in ((F1_METRIC, f1, 100), (B1_METRIC, b1, 100), (RECALL_METRIC, recall, 100)):
            if value is None:
                continue
            if category in headline:
                out.setdefault((system, overall, metric), []).append(Scored(sample, conversation, scale * value))
            if by_category and metric == F1_METRIC:
                group = categories.label(category)
                out.setdefault((system, group, metric), []).append(Scored(sample, conversation, scale * value))
    judged = judgment_columns(RunDir(run).judgments)
    if judged is not None:
        cells = [_Judged(*cell) for cell in zip(judged.system, judged.protocol, judged.sample_id,
                                                  judged.conversation_id, judged.category, judged.mean,
                                                  judged.answer_key, strict=True)]
        missing = key.unjudged(cells)
        if unjudged is not None:
            unjudged.update(missing)
        for system, protocol, sample, conversation, category, mean, _ in key.judgments(cells):
            if category in headline and (system, protocol) not in missing:
                out.setdefault((system, overall, f"J ({protocol} judge)"), []).append(
                    Scored(sample, conversation, mean))
                if by_category:
                    extra.setdefault((system, categories.label(category), f"J ({protocol} judge)"), []).append(
                        Scored(sample, conversation, mean))
    systems = list(dict.fromkeys(k[0] for k in (*out, *extra)))
    return (dict(sorted(out.items(), key=lambda kv: _order(kv[0], systems, categories))), answers.b1_mode,
            dict(sorted(extra.items(), key=lambda kv: _order(kv[0], systems, categories))))


def _order(key: tuple[str, str, str], systems: list[str], categories) -> tuple:
    """Systems in the order given; per system F1, F1 by category, B1, J, evidence recall."""
    system, group, metric = key
    rank = (0 if metric == F1_METRIC and _is_overall(group) else 1 if metric == F1_METRIC else
            2 if metric == B1_METRIC else 4 if metric == RECALL_METRIC else 3)
    category = categories.by_name(group) or 0
    return systems.index(system), rank, category, metric


def _protocol(metric: str) -> str | None:
    """"graded" for "J (graded judge)"; None for a metric that is not a judge's."""
    return metric[3:].removesuffix(" judge)") if metric.startswith("J (") else None


def locomo_rows(column: Column) -> list[ResultRow]:
    """A row per cell (its interval and the MDE of its mean), then the answer-length and per-category J cells;
    a J row carries its judge's leniency, and a small category's J its Wilson interval."""
    from memeval.scoring.power import item_level, mean_power, small_category, wilson

    base = {"directory": column.directory, "kind": column.kind, "commit": column.commit, "command": column.command}
    out = []
    for (system, group, metric), scored in [*column.samples.items(), *column.extra.items()]:
        if not scored:  # a J with no value on this key: the row below says so
            continue
        values, clusters = [s.value for s in scored], [s.conversation_id for s in scored]
        value, low, high, unit = _interval(values, clusters)
        protocol = _protocol(metric)
        if protocol is not None and not _is_overall(group) and small_category(len(values), value / 100):
            low, high = (100 * b for b in wilson(sum(values) / 100, len(values)))
            unit = "wilson"
        power = item_level(mean_power(values, clusters), values)
        out.append(ResultRow(**base, system=system, group=group, metric=metric, value=value, ci_low=low,
                             ci_high=high, n=len(scored), resampled=unit, mde=_finite(power.mde),
                             leniency=None if protocol is None else column.leniency.get(protocol, NOT_MEASURED)))
    for system, protocol in column.unjudged:  # no J on this key: a row that says so, its reason in the notes
        out.append(ResultRow(**base, system=system, group=column.overall, metric=f"J ({protocol} judge)",
                             value=math.nan,
                             ci_low=None, ci_high=None, n=0, resampled=NOT_ON_KEY,
                             leniency=column.leniency.get(protocol, NOT_MEASURED)))
    for system, protocol in sorted(column.unparsed):  # the judge ran and nothing parsed: "–", never 0
        out.append(ResultRow(**base, system=system, group=column.overall, metric=f"J ({protocol} judge)",
                             value=math.nan,
                             ci_low=None, ci_high=None, n=0, resampled=NO_JUDGMENT,
                             leniency=column.leniency.get(protocol, NOT_MEASURED)))
    return out


def _unparsed(column: Column) -> tuple[set[tuple[str, str]], list[str]]:
    """The (system, protocol) whose judge the run asked for but which hold no usable judgment at all (every reply
    unparseable, or none judged yet), and a note per protocol with the unusable counts the manifest recorded: such
    a J is not measured, so it reads "–", never a 0."""
    config = column.manifest.get("config") if isinstance(column.manifest.get("config"), dict) else {}
    protocol = config.get("judge")
    if not isinstance(protocol, str) or protocol == "none":
        return set(), []
    metric = f"J ({protocol} judge)"
    overall = column.overall
    found = {(system, protocol) for system, group, m in column.samples if m == F1_METRIC and group == overall
             and not column.samples.get((system, overall, metric)) and (system, protocol) not in column.unjudged}
    if not found:
        return set(), []
    missing = (column.manifest.get("missing") or {}).get("judgments") or []
    unusable = {reason: n for m in missing if isinstance(m, dict) and m.get("protocol") == protocol
                for reason, n in (m.get("unusable") or {}).items() if isinstance(n, int)}
    why = "; ".join(f"{n} questions: {reason}" for reason, n in unusable.items()) or "no question judged yet"
    systems = ", ".join(sorted(s for s, _ in found))
    return found, [f"{column.name}: no parseable {protocol} judgment for {systems} ({why}), so its J is \"–\", not "
                   "0; a rerun asks the judge again."]


def _spread_notes(column: Column) -> list[str]:
    """Per judge of this run that gave every judged question (categories 1–4, all systems) the same score, the
    note saying so beside their F1 (memeval.reports.judge_spread)."""
    from memeval.reports.judge_leniency import judge_identities
    from memeval.reports.judge_spread import constant_judge_note

    hooks = answer_keys(column.kind)
    identities = judge_identities(column.manifest)
    f1 = {(system, s.sample_id): s.value for (system, group, metric), scored in column.samples.items()
          if group == column.overall and metric == F1_METRIC for s in scored}
    judged: dict[str, list[tuple[float, float | None]]] = {}
    for (system, group, metric), scored in column.samples.items():
        protocol = _protocol(metric)
        if group == column.overall and protocol and not (hooks is not None and hooks.is_recorded(protocol)):
            judged.setdefault(protocol, []).extend((s.value, f1.get((system, s.sample_id))) for s in scored)
    notes = []
    for protocol, pairs in judged.items():
        model = (identities.get(protocol) or {}).get("judge_model")
        note = constant_judge_note(protocol, model if isinstance(model, str) else None, pairs)
        if note:
            notes.append(f"{column.name}: {note}")
    return notes


def _power_keys(column: Column) -> list[tuple[str, str]]:
    """The (group, metric) pairs whose paired differences the power table shows: F1 and J, overall and by
    category."""
    keys = {(g, m) for _, g, m in [*column.samples, *column.extra] if m == F1_METRIC or m.startswith("J (")}
    return sorted(keys, key=lambda k: _order(("", *k), [""], column.categories))


def _system_pairs(column: Column) -> list[ResultRow]:
    """Every pair of systems of one run, per group and metric of `_power_keys`: the paired difference on the
    questions both scored, its clustered interval, MDE and verdict."""
    from itertools import combinations
    from operator import attrgetter

    from memeval.scoring.aggregate import paired_difference
    from memeval.scoring.power import paired_rows

    cells = {**column.samples, **column.extra}
    references = _references(column)
    systems = [s for s in dict.fromkeys(k[0] for k in cells) if s not in references]
    out = []
    for group, metric in _power_keys(column):
        for a, b in combinations(systems, 2):
            rows_a, rows_b = cells.get((a, group, metric)), cells.get((b, group, metric))
            if not rows_a or not rows_b:
                continue
            d = paired_difference(rows_a, rows_b, attrgetter("value"), a, b, n_boot=N_BOOT, seed=0)
            if d.n == 0:
                continue
            unit = "conversations"
            if not d.defined:  # one conversation: resample its questions, as `_paired_rows` does
                unit = "questions"
                d = paired_difference([r._replace(conversation_id=r.sample_id) for r in rows_a], rows_b,
                                      attrgetter("value"), a, b, n_boot=N_BOOT, seed=0)
            power = paired_rows(rows_a, rows_b, attrgetter("value"), fallback=True)
            out.append(ResultRow(directory=column.directory, kind=PAIRED_SYSTEMS, system=a, minus_system=b,
                                 group=group, metric=metric, value=d.mean_difference,
                                 ci_low=d.low if d.defined else None, ci_high=d.high if d.defined else None, n=d.n,
                                 resampled=unit, commit=column.commit, command=column.command,
                                 mde=_finite(power.mde), verdict=power.verdict))
    return out


def sweep_rows(sweep: Path, manifest: dict) -> list[ResultRow]:
    """Each writer's mean ratio to OPT per distribution and budget, from the sweep's summary.json."""
    if not (sweep / "summary.json").is_file():
        raise InputError(sweep, "summary.json", "not written yet: the sweep did not finish (see `memeval ls`); rerun "
                         "its command to resume it")
    from memeval.safe_json import load_json_file

    summary = load_json_file(sweep / "summary.json", "summary")
    if not isinstance(summary, dict) or not isinstance(summary.get("rows"), list):
        raise InputError(sweep / "summary.json", "rows", "expected a JSON object with a list of rows")
    base = {"directory": str(sweep), "kind": SWEEP, "commit": _commit(manifest),
            "command": (recorded_commands(sweep) or [None])[-1]}
    out = []
    for number, r in enumerate(summary["rows"], start=1):
        if not isinstance(r, dict) or r.get("mean_ratio") is None:
            continue
        try:
            one = r["n"] < 2  # a bootstrap over one package repeats its ratio: no interval
            out.append(ResultRow(**base, system=r["method"], group=f"{r['distribution']}, B = {r['budget']:g}",
                                 metric=RATIO, value=r["mean_ratio"], ci_low=None if one else r["ci_low"],
                                 ci_high=None if one else r["ci_high"], n=r["n"], resampled="packages"))
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            name = exc.args[0] if isinstance(exc, KeyError) else type(exc).__name__
            raise InputError(f"{sweep / 'summary.json'} row {number}", str(name), "missing or not a number") \
                from None
    return out


def _paired_rows(first: Column, other: Column) -> list[ResultRow]:
    """`other` minus `first` for every cell both have on shared questions (the intersection of their sample
    ids), clustered by conversation; on one shared conversation, item level over its questions (labelled so)."""
    from operator import attrgetter

    from memeval.scoring.aggregate import paired_difference
    from memeval.scoring.power import paired_rows

    out = []
    for key, rows in other.samples.items():
        base = first.samples.get(key)
        if not base:
            continue
        d = paired_difference(rows, base, attrgetter("value"), other.name, first.name, n_boot=N_BOOT, seed=0)
        if d.n == 0:
            continue
        unit = "conversations"
        if not d.defined:  # one shared conversation: resample its questions, as the cells themselves do
            unit = "questions"
            d = paired_difference([r._replace(conversation_id=r.sample_id) for r in rows], base,
                                  attrgetter("value"), other.name, first.name, n_boot=N_BOOT, seed=0)
        system, group, metric = key
        power = paired_rows(rows, base, attrgetter("value"), fallback=True)
        out.append(ResultRow(directory=f"{other.directory} − {first.directory}", kind=PAIRED, system=system,
                             group=group, metric=metric, value=d.mean_difference,
                             ci_low=d.low if d.defined else None, ci_high=d.high if d.defined else None, n=d.n,
                             resampled=unit, commit=None, command=None, mde=_finite(power.mde),
                             verdict=power.verdict))
    return out


# ---- the comparison -----------------------------------------------------------------------------------------------

@dataclass
class Comparison:
    columns: list[Column]
    rows: list[ResultRow]  # every cell, paired differences included (kind "paired difference")
    by_category: bool = False
    pairs: list[tuple[Column, Column]] = field(default_factory=list)  # (run, the earlier run it is paired with)
    key_notes: list[str] = field(default_factory=list)  # the answer key used, and the ceilings or how to check it

    @property
    def runs(self) -> list[Column]:
        return [c for c in self.columns if c.kind != SWEEP]

    @property
    def sweeps(self) -> list[Column]:
        return [c for c in self.columns if c.kind == SWEEP]


def _short_names(directories: Sequence[str]) -> list[str]:
    """The fewest trailing path parts that tell the directories apart (`run`, `paper-1f0c/run`)."""
    parts = [Path(shown_path(d)).parts or (d,) for d in directories]
    depth = [1] * len(parts)
    while True:
        names = ["/".join(p[-k:]) for p, k in zip(parts, depth, strict=True)]
        clashes = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clashes and depth[i] < len(parts[i])]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1


def shown_path(directory: str | Path) -> str:
    """Relative to the working directory when inside it (no absolute paths in what a person reads)."""
    relative = os.path.relpath(directory)
    return str(directory) if relative.startswith("..") else relative


def shown_command(command: str | None) -> str | None:
    """A recorded command with the working directory's absolute prefix taken off its paths."""
    if not command:
        return command
    return command.replace(os.getcwd().rstrip(os.sep) + os.sep, "")


def compare(directories: Iterable[str | Path], by_category: bool = False, progress: bool = False,
            key: str = "original", ambiguous: str = "include") -> Comparison:
    """Every cell of the given run and sweep directories (each must hold a manifest.json), and the paired
    difference of each later LoCoMo run from the first on the questions they share; LoCoMo runs scored against
    the answer `key` (memeval.answer_keys, from the run's benchmark; `ambiguous`: its audit's AMBIGUOUS questions
    kept or dropped; a benchmark without answer keys takes the original key only)."""
    from memeval.engine.registry import answer_kinds

    kinds = answer_kinds()
    tabled = [*dict.fromkeys(kinds.values()), SWEEP]
    columns: list[Column] = []
    given: dict[Path, str] = {}
    for d in directories:  # one column per directory, however it is spelled
        given.setdefault(Path(d).resolve(), str(d))
    for directory in given.values():
        path = RunDir(directory).manifest
        if not path.is_file():
            raise InputError(directory, MANIFEST, "not found: expected a "
                             + _either([f"`{k}`" for k in tabled], "or") + " directory")
        manifest = load_manifest(path)
        kind = manifest.get("command")
        if kind not in kinds and kind not in SWEEP_KINDS:
            raise InputError(path, "command", f"{kind!r} results are not tabled here ({_either(tabled, 'and')} are)")
        commands = recorded_commands(directory)
        columns.append(Column(directory, kinds.get(kind, SWEEP), manifest,
                              command=(commands or [None])[-1], commands=commands,
                              status=directory_status(Path(directory), manifest)))
    for column, name in zip(columns, _short_names([c.directory for c in columns]), strict=True):
        column.name = name
    rows: list[ResultRow] = []
    keys: dict = {}
    key_notes: list[str] = []
    for column in columns:
        if column.kind != SWEEP:
            hooks = answer_keys(column.kind)
            keyed = hooks.for_run(column.manifest, key, ambiguous, keys) if hooks is not None else \
                without_keys(column.directory, key)
            key_notes += [n for n in keyed.notes() if n not in key_notes]
            column.samples, column.b1_mode, column.extra = _locomo_samples(Path(column.directory), by_category,
                                                                           progress, keyed, column.unjudged,
                                                                           column.kind)
            _recorded(column, keyed, column.unjudged)
            for system, protocol in column.unjudged:
                column.samples.setdefault((system, column.overall, f"J ({protocol} judge)"), [])
            column.unparsed, unparsed_notes = _unparsed(column)
            column.notes += unparsed_notes + _spread_notes(column)
            for system, protocol in column.unparsed:
                column.samples.setdefault((system, column.overall, f"J ({protocol} judge)"), [])
            column.leniency = leniency_by_protocol(column.manifest, {_protocol(m) for _, _, m in column.samples
                                                                     if _protocol(m)})
            rows += locomo_rows(column) + _system_pairs(column)
        else:
            rows += sweep_rows(Path(column.directory), column.manifest)
    runs = [c for c in columns if c.kind != SWEEP]
    pairs = []
    for n, other in enumerate(runs[1:], start=1):  # runs of one kind only: another kind's categories differ
        base = next((c for c in runs[:n] if c.kind == other.kind and _share(c, other)), None)
        if base is not None:
            pairs.append((other, base))
            rows += _paired_rows(base, other)
    return Comparison(columns, rows, by_category, pairs, key_notes)


def _either(names: Sequence[str], word: str) -> str:
    """"a or b", "a, b or c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"


def _recorded(column: Column, key, unjudged: dict | None = None) -> None:
    """An imported file's recorded judgments: the majority vote as a cell beside their J (the per-run mean), and a
    note with the population std over runs (`Keyed.recorded`). A judge with no J under the corrected key
    (`unjudged`) gets one note saying why, and neither figure."""
    cells, notes = key.recorded(RunDir(column.directory).judgments, column.overall, unjudged or {})
    column.samples.update({cell: [Scored(*vote) for vote in votes] for cell, votes in cells.items()})
    column.notes = notes


def _share(a: Column, b: Column) -> bool:
    """Whether two runs answered a question in common with a system of the same name."""
    return any(not {s.sample_id for s in rows}.isdisjoint(s.sample_id for s in b.samples.get(key, ()))
               for key, rows in a.samples.items() if key in b.samples)


def collect(directories: Iterable[str | Path], by_category: bool = False) -> list[ResultRow]:
    """Every result row of the given run and sweep directories, paired differences included."""
    return compare(directories, by_category).rows


# ---- numbers at the precision their interval justifies -----------------------------------------------------------

def decimals(low: float | None, high: float | None, default: int) -> int:
    """Decimal places that show the interval's half-width to two significant digits when they start with 1 or
    2, else one (±0.85 → 1 place, ±0.15 → 2); `default` without an interval (or a zero-width one)."""
    if low is None or high is None or not math.isfinite(low) or not math.isfinite(high) or high <= low:
        return default
    half = (high - low) / 2
    exponent = math.floor(math.log10(half))
    places = -exponent + (1 if half / 10 ** exponent < 3 else 0)
    return min(max(places, 0), 4)


def _default_places(metric: str) -> int:
    return 3 if metric == RATIO else 1


def number(value: float | None, places: int, signed: bool = False) -> str:
    """`value` to `places` decimals; `signed` writes "+" before a positive difference (a zero has no sign)."""
    if value is None or not math.isfinite(value):
        return "–"
    value = round(value, places) + 0.0  # -0.0 prints as 0
    return f"{value:+.{places}f}" if signed and value != 0 else f"{value:.{places}f}"


NOT_ON_KEY = "not judged on this key"  # a J row with no value under the corrected key (Keyed.unjudged)
NO_JUDGMENT = "no parseable judgment"  # a J row of a judge that ran and left no usable judgment
UNITS = {"conversations": "conversation", "questions": "question", "packages": "package"}


def cell(r: ResultRow) -> str:
    """"6.6 [5.7, 7.4]", or the estimate and "n/a (1 conversation)" when fewer than two units were resampled."""
    if r.resampled == NOT_ON_KEY:
        return "– (not judged on this key)"
    if r.resampled == NO_JUDGMENT:
        return f"– ({NO_JUDGMENT})"
    signed = r.kind == PAIRED
    places = decimals(r.ci_low, r.ci_high, _default_places(r.metric))
    value = number(r.value, places, signed)
    if r.ci_low is None or r.ci_high is None:
        units = r.n if r.resampled in ("questions", "packages") else 1
        unit = UNITS.get(r.resampled, r.resampled)
        return f"{value} n/a ({units} {unit}{'' if units == 1 else 's'})"
    return f"{value} [{number(r.ci_low, places, signed)}, {number(r.ci_high, places, signed)}]"


# ---- the wide tables ------------------------------------------------------------------------------------------------

@dataclass
class WideTable:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]


def _sweep_label(group: str, single: bool) -> str:
    return f"{RATIO}, {group.split(', ', 1)[1]}" if single else f"{RATIO}, {group}"


def _kinds(comparison: Comparison) -> list[list[Column]]:
    """The runs grouped by kind, in the order the kinds first appear: each kind is tabled on its own."""
    kinds = list(dict.fromkeys(c.kind for c in comparison.runs))
    return [[c for c in comparison.runs if c.kind == kind] for kind in kinds]


def _titled(title: str, runs: list[Column], several: bool) -> str:
    """A table's title, naming the runs' benchmark when the comparison holds runs of several kinds."""
    from memeval.engine.registry import title as benchmark

    return f"{title} ({benchmark(runs[0].kind)})" if several else title


def wide_tables(comparison: Comparison) -> list[WideTable]:
    """Per run kind a table of its runs (with paired-difference columns), and one of the sweeps, each directory a
    column."""
    from memeval.engine.registry import title

    out = []
    cells = {(r.directory, r.kind, r.system, r.group, r.metric): r for r in comparison.rows}
    sweeps = comparison.sweeps
    kinds = _kinds(comparison)
    for runs in kinds:
        categories = runs[0].categories
        keys = list(dict.fromkeys(k for c in runs for k in c.samples))
        systems = list(dict.fromkeys(k[0] for k in keys))
        keys.sort(key=lambda k: _order(k, systems, categories))
        pairs = [(f"{c.name} − {base.name}", f"{c.directory} − {base.directory}") for c, base in comparison.pairs
                 if c in runs]
        scope = f"metric (categories {categories.headline_span}" + (" unless named)" if comparison.by_category
                                                                     else ")")
        headers = ["system", scope, *[c.header for c in runs], *[name for name, _ in pairs]]
        references = set().union(*(_references(c) for c in runs))
        body = []
        for system, group, metric in keys:
            label = _metric_label(group, metric)
            row = [f"{system} (reference answer set)" if system in references else system, label]
            row += [cell(r) if (r := cells.get((c.directory, c.kind, system, group, metric))) else "–"
                    for c in runs]
            row += [cell(r) if (r := cells.get((d, PAIRED, system, group, metric))) else "–" for _, d in pairs]
            body.append(row)
        out.append(WideTable(f"{title(runs[0].kind)} runs", headers, body, _run_notes(comparison, runs, pairs)))
        power, length = power_table(comparison, runs), length_table(comparison, runs)
        power.title, length.title = (_titled(t.title, runs, len(kinds) > 1) for t in (power, length))
        out += [power, length]
    if sweeps:
        groups = {c.directory: {r.group.split(", ")[0] for r in comparison.rows if r.directory == c.directory
                                and r.kind == SWEEP} for c in sweeps}
        single = all(len(g) <= 1 for g in groups.values())
        sweep_cells = [r for r in comparison.rows if r.kind == SWEEP and r.system != "opt"]
        configured = [m for c in sweeps for m in (c.manifest.get("config") or {}).get("methods") or []]
        writers = list(dict.fromkeys([*configured, *(r.system for r in sweep_cells)]))
        budgets = {(r.system, _sweep_label(r.group, single)): (writers.index(r.system), r.group.split(", B = ")[0],
                                                                  float(r.group.rsplit("= ", 1)[1]))
                   for r in sweep_cells}
        keys = sorted(budgets, key=budgets.get)
        by_key = {(r.directory, r.system, _sweep_label(r.group, single)): r for r in sweep_cells}
        headers = ["writer", "metric", *[c.header for c in sweeps]]
        body = [[writer, label, *[cell(r) if (r := by_key.get((c.directory, writer, label))) else "–"
                                  for c in sweeps]] for writer, label in keys]
        out.append(WideTable("MEMAUDIT sweeps", headers, body, _sweep_notes(comparison, sweeps, groups)))
    return out


POWER_TITLE = "Which differences are real (paired, clustered by conversation, 80% power at α = 0.05)"
LENGTH_TITLE = "J beside answer length and the judge's leniency"


def _is_power_metric(metric: str) -> bool:
    return metric == F1_METRIC or metric.startswith("J (")


def power_table(comparison: Comparison, runs: list[Column] | None = None) -> WideTable:
    """One row per comparison: the systems of each run pairwise, and each system across the runs paired with
    each other, per metric (F1, J) and group; the difference with its interval, the MDE and the verdict. A run of
    one system with no pair gets the MDE of its own means. `runs`: runs of one kind (default: the comparison's)."""
    runs = comparison.runs if runs is None else runs
    span = runs[0].categories.headline_span if runs else _categories().headline_span
    headers = ["comparison", f"metric (categories {span} unless named)", "run", "difference [95% CI]", "n",
               "MDE (80% power)", "verdict"]
    body = []
    for c in runs:
        within = [r for r in comparison.rows if r.kind == PAIRED_SYSTEMS and r.directory == c.directory]
        body += [[f"{r.system} − {r.minus_system}", _metric_label(r.group, r.metric), c.name, cell(r), r.n,
                  _mde(r), r.verdict] for r in within]
        if not within and not any(c is later or c is earlier for later, earlier in comparison.pairs):
            references = _references(c)
            alone = [r for r in comparison.rows if r.kind == c.kind and r.directory == c.directory
                     and _is_power_metric(r.metric) and r.system not in references]
            body += [[f"{r.system} (alone)", _metric_label(r.group, r.metric), c.name, cell(r), r.n, _mde(r),
                      "MDE of its mean (no pair)"] for r in alone]
    names = {f"{later.directory} − {earlier.directory}": f"{later.name} − {earlier.name}"
             for later, earlier in comparison.pairs if later in runs}
    body += [[f"{r.system}: {names[r.directory]}", _metric_label(r.group, r.metric), names[r.directory], cell(r),
              r.n, _mde(r), r.verdict] for r in comparison.rows if r.kind == PAIRED and r.directory in names
             and _is_power_metric(r.metric)]
    notes = ["MDE: the smallest true difference these questions detect 80% of the time at two-sided α = 0.05: "
             "(z₀.₉₇₅ + z₀.₈) · SE = 2.80 · SE, SE the cluster-robust standard error of the mean per-question "
             "difference (conversations as clusters, small-sample factor G/(G − 1)); see docs/data-and-scoring.md.",
             "Verdict: \"within noise\" when |difference| is under 1.96 · SE (a normal 95% interval around 0 holds "
             "it), else \"real at α = 0.05\"; where the questions come from one conversation there is no clustered "
             "SE, so the SE treats its questions as independent and the verdict says \"(item level)\": it holds "
             "for that conversation, not across conversations; \"no difference\" when "
             "the systems score the same on every question. A difference within noise "
             "that is smaller than the MDE may still be real: these questions cannot tell. Each row is one test; "
             "with many rows, some \"real\" verdicts are chance.",
             "The interval is the percentile bootstrap of the other tables (resampling whole conversations); the "
             "verdict uses the analytic SE, so at the edge the two can disagree."]
    notes += _reference_notes(runs)
    if not body:
        notes.insert(0, "No comparison: every run has one system and no run shares questions with another.")
    return WideTable(POWER_TITLE, headers, [[str(c) for c in row] for row in body], notes)


def _reference_notes(runs: Sequence[Column]) -> list[str]:
    """One line per run holding the audit's reference answer sets: named, scored above, never paired."""
    notes = []
    for c in runs:
        names = _references(c) & {k[0] for k in c.samples}
        if names:
            notes.append(answer_keys(c.kind).reference_note(names) + (f" ({c.name})" if len(runs) > 1 else ""))
    return notes


def _mde(r: ResultRow) -> str:
    return "–" if r.mde is None else number(r.mde, _default_places(r.metric))


def length_table(comparison: Comparison, runs: list[Column] | None = None) -> WideTable:
    """Per system: J (per category with Wilson intervals where a category is small), the judge's measured
    leniency, and the mean answer length in words, which a generous judge rewards; runs in columns. `runs`: runs
    of one kind (default: the comparison's)."""
    runs = comparison.runs if runs is None else runs
    categories = runs[0].categories if runs else _categories()
    kinds = {c.kind for c in runs}
    cells = {(r.directory, r.system, r.group, r.metric): r for r in comparison.rows if r.kind in kinds}
    keys = list(dict.fromkeys((s, g, m) for c in runs for (s, g, m) in [*c.samples, *c.extra]
                              if m == WORDS_METRIC or m.startswith("J (")))
    systems = list(dict.fromkeys(k[0] for k in keys))
    keys.sort(key=lambda k: _order(k, systems, categories))
    body = []
    for system, group, metric in keys:
        label = _metric_label(group, metric)
        body.append([system, label, *[cell(r) + (" Wilson" if r.resampled == "wilson" else "")
                                      if (r := cells.get((c.directory, system, group, metric))) else "–"
                                      for c in runs]])
        if _is_overall(group) and metric.startswith("J ("):
            body.append([system, f"{label}: leniency", *[r.leniency or NOT_MEASURED
                                                         if (r := cells.get((c.directory, system, group, metric)))
                                                         else "–" for c in runs]])
    notes = [f"Answer length: mean words (whitespace tokens) per answer, categories {categories.headline_span}; a "
             "lenient judge finds more to match in a longer answer, so read J beside it."]
    if any(m.startswith("J (") for _, _, m in keys):
        notes.append("Leniency: the share of known-wrong answers this exact judge configuration (judge, model, prompt "
                     "version, sampling) accepts, as measured by `memeval judge calibrate` or recorded by the "
                     "LoCoMo audit; \"leniency not measured\" when no measurement matches the configuration.")
    else:
        notes.append("No judge ran: no J, so no leniency to show.")
    if any(r.resampled == "wilson" for r in comparison.rows):
        notes.append("Wilson: a category with fewer than 100 questions (or fewer than 5 on either side of its "
                     "rate) gets the Wilson score interval of J/100 over its n questions (item level, it ignores "
                     "clustering); other rows resample conversations as above.")
    return WideTable(LENGTH_TITLE, ["system", f"metric (categories {categories.headline_span} unless named)",
                                    *[c.header for c in runs]], body, notes)


def _metric_label(group: str, metric: str) -> str:
    """The row's label under the "metric (categories 1–4)" header: "F1 ×100", "J (graded)", "F1 ×100, temporal (2)"."""
    if metric == F1_METRIC:
        return "F1 ×100" + ("" if _is_overall(group) else f", {group}")
    if metric == B1_METRIC:
        return "BLEU-1 ×100"
    if metric == RECALL_METRIC:
        return "evidence recall ×100"
    if metric == WORDS_METRIC:
        return "answer words (mean)" + ("" if _is_overall(group) else f", {group}")
    return metric.removesuffix(" judge)") + ")" + ("" if _is_overall(group) else f", {group}")


def _column_line(c: Column, extra: str = "") -> str:
    from memeval.reports.markdown import code_span

    command = shown_command(c.command)
    commit = (f"commit {c.commit.removesuffix('-dirty')} with uncommitted changes (+)"
              if c.commit and c.commit.endswith("-dirty") else f"commit {c.commit or 'not recorded'}")
    status = "" if c.status == "complete" else f", {c.status.upper()}: rows may be missing"
    from memeval.engine.registry import answer_kinds, run_kinds

    kind = c.manifest.get("command") if c.manifest.get("command") in answer_kinds() else c.kind
    if len(c.commands) > 1:
        writers = run_kinds()[c.kind].written_by if c.kind in run_kinds() else ()
        imports = sum(any(f" {w} " in f"{line} " for w in writers) for line in c.commands)
        many = f"{imports} imports" if imports == len(c.commands) else f"{len(c.commands)} commands"
        extra += f"; {many}, last"
    return (f"{c.name}: {shown_path(c.directory)} ({kind}{status}, {commit}{extra})"
            + (f": {code_span(command)}" if command else ": no command recorded"))


def _run_notes(comparison: Comparison, runs: list[Column], pairs: list) -> list[str]:
    notes = [*comparison.key_notes, *(_column_line(c) for c in runs), *(n for c in runs for n in c.notes)]
    paired_dirs = {d for _, d in pairs}
    if pairs:
        paired = [r for r in comparison.rows if r.kind == PAIRED and r.directory in paired_dirs]
        sizes = sorted({r.n for r in paired})
        notes.append(f"{', '.join(name for name, _ in pairs)}: paired difference (each run minus the first "
                     "earlier run it shares questions with) on the questions both answered for the system (the "
                     "intersection of their sample ids; "
                     f"n = {_sizes(sizes)}), "
                     + ("95% CI resampling whole conversations, so a difference whose interval excludes 0 holds "
                        "across conversations." if all(r.resampled == "conversations" for r in paired) else
                        "95% CI resampling whole conversations where the runs share two or more, else their "
                        "questions (item level: it holds for that conversation, not across conversations)."))
    elif len(runs) > 1:
        notes.append("No paired differences: the runs share no questions for any system.")
    notes.append(_categories_note(runs[0].categories, comparison.by_category))
    modes = sorted({c.b1_mode for c in runs if c.b1_mode})
    metrics = {key[2] for c in runs for key in c.samples}
    meanings = [f"BLEU-1: Mem0's B1, mode {', '.join(modes)}." if modes else "",
                "J: the judge's mean score (0–100) per question." if any(m.startswith("J (") for m in metrics) else "",
                "Evidence recall: the share of a question's gold evidence turns among the memories the reader was "
                "given." if RECALL_METRIC in metrics else ""]
    if any(meanings):
        notes.append(" ".join(m for m in meanings if m))
    notes += [f"J ({protocol}) of {c.name} — {lenient}." for c in runs for protocol, lenient in c.leniency.items()]
    notes += _reference_notes(runs)
    kinds = {c.kind for c in runs}
    notes += _interval_notes([r for r in comparison.rows if (r.kind in kinds or r.directory in paired_dirs)
                              and r.resampled != "wilson"])
    different = _different_sets(runs)
    return notes + ([different] if different else [])


def _categories_note(categories, by_category: bool) -> str:
    """Which categories the overall rows average, and those scored apart (LoCoMo's adversarial 5, by a refusal
    rule), from the runs' CategorySet."""
    from memeval.categories import span

    note = f"Categories {categories.headline_span} {categories.averaged}"
    apart = [f"{categories.name(c)} {c}" for c in categories.apart]
    if apart:
        note += f" ({_either(apart, 'and')} {'is' if len(apart) == 1 else 'are'} scored by a refusal rule)"
    shown = span(categories.apart)
    return note + (f"; F1 rows per category also show {shown}." if by_category and shown else ".")


def _sizes(sizes: list[int]) -> str:
    return f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,} to {sizes[-1]:,} by row"


def _sweep_notes(comparison: Comparison, sweeps: list[Column], groups: dict) -> list[str]:
    notes = []
    for c in sweeps:
        n = sorted({r.n for r in comparison.rows if r.directory == c.directory and r.kind == SWEEP})
        notes.append(_column_line(c, f", distribution {', '.join(sorted(groups[c.directory])) or '–'}, "
                                     f"n = {_sizes(n) if n else '0'} packages"))
    notes.append("Each writer's mean ratio to OPT (1 = optimal) at budget B; OPT itself is left out. Sweeps are "
                 "not paired here.")
    return notes + _interval_notes([r for r in comparison.rows if r.kind == SWEEP])


METHODS = {"conversations": "percentile bootstrap ({boot}) resampling whole conversations (groups spanning two or "
                            "more conversations)",
           "questions": "percentile bootstrap ({boot}) over questions, item level (groups from one conversation, "
                        "where a clustered interval is undefined)",
           "packages": "percentile bootstrap over packages, as the sweep's summary.json holds it"}


def _interval_notes(rows: Sequence[ResultRow], precision: bool = True) -> list[str]:
    boot = f"{N_BOOT:,} resamples"
    out = [f"95% CI, rows resampling {unit}: {METHODS[unit].format(boot=boot)}."
           for unit in METHODS if any(r.resampled == unit for r in rows)]
    if any(r.ci_low is None and r.resampled not in (NOT_ON_KEY, NO_JUDGMENT) for r in rows):
        out.append("n/a: fewer than two units to resample (one question, package or conversation), so there is no "
                   "interval; a bootstrap would only repeat the value.")
    if rows and precision:
        out.append("Each value is printed to the decimal place its interval justifies (the half-width to two "
                   "significant digits when they start with 1 or 2, else one).")
    return out


def _different_sets(runs: list[Column]) -> str | None:
    """The note naming each column's systems' n when they were measured on different question sets."""
    sets = {}
    for c in runs:
        for (system, group, metric), scored in c.samples.items():
            if group == c.overall and metric == F1_METRIC:
                label = system if len(runs) == 1 else f"{c.name} · {system}"
                sets[label] = frozenset(s.sample_id for s in scored)
    if len(set(sets.values())) <= 1:
        return None
    from memeval.reports.tables import different_sets_note

    return different_sets_note(sets)


# ---- output formats ---------------------------------------------------------------------------------------------

def _aligned(headers: Sequence[str], body: Sequence[Sequence[str]], left: int = 2) -> str:
    """A Markdown table padded so that it also reads as a table in a terminal: labels left, numbers right."""
    from memeval.reports.markdown import md_cell

    rows = [[md_cell(h) for h in headers], *[[md_cell(c) for c in row] for row in body]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(headers))]

    def line(row):
        return "| " + " | ".join(c.ljust(w) if i < left else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths, strict=True))) + " |"

    rule = "|" + "|".join(("-" * (w + 2)) if i < left else ("-" * (w + 1) + ":") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(rows[0]), rule, *map(line, rows[1:])])


def markdown(rows_or_comparison, compact: bool = False) -> str:
    """The comparison as Markdown: a table per kind (runs, sweeps), directories in columns, notes under each.
    `compact` (a list of one sweep's rows, as `memaudit sweep` prints it): one row per writer and budget."""
    from memeval.reports.markdown import md_markup

    if compact:
        return _compact(rows_or_comparison)
    parts = []
    tables = wide_tables(rows_or_comparison)
    for table in tables:
        title = [f"## {table.title}", ""] if len(tables) > 1 else []
        notes = "\n".join(f"- {md_markup(n)}" for n in table.notes)
        parts.append("\n".join([*title, _aligned(table.headers, table.rows), "", notes]))
    return "\n\n".join(parts) + "\n"


def _compact(rows: Sequence[ResultRow]) -> str:
    from memeval.reports.markdown import markdown_table
    from memeval.reports.tables import ci_cell

    def ci(r: ResultRow) -> str:
        unit = UNITS.get(r.resampled, r.resampled)
        if r.ci_low is None or r.ci_high is None:
            return ci_cell(None, None, str, r.n if r.resampled in ("questions", "packages") else 1, unit)
        return f"[{r.ci_low:.3f}, {r.ci_high:.3f}]" if r.metric == RATIO else f"[{r.ci_low:.2f}, {r.ci_high:.2f}]"

    def value(r: ResultRow) -> str:
        return f"{r.value:.3f}" if r.metric == RATIO else f"{r.value:.2f}"

    table = markdown_table(["system / writer", "group", "metric", "value", "95% CI", "n", "resampled"],
                           [[r.system, r.group, r.metric, value(r), ci(r), r.n, r.resampled] for r in rows])
    below = "\n".join(f"- {n}" for n in _interval_notes(rows, precision=False))
    return table + (f"\n\n{below}" if below else "")


def html(comparison: Comparison) -> str:
    """A standalone page of the same tables and notes (no scripts, no external files)."""
    from html import escape

    def code(text: str) -> str:
        parts = escape(text).split("`")
        return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))

    def td(text: str, i: int, paired: bool) -> str:
        kind = "l" if i < 2 else "n" + (" na" if text == "–" else "") + (" sig" if paired and _excludes_zero(text)
                                                                          else "")
        return f'<td class="{kind}">{escape(text)}</td>'

    sections = []
    for table in wide_tables(comparison):
        paired_from = next((i for i, h in enumerate(table.headers) if " − " in h), len(table.headers))
        head = "".join(f'<th class="{"l" if i < 2 else "n"}">{escape(h)}</th>' for i, h in enumerate(table.headers))
        body, last = [], None
        for row in table.rows:
            first = row[0] != last  # a system's rows are one group: its name once, a rule above
            shown = [row[0] if first else "", *row[1:]]
            body.append(f'<tr class="{"first" if first else ""}">'
                        + "".join(td(c, i, i >= paired_from) for i, c in enumerate(shown)) + "</tr>")
            last = row[0]
        notes = "".join(f"<li>{code(n)}</li>" for n in table.notes)
        if paired_from < len(table.headers):
            notes += "<li>Bold: a paired difference whose 95% interval excludes 0.</li>"
        sections.append(f"<section><h2>{escape(table.title)}</h2><table><thead><tr>{head}</tr></thead>"
                        f"<tbody>{''.join(body)}</tbody></table><ul>{notes}</ul></section>")
    title = "memeval results: " + ", ".join(c.name for c in comparison.columns)
    style = ("body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
             "h1{font-size:18px}h2{font-size:16px;margin-top:28px}"
             "table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;border-bottom:1px solid #ddd}"
             "th{background:#f4f4f4;border-bottom:2px solid #bbb}.l{text-align:left}"
             ".n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.na{color:#999}"
             "tr.first td{border-top:2px solid #bbb}.sig{font-weight:600}"
             "tbody tr:hover{background:#fafafa}li{margin:3px 0}code{font-size:12px;background:#f4f4f4;"
             "padding:1px 3px;word-break:break-all}")
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{escape(title)}</h1>{''.join(sections)}</body></html>\n")


def _excludes_zero(text: str) -> bool:
    """Whether a printed cell's interval "[low, high]" lies wholly on one side of 0."""
    if "[" not in text:
        return False
    low, high = (float(x) for x in text.split("[", 1)[1].rstrip("]").split(", "))
    return low > 0 or high < 0


def csv_text(rows: Sequence[ResultRow]) -> str:
    """One line per cell (`ResultRow`'s fields; paired differences have kind "paired difference" and directory
    "B − A"): the tidy form pandas and spreadsheets read."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = list(ResultRow.model_fields)
    writer.writerow(names)
    for r in rows:
        writer.writerow(["" if (v := getattr(r, n)) is None else repr(v) if isinstance(v, float) else v
                         for n in names])
    return out.getvalue()


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _span(r: ResultRow) -> tuple[float, float] | None:
    low, high = _finite(r.ci_low), _finite(r.ci_high)
    return None if low is None or high is None else (low, high)


def json_document(comparison: Comparison) -> ResultsDocument:
    """The comparison as typed rows: a cell names its run by the short name `runs` lists, a paired difference
    names both runs; a non-finite number is null (JSON has none)."""
    names = {str(Path(c.directory)): c.name for c in comparison.columns}
    pairs = {f"{later.directory} − {earlier.directory}": (later.name, earlier.name)
             for later, earlier in comparison.pairs}
    runs = [ResultsRun(name=c.name, directory=c.directory, kind=c.kind, status=c.status, commit=c.commit,
                       command=c.command) for c in comparison.columns]
    cells, paired, within = [], [], []  # between runs first, then the systems of each run
    for r in comparison.rows:
        shared = dict(system=r.system, group=r.group, metric=r.metric, interval=_span(r), n=r.n,
                      resampled=r.resampled)
        if r.kind == PAIRED:
            later, earlier = pairs[r.directory]
            paired.append(ResultsDifference(run=later, minus=earlier, difference=_finite(r.value), mde=r.mde,
                                            verdict=r.verdict, **shared))
        elif r.kind == PAIRED_SYSTEMS:
            run = names[str(Path(r.directory))]
            within.append(ResultsDifference(run=run, minus=run, minus_system=r.minus_system,
                                            difference=_finite(r.value), mde=r.mde, verdict=r.verdict, **shared))
        else:
            cells.append(ResultsCell(run=names[str(Path(r.directory))], value=_finite(r.value), mde=r.mde,
                                     leniency=r.leniency, **shared))
    return ResultsDocument(runs=runs, cells=cells, paired=paired + within, answer_key=comparison.key_notes)


def json_text(comparison: Comparison) -> str:
    """ASCII only: every control or non-ASCII character from a manifest is a \\u escape, so printing the document
    cannot drive a terminal (a raw U+009B is CSI to some)."""
    import json

    return json.dumps(json_document(comparison).to_row(), indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def write_parquet(rows: Sequence[ResultRow], path: Path) -> Path:
    import pandas as pd

    from memeval.atomic import atomic_open

    frame = pd.DataFrame([r.to_row() for r in rows], columns=list(ResultRow.model_fields))
    with atomic_open(path, "wb") as fh:
        frame.to_parquet(fh, index=False)
    return path


def write(comparison: Comparison, out: Path) -> list[Path]:
    """results.md, results.csv and results.parquet in `out`."""
    from memeval.atomic import write_text_atomic

    out.mkdir(parents=True, exist_ok=True)
    return [write_text_atomic(out / "results.md", markdown(comparison)),
            write_text_atomic(out / "results.csv", csv_text(comparison.rows)),
            write_parquet(comparison.rows, out / "results.parquet")]
