"""`memeval locomo run` as a function: select, answer, judge, report, manifest — each stage resumable.

Outputs in the run directory: answers.jsonl, judgments.jsonl, report.md, manifest.json. The notebooks call
`run_locomo` with the same configuration the CLI builds, so both produce identical files.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from memeval.benchmarks.locomo import evermemos_reader
from memeval.benchmarks.locomo.config import LocomoRunConfig, imported_systems
from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo.report import run_report
from memeval.data.fetch import data_hashes
from memeval.data.paths import find_locomo
from memeval.engine.judge import Judge
from memeval.engine.roles import ModelSettings
from memeval.engine.run import RunSettings, run_task
from memeval.engine.task import Task, Unit
from memeval.llm.client import LLMClient, checked_client, make_client
from memeval.llm.count import ServerCounter, token_counter
from memeval.llm.manifest import role_identity
from memeval.llm.types import RunEstimate
from memeval.memory.base import SystemConfig
from memeval.memory.extraction import EXTRACTION_TEMPERATURE
from memeval.memory.registry import (
    LIBRARY_SYSTEMS,
    build_system,
    factory,
    is_plugin,
    needs_embeddings,
    needs_llm,
    parse_system,
)
from memeval.prompts import all_prompt_hashes
from memeval.qa.answer import ANSWER_TEMPERATURE, EXTRACTIVE_LABEL
from memeval.qa.answer_pass import (
    AnswerSettings,
    answer_conversation,
    answer_requests,
    load_answers,
    planned_answer,
    protocol_cap,
    reader_cap,
    retrieve,
)
from memeval.qa.choices import LLM_ANSWERERS
from memeval.qa.reader_cap import FLAG as CAP_FLAG
from memeval.qa.reader_cap import cut_advice
from memeval.qa.selection import (
    questions_identity,
    refuse_a_sample_of_a_file_order_run,
    select_conversations,
    select_questions,
)
from memeval.records import AnswerRow, JudgmentRow, RunResult
from memeval.rundir import Identity, RunDir
from memeval.scoring.judge import BINARY_TEMPERATURE, GRADED_TEMPERATURE
from memeval.scoring.judges import JUDGES

PROTOTYPE_NOTE = "prototype only (20 questions, 1 conversation); the full evaluation is notebook 02"
NO_JUDGE_NOTE = ("J skipped: no judge was requested. Run with `--judge graded` (or `binary`) and "
                 "ANTHROPIC_API_KEY set, or point MEMEVAL_CACHE_DIR at a cache holding the judged run.")


def no_judge_note(config: LocomoRunConfig, imported: dict | None = None, systems: list[str] | None = None) -> str:
    """Why J is missing and what would fill it. Under --llm local every role's model is one the user's server
    at OPENAI_BASE_URL serves, named with --ROLE-model: an API key is not what is missing there. Imported systems
    that brought their file's judgments do have a J (recorded, not re-run): the note says whose J is missing."""
    recorded = [name for name in (systems or ()) if isinstance((imported or {}).get(name, {}).get("judge"), dict)]
    if recorded and len(recorded) == len(systems or ()):
        return (f"No judge was requested, so memeval sent no judge request; the J shown is the imported files' own "
                f"recorded judgments ({', '.join(recorded)}: recorded, not re-run).")
    if config.llm_backend != "local":
        note = NO_JUDGE_NOTE
    else:
        judge = config.models.get("judge")
        note = ("J skipped: no judge was requested. Under --llm local the judge is a model your server at "
                "OPENAI_BASE_URL serves: run with `--judge graded` (or `binary`) and "
                + (f"`--judge-model {judge}` as now" if judge else "`--judge-model` naming it")
                + ", or point MEMEVAL_CACHE_DIR at a cache holding the judged run.")
    if recorded:
        note = note.replace("J skipped: no judge was requested.", "J skipped for the systems without recorded "
                            "judgments: no judge was requested.", 1)
        note += f" The J of {', '.join(recorded)} is their imported files' recorded judgments (recorded, not re-run)."
    return note


def locomo_identity(config: LocomoRunConfig, data_path: Path, selection, systems, imported: dict,
                    client: LLMClient | None) -> Identity:
    """Every setting that changes a stored answer or judgment. Systems and judge protocols are additive: a
    rerun may add one; changing one (or anything fixed) is another run."""
    from memeval.benchmarks.locomo.paper_reader import OFFICIAL_PROMPTS, paper_protocol
    from memeval.prompts import prompt_hash
    from memeval.rundir import identity_hash

    def role(name: str, temperature: float, structured: bool = False) -> dict:
        return role_identity(client, name, temperature, structured)

    question_ids = [qa.sample_id for _, qs in selection for qa in qs]
    reader = {"reader": config.answerer, "k": config.k}
    if config.answerer in LLM_ANSWERERS:
        reader["answer_max_tokens"] = (config.answer_max_tokens if config.answer_max_tokens is not None
                                       else protocol_cap(config.answerer))
        prompts = OFFICIAL_PROMPTS if config.answerer == "claude_official" else ("answer_memory",)
        published = paper_protocol() if config.answerer == "claude_official" else None
        if config.answerer in evermemos_reader.READERS:  # the framework's prompt, temperature 0, 32768 tokens
            fetched = evermemos_reader.published()
            reader.update(answer=role("answer", evermemos_reader.TEMPERATURE),
                          answer_prompt=evermemos_reader.version(config.answerer, fetched),
                          prompt_source=fetched.origin if fetched else "paraphrased")
        elif published is not None:  # the paper's prompt, 50 tokens, no temperature (memeval/benchmarks/locomo/paper_reader.py)
            reader.update(answer=role("answer", None), answer_prompt=published.version,
                          prompt_source=published.origin)
        else:
            reader.update(answer=role("answer", ANSWER_TEMPERATURE), answer_prompt=prompt_hash(*prompts))
    system_entries = {}
    for s in systems:
        if s.label in imported:
            system_entries[s.label] = {"imported": imported[s.label].get("sha256"),
                                       "format": imported[s.label].get("format")}
            continue
        entry = {"name": s.name, "params": dict(s.params)}
        if needs_llm(s):
            library = getattr(factory(s.name), "library_identity", None)  # Mem0: its version, prompt and signals
            entry.update(extract=role("extract", getattr(factory(s.name), "extract_temperature",
                                                         EXTRACTION_TEMPERATURE), structured=library is None),
                         extract_prompt=prompt_hash("extract_triples") if library is None else library())
        if needs_embeddings(s):  # model, provider and a non-default endpoint: sampling does not touch a vector
            entry.update(embed={k: v for k, v in role("embed", None).items() if k in ("model", "provider", "endpoint")})
        system_entries[s.label] = entry
    judges = {judge.name: judge.identity(client) for judge in judges_of(config)}
    return Identity("locomo run", fixed={
        "data_sha256": data_hashes(data_path), "conversations": [c.sample_id for c, _ in selection],
        **questions_identity(config.questions, config.question_seed),
        "question_set": f"{len(question_ids)} questions, sha256 {identity_hash(question_ids)}", **reader},
        additive={"systems": system_entries, "judges": judges})


def legacy_identity(manifest: dict | None) -> Identity | None:
    """What a manifest written before identities were recorded pins down: its reader and k."""
    prior = (manifest or {}).get("config") or {}
    if not prior:
        return None
    return Identity("locomo run", fixed={k2: prior[k1] for k1, k2 in (("answerer", "reader"), ("k", "k"))
                                         if k1 in prior})


def role_temperatures(config: LocomoRunConfig) -> dict:
    """The roles this run calls and the temperature each protocol asks for."""
    roles = {}
    if config.answerer in LLM_ANSWERERS:
        roles["answer"] = ANSWER_TEMPERATURE
    if config.judge != "none":
        roles["judge"] = GRADED_TEMPERATURE if config.judge == "graded" else BINARY_TEMPERATURE
    imported = imported_systems(Path(config.out))
    native = [parse_system(s) for s in config.systems if s not in imported]
    if any(needs_llm(s) for s in native):
        roles["extract"] = EXTRACTION_TEMPERATURE
    if any(needs_embeddings(s) for s in native):
        roles["embed"] = None  # no sampling: an embedding has no temperature
    return roles


def store_ingests(out, label: str) -> list:
    """The latest ingestion record per conversation a library system kept in this run directory."""
    from memeval.records import StoreIngest, latest, read_records

    path = RunDir(out).store_ingests(label)
    if not path.is_file():
        return []
    return list(latest(read_records(path, StoreIngest), lambda r: r.conversation_id).values())


def dense_note(systems: list[SystemConfig], client: LLMClient | None) -> str:
    """What the dense systems of a run are, beside Mem0's RAG rows: who embedded, and how the chunks differ."""
    model = client.model_for("embed") if client is not None else "the embed role's model"
    where = ""
    if client is not None:
        provider = client.profile(model).provider
        where = f" ({provider}" + ("" if client.endpoint_is_default(provider) else f" at {client.endpoint(provider)}") \
            + ")"
    return (f"{', '.join(s.label for s in systems)}: dense retrieval, embeddings from {model}{where}, cosine top-k. "
            "Chunks are whole turns packed up to chunk_tokens at 4 characters a token, with session dates; Mem0's "
            "RAG rows cut tiktoken (cl100k) tokens mid-turn with a timestamp on every line and read them with "
            "gpt-4o-mini under Mem0's own prompt — the same grid of sizes, not the same chunks or reader prompt.")



def run_client(config: LocomoRunConfig, client: LLMClient | None = None) -> LLMClient | None:
    """The run's client, checked before any call: each role's model can honour its protocol's temperature
    (or --sampling model-default was chosen)."""
    return checked_client(ModelSettings.of(config), role_temperatures(config), client)


def judges_of(config: LocomoRunConfig) -> list[Judge]:
    return [] if config.judge == "none" else [JUDGES[config.judge](config.runs)]


class LocomoTask(Task):
    """LoCoMo: each memory system ingests a conversation once and answers its selected questions."""

    kind = "locomo run"
    answer_record = AnswerRow
    judgment_record = JudgmentRow

    def __init__(self, config: LocomoRunConfig):
        self.config = config

    @property
    def no_judge_note(self) -> str:
        return no_judge_note(self.config, getattr(self, "imported", {}), [s.label for s in getattr(self, "systems", ())])

    def validate(self) -> None:
        self.config.validate()
        if not self.config.restart:
            refuse_a_sample_of_a_file_order_run(self.config.out, self.config.questions)

    def prepare(self) -> None:
        config = self.config
        self.data_path = find_locomo(config.data)
        self.locomo = load_locomo(self.data_path)
        conversations = select_conversations(self.locomo, config.conversations)
        self.selection = [(c, select_questions(c, config.questions, config.question_seed)) for c in conversations]
        self.imported = imported_systems(Path(config.out))
        self.systems = [SystemConfig(s, {}, spelling=s) if s in self.imported else parse_system(s)
                        for s in config.systems]
        self.settings = AnswerSettings(config.answerer, config.k, max_tokens=config.answer_max_tokens)
        from memeval.benchmarks.locomo.keyed import resolve_key

        self.answer_key, self.audit = resolve_key(config.key, config.ambiguous, self.locomo)

    def role_temperatures(self) -> dict:
        return role_temperatures(self.config)

    def judges(self) -> list[Judge]:
        return judges_of(self.config)

    def identity(self, client) -> Identity:
        return locomo_identity(self.config, self.data_path, self.selection, self.systems, self.imported, client)

    def legacy_identity(self, manifest: dict | None) -> Identity | None:
        return legacy_identity(manifest)

    def command_line(self) -> list[str]:
        return self.config.command_line()

    def public_config(self) -> dict:
        return _public_config(self.config)

    def units(self) -> list[Unit]:
        native = [Unit(tuple((s.label, qa.sample_id) for qa in questions), (s, conversation, questions))
                  for s in self.systems if s.label not in self.imported for conversation, questions in self.selection]
        brought = [Unit(tuple((s.label, qa.sample_id) for _, qs in self.selection for qa in qs), answerable=False)
                   for s in self.systems if s.label in self.imported]
        return native + brought

    def refusals(self, units, final: set, client) -> list[str]:
        """Each system whose prompts cannot fit the server's context window, refused before any of its rows runs
        (see `largest_prompt`): its rows record why, and the other systems run."""
        self.refused: dict[str, str] = {}
        fit = getattr(client, "fit", None)
        if fit is None:
            return []
        lines = []
        for system in self.systems:
            if system.label in self.imported or not fit.checks_role("extract" if needs_llm(system) else "answer"):
                continue
            todo = [(c, [qa for qa in qs if (system.label, qa.sample_id) not in final]) for c, qs in self.selection]
            found = largest_prompt(system, [(c, qs) for c, qs in todo if qs], self.settings, client)
            if found is None:
                continue
            what, where, request = found
            problem = client.misfit(request)
            if problem is not None:
                line = f"{system.label} refused before any call: its largest {what} ({where}) {problem}"
                self.refused[system.label] = f"DoesNotFit: {line}"
                lines.append(line + "; the other systems run")
        return lines

    def answer(self, unit: Unit, todo, client) -> list[AnswerRow]:
        system, conversation, questions = unit.payload
        wanted = set(todo)
        refused = getattr(self, "refused", {}).get(system.label)
        if refused is not None:
            from memeval.qa.answer_pass import error_row

            return [error_row(system, qa, self.settings, refused) for qa in questions
                    if (system.label, qa.sample_id) in wanted]
        return answer_conversation(system, conversation, [qa for qa in questions if (system.label, qa.sample_id)
                                                          in wanted], self.settings, client, self.config.fail_fast,
                                   lambda built, conv: self.keep_store(system, built, conv))

    def keep_store(self, config: SystemConfig, system, conversation) -> None:
        """A library system's own store (Mem0's `get_all()`) into stores/<label>.json, keyed by conversation id —
        the file `memeval natural union --store ... --format mem0` audits."""
        native = getattr(system, "native_store", None)
        if native is None:
            return
        from memeval.atomic import write_json_atomic
        from memeval.safe_json import load_json_file

        path = RunDir(self.config.out).store(config.label)
        stores = load_json_file(path, "json", kind="store") if path.is_file() else {}
        store = stores[conversation.sample_id] = native()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, stores)
        record = getattr(system, "ingest_record", None)
        if record is not None:
            from memeval.jsonl import JsonlWriter
            from memeval.records import write_records

            with JsonlWriter(RunDir(self.config.out).store_ingests(config.label)) as writer:
                write_records(writer, [record(config.label, store)])

    def owed(self, key: tuple) -> bool:
        return key[0] not in self.imported  # imported systems answer what their file held; a rerun cannot add

    def notes(self, client) -> list[str]:
        config, imported = self.config, self.imported
        native = [s for s in self.systems if s.label not in imported]
        notes = []
        for name in (s.label for s in self.systems if s.label in imported):
            judge = imported[name].get("judge")
            how = (f"scored here like every other system; judged by the file's producer: its judgments kept as the "
                   f"judge {judge.get('protocol')} (recorded, not re-run; judge model {judge.get('model')})"
                   if isinstance(judge, dict) else "scored and judged here like every other system")
            notes.append(f"{name}: answers imported from {imported[name]['source']} ({imported[name]['format']} "
                         f"format); {how}.")
        if client is not None and client.sampling == "model-default":
            notes.append("Sampling: --sampling model-default, so no temperature was sent; every model call used the "
                         "model's default sampling, not the protocols' temperatures.")
        dense = [s for s in native if needs_embeddings(s) and not is_plugin(s.name)]
        if dense:
            notes.append(dense_note(dense, client))
        if config.questions == "prototype":
            notes.append(PROTOTYPE_NOTE)
        if config.answerer == "extractive" and native:
            notes.append(f"Reader: {EXTRACTIVE_LABEL} — a classical no-LLM baseline, not a model's answers"
                         + (" (for the systems run here; imported systems bring their own reader's answers)."
                            if len(native) < len(self.systems) else "."))
        if config.answerer == "claude" and native:
            model = client.model_for("answer") if client is not None else "the answer model"
            notes.append(f"Reader: {model} with this project's memory prompt (`--reader claude`), not any paper's "
                         "reader; published rows used their own readers.")
        if config.answerer == "claude_official" and native:
            from memeval.benchmarks.locomo.paper_reader import paper_protocol

            published = paper_protocol()
            notes.append("Reader: the LoCoMo paper's prompts byte for byte (" + published.origin + "), 50 output "
                         "tokens, no temperature; its claude-3 models are retired, so another model reads — not the "
                         "published protocol." if published else
                         "Reader: the LoCoMo paper's setting in this project's wording — paraphrased prompts, not the "
                         "published protocol (`memeval data fetch protocols` fetches the paper's own).")
        if config.answerer in evermemos_reader.READERS and native:
            notes.append(evermemos_reader.reader_note(
                config.answerer, client.model_for("answer") if client is not None else "the answer model"))
        if config.answer_max_tokens is not None and native:
            notes.append(f"Reader output cap: {config.answer_max_tokens} tokens (`{CAP_FLAG}`) in place of the reader "
                         f"protocol's {protocol_cap(config.answerer)}; a reply still running at the cap is no answer.")
        return notes

    def answered_notes(self, client) -> list[str]:
        """A library system's note, with what it did in this run directory (add calls, memories, its own log)."""
        notes = []
        for s in self.systems:
            library_note = None if s.label in self.imported else getattr(factory(s.name), "run_note", None)
            if library_note is not None:
                notes.append(library_note(s.label, client, store_ingests(self.config.out, s.label),
                                          refused=s.label in getattr(self, "refused", {})))
        return notes

    def failure_advice(self, answers: list) -> str | None:
        if self.config.answerer not in LLM_ANSWERERS:
            return None
        return cut_advice([a.error for a in answers if a.system not in self.imported], reader_cap(self.settings))

    def failure_note(self, errors: int, client) -> str:
        return (f"{errors} answers failed this run (see the `error` field); rerun to retry them"
                + (" — no LLM is configured (no ANTHROPIC_API_KEY or OPENAI_API_KEY), so only cached answers exist"
                   if client and client.backend_name == "replay" else ""))

    def judge_rows(self, answers: list) -> list:
        from memeval.benchmarks.locomo.keyed import judge_rows

        return judge_rows(answers, self.answer_key)

    def keyed(self, answers: list, judgments: list) -> tuple[list, list]:
        """This run's rows under its answer key (memeval/benchmarks/locomo/keyed.py)."""
        from memeval.benchmarks.locomo.keyed import key_evidence, keyed_answers, keyed_judgments

        golds = {a.sample_id: a.gold for a in answers}
        return (keyed_answers(answers, self.answer_key, key_evidence(self.answer_key, self.audit)),
                keyed_judgments(judgments, self.answer_key, golds))

    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        from memeval.benchmarks.locomo.keyed import key_notes, unjudged_changes, unjudged_notes

        stored = (answers, judgments)  # every key's rows: the trust section sets the keys side by side
        unjudged = unjudged_changes(judgments, self.answer_key, {a.sample_id: a.gold for a in answers})
        answers, judgments = self.keyed(answers, judgments)
        notes = [*notes, *key_notes(self.answer_key, self.audit, self.locomo), *unjudged_notes(unjudged)]
        by_system, by_protocol = self.grouped(answers, [j for j in judgments if (j.system, j.protocol) not in unjudged])
        for system, protocol in unjudged:  # its row stays, "–": a J over the rest would be the excluded key's
            by_protocol.setdefault(protocol, {})[system] = []
        title = "LoCoMo prototype report" if self.config.questions == "prototype" else "LoCoMo evaluation report"
        judge_model = client.model_for("judge") if client is not None and self.config.judge != "none" else None
        from memeval.invocation import load_manifest
        from memeval.protocols.status import setting_problem
        from memeval.reports.judge_leniency import leniency_by_protocol

        manifest = RunDir(self.config.out).manifest
        recorded = load_manifest(manifest) if manifest.is_file() else None
        leniency = leniency_by_protocol(recorded, by_protocol)
        from memeval.benchmarks.locomo.published.reference import reference_systems

        report = run_report(by_system, by_protocol, title=title, notes=notes, judge_model=judge_model,
                            protocol_problem=setting_problem(client) if judge_model else None, leniency=leniency,
                            references=reference_systems(recorded))
        from memeval.benchmarks.locomo.trust import report_section

        ambiguous = self.answer_key.ambiguous if self.answer_key is not None else "include"
        return report + "\n" + report_section(*stored, recorded, self.locomo, self.audit, self.config.out, ambiguous)

    def grouped(self, answers: list, judgments: list) -> tuple[dict, dict]:
        """Answers by system (in the order asked) and judgments by protocol and system."""
        by_system: dict[str, list[AnswerRow]] = {s.label: [] for s in self.systems}
        for row in answers:
            by_system[row.system].append(row)
        by_protocol: dict[str, dict[str, list[JudgmentRow]]] = {j.name: {} for j in self.judges()}  # even unjudged
        for row in judgments:
            by_protocol.setdefault(row.protocol, {}).setdefault(row.system, []).append(row)
        return by_system, by_protocol

    def manifest_fields(self, answers: list, judgments: list, claimed, client) -> dict:
        config = self.config
        return {"systems": [s.as_dict() for s in self.systems],
                "data": {"path": str(self.data_path), "sha256": claimed.identity.fixed["data_sha256"]},
                "models": {"answerer": (client.model_for("answer") if config.answerer in LLM_ANSWERERS and client
                                        else EXTRACTIVE_LABEL),
                           "judge": client.model_for("judge") if config.judge != "none" and client else None},
                "prompt_hashes": all_prompt_hashes(), **({"imported": self.imported} if self.imported else {})}


def largest_prompt(system: SystemConfig, todo: list, settings: AnswerSettings, client: LLMClient,
                   planned_embeddings: bool = False) -> tuple[str, str, object] | None:
    """The longest prompt (by characters) `system` will send over `todo` ([(conversation, questions)]) that can be
    built without calling a model: what it is, where, the request. An extracting system's extraction prompts (Mem0's
    first of each conversation, which stands in for nothing: every later one holds at least as much); else the
    reader's prompts when retrieval is local (not a plug-in's; an embedding system's only with `planned_embeddings`,
    inside `client.embedder.planning()`, where chunks not embedded yet stand in at their sizes). None: nothing to
    build."""
    if not todo or (is_plugin(system.name) and system.name not in LIBRARY_SYSTEMS):  # a plug-in's code runs later
        return None
    built = build_system(system, client=client)
    planner = getattr(built, "planned_requests", None)
    found: list[tuple[str, str, object]] = []
    if planner is not None:
        exact = getattr(built, "planned_requests_exact", True)  # Mem0's later prompts hold stand-ins
        for conversation, _ in todo:
            planned = planner(conversation)
            found += [("extraction prompt", conversation.sample_id, r) for r in (planned if exact else planned[:1])]
    elif settings.answerer in LLM_ANSWERERS and not is_plugin(system.name) \
            and (planned_embeddings or not needs_embeddings(system)):
        for conversation, questions in todo:
            searched = retrieve(system, conversation, questions, settings, client)[1]
            requests = answer_requests(searched, conversation, settings.answerer, settings.max_tokens)
            found += [("reader prompt", f"{conversation.sample_id}, {qa.sample_id}", r)
                      for (qa, *_), r in zip(searched, requests, strict=True)]
    return max(found, key=lambda f: f[2].prompt_chars) if found else None


def run_locomo(config: LocomoRunConfig, client: LLMClient | None = None) -> RunResult:
    """Answer, judge, report, through the one engine. The directory's identity is checked (and claimed) before
    anything is written and its lock held throughout; `RunResult.complete` is False when a requested row is
    missing."""
    task = LocomoTask(config)
    outcome = run_task(task, RunSettings(config.out, config.progress, config.restart, config.fail_fast,
                                         config.judge_mode, config.poll_interval_s), ModelSettings.of(config), client)
    by_system, by_protocol = task.grouped(*task.keyed(outcome.answers, outcome.judgments))
    return RunResult(out=outcome.out, report=outcome.report, answers=by_system, judgments=by_protocol,
                     answer_counts=outcome.answer_counts.model_dump(),
                     judge_counts=outcome.judge_counts[0].model_dump() if outcome.judge_counts else None,
                     notes=outcome.notes, llm=outcome.llm, missing=outcome.missing)


def estimate_run(config: LocomoRunConfig, client: LLMClient | None = None) -> RunEstimate:
    """Dry run: the LLM calls a run would still send (cache misses), their tokens and dollars. Nothing is
    written and nothing is sent. Answer prompts are built exactly (retrieval is local); judge prompts use the
    stored prediction when there is one, else a short placeholder that names the system (two systems' future
    answers are not identical requests, so the estimate must not count them once)."""
    config.validate()
    out = Path(config.out)
    from memeval.benchmarks.locomo.keyed import judge_rows, resolve_key

    locomo = load_locomo(find_locomo(config.data))
    answer_key = resolve_key(config.key, config.ambiguous, locomo)[0]
    conversations = select_conversations(locomo, config.conversations)
    selection = [(c, select_questions(c, config.questions, config.question_seed)) for c in conversations]
    imported = imported_systems(out)
    systems = [SystemConfig(s, {}, spelling=s) if s in imported else parse_system(s) for s in config.systems]
    client = run_client(config, client) or make_client("replay")
    settings = AnswerSettings(config.answerer, config.k, max_tokens=config.answer_max_tokens)
    stored = {r.key: r for r in load_answers(RunDir(out).answers) if r.final}
    answer_reqs, judge_reqs, ingest_reqs = [], [], []
    placeholders = 0  # judge prompts holding a placeholder for an answer not written yet
    unread: list[str] = []  # systems whose reader prompts cannot be built without their extraction calls
    embed_texts: dict[int | None, list[list[str]]] = {}  # dimensions → the systems' embed calls, each its texts
    for system in systems:
        for conversation, questions in selection:
            if system.label in imported:  # answered already: only the judge calls are still to come
                if config.judge != "none":
                    rows = judge_rows([stored[(system.label, qa.sample_id)] for qa in questions
                                       if (system.label, qa.sample_id) in stored], answer_key)
                    judge_reqs += [r for judge in judges_of(config) for row in rows if judge.accepts(row)
                                   for r in judge.requests(row)]
                continue
            built = build_system(system, client=client)  # the run's roles name the models planned
            planner = getattr(built, "planned_requests", None)
            if planner is not None:
                ingest_reqs += planner(conversation)
            todo = [qa for qa in questions if (system.label, qa.sample_id) not in stored]
            embedder = getattr(built, "planned_embeddings", None)
            if embedder is not None and todo:
                embed_texts.setdefault(getattr(built, "dimensions", None), []).extend(embedder(conversation, todo))
            if config.answerer in LLM_ANSWERERS and todo:
                # a system whose embeddings are not cached yet ranks with zero vectors here: its first chunks stand
                # in for the ones a real run retrieves (same sizes, nothing sent)
                stand_ins = getattr(built, "planned_memories", None)
                if stand_ins is not None:  # what it retrieves is known only once its LLM has written the store
                    items = stand_ins(conversation)
                    searched = [(qa, items, items, 0.0) for qa in todo]
                elif planner is not None:  # ingesting it is the extraction calls priced above: never made here
                    unread += [system.label] if system.label not in unread else []
                    searched = []
                else:
                    with client.embedder.planning():
                        searched = retrieve(system, conversation, todo, settings, client)[1]
                answer_reqs += answer_requests(searched, conversation, config.answerer, config.answer_max_tokens)
            if config.judge != "none":
                rows = judge_rows([stored.get((system.label, qa.sample_id))
                                   or planned_answer(system, qa, f"a typical answer from {system.label}")
                                   for qa in questions], answer_key)
                made = [(row.key in stored, r) for judge in judges_of(config) for row in rows if judge.accepts(row)
                        for r in judge.requests(row)]
                judge_reqs += [r for _, r in made]
                placeholders += sum(not real for real, _ in made)
    counter = token_counter(client)
    stages = {"answers": client.estimate(answer_reqs, expected_output_tokens=16, counter=counter)}
    if ingest_reqs:
        stages["ingest"] = client.estimate(ingest_reqs, expected_output_tokens=400, counter=counter)
    for dimensions, calls in embed_texts.items():
        stages["embeddings" if dimensions is None else f"embeddings ({dimensions} dimensions)"] = \
            client.estimate_embeddings(calls, dimensions)
    if config.judge != "none":
        stages["judge"] = client.estimate(judge_reqs, expected_output_tokens=60, batch=config.judge_mode == "batch",
                                          counter=counter)
        if placeholders:  # even counted by the endpoint, a prompt around a placeholder answer is not the real one
            stages["judge"] = replace(stages["judge"], token_count=(
                f"estimate: {placeholders:,} of {len(judge_reqs):,} prompts judge an answer not written yet, a short "
                f"placeholder in its place; {stages['judge'].token_count}"))
    note = ("Input tokens " + (
        "counted by the server's own tokenizer where a stage's token_count says exact, else estimated at 4 "
        "characters a token (its token_count says why)" if isinstance(counter, ServerCounter) else
        "counted by the token-counting endpoint" if counter else
        "estimated at 4 characters a token, times each model's tokenizer ratio where it has one: see each "
        "stage's token_count (" + ("no server tokenizer is read for these requests" if config.llm_backend == "local"
                                  else "no key: the token-counting endpoint was not used") + ")")
            + "; prices from memeval/llm/profiles.py" + (f" and --prices {config.prices}" if config.prices else "")
            + " (check them before trusting the dollars); "
            "prompt caching priced as one cache write per shared context and reads after."
            + (" Embeddings: 4 characters a token (usd_max at one token a byte); answer prompts of dense systems "
               "whose embeddings are not cached yet use their first chunks as stand-ins." if embed_texts else ""))
    planned = {s.name for s in systems if s.label not in imported}
    if "mem0" in planned:
        note += (" Mem0: its extraction prompts are built by Mem0's own code with stand-ins for what only its LLM "
                 "decides (the memories its search would find: the speaker's previous messages; the memories it "
                 "writes: one per own message), and its reader prompts read the conversation's first messages in "
                 "place of the memories a search would return.")
    if "memory_graph" in planned and config.answerer in LLM_ANSWERERS:
        note += (" memory_graph: its reader prompts hold stand-ins for the triples only its LLM extracts (top_k of "
                 "them, each a message's speaker, 'said' and its first six words, from the conversation's first "
                 "top_k messages, with those messages as their sources); the triples its hops would add are not "
                 "known before extraction, so a real prompt may be longer.")
    if unread:
        note += (f" Not counted: the reader prompts of {', '.join(unread)} (it plans extraction calls but no "
                 "stand-ins for what they write, and what it retrieves is known only after them).")
    needs = largest_prompt_lines([s for s in systems if s.label not in imported], selection, settings, client)
    if needs:
        note += " Largest prompt per system (what a server's context must hold): " + "; ".join(needs) + "."
    return RunEstimate(stages, sum(e.usd_est for e in stages.values()), note)


def largest_prompt_lines(systems: list[SystemConfig], selection, settings: AnswerSettings, client: LLMClient
                         ) -> list[str]:
    """Per system, its largest prompt that can be built without a model call (see `largest_prompt`), with its reply
    cap: counted by a user's server's tokenizer and held against its window where the client knows them, else
    estimated (docs/context-needs.md has the table)."""
    lines = []
    if getattr(client, "fit", None) is None:
        return lines
    for system in systems:
        with client.embedder.planning():
            found = largest_prompt(system, [(c, qs) for c, qs in selection if qs], settings, client,
                                   planned_embeddings=True)
        if found is None:
            continue
        what, where, request = found
        resolved = client.resolve(request)
        count, window = client.fit.measure(resolved)
        cap = resolved.max_tokens_sent or 0
        verdict = "" if window is None else (f", fits the server's {window.tokens:,}" if count.tokens + cap <=
                                             window.tokens else f", does NOT fit the server's {window.tokens:,}")
        lines.append(f"{system.label} {count.tokens + cap:,} ({what} {count.tokens:,} tokens {count.how}, + {cap:,} "
                     f"reply cap; {where}{verdict})")
    return lines


def _public_config(config: LocomoRunConfig) -> dict:
    return {k: v for k, v in asdict(config).items() if k != "progress"}
