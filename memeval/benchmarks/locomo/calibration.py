"""`memeval judge calibrate`: a judge run over answers whose truth is known — the audit's specific-but-wrong (v1)
and vague-but-topical (v2) answers and the gold answers themselves — each against LoCoMo's original gold, for the
non-adversarial questions. It is a task like any benchmark (`memeval.engine`): cache, budget, resume and the
judges' unusable replies are the engine's; what is added is where the answers come from and the rates
(`memeval.scoring.leniency`) it writes to calibration.jsonl and registers for every table to find.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memeval.benchmarks.locomo.audit_leniency import ANSWER_FILES
from memeval.benchmarks.locomo.categories import ADVERSARIAL, QA_CATEGORIES, category_label
from memeval.engine.task import Task, Unit
from memeval.errors import InputError
from memeval.records import JudgmentRow, Record
from memeval.rundir import Identity
from memeval.scoring.leniency import ANSWER_SETS, SET_WORDS, Leniency, Rate

CALIBRATION = "calibration.jsonl"
KIND = "judge calibration"
FETCH_AUDIT = "memeval data fetch locomo-audit"


class CalibrationAnswer(Record):
    """One (answer set, question): the answer the judge is shown, with LoCoMo's original question and gold. The
    answer set stands where a run has its system, so every judge reads it as an answer row."""

    sample_id: str
    conversation_id: str
    category: int
    system: str  # the answer set: specific_wrong, vague_wrong or gold
    audit_id: str | None
    question: str
    gold: str
    prediction: str
    error: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.sample_id)


def gold_rows(conversations) -> list[CalibrationAnswer]:
    """The gold set: every non-adversarial question answered with its own gold answer."""
    return [CalibrationAnswer(sample_id=qa.sample_id, conversation_id=c.sample_id, category=qa.category,
                              system="gold", audit_id=None, question=qa.question, gold=str(qa.answer),
                              prediction=str(qa.answer))
            for c in conversations for qa in c.qa if qa.category != ADVERSARIAL and qa.answer is not None]


def audit_rows(answer_set: str, conversations, audit_dir: str | Path | None = None) -> list[CalibrationAnswer]:
    """A wrong-answer set from the fetched audit file, each answer matched to its LoCoMo question by the audit id
    and judged against LoCoMo's own question and gold (the original key)."""
    from memeval.benchmarks.locomo.audit.store import audit_path
    from memeval.benchmarks.locomo.audit_key import audit_sample_id
    from memeval.benchmarks.locomo.published.detailed import read_detailed

    name = ANSWER_FILES[answer_set]
    path = audit_path(name, audit_dir)
    if path is None:
        raise InputError(f"--sets {answer_set}", "audit", f"the audit's {name} file is not fetched; `{FETCH_AUDIT}` "
                         "stores it (the gold set alone needs no audit)")
    questions = {qa.sample_id: (c, qa) for c in conversations for qa in c.qa}
    out = []
    for row in read_detailed(path).rows:
        sample_id = audit_sample_id(row.question_id, conversations, path)
        conversation, qa = questions[sample_id]
        if " ".join(qa.question.split()).casefold() != " ".join(row.question.split()).casefold():
            raise InputError(path, row.question_id, f"its question is not {qa.sample_id}'s in this LoCoMo data "
                             "(another release of LoCoMo?)")
        if qa.category == ADVERSARIAL or qa.answer is None:
            continue
        out.append(CalibrationAnswer(sample_id=sample_id, conversation_id=conversation.sample_id,
                                     category=qa.category, system=answer_set, audit_id=row.question_id,
                                     question=qa.question, gold=str(qa.answer), prediction=row.generated_answer))
    return out


@dataclass(frozen=True)
class _Question:
    """What the stratified sampler reads of a question."""

    sample_id: str
    category: int


def select(rows: list[CalibrationAnswer], questions: int | None) -> list[CalibrationAnswer]:
    """The same `questions` questions in every set: a seeded sample stratified by category (seed 0)."""
    if questions is None:
        return rows
    from memeval.qa.selection import stratified_sample

    unique = list({r.sample_id: _Question(r.sample_id, r.category) for r in rows}.values())
    chosen = {q.sample_id for q in stratified_sample(unique, questions, 0)}
    return [r for r in rows if r.sample_id in chosen]


class CalibrationTask(Task):
    kind = KIND
    answer_record = CalibrationAnswer
    judgment_record = JudgmentRow
    progress_label = "answers (read from the audit)"

    def __init__(self, judge, sets: Sequence[str], rows: Sequence[CalibrationAnswer], out: str | Path,
                 command: list[str], config: dict, register: bool = True):
        self.judge, self.sets, self.rows, self.out = judge, tuple(sets), list(rows), Path(out)
        self.command, self.config, self.register_rates = command, config, register
        self.leniency: list[Leniency] = []

    def validate(self) -> None:
        unknown = [s for s in self.sets if s not in ANSWER_SETS]
        if unknown or not self.sets:
            raise InputError("--sets", ",".join(unknown) or "(empty)", "answer sets are "
                             + ", ".join(ANSWER_SETS))

    def role_temperatures(self) -> dict[str, float | None]:
        return {self.judge.role: self.judge.temperature}

    def judges(self):
        return [self.judge]

    def identity(self, client) -> Identity:
        from memeval.rundir import identity_hash

        return Identity(self.kind, fixed={"judge": {"name": self.judge.name, **self.judge.identity(client)},
                                          "sets": list(self.sets), "questions": self.config.get("questions"),
                                          "rows": identity_hash([r.to_row() for r in self.rows])})

    def command_line(self) -> list[str]:
        return self.command

    def public_config(self) -> dict:
        return self.config

    def units(self) -> Sequence[Unit]:
        by_set: dict[str, list[CalibrationAnswer]] = {}
        for row in self.rows:
            by_set.setdefault(row.system, []).append(row)
        return [Unit(tuple(r.key for r in rows), rows) for s in self.sets if (rows := by_set.get(s))]

    def answer(self, unit: Unit, todo, client) -> list:
        wanted = set(todo)
        return [r for r in unit.payload if r.key in wanted]

    def report(self, answers: list, judgments: list, notes: list[str], client) -> str:
        from memeval.reports.markdown import md_text

        self.leniency = measured(self.judge, client, judgments, self.sets, str(self.out))
        head = f"# Judge calibration: `{self.judge.name}`"
        return "\n\n".join([head, *[md_text(n) for n in notes], leniency_table(self.leniency, self.sets),
                            identity_line(self.leniency[0] if self.leniency else None)])

    def manifest_fields(self, answers: list, judgments: list, claimed, client) -> dict:
        return {"calibration": {"judge": self.judge.name, "sets": list(self.sets),
                                "leniency": [r.model_dump(mode="json") for r in self.leniency]}}

    def finish(self, outcome, client) -> None:
        from memeval.atomic import write_text_atomic
        from memeval.scoring.leniency import dumps, register

        write_text_atomic(self.out / CALIBRATION, dumps(self.leniency))
        if self.register_rates:
            register(self.out, self.leniency)


def measured(judge, client, judgments: Sequence[JudgmentRow], sets: Sequence[str], source: str) -> list[Leniency]:
    """Each set's rate from the usable judgments: a question counts its judge's mean over runs (binary and
    evermemos store 100 for an accepted run), so a rate is the per-run mean, as the audit reports its own."""
    identity = judge.identity(client) if client is not None else {}
    out = []
    for answer_set in sets:
        rows = [j for j in judgments if j.system == answer_set and j.mean is not None]
        if not rows:
            continue
        overall = Rate.of(sum(j.mean for j in rows) / 100, len(rows))
        by_category = {}
        for c in QA_CATEGORIES:
            in_category = [j.mean for j in rows if j.category == c]
            if in_category:
                by_category[c] = Rate.of(sum(in_category) / 100, len(in_category))
        out.append(Leniency(**overall.model_dump(), judge=judge.name, judge_model=identity.get("model"),
                            prompt_version=judge.version(),
                            prompt_source=identity.get("prompt_source") or "memeval's own prompt",
                            sampling=identity.get("sampling"), temperature_sent=identity.get("temperature_sent"),
                            endpoint=identity.get("endpoint"), runs=judge.runs, answer_set=answer_set,
                            by_category=by_category, source=source))
    return out


def leniency_table(rates: Sequence[Leniency], sets: Sequence[str] = ANSWER_SETS) -> str:
    """Answer sets down, overall and the four categories across: accepted % [Wilson 95%] and n; a set asked for
    and not measured says so."""
    from memeval.reports.markdown import markdown_table

    by_set = {r.answer_set: r for r in rates}
    header = ["answer set", "accepted (all)", *[category_label(c) for c in QA_CATEGORIES]]
    rows = []
    for answer_set in sets:
        r = by_set.get(answer_set)
        if r is None:
            rows.append([SET_WORDS[answer_set], "not measured", *["–"] * len(QA_CATEGORIES)])
            continue
        rows.append([SET_WORDS[answer_set], f"{r.text(2)} n={r.n}",
                     *[f"{r.by_category[c].text(2)} n={r.by_category[c].n}" if c in r.by_category else "–"
                       for c in QA_CATEGORIES]])
    return markdown_table(header, rows)


def identity_line(rate: Leniency | None) -> str:
    from memeval.reports.markdown import md_text

    if rate is None:
        return "No answer was judged: nothing is measured."
    return md_text(f"Judge {rate.judge}, model {rate.judge_model}, prompt {rate.prompt_version} "
                   f"({rate.prompt_source}), sampling {rate.sampling} (temperature sent {rate.temperature_sent}), "
                   + (f"endpoint {rate.endpoint}, " if rate.endpoint else "") +
                   f"{rate.runs} run(s) a question; source: {rate.source}. Rates are the per-run mean with "
                   "Wilson 95% intervals over the questions judged.")
