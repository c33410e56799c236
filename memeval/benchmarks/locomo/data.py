"""Typed LoCoMo records from any of the three published layouts.

The single-file list (`locomo10.json`), the per-conversation directory
(`locomo10_v2/26.json` ...) and the release zip all flatten to one dict shape
per conversation, which a single parser turns into records; so the layouts
cannot drift apart. Data quirks are repaired where unambiguous and counted,
never fatal.
"""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks.locomo.categories import CATEGORY_NAMES
from memeval.conversations import QA, Conversation, LoadReport, Observation, Session, Turn
from memeval.errors import InputError
from memeval.safe_json import load_json_bytes, read_bytes
from memeval.safe_paths import check_id
from memeval.zip_members import check_zip_members, read_zip_member

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_KEY = re.compile(r"session_(\d+)_date_time")
_OBS_KEY = re.compile(r"session_(\d+)_observation")
_SUMMARY_KEY = re.compile(r"session_(\d+)_summary")
_EVENTS_KEY = re.compile(r"events_session_(\d+)")
_ID_TOKEN_SPLIT = re.compile(r"[;,\s]+")
_REPAIRABLE_ID = re.compile(r"D:?(\d+):0*(\d+)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y")


def parse_date(text: str) -> datetime | None:
    cleaned = " ".join(text.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    return None


def _numeric_id(sample_id: str) -> tuple[int, str]:
    digits = re.findall(r"\d+", sample_id)
    return (int(digits[-1]) if digits else 10**9, sample_id)


def _require(value: Any, kind: type | tuple[type, ...], source: str, fieldname: str) -> Any:
    if value is None:
        raise InputError(source, fieldname, "missing")
    if not isinstance(value, kind) or isinstance(value, bool):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(source, fieldname, f"expected {want}, got {type(value).__name__}")
    return value


def _image_urls(raw: Any, where: str, fieldname: str) -> tuple[str, ...]:
    """A turn's images: none when the field is absent or empty (the paper's reader shares a caption only when the
    turn has an image), a list as is, one string as one image."""
    if raw is None or raw == "":
        return ()
    if isinstance(raw, str):
        return (raw,)
    return tuple(str(url) for url in _require(raw, list, where, fieldname))


def _session_keys(flat: dict, pattern: re.Pattern, where: str, sample_id: str, report: LoadReport
                  ) -> list[tuple[int, str]]:
    """(session number, key) of the keys `pattern` matches, in session order. `session_01` is session 1 (a quirk,
    counted); two keys naming one session (`session_01` beside `session_1`) are refused, naming both."""
    found: dict[int, str] = {}
    for key in flat:
        m = pattern.fullmatch(key)
        if m is None:
            continue
        index = int(m.group(1))
        if index in found:
            raise InputError(where, key, f"names the same session as {found[index]}; keep one")
        if m.group(1) != str(index):
            report.note("zero_padded_session_key", f"{sample_id} {key}")
        found[index] = key
    return sorted(found.items())


def resolve_ids(raw: Any, known: set[str], report: LoadReport, where: str) -> tuple[list[str], list[str]]:
    """Split, repair and resolve dia_id references; returns (resolved, unresolved)."""
    items = raw if isinstance(raw, list) else [raw]
    resolved: list[str] = []
    unresolved: list[str] = []
    for item in items:
        tokens = [t for t in _ID_TOKEN_SPLIT.split(str(item).strip()) if t]
        if len(tokens) > 1:
            report.note("multi_id_evidence_string", f"{where}: {item!r}")
        for token in tokens:
            if token in known:
                resolved.append(token)
                continue
            match = _REPAIRABLE_ID.fullmatch(token)
            repaired = f"D{int(match.group(1))}:{int(match.group(2))}" if match else None
            if repaired in known:
                report.note("repaired_evidence_id", f"{where}: {token} -> {repaired}")
                resolved.append(repaired)
            else:
                report.note("unresolvable_evidence_id", f"{where}: {token}")
                unresolved.append(token)
    return list(dict.fromkeys(resolved)), unresolved


def parse_conversation(flat: dict, sample_id: str, source: str, report: LoadReport) -> Conversation:
    """One conversation in the flattened shape (per-conversation layout) to records."""
    where = f"{source} [{sample_id}]"
    if not isinstance(flat, dict):
        raise InputError(where, "conversation", f"expected object, got {type(flat).__name__}")
    speaker_a = _require(flat.get("speaker_a"), str, where, "speaker_a")
    speaker_b = _require(flat.get("speaker_b"), str, where, "speaker_b")

    session_dates = {index: _require(flat[key], str, where, key)
                     for index, key in _session_keys(flat, _DATE_KEY, where, sample_id, report)}
    for pattern in (_OBS_KEY, _SUMMARY_KEY, _EVENTS_KEY):  # read below; two keys for one session refused here
        _session_keys(flat, pattern, where, sample_id, report)

    sessions: list[Session] = []
    session_keys = _session_keys(flat, _SESSION_KEY, where, sample_id, report)
    first_at: dict[str, str] = {}  # dia_id → the turn that holds it
    if not session_keys:
        raise InputError(where, "session_1", "no sessions")
    for index, key in session_keys:
        raw_turns = _require(flat[key], list, where, key)
        if not raw_turns:
            report.note("empty_session", f"{sample_id} {key}")
        turns = []
        for position, raw in enumerate(raw_turns):
            fieldname = f"{key}[{position}]"
            _require(raw, dict, where, fieldname)
            turns.append(
                Turn(
                    dia_id=_require(raw.get("dia_id"), str, where, f"{fieldname}.dia_id"),
                    speaker=_require(raw.get("speaker"), str, where, f"{fieldname}.speaker"),
                    text=_require(raw.get("text"), str, where, f"{fieldname}.text"),
                    session=index,
                    position=position,
                    img_url=_image_urls(raw.get("img_url"), where, f"{fieldname}.img_url"),
                    blip_caption=raw.get("blip_caption"),
                    query=raw.get("query"),
                )
            )
            dia_id = turns[-1].dia_id
            if dia_id in first_at:
                raise InputError(where, f"{fieldname}.dia_id", f"{dia_id} is also the id of {first_at[dia_id]}: "
                                 "evidence and memories name turns by dia_id, so two turns cannot share one")
            first_at[dia_id] = fieldname
        date_time = session_dates.get(index, "")
        if not date_time:
            report.note("session_without_date", f"{sample_id} {key}")
        date = parse_date(date_time) if date_time else None
        if date_time and date is None:
            report.note("unparsed_date", f"{sample_id} {key}: {date_time!r}")
        sessions.append(Session(index=index, date_time=date_time, date=date, turns=tuple(turns)))
    with_content = {s.index for s in sessions}
    for index in sorted(session_dates):
        if index not in with_content:
            report.note("date_without_session", f"{sample_id} session_{index}_date_time")

    known = {t.dia_id for s in sessions for t in s.turns}
    qa_list = _require(flat.get("qa"), list, where, "qa")
    qa: list[QA] = []
    for i, raw in enumerate(qa_list):
        fieldname = f"qa[{i}]"
        _require(raw, dict, where, fieldname)
        question = _require(raw.get("question"), str, where, f"{fieldname}.question")
        category = _require(raw.get("category"), int, where, f"{fieldname}.category")
        if category not in CATEGORY_NAMES:
            raise InputError(where, f"{fieldname}.category", f"unknown category {category}")
        answer = raw.get("answer")
        if answer is None:
            if category != 5:
                raise InputError(where, f"{fieldname}.answer", "missing")
            report.note("adversarial_answer_only", f"{sample_id} {fieldname}")
        elif not isinstance(answer, str):
            if isinstance(answer, bool) or not isinstance(answer, (int, float)):
                raise InputError(where, f"{fieldname}.answer", f"expected string, got {type(answer).__name__}")
            report.note("integer_answer", f"{sample_id} {fieldname}: {answer!r}")
            answer = str(answer)
        evidence_raw = raw.get("evidence", [])
        _require(evidence_raw, list, where, f"{fieldname}.evidence")
        if not evidence_raw:
            report.note("empty_evidence", f"{sample_id} {fieldname}")
        resolved, unresolved = resolve_ids(evidence_raw, known, report, f"{sample_id} {fieldname}")
        adversarial = raw.get("adversarial_answer")
        qa.append(
            QA(
                sample_id=f"{sample_id}:q{i:04d}",
                conversation_id=sample_id,
                index=i,
                question=question,
                answer=answer,
                category=category,
                evidence=tuple(str(e) for e in evidence_raw),
                evidence_ids=tuple(resolved),
                unresolved_evidence=tuple(unresolved),
                adversarial_answer=None if adversarial is None else str(adversarial),
            )
        )

    observations: list[Observation] = []
    summaries: dict[int, str] = {}
    events: dict[int, dict] = {}
    for key in sorted(flat, key=lambda k: (len(k), k)):
        value = flat[key]
        if m := _OBS_KEY.fullmatch(key):
            _require(value, dict, where, key)
            for speaker, facts in value.items():
                for j, item in enumerate(_require(facts, list, where, f"{key}.{speaker}")):
                    if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
                        report.note("malformed_observation", f"{sample_id} {key}.{speaker}[{j}]")
                        continue
                    ids, _ = resolve_ids(item[1], known, report, f"{sample_id} {key}.{speaker}[{j}]")
                    observations.append(Observation(int(m.group(1)), speaker, item[0], tuple(ids)))
        elif m := _SUMMARY_KEY.fullmatch(key):
            summaries[int(m.group(1))] = _require(value, str, where, key)
        elif m := _EVENTS_KEY.fullmatch(key):
            events[int(m.group(1))] = _require(value, dict, where, key)
    observations.sort(key=lambda o: o.session)

    return Conversation(
        sample_id=sample_id,
        speaker_a=speaker_a,
        speaker_b=speaker_b,
        sessions=tuple(sessions),
        qa=tuple(qa),
        observations=tuple(observations),
        session_summaries=dict(sorted(summaries.items())),
        event_summaries=dict(sorted(events.items())),
        session_dates=dict(sorted(session_dates.items())),
    )


def _flatten_sample(sample: Any, source: str, position: int) -> tuple[str, dict]:
    """A `locomo10.json` list entry to (sample_id, per-conversation dict)."""
    where = f"{source} [{position}]"
    _require(sample, dict, where, "sample")
    sample_id = _require(sample.get("sample_id"), str, where, "sample_id")
    conversation = _require(sample.get("conversation"), dict, f"{source} [{sample_id}]", "conversation")
    flat = dict(conversation)
    flat["qa"] = sample.get("qa")
    for key in ("observation", "session_summary", "event_summary"):
        part = sample.get(key) or {}
        _require(part, dict, f"{source} [{sample_id}]", key)
        flat.update(part)
    return sample_id, flat


def _parse_json_bytes(data: bytes, source: str) -> Any:
    return load_json_bytes(data, source, "json")


def _from_documents(docs: list[tuple[str, Any]], report: LoadReport) -> list[Conversation]:
    """docs: (name, parsed JSON) pairs; a list is the single-file layout, a dict one conversation."""
    flats: list[tuple[str, dict, str]] = []
    for name, doc in docs:
        if isinstance(doc, list):
            for position, sample in enumerate(doc):
                sample_id, flat = _flatten_sample(sample, name, position)
                flats.append((sample_id, flat, name))
        elif isinstance(doc, dict):
            if "conversation" in doc and "sample_id" in doc:
                sample_id, flat = _flatten_sample(doc, name, 0)
            else:
                stem = Path(name).stem
                sample_id = stem if stem.startswith("conv-") else f"conv-{stem}"
                flat = doc
            flats.append((sample_id, flat, name))
        else:
            raise InputError(name, "json", f"expected a list or an object, got {type(doc).__name__}")
    for sample_id, _, name in flats:  # ids become file names (natural packages): no path, no NUL, no `+`
        check_id(sample_id, name, "sample_id")
    if not flats:
        raise InputError(report.source, "conversations", "no conversations in the data")
    seen = Counter(s for s, _, _ in flats)
    dupes = [s for s, n in seen.items() if n > 1]
    if dupes:
        names = list(dict.fromkeys(name for s, _, name in flats if s == dupes[0]))
        raise InputError(report.source, "sample_id", f"duplicate conversation {dupes[0]} (in "
                         + (" and ".join(names[:2]) if len(names) > 1 else f"{names[0]}, twice") + ")")
    flats.sort(key=lambda item: _numeric_id(item[0]))
    return [parse_conversation(flat, sample_id, name, report) for sample_id, flat, name in flats]


def _per_conversation(name: str) -> bool:
    stem = Path(name).stem
    return stem.isdigit() or stem.startswith("conv-")


def _one_layout(source: Path, single: list[str], per_conversation: list[str]) -> None:
    """Refuse data holding the conversations twice over (two `locomo10.json`, or one beside per-conversation files):
    which copy is meant cannot be told, and loading one would hide the other."""
    if len(single) > 1:
        raise InputError(source, "layout", f"holds two locomo10.json ({single[0]} and {single[1]}); keep one")
    if single and per_conversation:
        more = f" and {len(per_conversation) - 1} more" if len(per_conversation) > 1 else ""
        raise InputError(source, "layout", f"mixes two layouts: {single[0]} and per-conversation files "
                         f"({per_conversation[0]}{more}); keep one")


def _only_one(source: Path, what: str, found: list[Path]) -> Path:
    """The one subdirectory (or zip) holding LoCoMo files; two are refused, naming both."""
    if len(found) > 1:
        raise InputError(source, what, f"{len(found)} hold LoCoMo files ({found[0].name} and {found[1].name}); pass "
                         "--data with the one meant")
    return found[0]


def _zip_documents(path: Path) -> tuple[str, list[tuple[str, Any]]]:
    data = read_bytes(path, "zip", kind="zip")  # a regular file within the zip limit, read once
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        problem = "not a valid zip archive" if isinstance(exc, zipfile.BadZipFile) else f"cannot be read ({exc})"
        raise InputError(path, "zip", problem) from None
    with archive:
        members = [n for n in archive.namelist() if n.endswith(".json") and not n.startswith("__MACOSX")]
        single = [n for n in members if Path(n).name == "locomo10.json"]
        per_conversation = [n for n in members if _per_conversation(n)]
        _one_layout(path, single, per_conversation)
        chosen = single or per_conversation
        if not chosen:
            raise InputError(path, "zip", "holds neither locomo10.json nor per-conversation files")
        check_zip_members(archive, chosen, path)
        layout = "zip:single-file" if single else "zip:per-conversation"
        return layout, [(f"{path}!{n}", _parse_json_bytes(read_zip_member(archive, n, path), f"{path}!{n}"))
                        for n in chosen]


def _directory_documents(path: Path) -> tuple[str, list[tuple[str, Any]]]:
    single = path / "locomo10.json"
    _one_layout(path, [single.name] if single.is_file() else [],
                sorted(p.name for p in path.glob("*.json") if _per_conversation(p.name)))
    if single.is_file():
        return "single-file", [(str(single), _parse_json_bytes(read_bytes(single, kind="locomo"), str(single)))]
    files = sorted(p for p in path.glob("*.json") if p.stem.isdigit() or p.stem.startswith("conv-"))
    if files:
        return "per-conversation", [(str(p), _parse_json_bytes(read_bytes(p, kind="locomo"), str(p))) for p in files]
    subs = [sub for sub in sorted(p for p in path.iterdir() if p.is_dir())
            if any(p.name == "locomo10.json" or _per_conversation(p.name) for p in sub.glob("*.json"))]
    if subs:
        return _directory_documents(_only_one(path, "directory", subs))
    zips = sorted(path.glob("*.zip"))
    if zips:
        return _zip_documents(_only_one(path, "zip", zips))
    raise InputError(path, "directory", "no locomo10.json, per-conversation JSON files or zip found")


def load_locomo_with_report(path: str | Path) -> tuple[list[Conversation], LoadReport]:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "path", "does not exist")
    if path.is_dir():
        layout, docs = _directory_documents(path)
    elif path.suffix == ".zip":
        layout, docs = _zip_documents(path)
    else:
        docs = [(str(path), _parse_json_bytes(read_bytes(path, kind="locomo"), str(path)))]
        layout = "single-file" if isinstance(docs[0][1], list) else "per-conversation"
    report = LoadReport(source=str(path), layout=layout)
    return _from_documents(docs, report), report


def load_locomo(path: str | Path) -> list[Conversation]:
    return load_locomo_with_report(path)[0]


def load_locomo_bytes(data: bytes, name: str = "locomo10.json") -> list[Conversation]:
    """Parse an in-memory file (a download is checked this way before it is kept)."""
    if name.endswith(".zip"):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            return load_locomo(path)
    report = LoadReport(source=name, layout="bytes")
    return _from_documents([(name, _parse_json_bytes(data, name))], report)


def stats(conversations: list[Conversation]) -> dict:
    by_category = Counter(q.category for c in conversations for q in c.qa)
    return {
        "conversations": len(conversations),
        "questions": sum(len(c.qa) for c in conversations),
        "by_category": {str(k): by_category[k] for k in sorted(by_category)},
        "turns": sum(len(s.turns) for c in conversations for s in c.sessions),
        "sessions": sum(len(c.sessions) for c in conversations),
    }
