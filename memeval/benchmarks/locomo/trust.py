"""How far a LoCoMo table can be trusted, in one place: the runs given (memeval's own and imported published ones)
side by side under the original answer key and the LoCoMo audit's corrected and excluded keys, the ceiling a
perfect system reaches under the original key, each judge's measured leniency, and for every adjacent pair of
systems the minimum detectable difference and whether their gap is more than noise.

Why one module: each of these alone is a footnote a reader skips; together they answer the reader's question —
would this ranking survive a right key, a strict judge and another sample of conversations? Nothing here calls a
model: it reads stored rows, the fetched audit and the registered leniency measurements. Intervals are normal
intervals with the SE clustered by conversation (memeval/scoring/power.py), the same SE the MDE is made of.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memeval.benchmarks.locomo.categories import QA_CATEGORIES, category_label
from memeval.benchmarks.locomo.published.reference import REFERENCE_ORIGIN, reference_systems
from memeval.records import TrustCell, TrustDocument, TrustLeniency, TrustPair

Z95 = 1.959963984540054
CATEGORIES = (*[str(c) for c in QA_CATEGORIES], "overall")
INTERVAL = "95% normal interval, SE clustered by conversation"
TITLE = "How far these tables can be trusted"


@dataclass
class _System:
    run: str
    name: str
    label: str
    origin: str
    answers: list
    judgments: dict[str, list] = field(default_factory=dict)  # measure → rows (every key's)
    judges: dict[str, dict] = field(default_factory=dict)  # measure → {"protocol", "model", "identity", "recorded"}
    reference: bool = False  # the audit's known-wrong answers: a leniency probe, shown but never paired


def _systems_of(label: str, manifest: dict, answers: list, judgments: list) -> list[_System]:
    """One run's systems: its answers, its judgments grouped by measure (protocol and judge model), and who judged."""
    from memeval.reports.judge_leniency import judge_identities

    imported = manifest.get("imported") if isinstance(manifest.get("imported"), dict) else {}
    identities = judge_identities(manifest)
    references = reference_systems(manifest)
    systems = []
    for name in dict.fromkeys(a.system for a in answers):
        entry = imported.get(name) if isinstance(imported.get(name), dict) else None
        reference = name in references
        origin = (REFERENCE_ORIGIN if reference else f"imported: {entry.get('format')}") if entry else "memeval"
        system = _System(label, name, f"{label} · {name}" if label else name, origin,
                         [a for a in answers if a.system == name], reference=reference)
        for j in judgments:
            if j.system != name:
                continue
            model = j.judge_model or (identities.get(j.protocol) or {}).get("model")
            measure = f"J {j.protocol}" + (f" · {model}" if model else "")
            system.judgments.setdefault(measure, []).append(j)
            if measure not in system.judges:
                recorded = j.protocol.endswith("_recorded")
                judge = (entry or {}).get("judge") if recorded else None
                stated = (judge or {}).get("identity")
                system.judges[measure] = {"protocol": j.protocol, "model": model, "recorded": recorded,
                                          "identity": ({"judge": stated.get("judge"), **stated}
                                                       if isinstance(stated, dict) else None) if recorded
                                          else identities.get(j.protocol),
                                          "status": (judge or {}).get("status")}
        systems.append(system)
    return systems


def check_inputs(runs: Sequence[str | Path], out: str | Path | None = None,
                 audit_dir: str | Path | None = None) -> None:
    """Every input refused before anything is imported or written: a run path that is no run directory, an
    --audit-dir that is not a directory, an --out that is itself a run (trust.md and published/ would land in it)."""
    from memeval.errors import InputError
    from memeval.rundir import RunDir

    if audit_dir is not None and Path(audit_dir).exists() and not Path(audit_dir).is_dir():
        raise InputError(audit_dir, "--audit-dir", "is a file, not a directory: name the directory the audit was "
                         "fetched into (`memeval data fetch locomo-audit --dest DIR`)")
    for path in map(Path, runs):
        if not path.exists():
            raise InputError(path, "RUN_DIR", "not found: expected a `locomo run` or `locomo import` directory")
        if not path.is_dir():
            raise InputError(path, "RUN_DIR", "is a file, not a run directory: name the directory of a `locomo run` "
                             "or `locomo import`")
        if not RunDir(path).answers.is_file():
            raise InputError(RunDir(path).answers, "answers", "not found: expected a `locomo run` or `locomo "
                             "import` directory")
    if out is not None and any((Path(out) / name).exists() for name in ("manifest.json", "answers.jsonl")):
        raise InputError(out, "--out", "is a run directory (it holds manifest.json or answers.jsonl): the report "
                         "goes in a directory of its own, e.g. --out " + str(Path(out) / "trust"))


def check_readable(runs: Sequence[str | Path], data: str | Path | None = None) -> None:
    """Everything the report will read, read once before anything is imported or written: each run's manifest,
    answers and judgments parse, and the LoCoMo data loads (a run holding junk is one line, with no published/
    left behind)."""
    paths = [Path(r) for r in runs]
    if paths:
        _load(paths)
        _conversations(paths, data)
    else:
        from memeval.benchmarks.locomo.data import load_locomo
        from memeval.data.paths import find_locomo

        load_locomo(find_locomo(data))


def _load(paths: Sequence[Path]) -> list[_System]:
    from memeval.invocation import load_manifest
    from memeval.records import load_answers, load_judgments
    from memeval.rundir import RunDir
    from memeval.viewer import run_labels

    systems = []
    for path, label in zip(paths, run_labels(paths), strict=True):
        check_inputs([path])
        run = RunDir(path)
        manifest = load_manifest(run.manifest) if run.manifest.is_file() else {}
        try:
            judgments = load_judgments(run.judgments, None) if run.judgments.is_file() else []
        except TypeError:  # a load_judgments without answer keys
            judgments = load_judgments(run.judgments) if run.judgments.is_file() else []
        systems += _systems_of(label, manifest, load_answers(run.answers), judgments)
    taken: dict[str, int] = {}
    for system in systems:
        taken[system.name] = taken.get(system.name, 0) + 1
    for system in systems:  # a system's name alone, unless another run holds the same name
        if taken[system.name] == 1:
            system.label = system.name
    return systems


def _conversations(paths: Sequence[Path], data: str | Path | None):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo

    if data is None:
        from memeval.invocation import load_manifest
        from memeval.rundir import RunDir
        from memeval.viewer import _data_path

        for path in paths:
            manifest = RunDir(path).manifest
            found = _data_path(load_manifest(manifest)) if manifest.is_file() else None
            if found is not None:
                return load_locomo(found)
    return load_locomo(find_locomo(data))


def _cell(values: list[tuple[float, str, int]], category: str) -> tuple[float | None, float | None, float | None, int]:
    """(mean, low, high, n) of the values of one category ("overall": categories 1–4)."""
    from memeval.scoring.power import mean_power

    chosen = [(v, c) for v, c, cat in values if category == "overall" or str(cat) == category]
    if not chosen:
        return None, None, None, 0
    p = mean_power([v for v, _ in chosen], [c for _, c in chosen])
    if not p.defined:
        return p.estimate, None, None, p.n
    # a score lives in 0–100, so its interval is cut there (a small category's normal interval reaches past both)
    return p.estimate, max(0.0, p.estimate - Z95 * p.se), min(100.0, p.estimate + Z95 * p.se), p.n


def _f1_values(rows) -> list[tuple[float, str, int]]:
    return [(100.0 * r.f1, r.conversation_id, r.category) for r in rows
            if r.category in QA_CATEGORIES and r.error is None and r.f1 is not None and r.f1 == r.f1]


def _j_values(rows) -> list[tuple[float, str, int]]:
    return [(float(j.mean), j.conversation_id, j.category) for j in rows
            if j.category in QA_CATEGORIES and j.mean is not None and j.mean == j.mean]


def _keys(audit, ambiguous: str, conversations) -> dict:
    from memeval.benchmarks.locomo.audit_key import answer_key

    keys = {"original": None}
    if audit is not None:
        for mode in ("corrected", "excluded"):
            keys[mode] = answer_key(mode, ambiguous, directory=audit.directory, conversations=conversations)
    return keys


def _j_under(system: _System, measure: str, key, mode: str) -> tuple[list, str | None]:
    """The judgments of `measure` that count under `key`, or why there is no J under it (affected questions not
    judged against the corrected gold)."""
    from memeval.benchmarks.locomo.keyed import changed_gold, keyed_judgments

    rows = system.judgments[measure]
    golds = {a.sample_id: a.gold for a in system.answers}
    chosen = keyed_judgments(rows, key, golds)
    if mode != "corrected":
        return chosen, None
    have = {j.sample_id for j in chosen}
    judged = {j.sample_id for j in rows if j.category in QA_CATEGORIES}
    changed = {s for s in judged if key.affected(s) is not None
               and str(changed_gold(key, s, golds.get(s))[1]) != str(golds.get(s)) and changed_gold(key, s, golds.get(s))[0]}
    missing = changed - have
    if not missing:
        return chosen, None
    if system.judges[measure]["recorded"]:
        return [], (f"recorded judge: its {len(missing)} affected questions cannot be judged again against the "
                    "corrected gold (see the excluded key)")
    return [], (f"{len(missing)} affected questions not yet judged against the corrected gold (rerun the judge "
                "with --key corrected)")


def _ceilings(audit, conversations, answered: set[str]) -> tuple[dict[str, float], dict[str, float]]:
    """(share of questions whose original key is right, F1 ×100 of a perfect system under the original key) per
    category and overall, over the questions the runs answered (all of LoCoMo's when they answered all)."""
    from memeval.scoring.f1 import score_f1

    if audit is None:
        return {}, {}
    corrupting = audit.corrupting()
    right: dict[str, list[float]] = {}
    f1: dict[str, list[float]] = {}
    for conversation in conversations:
        for qa in conversation.qa:
            if qa.category not in QA_CATEGORIES or (answered and qa.sample_id not in answered):
                continue
            entry = corrupting.get(qa.sample_id)
            perfect = entry.correct_answer if entry is not None else qa.answer
            for category in (str(qa.category), "overall"):
                right.setdefault(category, []).append(0.0 if entry is not None else 100.0)
                f1.setdefault(category, []).append(100.0 * score_f1(perfect, qa.answer, qa.category, "locomo"))
    mean = {c: math.fsum(v) / len(v) for c, v in right.items()}
    f1_mean = {c: math.fsum(v) / len(v) for c, v in f1.items()}
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return (dict(sorted(mean.items(), key=lambda kv: order[kv[0]])),
            dict(sorted(f1_mean.items(), key=lambda kv: order[kv[0]])))


def _leniency(systems: list[_System], audit_dir) -> tuple[list[TrustLeniency], dict[str, str]]:
    from memeval.benchmarks.locomo import audit_leniency as audited
    from memeval.scoring import leniency as lenient

    rows: list[TrustLeniency] = []
    lines: dict[str, str] = {}
    seen: set[str] = set()

    def add(name: str, rates) -> None:
        best = {}
        for r in rates:
            if r.n and (r.answer_set not in best or r.n > best[r.answer_set].n):
                best[r.answer_set] = r
        content = (tuple(sorted((k, r.rate, r.n, r.source) for k, r in best.items())) if best else name)
        if name in seen or content in seen:  # one row per measured configuration
            return
        seen.update((name, content))
        for answer_set in lenient.ANSWER_SETS:
            r = best.get(answer_set)
            rows.append(TrustLeniency(judge=name, answer_set=answer_set, rate=r.rate if r else None,
                                      low=r.low if r else None, high=r.high if r else None, n=r.n if r else 0,
                                      source=r.source if r else None))

    recorded = audited.recorded_leniency(audit_dir) if audit_dir is not None else []
    if recorded:
        add(f"{audited.RECORDED_MODEL} · EverMemOS prompts (recorded by the audit)", recorded)
    for system in systems:
        for measure, judge in system.judges.items():
            if measure in lines:
                continue
            if judge["recorded"]:
                stated = judge["identity"]  # the judge configuration the file's producer states (import flags)
                rates = lenient.leniency_for(stated, audit_dir) if stated else []
                said = (f"judgments recorded by the file's producer ({judge['model'] or 'model not stated'}), not "
                        "re-run")
                lines[measure] = said + "; " + (lenient.leniency_text(rates) if rates else lenient.NOT_MEASURED + (
                    "" if stated else " (the file does not state its judge prompt: `locomo import --judge-prompt`)"))
                add(measure, rates)
            else:
                identity = judge["identity"]
                rates = lenient.leniency_for(identity, audit_dir) if identity else []
                lines[measure] = (f"{judge['model'] or 'model not recorded'}; "
                                  + (lenient.leniency_text(rates) if rates else lenient.NOT_MEASURED))
                add(measure, rates)
    return rows, lines


def _pairs(measures: dict[tuple[str, str], dict[str, list[tuple[str, float, str, int]]]]) -> list[TrustPair]:
    """Adjacent systems of each (measure, key), by overall score under that key, in every category; each system's
    rows are (sample id, value, conversation, category)."""
    from memeval.scoring.power import paired_power

    out = []
    for (measure, mode), by_system in measures.items():
        overall = {label: _cell([(v, c, cat) for _, v, c, cat in rows], "overall")[0]
                   for label, rows in by_system.items()}
        ranked = [label for _, label in sorted(((v, label) for label, v in overall.items() if v is not None),
                                               key=lambda t: -t[0])]
        for a, b in zip(ranked, ranked[1:], strict=False):
            for category in CATEGORIES:
                def chosen(rows, category=category):
                    return {s: (v, c) for s, v, c, cat in rows if category == "overall" or str(cat) == category}
                va, vb = chosen(by_system[a]), chosen(by_system[b])
                shared = [s for s in va if s in vb]
                p = paired_power([va[s][0] - vb[s][0] for s in shared], [va[s][1] for s in shared])
                out.append(TrustPair(measure=measure, key=mode, category=category, a=a, b=b,
                                     difference=None if p.n == 0 else p.estimate, se=p.se if p.defined else None,
                                     mde=p.mde if p.defined else None, n=p.n, clusters=p.clusters,
                                     verdict=p.verdict))
    return out


def trust_document(runs: Sequence[str | Path], audit_dir: str | Path | None = None, data: str | Path | None = None,
                   ambiguous: str = "include") -> TrustDocument:
    """The trust section's content for `runs` (LoCoMo run or import directories), read from stored rows only."""
    from memeval.benchmarks.locomo.audit_key import load_audit

    paths = [Path(r) for r in runs]
    if not paths:
        from memeval.errors import InputError

        raise InputError("memeval locomo trust", "RUN_DIR", "name at least one LoCoMo run directory")
    systems = _load(paths)
    conversations = _conversations(paths, data)
    return _document(systems, conversations, load_audit(conversations, audit_dir), audit_dir, ambiguous)


def _document(systems: list[_System], conversations, audit, audit_dir, ambiguous: str) -> TrustDocument:
    from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND
    from memeval.benchmarks.locomo.audit.store import audit_dir as resolved_dir
    from memeval.benchmarks.locomo.audit_key import SOURCE
    from memeval.benchmarks.locomo.keyed import key_evidence, keyed_answers
    from memeval.reports.summary import shown_path
    from memeval.scoring.power import mean_words

    keys = _keys(audit, ambiguous, conversations)
    notes = []
    if audit is None:
        notes.append(f"**The LoCoMo audit is not fetched** (`{FETCH_COMMAND}`; looked in "
                     f"{shown_path(resolved_dir(audit_dir))}): every number below is on LoCoMo's original answer "
                     "key, which has not been checked here — no ceiling, no corrected or excluded key.")
    cells: list[TrustCell] = []
    measures: dict[str, dict[str, list]] = {}
    for system in systems:
        for mode, key in keys.items():
            evidence = key_evidence(key, audit) if key is not None else None
            rows = keyed_answers(system.answers, key, evidence) if key is not None else system.answers
            values = _f1_values(rows)
            if not system.reference:
                measures.setdefault(("F1", mode), {})[system.label] = [
                    (r.sample_id, 100.0 * r.f1, r.conversation_id, r.category) for r in rows
                    if r.category in QA_CATEGORIES and r.error is None and r.f1 is not None and r.f1 == r.f1]
            for category in CATEGORIES:
                value, low, high, n = _cell(values, category)
                cells.append(TrustCell(run=system.run, system=system.label, origin=system.origin, measure="F1",
                                       key=mode, category=category, value=value, low=low, high=high, n=n))
            for measure in system.judgments:
                judged, why = (_j_under(system, measure, key, mode) if key is not None
                               else (keyed_original(system.judgments[measure]), None))
                j_values = _j_values(judged)
                if not system.reference and why is None:
                    measures.setdefault((measure, mode), {})[system.label] = [
                        (j.sample_id, float(j.mean), j.conversation_id, j.category) for j in judged
                        if j.category in QA_CATEGORIES and j.mean is not None and j.mean == j.mean]
                for category in CATEGORIES:
                    value, low, high, n = _cell(j_values, category) if why is None else (None, None, None, 0)
                    cells.append(TrustCell(run=system.run, system=system.label, origin=system.origin,
                                           measure=measure, key=mode, category=category, value=value, low=low,
                                           high=high, n=n, why=why))
    answered = {a.sample_id for s in systems for a in s.answers}
    ceilings, f1_ceilings = _ceilings(audit, conversations, answered)
    leniency, judges = _leniency(systems, audit.directory if audit is not None else audit_dir)
    first = {m: i for i, m in enumerate(dict.fromkeys(m for m, _ in measures))}
    pairs = _pairs(dict(sorted(measures.items(), key=lambda kv: (first[kv[0][0]], list(keys).index(kv[0][1])))))
    words = {s.label: _finite(mean_words(a.prediction for a in s.answers if a.category in QA_CATEGORIES
                                          and a.error is None)) for s in systems}
    counts = audit.counts() if audit is not None else {}
    audit_info = {"fetched": audit is not None, "source": SOURCE, "directory": shown_path(resolved_dir(audit_dir)),
                  "errors": sum(counts.values()), "by_type": dict(sorted(counts.items())),
                  "corrupting": len(audit.corrupting()) if audit is not None else 0,
                  "ambiguous": ambiguous, "labels": {m: k.label for m, k in keys.items() if k is not None}}
    return TrustDocument(audit=audit_info, keys=list(keys), ceilings=ceilings, f1_ceilings=f1_ceilings, cells=cells,
                         pairs=pairs, leniency=leniency, judges=judges, words=words, notes=notes)


def keyed_original(rows: list) -> list:
    """Judgments made against the original key (older rows have no key: original)."""
    return [j for j in rows if getattr(j, "answer_key", "original") == "original"]


def _finite(value: float) -> float | None:
    return value if value == value else None


# ---- the field's published runs, from the fetched audit ----

# audit file → the system its answers become; the v1/v2 sets are answers the audit wrote to be wrong (specific,
# vague), so they show in every table for what they are
PUBLISHED = {"fc_gpt-4o-mini-memos": "fc-gpt-4o-mini-memos", "fc_gpt-4o-mini-cot": "fc-gpt-4o-mini-cot",
             "fc_gpt-4.1-mini-memos": "fc-gpt-4.1-mini-memos", "fc_gpt-4.1-mini-cot": "fc-gpt-4.1-mini-cot",
             "v1_scored": "audit-v1-specific-wrong", "v2_scored": "audit-v2-vague-wrong"}


def already_imported(runs) -> set[str]:
    """The SHA-256 of every file the given runs imported (their manifests' `imported` entries)."""
    from memeval.rundir import read_manifest

    found = set()
    for run in runs:
        imported = (read_manifest(Path(run)) or {}).get("imported")
        for entry in (imported.values() if isinstance(imported, dict) else ()):
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
                found.add(entry["sha256"])
    return found


def import_published(out: str | Path, audit_dir: str | Path | None = None, data: str | Path | None = None,
                     skip: set[str] | frozenset[str] = frozenset()) -> list[Path]:
    """The audit's six published runs (EverMemOS `detailed_results` files, checked against their pinned SHA-256),
    each imported once into `out`/<system> with its recorded judgments; a file already imported there is kept as
    it is, and a file whose SHA-256 is in `skip` (imported by a run the report already shows) is not imported
    again. Returns the run directories of the files fetched and not skipped (none when the audit is not)."""
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES
    from memeval.benchmarks.locomo.audit.store import audit_path
    from memeval.benchmarks.locomo.audit_leniency import RECORDED_MODEL
    from memeval.benchmarks.locomo.imports import import_answers
    from memeval.rundir import read_manifest

    dirs = []
    for name, system in PUBLISHED.items():
        source = audit_path(name, audit_dir)
        if source is None or AUDIT_FILES[name].sha256 in skip:
            continue
        target = Path(out) / system
        imported = (read_manifest(target) or {}).get("imported") or {}
        if system not in imported:
            # the scored files do not name their judge; ap-baseline/README.md ("Methodology") does: gpt-4o-mini.
            # The audit states its judge prompt for every file: the EverMemOS prompts.yaml (fc-baseline/README.md,
            # its configuration table; ap-baseline/README.md, "the exact same LLM judge").
            judge_model = RECORDED_MODEL if name in ("v1_scored", "v2_scored") else None
            import_answers(source, "evermemos", system, target, None if data is None else str(data),
                           judge_model=judge_model, judge_prompt="evermemos")
        dirs.append(target)
    return dirs


# ---- the section as Markdown ----

def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _with_interval(cell: TrustCell | None) -> str:
    if cell is None:
        return "–"
    if cell.value is None:
        return "– (not judged on this key: see below)" if cell.why else "–"
    if cell.low is None:
        return f"{cell.value:.1f} (n = {cell.n}, one conversation: no interval)"
    return f"{cell.value:.1f} [{cell.low:.1f}, {cell.high:.1f}]"


def _cells(doc: TrustDocument) -> dict[tuple[str, str, str, str], TrustCell]:
    return {(c.system, c.measure, c.key, c.category): c for c in doc.cells}


def _overall_table(doc: TrustDocument, measure: str, cells: dict, systems: list[tuple[str, str]]) -> list[str]:
    """A measure's judge line, its overall table on each key, and why a key has no J."""
    from memeval.reports.markdown import markdown_table, md_text

    out = []
    if measure in doc.judges:
        out.append(md_text(f"Judge: {doc.judges[measure]}."))
    headers = ["system", "origin", *[f"{k} key" for k in doc.keys]]
    if "corrected" in doc.keys:
        headers.append("corrected − original")
    headers.append("answer words")
    rows = []
    for system, origin in systems:
        if (system, measure, "original", "overall") not in cells:
            continue
        row = [system, origin, *[_with_interval(cells.get((system, measure, k, "overall"))) for k in doc.keys]]
        if "corrected" in doc.keys:
            a = cells[(system, measure, "original", "overall")].value
            b = cells[(system, measure, "corrected", "overall")].value
            row.append("–" if a is None or b is None else f"{b - a:+.2f}")  # unrounded: 7.7 → 8.0 can be +0.22
        row.append(_fmt(doc.words.get(system)))
        rows.append(row)
    out.append(f"Overall (categories 1–4), {INTERVAL}:")
    out.append(markdown_table(headers, rows))
    whys: dict[str, list[str]] = {}
    for c in doc.cells:
        if c.measure == measure and c.category == "overall" and c.why:
            whys.setdefault(c.why, []).append(c.system)
    for why, names in whys.items():
        out.append(md_text(f"Not judged on the corrected key ({', '.join(names)}): {why}."))
    return out


def trust_markdown(doc: TrustDocument) -> str:
    """The section: key and ceilings, every system under each key, judge leniency, and which differences are real."""
    from memeval.reports.markdown import markdown_table, md_text

    cells = _cells(doc)
    systems = list(dict.fromkeys((c.system, c.origin) for c in doc.cells))
    measures = list(dict.fromkeys(c.measure for c in doc.cells))
    out = [f"## {TITLE}", *doc.notes]
    audit = doc.audit
    out.append("### The answer key")
    if audit["fetched"]:
        types = ", ".join(f"{n} {t.lower()}" for t, n in audit["by_type"].items())
        out.append(f"The LoCoMo audit ({audit['source']}) lists {audit['errors']} errors ({types}); "
                   f"{audit['corrupting']} change a score. Keys: " + "; ".join(
                       f"**{mode}**: {label}" for mode, label in audit["labels"].items()) + ".")
        rows = [[category_label(int(c)) if c != "overall" else "overall (categories 1–4)", _fmt(v, 2),
                 _fmt(doc.f1_ceilings.get(c), 2)] for c, v in doc.ceilings.items()]
        out.append("Ceiling of a perfect system under the original key, over the questions these runs answered: "
                   "the share of questions whose gold answer the audit finds right (what an exact judge gives a "
                   "perfect system), and the F1 ×100 the audit's right answers get against the original gold.")
        out.append(markdown_table(["category", "ceiling (share right, %)", "F1 ceiling ×100"], rows))
        out.append(ABOVE_CEILING)
    else:
        out.append("Not checked: only the original key is shown.")
    for measure in measures:
        out.append(f"### {md_text(measure if measure != 'F1' else 'F1 ×100 (official LoCoMo token F1)')}")
        out += _overall_table(doc, measure, cells, systems)
        per = []
        flagged = False
        for system, _ in systems:
            for k in doc.keys:
                if (system, measure, k, "overall") in cells:
                    row = [system, k]
                    for c in CATEGORIES:
                        value = cells[(system, measure, k, c)].value
                        above = measure != "F1" and k == "original" and _above_ceiling(value, doc.ceilings.get(c))
                        flagged |= above
                        row.append(_fmt(value) + (f" {ABOVE_MARK}" if above else ""))
                    per.append(row)
        out.append("Per category:")
        out.append(markdown_table(["system", "key", *[category_label(int(c)) for c in CATEGORIES[:-1]],
                                   "overall"], per))
        if flagged:
            out.append(f"{ABOVE_MARK} above the ceiling of a perfect system on the original key (see the answer key "
                       "section: credit for answers that disagree with a gold answer the audit finds wrong).")
    out.append("### Judge leniency")
    if doc.leniency:
        by_judge: dict[str, dict[str, TrustLeniency]] = {}
        for r in doc.leniency:
            by_judge.setdefault(r.judge, {})[r.answer_set] = r
        rows = []
        for judge, sets in by_judge.items():
            shown = [("not measured" if r.rate is None else f"{r.rate:.1f}% [{r.low:.1f}–{r.high:.1f}] (n = {r.n})")
                     for r in (sets.get(s) for s in ("vague_wrong", "specific_wrong", "gold")) if r is not None]
            sources = sorted({r.source for r in sets.values() if r.source})
            rows.append([judge, *shown, "; ".join(sources) or "–"])
        out.append("How often each judge accepts answers known to be wrong (the audit's vague-but-topical and "
                   "specific-but-wrong sets) and the gold answers (which a sound judge accepts), Wilson 95%:")
        out.append(markdown_table(["judge", "accepts vague wrong", "accepts specific wrong", "accepts gold",
                                   "measured by"], rows))
    else:
        out.append("No judge in these runs, and the audit's recorded judgments are not fetched: leniency not "
                   "measured.")
    out.append("### Which differences are real")
    out += _differences(doc)
    return "\n\n".join(out) + "\n"


ABOVE_MARK = "▲"
ABOVE_CEILING = ("A J above the ceiling is credit given to answers that disagree with a gold answer the audit finds "
                 "wrong: a lenient judge accepting them, or an answer matching the wrong gold.")


def _above_ceiling(value: float | None, ceiling: float | None) -> bool:
    """Beyond the ceiling by more than a rounding step, so a J equal to it as printed is never flagged."""
    return value is not None and ceiling is not None and round(value, 1) > round(ceiling, 1)


def _figures_section(out: Path, figures_dir: Path, drawn: list[tuple[str, str]]) -> str:
    """Each figure linked relative to trust.md, with the caption its record carries (so the Markdown reader sees
    what the PNG shows and does not show)."""
    import os

    from memeval.reports.markdown import md_text

    lines = ["### Figures"]
    for name, caption in drawn:
        link = Path(os.path.relpath(figures_dir / f"{name}.png", out)).as_posix()
        lines.append(f"- [{md_text(name)}](<{link}>): {md_text(caption)}")
    return "\n\n".join(lines) + "\n"


def _differences(doc: TrustDocument) -> list[str]:
    """One table: every adjacent pair of every measure on every key, each J with its judge and leniency."""
    from memeval.reports.markdown import markdown_table, md_text
    from memeval.scoring.power import WITHIN_NOISE

    references = sorted({c.system for c in doc.cells if c.origin == REFERENCE_ORIGIN})
    left_out = (md_text(f"Not ranked or paired: {', '.join(references)} — the audit's answers written to be wrong, "
                        "reference sets that measure a judge's leniency (their scores are in the tables above).")
                if references else None)
    if not doc.pairs:
        return ["One system per measure: no pair to compare.", *([left_out] if left_out else [])]
    tallies = []
    for key in doc.keys:
        per = [p for p in doc.pairs if p.key == key and p.category != "overall"]
        judged = sum(p.verdict in (WITHIN_NOISE, "real at α = 0.05") for p in per)
        if per:
            tallies.append(f"on the {key} key {sum(p.verdict == WITHIN_NOISE for p in per)} of the {judged} adjacent "
                           "comparisons that can be tested are within noise" if judged else
                           f"on the {key} key no comparison can be tested")
    out = ["Adjacent systems of each measure on each answer key (ranked by their overall score on that key), paired "
           "on the questions both answered: the difference, the minimum detectable difference (80% power, α = 0.05, "
           "SE clustered by conversation) and whether the gap is more than noise; each J with its judge and that "
           f"judge's measured leniency. Per category, {'; '.join(tallies)}."]
    rows = []
    for p in doc.pairs:
        if p.category != CATEGORIES[0]:
            continue
        cats = {q.category: q for q in doc.pairs if (q.measure, q.key, q.a, q.b) == (p.measure, p.key, p.a, p.b)}
        judge = doc.judges.get(p.measure, "– (token F1, no judge)" if p.measure == "F1" else "–")
        rows.append([p.measure, judge, p.key, f"{p.a} − {p.b}", *[_pair_cell(cats.get(c)) for c in CATEGORIES]])
    out.append(markdown_table(["measure", "judge and its leniency", "key", "pair",
                               *[category_label(int(c)) for c in CATEGORIES[:-1]], "overall (1–4)"], rows))
    absent: dict[tuple[str, str], list[str]] = {}
    for c in doc.cells:
        if c.category == "overall" and c.why and c.origin != REFERENCE_ORIGIN:
            absent.setdefault((c.measure, c.why), []).append(c.system)
    for (measure, why), names in absent.items():
        out.append(md_text(f"No {measure} pair on the corrected key for {', '.join(names)}: {why}."))
    return [*out, *([left_out] if left_out else [])]


def report_section(answers: list, judgments: list, manifest: dict | None, conversations, audit, run_dir: str | Path,
                   ambiguous: str = "include") -> str:
    """A run's report.md section: its systems on each answer key (overall, each J's judge and leniency beside it)
    and the ceiling; the published runs, leniency bars and the MDE of every pair are one command away."""
    import shlex

    from memeval.benchmarks.locomo.audit.store import FETCH_COMMAND as FETCH
    from memeval.reports.markdown import code_span, md_text

    published = " --published" if audit is not None else ""  # --published needs the audit's files
    command = code_span(f"memeval locomo trust {shlex.quote(str(run_dir))}{published} --out "
                        f"{shlex.quote(suggested_out(run_dir))}")
    more = md_text(("The field's published runs beside these, each" if published else "Each") + " judge's measured "
                   "leniency and the minimum detectable difference of every adjacent pair per category, with "
                   "figures: ") + f"{command} " + md_text("(notebook 09).")
    if audit is None:
        return "\n\n".join([f"## {TITLE}", md_text("Not checked against the LoCoMo audit (") + code_span(FETCH)
                             + md_text("): no ceiling, no corrected or excluded key; once it is fetched, the trust "
                                       "command below takes --published too."), more]) + "\n"
    doc = _document(_systems_of("", manifest or {}, answers, judgments), conversations, audit, None, ambiguous)
    cells = _cells(doc)
    systems = list(dict.fromkeys((c.system, c.origin) for c in doc.cells))
    out = [f"## {TITLE}", *doc.notes]
    if doc.ceilings:
        parts = ", ".join(f"{category_label(int(c))} {v:.2f}" for c, v in doc.ceilings.items() if c != "overall")
        out.append(md_text(f"A perfect system scores at most {doc.ceilings['overall']:.2f} (categories 1–4) under the "
                           f"original key on these questions ({parts}): the share whose gold answer the LoCoMo audit "
                           "finds right."))
    for measure in dict.fromkeys(c.measure for c in doc.cells):
        out.append(f"**{md_text(measure if measure != 'F1' else 'F1 ×100')}** on each answer key:")
        out += _overall_table(doc, measure, cells, systems)
    out.append(more)
    return "\n\n".join(out) + "\n"


def suggested_out(run_dir: str | Path) -> str:
    """Where to suggest the report goes, spelled as the run was given: inside the run when that is outside the
    checkout or under a part of it .gitignore covers (runs/, reports/, data/), else reports/trust/<run name>."""
    from memeval.data.paths import project_root

    inside = Path(run_dir) / "trust"
    try:
        parts = Path(run_dir).resolve().relative_to(project_root().resolve()).parts
    except ValueError:
        return str(inside)
    return str(inside) if parts and parts[0] in IGNORED_TOPS else f"reports/trust/{Path(run_dir).resolve().name}"


IGNORED_TOPS = ("runs", "reports", "data", "figures", ".memeval")  # .gitignore: runs/, reports/*, data/*, figures/*


def _pair_cell(p: TrustPair | None) -> str:
    if p is None or p.difference is None:
        return "–"
    mde = f"MDE {p.mde:.1f}" if p.mde is not None else "no MDE"
    return f"{p.difference:+.1f} ({mde}, n = {p.n}): {p.verdict}"


# ---- figures, through the marks layer ----

def _looks(names) -> dict[str, tuple[str, str]]:
    """One colour and marker per name for the whole report, in the order the names first appear (a system keeps
    its look in every figure)."""
    from memeval.publication.looks import _SHAPES, PALETTE

    return {name: (PALETTE[i % len(PALETTE)], _SHAPES[i % len(_SHAPES)])
            for i, name in enumerate(dict.fromkeys(names))}


def _system_looks(doc: TrustDocument) -> dict[str, tuple[str, str]]:
    return _looks(c.system for c in doc.cells)


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()[:60] or "measure"


CATEGORY_AXIS = "category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 1–4 overall)"


def _category_ticks(ax) -> None:
    """Short ticks (names side by side overlap in a three-panel row); the axis label spells them out."""
    ax.set_xticks(range(1, len(CATEGORIES) + 1))
    ax.set_xticklabels([*CATEGORIES[:-1], "1–4"], fontsize=6)


def _absent(ax, why: str) -> None:
    """A panel with nothing to draw says why, inside the panel (not a silent gap)."""
    import textwrap

    ax.text(0.5, 0.5, textwrap.fill(why, 34), transform=ax.transAxes, ha="center", va="center", fontsize=6.5,
            color="dimgrey")


def key_figure(doc: TrustDocument, measure: str):
    """Every system's score per category under each answer key, the ceiling drawn on the original key; a key
    with no score (a recorded judge on the corrected key) is a panel saying why."""
    import matplotlib.pyplot as plt

    from memeval.publication.figure_rules import PER_CATEGORY
    from memeval.publication.marks import Panel, finish
    from memeval.publication.style import WIDTH_DOUBLE, style

    cells = _cells(doc)
    looks = _system_looks(doc)
    systems = list(dict.fromkeys(c.system for c in doc.cells if c.measure == measure))
    references = {c.system for c in doc.cells if c.origin == REFERENCE_ORIGIN}
    protocol = measure if measure != "F1" else "F1 ×100, official LoCoMo"
    ylabel = "F1 ×100" if measure == "F1" else "J (0–100)"
    ceiling = doc.f1_ceilings if measure == "F1" else doc.ceilings
    absent: dict[str, str] = {}
    with style():
        fig, axes = plt.subplots(1, len(doc.keys), figsize=(WIDTH_DOUBLE, 3.1), sharey=True, squeeze=False)
        width = 0.7 / max(1, len(systems))
        for ax, mode in zip(axes[0], doc.keys, strict=True):
            panel = Panel(ax, protocol, PER_CATEGORY)
            drawn = [s for s in systems if (cells.get((s, measure, mode, "overall")) is not None
                                            and cells[(s, measure, mode, "overall")].why is None)]
            whys = {cells[(s, measure, mode, "overall")].why for s in systems
                    if cells.get((s, measure, mode, "overall")) is not None and s not in drawn}
            if not drawn and whys:
                absent[mode] = sorted(whys)[0]
                _absent(ax, f"no {mode}-key score: {absent[mode]}")
            for system in drawn:
                colour, shape = looks[system]
                i = systems.index(system)
                got = [cells.get((system, measure, mode, c)) for c in CATEGORIES]
                defined = [g if g is not None and g.value is not None and g.low is not None else None for g in got]
                x = [k + 1 - 0.35 + width * (i + 0.5) for k in range(len(CATEGORIES))]
                label = f"{system} (reference answer set)" if system in references else system
                panel.points(label, x, [d.value if d else None for d in defined],
                             [d.low if d else None for d in defined], [d.high if d else None for d in defined],
                             interval=INTERVAL, mark=shape, colour=colour, size=14, label=label)
            if mode == "original" and ceiling:
                panel.points("ceiling", [k + 1 for k in range(len(CATEGORIES))], [ceiling.get(c) for c in CATEGORIES],
                             uncertainty="exact", mark="_", colour="#000000", size=300,
                             label="ceiling: a perfect system on the original key (audit)")
            _category_ticks(ax)
            ax.set_ylim(-4, 104)
            ax.set_title(f"{mode} key, per category", fontsize=8)
            if ax is axes[0][0]:
                ax.set_ylabel(f"{ylabel}, per category")
        axes[0][len(doc.keys) // 2].set_xlabel(CATEGORY_AXIS, fontsize=6)
        handles, labels = {}, []
        for ax in axes[0]:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in handles:
                    handles[label] = h
                    labels.append(label)
        fig.tight_layout(rect=(0, (0.1 + 0.13 * math.ceil(len(labels) / 3)) / fig.get_figheight(), 1, 1))
        fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=min(3, max(1, len(labels))),
                   fontsize=6, frameon=False)
    caption = (f"{protocol} of every system per category under LoCoMo's original answer key and the audit's "
               f"{' and '.join(k for k in doc.keys if k != 'original') + ' keys' if len(doc.keys) > 1 else 'keys (audit not fetched)'} "
               f"({INTERVAL})"
               + ("; the black dash is the ceiling a perfect system reaches under the original key" if ceiling else "")
               + "".join(f"; no {mode}-key panel data: {why}" for mode, why in absent.items())
               + "; reference answer sets are the audit's answers written to be wrong (they measure the judge)"
               + ("; a J above the dash is credit given to answers that disagree with a gold answer the audit finds "
                  "wrong (a lenient judge, or an answer matching the wrong gold)" if ceiling and measure != "F1" else "")
               + "; n/r: no score, or one from a single conversation (no interval can be drawn)"
               + ". It does not show the judge's leniency or whether two systems differ beyond noise (see the "
               "leniency and differences figures).")
    return finish(fig, caption)


def leniency_figure(doc: TrustDocument):
    """Each judge configuration's acceptance of wrong answers and of gold answers, Wilson 95%; an answer set no
    judge was measured on is left out and named in the caption."""
    import textwrap

    import matplotlib.pyplot as plt

    from memeval.publication.marks import Panel, finish
    from memeval.publication.style import WIDTH_DOUBLE, style

    judges = list(dict.fromkeys(r.judge for r in doc.leniency))
    by = {(r.judge, r.answer_set): r for r in doc.leniency}
    names = {"vague_wrong": ("vague_wrong", "accepts vague wrong answers"),
             "specific_wrong": ("specific_wrong", "accepts specific wrong answers"),
             "gold": ("leniency_gold", "accepts gold answers")}
    sets = [a for a in ("vague_wrong", "specific_wrong", "gold")
            if any(by.get((j, a)) is not None and by[(j, a)].rate is not None for j in judges)]
    unmeasured = [a for a in ("vague_wrong", "specific_wrong", "gold") if a not in sets]
    with style():
        fig, ax = plt.subplots(figsize=(WIDTH_DOUBLE, 1.3 + 0.5 * max(1, len(judges))))
        panel = Panel(ax, "acceptance rate of the locomo-audit answer sets")
        height = 0.8 / max(1, len(sets))
        for k, answer_set in enumerate(sets):
            rows = [by.get((j, answer_set)) for j in judges]
            name, label = names[answer_set]
            panel.bars(name, [i + (k - (len(sets) - 1) / 2) * height for i in range(len(judges))],
                       [r.rate if r else None for r in rows], [r.low if r else None for r in rows],
                       [r.high if r else None for r in rows], width=height, horizontal=True, label=label,
                       interval="Wilson 95% over questions", n=[r.n if r else None for r in rows])
        ax.set_yticks(range(len(judges)))
        ax.set_yticklabels([textwrap.fill(j, 30) for j in judges], fontsize=6)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("answers accepted (%)")
        ax.set_title("Judge leniency: acceptance of known-wrong and gold answers", fontsize=8)
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.tight_layout()
    missing = "".join(f"; {names[a][1].replace('accepts ', '')}: not measured for any judge here, so not drawn"
                      for a in unmeasured)
    return finish(fig, "How often each judge configuration accepts the audit's vague-but-topical wrong answers, its "
                  f"specific-but-wrong ones, and the gold answers (Wilson 95%; n/r: not measured){missing}. It "
                  "does not show how lenient a judge is on other systems' answers, nor any judge configuration not "
                  "measured.")


def mde_figure(doc: TrustDocument):
    """Each adjacent pair's observed difference with its 95% interval beside its minimum detectable difference,
    per category, one panel per measure and key: a pair whose interval leaves zero differs beyond noise."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from memeval.publication.figure_rules import PER_CATEGORY
    from memeval.publication.marks import Panel, finish
    from memeval.publication.style import WIDTH_DOUBLE, style

    measures = list(dict.fromkeys(p.measure for p in doc.pairs))
    numbers = {label: i + 1 for i, label in enumerate(dict.fromkeys(f"{p.a} − {p.b}" for p in doc.pairs))}
    whys = {c.measure: c.why for c in doc.cells if c.why and c.category == "overall"}
    with style():
        fig, axes = plt.subplots(len(measures), len(doc.keys), figsize=(WIDTH_DOUBLE, 0.4 + 2.2 * len(measures)),
                                 squeeze=False, sharey="row")
        for row, measure in zip(axes, measures, strict=True):
            for ax, key in zip(row, doc.keys, strict=True):
                panel = Panel(ax, f"paired difference, {measure}", PER_CATEGORY)
                pairs = [p for p in doc.pairs if (p.measure, p.key) == (measure, key)]
                labels = list(dict.fromkeys(f"{p.a} − {p.b}" for p in pairs))
                if not labels:
                    _absent(ax, f"no {key}-key pair: {whys.get(measure) or 'fewer than two systems'}")
                step = 0.7 / max(1, len(labels))
                for i, label in enumerate(labels):
                    by = {p.category: p for p in pairs if f"{p.a} − {p.b}" == label}
                    got = [by.get(c) for c in CATEGORIES]
                    ok = [g if g is not None and g.difference is not None and g.se is not None else None for g in got]
                    x = [k + 1 - 0.35 + step * (i + 0.5) for k in range(len(CATEGORIES))]
                    noise = [Z95 * g.se if g else None for g in ok]
                    mde = [g.mde if g else None for g in ok]
                    for xv, n, m in zip(x, noise, mde, strict=True):
                        if n is not None:
                            ax.fill_between([xv - step * 0.45, xv + step * 0.45], -n, n, color=PAIR_BAND, lw=0,
                                            zorder=1)
                        if m is not None:
                            ax.plot([xv - step * 0.4, xv + step * 0.4], [m, m], [xv - step * 0.4, xv + step * 0.4],
                                    [-m, -m], color=PAIR_COLOUR, lw=0.9, ls=":", zorder=2)
                    panel.record_cells(f"noise band ±1.96·SE {label}", [str(v) for v in x], noise,
                                       uncertainty="exact")
                    panel.record_cells(f"MDE {label}", [str(v) for v in x], mde, uncertainty="exact")
                    panel.points(label, x, [g.difference if g else None for g in ok],
                                 [g.difference - Z95 * g.se if g else None for g in ok],
                                 [g.difference + Z95 * g.se if g else None for g in ok], interval=INTERVAL,
                                 mark=pair_marker(numbers[label]), colour=PAIR_COLOUR, size=22,
                                 label=f"pair {numbers[label]}: {label}")
                ax.axhline(0, color="#666666", lw=0.6)
                _category_ticks(ax)
                ax.set_title(textwrap.fill(f"{measure}, {key} key", 34), fontsize=7)
                if ax is row[0]:
                    ax.set_ylabel("a − b, points,\nper category", fontsize=7)
            row[len(row) // 2].set_xlabel(CATEGORY_AXIS, fontsize=6)
        handles, names = {}, []
        for ax in axes.flat:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in handles:
                    handles[label] = h
                    names.append(label)
        for label, handle in ((NOISE_LABEL, Patch(color=PAIR_BAND, lw=0)),
                              (MDE_LABEL, Line2D([], [], color=PAIR_COLOUR, lw=0.9, ls=":"))):
            handles[label] = handle
            names.append(label)
        height = fig.get_figheight()
        fig.tight_layout(rect=(0, (0.1 + 0.14 * math.ceil(len(names) / 2)) / height, 1, 1))
        fig.legend([handles[k] for k in names], names, loc="lower center", ncol=min(2, max(1, len(names))),
                   fontsize=6, frameon=False)
    return finish(fig, "Each adjacent pair of systems (ranked on each key, a − b; pairs are numbered black marks, "
                  "never a system's colour or marker), per category: the observed difference with its "
                  f"{INTERVAL}; the grey band is ±1.96·SE, the noise band the verdict uses (a difference outside it "
                  "is real at α = 0.05); the dotted dashes at ±MDE are the difference this comparison would detect "
                  "80% of the time — a smaller one can still be real. The audit's answer sets written to be wrong "
                  "are reference sets and are never paired. It does not show the systems' own scores (see the key "
                  "figures), and an MDE is computed from the observed SE, so it carries no interval of its own.")


PAIR_COLOUR = "#000000"  # pairs in black and numbered: system looks are PALETTE colours and _SHAPES markers
PAIR_BAND = "#DDDDDD"
NOISE_LABEL = "noise band ±1.96·SE (the verdict: outside it, real at α = 0.05)"
MDE_LABEL = "±MDE, 80% power (not the noise band: a smaller difference can still be real)"


def pair_marker(number: int) -> str:
    """A pair's mark: its number drawn as the marker, so no pair can be read as a system."""
    return f"${number}$"


def write_trust(runs: Sequence[str | Path], out: str | Path, audit_dir: str | Path | None = None,
                data: str | Path | None = None, ambiguous: str = "include", published: bool = False,
                figures_dir: str | Path | None = None) -> dict:
    """trust.md, trust.json and the figures (PNG, PDF, each with its record for the figure rules; in `figures_dir`,
    default `out`/figures) in `out`. `published`: the audit's published runs are imported into `out`/published
    first (when the audit is fetched) and shown beside `runs`."""
    import matplotlib.pyplot as plt

    from memeval.atomic import write_text_atomic
    from memeval.publication.figure_rules import problems_in
    from memeval.publication.style import save_figure

    out = Path(out)
    check_inputs(runs, out, audit_dir)
    if published:
        check_readable(runs, data)
    runs = [*runs, *(import_published(out / "published", audit_dir, data, already_imported(runs)) if published
                     else [])]
    doc = trust_document(runs, audit_dir, data, ambiguous)
    out.mkdir(parents=True, exist_ok=True)
    figures_dir = Path(figures_dir) if figures_dir is not None else out / "figures"
    drawn = [key_figure(doc, m) + (f"trust_key_{_slug(m)}",) for m in dict.fromkeys(c.measure for c in doc.cells)]
    if doc.leniency:
        drawn.append(leniency_figure(doc) + ("trust_leniency",))
    if doc.pairs:
        drawn.append(mde_figure(doc) + ("trust_mde",))
    written = []
    for fig, _caption, name in drawn:
        written += save_figure(fig, name, figures_dir)
        plt.close(fig)
    broken = {name: found for name, found in problems_in(figures_dir).items() if found}
    markdown = trust_markdown(doc) + "\n" + _figures_section(out, figures_dir, [(n, c) for _, c, n in drawn])
    if broken:
        markdown += "\n" + "\n".join(f"- figure rule: {line}" for found in broken.values() for line in found) + "\n"
    report = write_text_atomic(out / "trust.md", markdown)
    document = write_text_atomic(out / "trust.json", doc.model_dump_json(indent=1) + "\n")
    return {"report": report, "document": document, "figures": [p for p in written if p.suffix == ".png"],
            "figure_problems": broken, "trust": doc}
