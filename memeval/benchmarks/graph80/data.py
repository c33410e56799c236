"""graph80: a deterministic synthetic corpus rendered from a hidden ground-truth graph (memory-systems.md §4).

A seeded world of 20 people, 10 projects, 10 tools and 8 companies. Documents: one profile per person (work
history, technology preferences, social ties), one set of meeting notes per project (owner, phase dates,
dependencies, decision reasons) and one technology-selection discussion per project (candidates, final choice,
reason for replacing a legacy tool). Documents cross-reference each other: a person leads a project, the
project depends on a tool, the tool is in its creator's profile. Every stated fact is a gold triple citing the
paragraph that states it; questions (80: 20 per type) carry the gold answer, gold entities and gold path, and
never enter any memory.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memeval.atomic import write_jsonl_atomic

FIRST = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Gustavo", "Hana", "Ivan", "Jia", "Kofi", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Kowalski", "Ferreira", "Nguyen", "Schmidt",
        "Rahman", "Costa", "Ivanova", "Mensah", "Delgado", "Brennan", "Sato", "Varga", "Osei", "Novak", "Ruiz"]
COMPANIES = ["Northwind Labs", "Bluepeak Systems", "Orchid Analytics", "Ironbridge Bank", "Cobalt Health",
             "Lumen Logistics", "Redfern Media", "Tidewater Energy"]
PROJECTS = ["Falcon", "Juniper", "Atlas", "Beacon", "Cascade", "Ember", "Harbor", "Kestrel", "Meridian", "Quarry"]
TOOLS = ["Gridlock", "Pathfinder", "Sundial", "Ledgerline", "Quickstep", "Foghorn", "Tessera", "Wayfarer",
         "Brightwire", "Murmur"]
DB_KINDS = ["relational databases", "document stores", "graph databases", "key-value stores", "time-series databases"]
LANGUAGES = ["Python", "Go", "Rust", "Kotlin", "TypeScript", "Elixir"]
PHASES = ["design", "testing", "beta", "production"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
REASONS = ["it scaled better under load", "its licence was cheaper", "the team already knew it well",
           "it had better observability", "its vendor support was more reliable", "it cut latency in half"]
CANDIDATE_POOL = ["PostgreSQL", "MongoDB", "Neo4j", "Redis", "Cassandra", "ClickHouse", "DynamoDB", "MySQL"]
QUESTION_TYPES = ("fact", "preference", "relation", "multi-hop")


@dataclass(frozen=True)
class GoldTriple:
    subject: str
    relation: str
    object: str
    source_id: str
    time: str


@dataclass
class Document:
    id: str
    kind: str
    title: str
    date: str
    paragraphs: list[str] = field(default_factory=list)

    def as_row(self) -> dict:
        return {"id": self.id, "kind": self.kind, "title": self.title, "date": self.date,
                "paragraphs": [{"id": f"{self.id}:p{i}", "text": t} for i, t in enumerate(self.paragraphs)]}


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    question: str
    answer: str
    gold_entities: tuple[str, ...]
    gold_path: tuple[tuple[str, str, str], ...]

    def as_row(self) -> dict:
        row = asdict(self)
        row["gold_entities"] = list(self.gold_entities)
        row["gold_path"] = [list(t) for t in self.gold_path]
        return row


class _Writer:
    """Collects paragraphs and the gold triples each one states."""

    def __init__(self, doc: Document, triples: list[GoldTriple]):
        self.doc, self.triples = doc, triples

    def paragraph(self, text: str, facts: list[tuple[str, str, str]]) -> None:
        source = f"{self.doc.id}:p{len(self.doc.paragraphs)}"
        self.doc.paragraphs.append(text)
        self.triples.extend(GoldTriple(s, r, o, source, self.doc.date) for s, r, o in facts)


def _pick(rng: random.Random, options):
    return options[rng.randrange(len(options))]


def generate_graph80(seed: int = 0) -> tuple[list[Document], list[Question], list[GoldTriple]]:
    rng = random.Random(seed)
    names = rng.sample([f"{first} {last}" for first in FIRST for last in LAST], 20)
    people = []
    for name in names:
        jobs = rng.sample(COMPANIES, 3)
        starts = sorted(rng.sample(range(2008, 2022), 3))
        people.append({"name": name, "jobs": list(zip(jobs, starts, strict=True)), "db": _pick(rng, DB_KINDS),
                       "language": _pick(rng, LANGUAGES)})
    projects = []
    months = rng.sample([(p, m) for p in PHASES for m in MONTHS], len(PROJECTS))
    leads = rng.sample(range(20), len(PROJECTS))
    creators = rng.sample([i for i in range(20) if i not in leads], len(TOOLS))
    deps = rng.sample(range(len(TOOLS)), len(PROJECTS))
    for j, project in enumerate(PROJECTS):
        candidates = rng.sample(CANDIDATE_POOL, 3)
        legacy = (deps[j] + 1 + rng.randrange(len(TOOLS) - 1)) % len(TOOLS)
        projects.append({"name": project, "lead": leads[j], "phase": months[j][0], "month": months[j][1],
                         "tool": TOOLS[deps[j]], "candidates": candidates, "choice": _pick(rng, candidates),
                         "reason": _pick(rng, REASONS), "legacy": TOOLS[legacy], "year": 2024})
    tool_creator = {TOOLS[t]: names[creators[t]] for t in range(len(TOOLS))}
    # social ties: each person knows two others
    ties = {i: rng.sample([k for k in range(20) if k != i], 2) for i in range(20)}

    documents, triples = [], []
    for i, person in enumerate(people):
        doc = Document(f"profile-{i:02d}", "profile", f"Profile: {person['name']}", f"2024-0{1 + i % 9}-15")
        w = _Writer(doc, triples)
        first = person["name"].split()[0]
        pro = first
        history = []
        facts = []
        for company, start in person["jobs"]:
            phrasing = _pick(rng, ["joined {c} in {y}", "spent a few years at {c} starting in {y}",
                                   "worked at {c} from {y}", "moved to {c} in {y}"])
            history.append(phrasing.format(c=company, y=start))
            facts.append((person["name"], "worked at", company))
        w.paragraph(f"{person['name']} " + ", then ".join(history[:2]) + f", and most recently {history[2]}.",
                    facts)
        built = [t for t, c in tool_creator.items() if c == person["name"]]
        if built:
            tool = built[0]
            w.paragraph(_pick(rng, [f"At {person['jobs'][-1][0]}, {first} created {tool}, an internal tool "
                                    "other teams still rely on.",
                                    f"{pro} is the original author of {tool}; the résumé lists it as "
                                    "their main open-source work.",
                                    f"{tool} was built by {first} and is now maintained by a small team."]),
                        [(tool, "created by", person["name"])])
        w.paragraph(_pick(rng, [f"When it comes to storage, {first} prefers {person['db']} and writes most "
                                f"services in {person['language']}.",
                                f"{pro} favours {person['db']} for new systems, and {person['language']} is "
                                "the language of choice.",
                                f"Ask {first} about data stores and you will hear about {person['db']}; "
                                f"day to day {first} codes in {person['language']}."]),
                    [(person["name"], "prefers database", person["db"]),
                     (person["name"], "prefers language", person["language"])])
        friends = [names[k] for k in ties[i]]
        w.paragraph(_pick(rng, [f"{first} often pairs with {friends[0]} and mentors {friends[1]}.",
                                f"Close collaborators include {friends[0]} and {friends[1]}.",
                                f"{pro} keeps in touch with {friends[0]} and {friends[1]} from earlier jobs."]),
                    [(person["name"], "knows", friends[0]), (person["name"], "knows", friends[1])])
        documents.append(doc)

    for j, p in enumerate(projects):
        lead = names[p["lead"]]
        month_index = MONTHS.index(p["month"]) + 1
        doc = Document(f"meeting-{j:02d}", "meeting", f"Meeting notes: Project {p['name']}",
                       f"{p['year']}-{month_index:02d}-0{1 + j % 9}")
        w = _Writer(doc, triples)
        w.paragraph(_pick(rng, [f"Project {p['name']} sync. Owner: {lead}.",
                                f"Weekly review of Project {p['name']}, chaired by its lead, {lead}.",
                                f"{lead}, who leads Project {p['name']}, opened the meeting."]),
                    [(lead, "leads", f"Project {p['name']}")])
        w.paragraph(_pick(rng, [f"Status: the project entered {p['phase']} in {p['month']}.",
                                f"{p['name']} moved into {p['phase']} in {p['month']} as planned.",
                                f"We confirmed that {p['name']} reached the {p['phase']} phase in {p['month']}."]),
                    [(f"Project {p['name']}", f"entered {p['phase']} in", p["month"])])
        w.paragraph(_pick(rng, [f"Dependencies: {p['name']} depends on {p['tool']} for its data pipeline.",
                                f"The team noted that {p['name']} cannot ship without {p['tool']}.",
                                f"{p['tool']} remains the main dependency of {p['name']}."]),
                    [(f"Project {p['name']}", "depends on", p["tool"])])
        documents.append(doc)
        doc = Document(f"discussion-{j:02d}", "discussion", f"Technology selection for Project {p['name']}",
                       doc.date)
        w = _Writer(doc, triples)
        a, b, c = p["candidates"]
        w.paragraph(f"{lead}: For {p['name']} we are comparing {a}, {b} and {c}.",
                    [(f"Project {p['name']}", "considered", x) for x in p["candidates"]])
        w.paragraph(_pick(rng, [f"Reviewer: {a} looks solid, but what about operations cost?",
                                f"Reviewer: I worry {b} will be hard to run on call.",
                                f"Reviewer: has anyone benchmarked {c} at our volume?"]), [])
        w.paragraph(_pick(rng, [f"{lead}: Decision made: {p['choice']}, because {p['reason']}.",
                                f"{lead}: We are going with {p['choice']} since {p['reason']}.",
                                f"{lead}: Final choice is {p['choice']}; {p['reason']}."]),
                    [(f"Project {p['name']}", "chose", p["choice"])])
        w.paragraph(_pick(rng, [f"{lead}: It also replaces {p['legacy']}, the legacy system we inherited.",
                                f"{lead}: This retires {p['legacy']}, which nobody wants to maintain.",
                                f"{lead}: {p['legacy']} gets replaced as part of the same change."]),
                    [(f"Project {p['name']}", "replaces", p["legacy"])])
        documents.append(doc)

    questions = _questions(rng, people, projects, names, tool_creator)
    return documents, questions, triples


def _questions(rng, people, projects, names, tool_creator) -> list[Question]:
    out: list[Question] = []
    for j, p in enumerate(projects):
        project = f"Project {p['name']}"
        out.append(Question(f"fact-{j:02d}", "fact", f"Which project entered {p['phase']} in {p['month']}?",
                            project, (project,), ((project, f"entered {p['phase']} in", p["month"]),)))
    for j, p in enumerate(projects):
        project = f"Project {p['name']}"
        out.append(Question(f"fact-{10 + j:02d}", "fact", f"Which legacy system does {project} replace?",
                            p["legacy"], (p["legacy"],), ((project, "replaces", p["legacy"]),)))
    for i, person in enumerate(people):
        out.append(Question(f"preference-{i:02d}", "preference",
                            f"Which kind of database does {person['name']} prefer?", person["db"],
                            (person["name"], person["db"]), ((person["name"], "prefers database", person["db"]),)))
    pairs = []
    for a in range(20):
        for b in range(a + 1, 20):
            shared = {c for c, _ in people[a]["jobs"]} & {c for c, _ in people[b]["jobs"]}
            if len(shared) == 1:
                pairs.append((a, b, shared.pop()))
    for n, (a, b, company) in enumerate(rng.sample(pairs, 20)):
        out.append(Question(f"relation-{n:02d}", "relation",
                            f"At which company did {names[a]} and {names[b]} both work?", company,
                            (names[a], names[b], company),
                            ((names[a], "worked at", company), (names[b], "worked at", company))))
    for n in range(20):
        p = projects[n % len(projects)]
        lead = names[p["lead"]]
        creator = tool_creator[p["tool"]]
        if n < 10:
            text, answer = f"Whose tool does the project that {lead} leads depend on?", creator
            path = ((lead, "leads", f"Project {p['name']}"), (f"Project {p['name']}", "depends on", p["tool"]),
                    (p["tool"], "created by", creator))
            entities = (f"Project {p['name']}", p["tool"], creator)
        else:
            text = f"Which kind of database does the creator of the tool Project {p['name']} depends on prefer?"
            db = next(x["db"] for x in people if x["name"] == creator)
            answer = db
            path = ((f"Project {p['name']}", "depends on", p["tool"]), (p["tool"], "created by", creator),
                    (creator, "prefers database", db))
            entities = (p["tool"], creator, db)
        out.append(Question(f"multi-hop-{n:02d}", "multi-hop", text, answer, entities, path))
    return out


def write_corpus(out: str | Path, seed: int) -> dict:
    documents, questions, triples = generate_graph80(seed)
    out = Path(out)
    write_jsonl_atomic(out / "documents.jsonl", [d.as_row() for d in documents])
    write_jsonl_atomic(out / "questions.jsonl", [q.as_row() for q in questions])
    write_jsonl_atomic(out / "triples.jsonl", [vars(t) for t in triples])
    return {"seed": seed, "documents": len(documents), "questions": len(questions), "triples": len(triples)}
