"""The memory-graph study on graph80: systems under one reader and judge, LLM-free diagnostics, stability.

Systems: `memory_graph` (hops 0/1/2; gold or LLM extraction), `chunks` (BM25 over paragraphs, no expansion —
the summary-style comparator), `full_context`, `no_memory`. Without a judge the score is the LLM-free
gold-answer containment (1 when the normalised gold answer appears in the prediction), labelled as such.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from memeval.atomic import write_json_atomic, write_text_atomic
from memeval.benchmarks.graph80.config import StudyConfig
from memeval.benchmarks.graph80.judge import (  # noqa: F401  (the judge's home; kept importable from here)
    JUDGE_TEMPERATURE,
    parse_three_dim,
    three_dim_request,
)
from memeval.engine.run import RunOutcome, RunSettings, run_task
from memeval.engine.task import Task, Unit
from memeval.errors import InputError
from memeval.llm.client import LLMClient, LLMError, LLMRequest
from memeval.memory.base import MemoryItem, SystemConfig, approx_tokens
from memeval.memory.entities import base_form
from memeval.memory.extraction import EXTRACTION_MAX_TOKENS, Source, extract_llm
from memeval.memory.graph import MemoryGraph
from memeval.memory.graph_system import recall_items
from memeval.memory.lexical import BM25Index
from memeval.qa.answer import EXTRACTIVE_LABEL, Memory, answer_request, extractive_answer
from memeval.records import Graph80AnswerRow, Graph80JudgmentRow
from memeval.rundir import Identity, RunDir
from memeval.safe_json import read_text
from memeval.scoring.judges import JUDGES

SYSTEM_PARAMETERS = {"memory_graph": ("hops", "top_k", "aliases", "extract_max_tokens"), "chunks": ("k",),
                     "full_context": (), "no_memory": ()}
SYSTEMS = tuple(SYSTEM_PARAMETERS)


def check_system(config: SystemConfig) -> SystemConfig:
    """A graph80 system spelled right, with parameters it has (`max_hops` is the older name of `hops`)."""
    if config.name not in SYSTEM_PARAMETERS:
        raise InputError("--systems", config.shown, f"unknown graph80 system; known: {', '.join(SYSTEMS)}")
    params = {("hops" if k == "max_hops" else k): v for k, v in config.params.items()}
    valid = SYSTEM_PARAMETERS[config.name]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise InputError("--systems", config.shown, f"unknown parameter {', '.join(unknown)} for {config.name}; "
                         f"valid: {', '.join(valid) or '(none)'}")
    if params.get("hops", 1) not in (0, 1, 2):
        raise InputError("--systems", config.shown, f"hops must be 0, 1 or 2, not {params['hops']}")
    return SystemConfig(config.name, params, spelling=config.spelling)
MEANINGFUL_N = 30
PUBLISHED = {"graph": {"overall": 0.831, "multi-hop": 0.79}, "summary": {"overall": 0.801, "multi-hop": 0.74}}


def load_graph80(directory: str | Path) -> tuple[list[dict], list[dict], list[dict]]:
    directory = Path(directory)
    out = []
    for name in ("documents", "questions", "triples"):
        path = directory / f"{name}.jsonl"
        if not path.is_file():
            raise InputError(path, name, "missing; run `memeval graph80 generate --out DIR` first")
        out.append([json.loads(line) for line in read_text(path, name, kind="results").splitlines() if line.strip()])
    return out[0], out[1], out[2]


def sources_of(documents: Sequence[dict]) -> list[Source]:
    return [Source(p["id"], f"{d['title']}: {p['text']}", d["date"]) for d in documents for p in d["paragraphs"]]


class Graph80System:
    def __init__(self, config: SystemConfig, documents: Sequence[dict], triples: Sequence[dict],
                 extractor: str = "gold", client: LLMClient | None = None):
        self.config = config
        self.sources = {s.id: s for s in sources_of(documents)}
        self.extraction = None
        if config.name == "memory_graph":
            self.graph = MemoryGraph(config.params.get("aliases"))
            self.hops = int(config.params.get("hops", 1))
            self.top_k = int(config.params.get("top_k", 5))
            if extractor == "gold":
                for t in triples:
                    self.graph.add(t["subject"], t["relation"], t["object"], t["source_id"], t["time"])
            elif extractor == "llm":
                if client is None:
                    raise ValueError("the llm extractor needs an LLM client")
                facts, stats = extract_llm(client, document_chunks(self.sources.values()),
                                           max_tokens=extract_cap(config))
                for f in facts:
                    self.graph.add(f.subject, f.relation, f.object, f.source_id, self.sources[f.source_id].time)
                self.extraction = {**stats, **extraction_scores(self.graph, triples)}
            else:
                raise ValueError(f"extractor must be gold or llm, not {extractor!r}")
        elif config.name == "chunks":
            self.k = int(config.params.get("k", 5))
            self.index = BM25Index([MemoryItem(s.text, 0.0, (s.id,), s.time, "chunk") for s in self.sources.values()])
        elif config.name not in ("full_context", "no_memory"):
            raise ValueError(f"unknown graph80 system {config.name!r}; known: {', '.join(SYSTEMS)}")

    def search(self, question: str) -> list[MemoryItem]:
        name = self.config.name
        if name == "memory_graph":
            return recall_items(self.graph, self.sources, question, self.top_k, self.hops)
        if name == "chunks":
            return self.index.search(question, self.k)
        if name == "full_context":
            return [MemoryItem(s.text, 0.0, (s.id,), s.time, "chunk") for s in self.sources.values()]
        return []


def document_chunks(sources) -> list[list[Source]]:
    """One extraction chunk per document: its paragraphs."""
    by_doc = defaultdict(list)
    for s in sources:
        by_doc[s.id.rsplit(":", 1)[0]].append(s)
    return list(by_doc.values())


def extract_cap(config: SystemConfig) -> int:
    return int(config.params.get("extract_max_tokens", EXTRACTION_MAX_TOKENS))


def extraction_scores(graph: MemoryGraph, gold: Sequence[dict]) -> dict:
    """Precision/recall of extracted triples against gold, on normalised (subject, relation, object)."""
    got = {(t.subject, t.relation, t.object) for t in graph.triples()}
    want = {(base_form(t["subject"]), " ".join(t["relation"].split()).lower(), base_form(t["object"]))
            for t in gold}
    hit = len(got & want)
    return {"extraction_precision": hit / len(got) if got else 0.0,
            "extraction_recall": hit / len(want) if want else 0.0}


def _gold_sources(question: dict, triples: Sequence[dict]) -> list[set[str]]:
    """For each triple of the gold path, the paragraphs that state it."""
    by_fact = defaultdict(set)
    for t in triples:
        by_fact[(base_form(t["subject"]), t["relation"], base_form(t["object"]))].add(t["source_id"])
    return [by_fact[(base_form(s), r, base_form(o))] for s, r, o in question["gold_path"]]


def diagnostics(question: dict, items: Sequence[MemoryItem], triples: Sequence[dict]) -> dict:
    retrieved = {sid for item in items for sid in item.source_ids}
    needed = _gold_sources(question, triples)
    path_recall = float(np.mean([bool(n & retrieved) for n in needed])) if needed else None
    text = base_form(" ".join(item.text for item in items))
    entities = question["gold_entities"]
    entity_recall = float(np.mean([base_form(e) in text for e in entities])) if entities else None
    context = "\n".join(item.text for item in items)
    return {"path_recall": path_recall, "entity_recall": entity_recall,
            "context_tokens": approx_tokens(context) if items else 0}


def containment(prediction: str, answer: str) -> float:
    return 1.0 if base_form(answer) and base_form(answer) in base_form(prediction) else 0.0


def role_temperatures(config: StudyConfig) -> dict:
    """The roles this study calls and the temperature each protocol asks for."""
    from memeval.memory.extraction import EXTRACTION_TEMPERATURE
    from memeval.qa.answer import ANSWER_TEMPERATURE

    roles = {}
    if config.extractor == "llm":
        roles["extract"] = EXTRACTION_TEMPERATURE
    if config.answerer == "claude":
        roles["answer"] = ANSWER_TEMPERATURE
    if config.judge == "three_dim":
        roles["judge"] = JUDGE_TEMPERATURE
    return roles


def planned_requests(config: StudyConfig) -> list[LLMRequest]:
    """The calls a study would make, for dry runs: extraction per document; with gold extraction also the
    reader's calls (retrieval is local) and, with a placeholder prediction, the judge's. With LLM extraction
    the reader's and judge's calls depend on what is extracted and are not counted."""
    from memeval.memory.extraction import extraction_request

    documents, questions, triples = load_graph80(config.data)
    requests: list[LLMRequest] = []
    if config.extractor == "llm":
        graphs = [c for c in map(SystemConfig.parse, config.systems) if c.name == "memory_graph"]
        return [extraction_request(chunk, max_tokens=extract_cap(check_system(c)))
                for c in graphs for chunk in document_chunks(sources_of(documents))]
    for spec in config.systems:
        system = Graph80System(check_system(SystemConfig.parse(spec)), documents, triples, "gold")
        for q in questions:
            if config.answerer == "claude":
                memories = [Memory(i.text, i.time, i.source_ids) for i in system.search(q["question"])]
                requests += [answer_request(q["question"], memories, repeat=r) for r in range(config.repeats)]
            if config.judge == "three_dim":
                requests += [three_dim_request(q, f"a typical answer from {spec}", r) for r in range(config.repeats)]
    return requests


def score_kind(config: StudyConfig) -> str:
    return "three_dim judge" if config.judge == "three_dim" else "gold-answer containment (no judge)"


def study_identity(config: StudyConfig, client: LLMClient | None):
    """What the study's rows depend on. Nothing is additive (the stability analysis compares the systems of one
    study): another configuration is refused, or with --restart the old study is moved aside."""
    from memeval.data.fetch import data_hashes
    from memeval.llm.manifest import role_identity
    from memeval.rundir import Identity

    roles = {role: role_identity(client, role, t, structured=role != "answer")  # extraction and judge read JSON
             for role, t in role_temperatures(config).items()} if client else {}
    return Identity("graph80 run", fixed={
        "data_sha256": data_hashes(config.data), "systems": list(config.systems), "extractor": config.extractor,
        "answerer": config.answerer, "judge": config.judge, "repeats": config.repeats, "roles": roles})


class Graph80Task(Task):
    """The memory-graph study: every system answers every question once per repeat (questions shuffled by the
    repeat's seed); the score is the three-dimension judge's, or LLM-free gold-answer containment."""

    kind = "graph80 run"
    answer_record = Graph80AnswerRow
    judgment_record = Graph80JudgmentRow
    progress_label = "graph80"

    def __init__(self, config: StudyConfig):
        self.config = config
        self.built: dict[str, Graph80System | LLMError] = {}

    def validate(self) -> None:
        self.config.validate()
        self.configs = [check_system(SystemConfig.parse(s)) for s in self.config.systems]

    def prepare(self) -> None:
        self.documents, self.questions, self.triples = load_graph80(self.config.data)
        self.by_id = {q["id"]: q for q in self.questions}

    def role_temperatures(self) -> dict:
        return role_temperatures(self.config)

    def judges(self) -> list:
        return [JUDGES["three_dim"](self.by_id)] if self.config.judge == "three_dim" else []

    def identity(self, client) -> Identity:
        return study_identity(self.config, client)

    def command_line(self) -> list[str]:
        return self.config.command_line()

    def public_config(self) -> dict:
        return self.config.public()

    def judged_answer(self, judgment) -> tuple:
        return judgment.key[:3]

    def units(self) -> list[Unit]:
        units = []
        for repeat in range(self.config.repeats):
            order = list(self.questions)
            random.Random(repeat).shuffle(order)
            units += [Unit(tuple((c.shown, q["id"], repeat) for q in order), (c, repeat, order)) for c in self.configs]
        return units

    def system(self, config: SystemConfig, client) -> Graph80System | LLMError:
        """Each system is built once (an LLM extractor's graph from the cache after the first run); an extraction
        that failed is kept as its error, so the system's other repeats do not ask again."""
        if config.shown not in self.built:
            try:
                self.built[config.shown] = Graph80System(config, self.documents, self.triples,
                                                         self.config.extractor, client)
            except LLMError as exc:
                self.built[config.shown] = exc
        return self.built[config.shown]

    def answer(self, unit: Unit, todo, client) -> list[Graph80AnswerRow]:
        config, repeat, order = unit.payload
        system = self.system(config, client)
        if isinstance(system, LLMError):
            return [self.failed_row(self.by_id[question_id], config, repeat,
                                    f"extraction failed: {type(system).__name__}: {system}")
                    for _, question_id, _ in todo]
        wanted = set(todo)
        asked = [(q, system.search(q["question"])) for q in order if (config.shown, q["id"], repeat) in wanted]
        memories = [[Memory(i.text, i.time, i.source_ids) for i in items] for _, items in asked]
        if self.config.answerer == "extractive":
            replies = [extractive_answer(q["question"], m) for (q, _), m in zip(asked, memories, strict=True)]
        else:
            replies = client.complete_many([answer_request(q["question"], m, repeat=repeat)
                                            for (q, _), m in zip(asked, memories, strict=True)])
        rows = []
        for (q, items), reply in zip(asked, replies, strict=True):
            failed = isinstance(reply, LLMError)
            prediction = reply if isinstance(reply, str) else "" if failed else reply.text.strip()
            rows.append(Graph80AnswerRow(
                question_id=q["id"], type=q["type"], system=config.shown, repeat=repeat, question=q["question"],
                gold=q["answer"], prediction=prediction,
                answerer=EXTRACTIVE_LABEL if self.config.answerer == "extractive" else self.config.answerer,
                error=f"{type(reply).__name__}: {reply}" if failed else None, **diagnostics(q, items, self.triples)))
        return rows

    def failed_row(self, q: dict, config: SystemConfig, repeat: int, error: str) -> Graph80AnswerRow:
        return Graph80AnswerRow(
            question_id=q["id"], type=q["type"], system=config.shown, repeat=repeat, question=q["question"],
            gold=q["answer"], prediction="", answerer=EXTRACTIVE_LABEL if self.config.answerer == "extractive"
            else self.config.answerer, error=error, path_recall=None, entity_recall=None, context_tokens=0)

    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        from memeval.reports.markdown import markdown_table

        rows = self.rows(answers, judgments)
        body = [[r["system"], r["type"], fmt(r["score_mean"]), fmt(r["score_std"]), fmt(r["path_recall"]), fmt(r["entity_recall"]),
                 fmt(r["context_tokens"], "{:.0f}"), r["n"]] for r in summarize(rows)]
        quoted = [*[f"> {n}" for n in notes], ""] if notes else []
        return "\n".join(["# graph80 study report", "", *quoted,
                          f"Score: {score_kind(self.config)}; {self.config.repeats} repeats.", "",
                          markdown_table(["System", "type", "score", "std over repeats", "path recall",
                                          "entity recall", "context tokens", "questions"], body)]) + "\n"

    def rows(self, answers: list, judgments: list) -> list[dict]:
        """The study's rows (rows.jsonl): each answer with its score, in the order the study asks them."""
        by_key = {a.key: a for a in answers}
        scores = {j.key[:3]: j.score for j in judgments}
        unusable = {j.key[:3]: j.error for j in judgments if j.score is None}
        judged = self.config.judge == "three_dim"
        out = []
        for unit in self.units():
            for key in unit.keys:
                a = by_key.get(key)
                if a is None:
                    continue
                error, score = a.error, None  # a failed answer or judgment is left out of every mean, never 0
                if error is None and not judged:
                    score = containment(a.prediction, a.gold)
                elif error is None and key in unusable:
                    error = f"judge: {unusable[key] or 'reply not parsed'}"
                elif error is None and key in scores:
                    score = scores[key]
                elif error is None:
                    error = "judge: no judgment (the call failed or no LLM is configured); a rerun retries it"
                out.append({**a.to_row(), "score": score, "score_kind": score_kind(self.config), "error": error})
        return out

    def finish(self, outcome, client) -> None:
        rows = self.rows(outcome.answers, outcome.judgments)
        rundir = RunDir(self.config.out)
        write_text_atomic(rundir.file("rows.jsonl"), "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        if self.config.extractor == "llm":
            for c in self.configs:
                self.system(c, client)
        extraction = {label: {"error": f"{type(s).__name__}: {s}"} if isinstance(s, LLMError) else s.extraction
                      for label, s in self.built.items() if isinstance(s, LLMError) or s.extraction}
        summary = {"rows": summarize(rows), "stability": sign_stability(rows), "config": self.config.public(),
                   "extraction": extraction,
                   "score_kind": score_kind(self.config), "failed_rows": sum(1 for r in rows if r["error"]),
                   "published_reference": PUBLISHED}
        write_json_atomic(rundir.file("summary.json"), summary)
        outcome.summary = summary


def fmt(value: float | None, spec: str = "{:.3f}") -> str:
    return "–" if value is None else spec.format(value)


def run_graph80(config: StudyConfig, client: LLMClient | None = None) -> RunOutcome:
    """The study through the one engine: resumable (answers.jsonl, judgments.jsonl), answers and judgments sent
    concurrently; rows.jsonl and summary.json are derived from them at the end."""
    return run_task(Graph80Task(config), RunSettings(config.out, config.progress, config.restart), client=client)


def run_study(config: StudyConfig, client: LLMClient | None = None) -> dict:
    """`run_graph80`'s summary (summary.json) with what is missing."""
    outcome = run_graph80(config, client)
    return {**outcome.summary, "missing": outcome.missing}


def summarize(rows: Sequence[dict]) -> list[dict]:
    """Per system and type (and `all`): diagnostics averaged over questions; score mean and std over repeats."""
    out = []
    groups = defaultdict(list)
    for r in rows:
        groups[(r["system"], r["type"])].append(r)
        groups[(r["system"], "all")].append(r)
    for (system, qtype), members in sorted(groups.items()):
        per_repeat = defaultdict(list)
        for r in members:
            if r["score"] is not None:
                per_repeat[r["repeat"]].append(r["score"])
        means = [float(np.mean(v)) for _, v in sorted(per_repeat.items())]
        first = [r for r in members if r["repeat"] == 0]

        def avg(key, rows=first):
            values = [r[key] for r in rows if r[key] is not None]
            return float(np.mean(values)) if values else None

        out.append({"system": system, "type": qtype, "path_recall": avg("path_recall"),
                    "entity_recall": avg("entity_recall"), "context_tokens": avg("context_tokens"),
                    "score_mean": float(np.mean(means)) if means else None,
                    "score_std": float(np.std(means, ddof=1)) if len(means) > 1 else (0.0 if means else None), "n": len(first)})
    return out


def sign_stability(rows: Sequence[dict]) -> list[dict]:
    """For each pair of systems and type: the mean difference per repeat and whether its sign holds in every
    repeat; under MEANINGFUL_N questions the difference is called not meaningful."""
    scores = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["score"] is not None:
            for t in (r["type"], "all"):
                scores[(r["system"], t)][r["repeat"]].append(r["score"])
    systems = sorted({s for s, _ in scores})
    types = sorted({t for _, t in scores})
    out = []
    for a, b in combinations(systems, 2):
        for t in types:
            repeats = sorted(set(scores[(a, t)]) & set(scores[(b, t)]))
            diffs = [float(np.mean(scores[(a, t)][k]) - np.mean(scores[(b, t)][k])) for k in repeats]
            n = len(scores[(a, t)][repeats[0]]) if repeats else 0
            signs = {np.sign(d) for d in diffs}
            out.append({"a": a, "b": b, "type": t, "mean_difference": float(np.mean(diffs)) if diffs else None,
                        "sign_holds": len(signs) == 1 and 0 not in signs, "n": n,
                        "meaningful": n >= MEANINGFUL_N})
    return out
