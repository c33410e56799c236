"""The per-question viewer of conversation-QA runs: one static, self-contained HTML page (no server; it opens from
reports/ or any folder) to browse one or several directories holding the shared answer rows (`locomo run`,
`locomo import`, `locomo-plus run`: every kind the registrations name, `viewed_kinds`) question by question
(imported answers are labelled with their harness's format and answer model, never this run's reader).

The page opens with a header per run (systems, reader and judge models, judge protocols, commit, F1 ×100 over
categories 1–4 and J with 95% conversation-clustered intervals), then a list of every (system, question) answer
that filters by system, category, text and F1, and under it the chosen question with every system's answer side
by side: prediction, F1, each judge run's score and explanation, and the memories the reader was given (evidence
turns marked).

Why the data is shaped as it is: a full run holds ~20,000 answers whose memory lists repeat heavily (full context
gives every question of a conversation the same list; a summary is the same session in many lists), so the page
carries tables — turns, memory items (lists of turns), memory sets (lists of items), questions — and the answers
as columns of indices into them, embedded once as compact JSON (gzip, base64: `embedded`). The page's script
draws only the rows in view (memeval/viewer_page.py).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from memeval.answer_keys import answer_keys, without_keys
from memeval.errors import InputError
from memeval.rundir import RunDir
from memeval.safe_text import shown

N_BOOT = 2000
RunPaths = str | Path | Sequence[str | Path]


def _run_paths(runs: RunPaths) -> list[Path]:
    paths = [Path(runs)] if isinstance(runs, (str, Path)) else [Path(r) for r in runs]
    if not paths:
        raise InputError("memeval view", "RUN_DIR", f"name at least one `{viewed_kinds()[0]}` directory")
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise InputError(path, "RUN_DIR", f"given twice (also as {seen[resolved]})")
        seen[resolved] = path
    return paths


def run_labels(paths: Sequence[Path]) -> list[str]:
    """Each run's name on the page: its directory name, with as many parent names as it takes to tell runs apart
    (never an absolute path)."""
    parts = [path.resolve().parts[1:] or ("/",) for path in paths]
    depth = 1
    while depth < max(len(p) for p in parts):
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
        depth += 1
    return ["/".join(p[-depth:]) for p in parts]


def viewed_kinds() -> list[str]:
    """The kinds of directory the page reads, as their manifests name them: every kind holding the shared answer
    rows and the commands writing the same rows (an import), from the registrations."""
    from memeval.engine.registry import answer_kinds, run_kinds

    return [k for k, kind in answer_kinds().items() if k == kind or k in run_kinds()[kind].written_by]


def _load_manifest(run: Path) -> dict:
    from memeval.invocation import load_manifest

    path = RunDir(run).manifest
    if not path.is_file():
        return {}
    manifest = load_manifest(path)
    kind = manifest.get("command")
    if kind is not None and kind not in _kind_of():  # None: a hand-made or older manifest
        names = [f"`{k}`" for k in viewed_kinds()]
        raise InputError(path, "command", f"{kind!r}: the viewer reads {', '.join(names[:-1])} and {names[-1]} "
                         "directories only (their answers.jsonl holds the answers)")
    return manifest


def _kind_of() -> dict[str, str]:
    from memeval.engine.registry import answer_kinds

    return answer_kinds()


def _viewed_kind(manifest: dict) -> str:
    """The run kind whose rows a directory holds (an import's are its run kind's; a manifest naming none: the
    first registered kind holding answer rows)."""
    from memeval.engine.registry import default_answer_kind

    return _kind_of().get(manifest.get("command")) or default_answer_kind()


def _benchmark(kind: str):
    """(AnswerKeys or None, CategorySet) of the benchmark whose run of `kind` the page shows, from the registry."""
    from memeval.engine.registry import categories

    return answer_keys(kind), categories(kind)


def _data_path(manifest: dict) -> Path | None:
    """The LoCoMo data the run read: the manifest's path, relative ones against the project root too."""
    from memeval.data.paths import project_root

    data = manifest.get("data")
    text = data.get("path") if isinstance(data, dict) else None
    if not isinstance(text, str) or not text:
        return None
    for path in (Path(text), project_root() / text):
        if path.exists():
            return path
    return None


def _interval(values: Sequence[float], clusters: Sequence[str]) -> dict | None:
    """The mean with its 95% percentile bootstrap, resampling conversations (questions when there is one
    conversation; no bounds with fewer than two units)."""
    from memeval.scoring.aggregate import bootstrap_mean, cluster_bootstrap

    if not values:
        return None
    if len(set(clusters)) >= 2:
        interval, unit = cluster_bootstrap(values, clusters, n_boot=N_BOOT, seed=0), "conversations"
    else:
        interval, unit = bootstrap_mean(values, n_boot=N_BOOT, seed=0), "questions"
    defined = interval.defined
    return {"mean": round(interval.estimate, 3), "low": round(interval.low, 3) if defined else None,
            "high": round(interval.high, 3) if defined else None, "n": interval.n, "units": interval.clusters,
            "resampled": unit}


def _commit(manifest: dict) -> str | None:
    sha = manifest.get("git_sha")
    if not isinstance(sha, str) or not sha:
        return None
    return sha[:10] + ("-dirty" if sha.endswith("-dirty") else "")


def _without_absolute_paths(command: str) -> str:
    """A recorded command line as shown on the page: absolute paths cut to their last part."""
    return re.sub(r"(?<![\w.~-])/(?:[^\s/'\"]+/)*([^\s/'\"]+)", r"…/\1", command)


def _reader(manifest: dict) -> dict:
    identity = manifest.get("identity") if isinstance(manifest.get("identity"), dict) else {}
    fixed = identity.get("fixed") if isinstance(identity.get("fixed"), dict) else {}
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    models = manifest.get("models") if isinstance(manifest.get("models"), dict) else {}
    answer = fixed.get("answer") if isinstance(fixed.get("answer"), dict) else {}
    return {"reader": fixed.get("reader") or config.get("answerer"), "k": fixed.get("k", config.get("k")),
            "model": answer.get("model") or models.get("answerer"), "temperature": answer.get("temperature_sent"),
            "max_tokens": fixed.get("answer_max_tokens"), "prompt": fixed.get("answer_prompt"),
            "prompt_source": fixed.get("prompt_source")}


def _imported(manifest: dict) -> dict[str, str]:
    """Imported system → its reader as the page names it: "imported: <format>", with the answer model its file
    states. Another harness answered these, so the run's own reader (extractive by default) never labels them."""
    imported = manifest.get("imported") if isinstance(manifest.get("imported"), dict) else {}
    out = {}
    for name, entry in imported.items():
        entry = entry if isinstance(entry, dict) else {}
        metadata = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
        model = metadata.get("answer_model")
        out[name] = f"imported: {entry.get('format') or 'format not recorded'}" + (
            f", {model.strip()}" if isinstance(model, str) and model.strip() else "")
    return out


def _judges(manifest: dict) -> dict[str, dict]:
    """Judge protocol → what the manifest says of it (model, runs per question, prompt version and source)."""
    identity = manifest.get("identity") if isinstance(manifest.get("identity"), dict) else {}
    additive = identity.get("additive") if isinstance(identity.get("additive"), dict) else {}
    judges = additive.get("judges") if isinstance(additive.get("judges"), dict) else {}
    out = {}
    for name, entry in judges.items():
        entry = entry if isinstance(entry, dict) else {}
        status = entry.get("protocol_status")
        out[name] = {"model": entry.get("model"), "runs": entry.get("runs"),
                     "temperature": entry.get("temperature_sent"), "prompt_version": entry.get("prompt_version"),
                     "prompt_source": entry.get("prompt_source"),
                     "status": status if isinstance(status, str) else None}
    return out


def _system_order(manifest: dict, answers: Iterable) -> list[str]:
    """The systems in the order the run named them, then any others its rows hold."""
    named = []
    for entry in manifest.get("systems") or []:
        label = entry.get("label") if isinstance(entry, dict) else entry
        if isinstance(label, str):
            named.append(label)
    return list(dict.fromkeys([*named, *(a.system for a in answers)]))


class _Tables:
    """The page's shared tables, each entry stored once and referred to by its index."""

    def __init__(self) -> None:
        self.conversations: dict[str, int] = {}
        self.turns: dict[tuple[int, str], int] = {}
        self.turn_text: list[str | None] = []
        self.items: dict[tuple[int, ...], int] = {}
        self.sets: dict[tuple[int, ...], int] = {}
        self.raw_sets: dict[tuple[str, tuple], int] = {}
        self.raw_items: dict[tuple[str, tuple], int] = {}
        self.questions: dict[tuple[str, str], int] = {}
        self.question_rows: list[dict] = []

    def conversation(self, name: str) -> int:
        return self.conversations.setdefault(name, len(self.conversations))

    def turn(self, name: str, dia_id: str, texts: dict[tuple[str, str], tuple[str, str]]) -> int:
        """A turn of conversation `name`, stored under the conversation it belongs to (`texts`: (name, dia id) ->
        (that conversation, its text); a stitched conversation's turns of its base are its base's)."""
        home, text = texts.get((name, dia_id), (name, None))
        key = (self.conversation(home), dia_id)
        if key not in self.turns:
            self.turns[key] = len(self.turn_text)
            self.turn_text.append(text)
        return self.turns[key]

    def item(self, conversation_id: str, item: tuple[str, ...], texts) -> int:
        raw = (conversation_id, item)
        found = self.raw_items.get(raw)
        if found is None:  # a summary is one session's turns, given to many questions
            key = tuple(self.turn(conversation_id, i, texts) for i in item)
            found = self.raw_items[raw] = self.items.setdefault(key, len(self.items))
        return found

    def memory_set(self, conversation_id: str, retrieved: list[list[str]], texts) -> int:
        raw = (conversation_id, tuple(map(tuple, retrieved)))
        found = self.raw_sets.get(raw)
        if found is None:  # full context repeats one long list per conversation: resolve each list once
            found = self.raw_sets[raw] = self.sets.setdefault(
                tuple(self.item(conversation_id, item, texts) for item in raw[1]), len(self.sets))
        return found


def _loaded_data(path: Path | None, cache: dict, kind: str, manifest: dict, notes: list[str] | None = None
                 ) -> tuple[dict, dict, dict]:
    """(turns by (conversation, dia id): the conversation they belong to and their text; questions by sample id;
    the conversation a question was asked over where it is not the one its rows name) of one data path, read once
    by the loader the benchmark of the runs declares (`Benchmark.conversations`; none: no texts, as without data).
    A loader taking a `manifest` gets the run's too (LoCoMo-Plus rebuilds the conversations it stitched); one taking
    `notes` says there why it could not rebuild them, said on the page (`notes`) and on stderr."""
    import inspect

    from memeval.benchmarks import load
    from memeval.engine.registry import benchmark_of

    benchmark = benchmark_of(kind)
    if path is None or benchmark is None or benchmark.conversations is None:
        return {}, {}, {}
    loader = load(benchmark.conversations)
    per_run = "manifest" in inspect.signature(loader).parameters
    key = (path.resolve(), json.dumps([manifest.get("data"), manifest.get("identity")], sort_keys=True, default=str)
           ) if per_run else path.resolve()
    if key not in cache:
        said: list[str] = []
        if "notes" in inspect.signature(loader).parameters:
            loaded = loader(path, manifest=manifest, notes=said)
            for note in said:
                print(f"memeval view: {shown(note)}", file=sys.stderr)
        else:
            loaded = loader(path, manifest=manifest) if per_run else loader(path)
        cache[key] = (_turns_and_questions(loaded), said)
    if notes is not None:
        notes += [n for n in cache[key][1] if n not in notes]
    return cache[key][0]


def _turns_and_questions(conversations: list) -> tuple[dict, dict, dict]:
    """What `_loaded_data` gives, from a loader's conversations. A conversation whose questions name another (a
    stitched one, built on that one) shares that conversation's turns, so only the turns it adds are its own; those
    show their session's date, the time the stitching gave them."""
    from memeval.memory.render import turn_text

    by_id = {c.sample_id: c for c in conversations}
    turns, asked = {}, {}
    for c in conversations:
        bases = [by_id[b] for b in dict.fromkeys(qa.conversation_id for qa in c.qa) if b != c.sample_id and b in by_id]
        shared = {t: b.sample_id for b in bases for s in b.sessions for t in s.turns}
        for s in c.sessions:
            for t in s.turns:
                home = shared.get(t)
                turns[(c.sample_id, t.dia_id)] = (home, turn_text(t)) if home else \
                    (c.sample_id, turn_text(t) + (f" [{s.date_time}]" if bases else ""))
        asked.update({qa.sample_id: c.sample_id for qa in c.qa if bases})
    return turns, {qa.sample_id: qa for c in conversations for qa in c.qa}, asked


def _number(value: float | None) -> float | None:
    """None for a missing or NaN score (JSON has no NaN)."""
    return None if value is None or value != value else value


def _f100(value: float | None, digits: int = 2) -> float | None:
    value = _number(value)
    return None if value is None else round(100 * value, digits)


class _Exchanges:
    """Every model call the rows name by cache key, each once, and the texts of their messages, each once (a full
    context prompt's conversation is one text however many questions were asked of it)."""

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}
        self.texts: dict[str, int] = {}
        self.params: dict[str, int] = {}  # the sampling and model of a call, as JSON: a judge's runs share one

    def refer(self, keys: Sequence[str] | None) -> list[int] | None:
        if keys is None:
            return None
        return [self.keys.setdefault(key, len(self.keys)) for key in keys]

    def text(self, value: str) -> int:
        return self.texts.setdefault(value, len(self.texts))

    def table(self, cache_dir: str | Path | None, notes: list[str]) -> dict:
        """{"calls": one entry per key — the request as sent and the reply, or `missing` — and "texts"}."""
        from memeval.llm.cache import read_exchanges

        found, problem = read_exchanges(list(self.keys), cache_dir)
        if problem:
            notes.append(problem + ": requests and replies are shown as not in this machine's cache")
        calls = [self._call(key, found.get(key)) for key in self.keys]
        return {"calls": calls, "texts": list(self.texts), "params": [json.loads(p) for p in self.params]}

    def _call(self, key: str, exchange) -> dict:
        if exchange is None:
            return {"key": key[:16], "missing": True}
        request, response = exchange.request, exchange.response
        messages = request.get("messages") if isinstance(request.get("messages"), list) else []
        prefix = request.get("cache_prefix_chars") if isinstance(request.get("cache_prefix_chars"), int) else 0
        shown_messages = []
        for n, message in enumerate(messages):
            role, text = (message + [None, None])[:2] if isinstance(message, list) else (None, None)
            text = text if isinstance(text, str) else json.dumps(text)
            cut = prefix if n == 0 and 0 < prefix < len(text) else 0
            parts = [text[:cut], text[cut:]] if cut else [text]
            shown_messages.append([str(role), [self.text(part) for part in parts]])
        params = {name: value for name, value in request.items()
                  if name not in ("messages", "system", "repeat_index", "key_schema")}
        shared = json.dumps(params, sort_keys=True)
        reply = {name: response.get(name) for name in ("text", "model", "stop_reason", "input_tokens",
                                                       "output_tokens", "cache_read_input_tokens", "request_id")}
        return {"key": key[:16], "system": self.text(str(request.get("system") or "")), "messages": shown_messages,
                "params": self.params.setdefault(shared, len(self.params)), "repeat": request.get("repeat_index"),
                "reply": {**reply, "text": self.text(str(reply["text"] or ""))},
                "created": exchange.created_utc}


def page_data(runs: RunPaths, cache_dir: str | Path | None = None, key: str = "original",
              ambiguous: str = "include", reasoning: bool = False) -> dict:
    """Everything the page shows, as plain JSON-ready data (the tables described in the module docstring); each
    answer's and judgment's model calls are read from the response cache in `cache_dir` (default: this machine's,
    MEMEVAL_CACHE_DIR). Scores are under the answer `key` (memeval.answer_keys, from the run's benchmark); a
    question the key's source (LoCoMo's fetched audit) names is flagged with its error type and the audit's answer,
    and with the audit's reasoning only when `reasoning` is asked for (`Keyed.flags`)."""
    from memeval.records import load_answers, load_judgments
    from memeval.reports.judge_leniency import judge_identities, leniency_line

    key_mode = key  # `key` names each question's table key below

    paths = _run_paths(runs)
    calls = _Exchanges()
    labels = run_labels(paths)
    tables = _Tables()
    data_cache: dict = {}
    notes: list[str] = []
    systems: list[dict] = []
    protocols: list[dict] = []
    header: list[dict] = []
    page_categories: dict[str, str] = {}
    headlines, headline_notes = [], []
    columns: dict[str, list] = {name: [] for name in ("q", "s", "pred", "f1", "tok", "ms", "rec", "mem", "err", "j",
                                                      "prompt", "scores", "calls")}
    for r, (run, label) in enumerate(zip(paths, labels, strict=True)):
        if not RunDir(run).answers.is_file():
            raise InputError(RunDir(run).answers, "answers", f"not found: expected a `{viewed_kinds()[0]}` directory")
        manifest = _load_manifest(run)
        kind = _viewed_kind(manifest)
        hooks, categories = _benchmark(kind)
        answers = load_answers(RunDir(run).answers)
        judgments = load_judgments(RunDir(run).judgments, None) if RunDir(run).judgments.is_file() else []
        data_path = _data_path(manifest)
        texts, locomo_questions, asked_over = _loaded_data(data_path, data_cache, kind, manifest, notes)
        answer_key = hooks.for_data(data_path, key_mode, ambiguous, data_cache) if hooks is not None else \
            without_keys(run, key_mode)
        notes += [n for n in answer_key.notes() if n not in notes]
        golds = {a.sample_id: a.gold for a in answers}
        unjudged = answer_key.unjudged(judgments, golds)  # no J on this key: "–", said in a note
        notes += [f"{label}: {n}" if len(paths) > 1 else n for n in answer_key.unjudged_notes(unjudged)]
        stored = judgments  # a judge with no J on this key keeps its column and model: "–"
        judgments = answer_key.judgments(judgments, golds)
        answers = answer_key.answers(answers)
        flags = answer_key.flags(reasoning)
        if data_path is None:
            notes.append(f"{label}: the run's LoCoMo data was not found, so memories show their turn ids only and "
                         "adversarial questions lack the answer their premise invites")
        noted = _headline_note(label, kind, categories)
        notes += noted
        headline_notes += noted
        headlines.append(categories)
        judge_info = _judges(manifest)
        identities = judge_identities(manifest)
        protocol_index = {}
        for name in sorted({j.protocol for j in stored} | set(judge_info)):
            protocol_index[name] = len(protocols)
            entry = {"run": r, "name": name, **judge_info.get(name, {}),
                     "leniency": leniency_line(identities.get(name))}
            if hooks is not None and hooks.is_recorded(name):  # an imported file's own labels: no request sent
                entry["status"] = f"{hooks.recorded_label}: the imported file's own labels, no request sent"
            if not entry.get("model"):  # a manifest that does not name the judge: the models its rows name
                entry["model"] = ", ".join(sorted({j.judge_model for j in stored
                                                   if j.protocol == name and j.judge_model})) or None
            protocols.append(entry)
        system_index = {}
        params = {e.get("label"): e.get("params") for e in manifest.get("systems") or [] if isinstance(e, dict)}
        imported = _imported(manifest)
        for name in _system_order(manifest, answers):
            system_index[name] = len(systems)
            systems.append({"run": r, "name": name, "label": name if len(paths) == 1 else f"{label} · {name}",
                            "params": params.get(name) or {}, "reader": imported.get(name)})
        judged: dict[tuple[str, str], list] = {}
        for j in judgments:
            judged.setdefault((j.system, j.sample_id), []).append(
                [protocol_index[j.protocol], _number(j.mean), [_number(x) for x in j.scores], j.explanations or [],
                 calls.refer(j.request_keys)])
        for a in answers:
            seen = asked_over.get(a.sample_id, a.conversation_id)  # a Cognitive item: its own stitched conversation
            c = tables.conversation(seen)
            qa = locomo_questions.get(a.sample_id)
            key = (a.sample_id, a.question)
            if key not in tables.questions:
                tables.questions[key] = len(tables.question_rows)
                tables.question_rows.append({
                    "id": a.sample_id, "conv": c, "cat": a.category, "text": a.question,
                    "gold": None if a.gold is None else str(a.gold),
                    "trap": qa.adversarial_answer if qa is not None and categories.is_apart(a.category) else None,
                    "ev": [tables.turn(seen, i, texts) for i in a.evidence_ids],
                    "audit": flags(a.sample_id)})
            columns["q"].append(tables.questions[key])
            columns["s"].append(system_index[a.system])
            columns["pred"].append(a.prediction)
            columns["f1"].append(_f100(a.f1))
            columns["tok"].append(a.context_tokens)
            columns["ms"].append(None if a.latency_total_s is None else round(1000 * a.latency_total_s, 1))
            columns["rec"].append(_f100(a.evidence_recall, 1))
            columns["mem"].append(tables.memory_set(seen, a.retrieved_ids, texts))
            columns["err"].append(a.error)
            columns["j"].append(judged.get((a.system, a.sample_id), []))
            columns["prompt"].append(getattr(a, "prompt", None))  # rows that store the prompt sent (none yet)
            columns["scores"].append(getattr(a, "retrieval_scores", None))
            columns["calls"].append(calls.refer(a.request_keys))
        counted = [j for j in judgments if (j.system, j.protocol) not in unjudged]  # questions keep theirs
        header.append(_run_header(run, label, manifest, answers, counted, system_index, protocol_index,
                                  len({a.sample_id for a in answers}), categories.headline))
        page_categories.update({str(c): n for c, n in categories.names.items()})
    for optional in ("prompt", "scores"):
        if all(v is None for v in columns[optional]):
            del columns[optional]
    items = [list(key) for key in tables.items]
    opening = _convention(headlines)
    if opening is not None:  # the line under the headers says what each header's note would
        notes = [n for n in notes if n not in headline_notes]
    data = {
        "runs": header, "systems": systems, "protocols": protocols, "notes": notes,
        "exchanges": calls.table(cache_dir, notes),
        "categories": page_categories,
        "conversations": list(tables.conversations),
        "turns": {"conv": [c for c, _ in tables.turns], "id": [i for _, i in tables.turns], "text": tables.turn_text},
        "items": items, "sets": [list(key) for key in tables.sets],
        "questions": {name: [q[name] for q in tables.question_rows]
                      for name in ("id", "conv", "cat", "text", "gold", "trap", "ev", "audit")},
        "rows": columns,
    }
    return data if opening is None else {**data, "convention": opening}


def _headline_note(label: str, kind: str, categories) -> list[str]:
    """What the page's convention line (the default kind's headline categories) does not say of a run whose
    benchmark averages other categories."""
    from memeval.engine.registry import categories as categories_of
    from memeval.engine.registry import default_answer_kind, title

    usual = categories_of(default_answer_kind())
    if categories.headline == usual.headline:
        return []
    return [f"{label}: a {title(kind)} run: its header's F1 ×100 and J average categories {categories.headline_span} "
            f"({', '.join(categories.label(c) for c in categories.headline)}), not {usual.headline_span}"]


def _convention(headlines: list) -> str | None:
    """The convention line's opening when every run on the page averages the same categories and they are not the
    default kind's (whose line the page script holds); None otherwise."""
    from memeval.engine.registry import categories as categories_of
    from memeval.engine.registry import default_answer_kind

    if not headlines or len({c.headline for c in headlines}) > 1:
        return None
    categories = headlines[0]
    if categories.headline == categories_of(default_answer_kind()).headline:
        return None
    span = categories.headline_span
    return (f"F1 ×100: the official LoCoMo token F1 over the questions with a gold answer, averaged over categories "
            f"{span} ({', '.join(categories.label(c) for c in categories.headline)}); J: the judge's mean score, "
            f"0–100, over categories {span}, {categories.averaged}. 95% CI: percentile bootstrap (2,000 resamples) ")


def _run_header(run: Path, label: str, manifest: dict, answers: list, judgments: list, system_index: dict,
                protocol_index: dict, questions: int, headline: tuple[int, ...]) -> dict:
    """One run's header: what produced it and the headline scores (F1 ×100 and J over the `headline` categories,
    LoCoMo's 1–4)."""
    from memeval.invocation import recorded_commands
    from memeval.rundir import status

    scores = []
    for name in system_index:
        scored = [a for a in answers if a.system == name and a.category in headline
                  and _number(a.f1) is not None]
        entry = {"system": system_index[name],
                 "f1": _interval([100 * a.f1 for a in scored], [a.conversation_id for a in scored]),
                 "errors": sum(1 for a in answers if a.system == name and a.error is not None), "j": {}}
        for protocol, p in protocol_index.items():
            means = [j for j in judgments if j.system == name and j.protocol == protocol
                     and j.category in headline and _number(j.mean) is not None]
            entry["j"][str(p)] = _interval([j.mean for j in means], [j.conversation_id for j in means])
        scores.append(entry)
    commands = recorded_commands(run)
    imported = _imported(manifest)
    reader = _reader(manifest) if any(name not in imported for name in system_index) else \
        dict.fromkeys(_reader(manifest))  # every system imported: no reader of this run's answered them
    reader["imported"] = [[name, imported[name]] for name in system_index if name in imported]
    return {"label": label, "commit": _commit(manifest), "created": manifest.get("created_utc"),
            "status": status(run, manifest) if manifest else "no manifest",
            "command": _without_absolute_paths(commands[-1]) if commands else None,
            "reader": reader, "answers": len(answers), "questions": questions,
            "conversations": len({a.conversation_id for a in answers}), "scores": scores,
            "protocols": list(protocol_index.values())}


def page_json(data: dict) -> bytes:
    """The page's data as compact JSON (UTF-8)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def embedded(data: dict) -> str:
    """The data as the page carries it: gzip (level 5, no timestamp, so a page is byte-for-byte reproducible)
    in base64. A graded judge's ten explanations per answer make the JSON of a 20,000-answer run ~30 MB; gzip
    brings it to a few MB, and base64 holds no character that could end or open a <script> block, whatever the
    run's strings hold."""
    import base64
    import gzip

    return base64.b64encode(gzip.compress(page_json(data), compresslevel=5, mtime=0)).decode("ascii")


def read_embedded(page: str) -> dict:
    """The data block of a written page, decoded (what the page's script reads)."""
    import base64
    import gzip

    block = page.split('<script id="data" type="application/gzip+base64">', 1)[1].split("</script>", 1)[0]
    return json.loads(gzip.decompress(base64.b64decode(block)))


def render(data: dict) -> str:
    import html

    from memeval.viewer_page import TEMPLATE, convention

    title = "memeval view · " + " vs ".join(run["label"] for run in data["runs"])
    values = {"__TITLE__": html.escape(shown(title)), "__DATA__": embedded(data),
              "__CONVENTION__": convention(data.get("convention"))}
    # one pass: a run named __DATA__ (or data holding __TITLE__) is never substituted twice
    return re.sub("__TITLE__|__DATA__|__CONVENTION__", lambda m: values[m.group()], TEMPLATE)


def refuse_tracked_page(output: Path) -> None:
    """A page holding the audit's reasoning is never written where this repository would commit it: inside the
    checkout, only to a git-ignored place (reports/, runs/, data/)."""
    import subprocess

    from memeval.data.paths import project_root

    root = project_root().resolve()
    target = output.resolve()
    if root not in target.parents:
        return
    try:
        ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", str(target)],
                                 capture_output=True, timeout=30).returncode
    except (OSError, subprocess.SubprocessError):
        return
    if ignored == 1:
        raise InputError(output, "--audit-reasoning", "the page would hold the LoCoMo audit's reasoning (CC BY-NC "
                         "4.0) inside this repository where git would commit it; write it under reports/ or runs/, "
                         "or outside the checkout")


def write_viewer(runs: RunPaths, output: str | Path | None = None, cache_dir: str | Path | None = None,
                 key: str = "original", ambiguous: str = "include", reasoning: bool = False) -> Path:
    """The page for one run (default RUN/view.html) or several (`output` required: no run owns the page), scored
    under the answer `key`; `reasoning`: the audit's reasoning in each flag (see `Keyed.flags`)."""
    from memeval.atomic import write_text_atomic

    paths = _run_paths(runs)
    if output is None:
        if len(paths) > 1:
            raise InputError("--output", "(not given)", f"{len(paths)} runs make one page: name it, e.g. "
                             "--output compare.html")
        output = paths[0] / "view.html"
    if reasoning:
        refuse_tracked_page(Path(output))
    return write_text_atomic(Path(output), render(page_data(paths, cache_dir, key, ambiguous, reasoning)))
