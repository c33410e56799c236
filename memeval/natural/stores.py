"""Memory stores exported by other systems, read into memory items so that MEMAUDIT can audit them as union
packages beside the built-in stores (`memeval natural union`).

A store file is a JSON object keyed by LoCoMo conversation id (`conv-26`) or index in locomo10.json (`0`), each
the list that system exported for that conversation, in one of these shapes:
- `mem0`: what Mem0's `get_all()` returns — items with `memory`, `created_at`, `updated_at`, `metadata` (a
  `{"results": [...]}` wrapper is accepted too);
- `letta`: archival-memory passages with `text` and `created_at`;
- `amem`: A-Mem notes with `content`, `keywords`, `tags`, `context`, `timestamp`;
- `memeval`: items with `text`, `source_ids`, optional `time` and `kind` (a built-in system's `export()`).

Only `memeval` items say which turns they came from. The others are attributed to turns by content: a memory
is credited to the turns of its conversation that share the most content words with it (stemmed, stop words
out), at least two and at least half of the memory's own; a memory no turn reaches stays unattributed and never
covers anything. The share attributed this way is reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memeval.conversations import Conversation
from memeval.errors import InputError
from memeval.memory.base import MemoryItem
from memeval.rundir import RunDir

STORE_FORMATS = ("memeval", "mem0", "letta", "amem")
MIN_SHARED = 2
MIN_SHARE = 0.5


@dataclass
class AttributionReport:
    items: int = 0
    given: int = 0  # items that named their source turns
    attributed: int = 0  # items credited to turns by content
    unattributed: int = 0
    examples: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        share = self.attributed / self.items if self.items else None
        return {"items": self.items, "with_source_ids": self.given, "attributed_by_content": self.attributed,
                "unattributed": self.unattributed, "share_attributed_by_content": share,
                "rule": f"turns sharing the most content words, at least {MIN_SHARED} and at least "
                        f"{MIN_SHARE:.0%} of the memory's own", "examples": self.examples[:5]}


def _field(item: dict, name: str, where: str, kinds=(str,)) -> object:
    if name not in item:
        raise InputError(where, name, "missing")
    if not isinstance(item[name], kinds):
        raise InputError(where, name, f"expected {' or '.join(k.__name__ for k in kinds)}")
    return item[name]


def _text_time(item: dict, fmt: str, where: str) -> tuple[str, str, tuple[str, ...] | None, str]:
    """(text, time, source ids when the item names them, kind)."""
    if fmt == "mem0":
        return str(_field(item, "memory", where)), str(item.get("updated_at") or item.get("created_at") or ""), \
            None, "mem0"
    if fmt == "letta":
        return str(_field(item, "text", where)), str(item.get("created_at") or ""), None, "letta"
    if fmt == "amem":
        content = str(_field(item, "content", where))
        context = item.get("context")
        text = content if not context or context == "General" else f"{content} ({context})"
        return text, str(item.get("timestamp") or ""), None, "amem"
    text = str(_field(item, "text", where))
    sources = _field(item, "source_ids", where, (list,))
    if not all(isinstance(s, str) for s in sources):
        raise InputError(where, "source_ids", "expected turn ids (strings)")
    return text, str(item.get("time") or ""), tuple(sources), str(item.get("kind") or "memory")


def read_store(path: str | Path, fmt: str, conversations: Sequence[Conversation]) -> tuple[
        dict[str, list[MemoryItem]], AttributionReport]:
    """conversation id → the store's memory items (with source turns, given or attributed), and the report."""
    from memeval.memory.render import turn_text
    from memeval.natural.rules import content_tokens

    if fmt not in STORE_FORMATS:
        raise InputError("--format", fmt, f"expected one of {', '.join(STORE_FORMATS)}")
    from memeval.safe_json import load_json_file

    path = Path(path)
    if not path.exists():
        raise InputError(path, "store", "no such file")
    doc = load_json_file(path, "json", kind="store")
    if not isinstance(doc, dict) or not doc:
        raise InputError(path, "top level", "expected an object keyed by conversation id (conv-26) or index (0)")
    by_id = {c.sample_id: c for c in conversations}
    report = AttributionReport()
    out: dict[str, list[MemoryItem]] = {}
    for key, items in doc.items():
        index = int(key) if re.fullmatch(r"[0-9]{1,6}", key) else None  # ASCII digits only: "²".isdigit()
        conversation = by_id.get(key) or (conversations[index] if index is not None
                                          and index < len(conversations) else None)
        if conversation is None:
            raise InputError(path, f"[{key!r}]", "not a LoCoMo conversation id or index")
        if fmt == "mem0" and isinstance(items, dict) and "results" in items:
            items = items["results"]
        if isinstance(items, dict):  # A-Mem keeps notes by id
            items = list(items.values())
        if not isinstance(items, list):
            raise InputError(path, f"[{key!r}]", "expected a list of exported memories")
        turns = [(t.dia_id, content_tokens(turn_text(t))) for s in conversation.sessions for t in s.turns]
        known = {t for t, _ in turns}
        memories = []
        for i, item in enumerate(items):
            where = f"{path}[{key!r}][{i}]"
            if not isinstance(item, dict):
                raise InputError(where, "item", "expected an object")
            text, time, sources, kind = _text_time(item, fmt, where)
            report.items += 1
            if sources is not None:
                unknown = [s for s in sources if s not in known]
                if unknown:
                    raise InputError(where, "source_ids", f"not turns of {conversation.sample_id}: {unknown[:3]}")
                report.given += 1
            else:
                sources = _attribute(content_tokens(text), turns)
                if sources:
                    report.attributed += 1
                else:
                    report.unattributed += 1
                    report.examples.append(f"{where}: no turn shares enough words with {text[:60]!r}")
            memories.append(MemoryItem(text, 0.0, sources, time, kind))
        out[conversation.sample_id] = memories
    return out, report


def _attribute(words: frozenset[str], turns: list[tuple[str, frozenset[str]]]) -> tuple[str, ...]:
    if not words:
        return ()
    shared = [(len(words & tokens), dia_id) for dia_id, tokens in turns]
    best = max((n for n, _ in shared), default=0)
    if best < MIN_SHARED or best < MIN_SHARE * len(words):
        return ()
    return tuple(dia_id for n, dia_id in shared if n == best)


def union_from_store(packages_dir: str | Path, store: str | Path, fmt: str, system: str, out: str | Path,
                     data: str | None = None) -> dict:
    """Union packages of `system`'s exported store beside every natural package of `packages_dir`, written to
    `out/union/` (the base packages are copied to `out` when it is another directory), so that `memeval
    memaudit sweep natural --packages OUT` scores them with the built-in stores."""
    import shutil

    from memeval.atomic import write_json_atomic
    from memeval.invocation import invocation, path_text
    from memeval.natural.build import load_packages
    from memeval.natural.source import sources_in
    from memeval.natural.union import EXPORT_SYSTEMS, union_package
    from memeval.safe_paths import check_id, inside

    check_id(system, "--system", "system")  # it names files: union/<package>+<system>.json
    if system in EXPORT_SYSTEMS or system == "memory_graph":
        raise InputError("--system", system, "is a built-in store's name; name the imported system differently")
    packages_dir, out = Path(packages_dir), Path(out)
    bases = load_packages(packages_dir)
    sources = sources_in(packages_dir)
    without = [s.name for s in sources if s.conversations is None]
    if without:
        raise InputError(packages_dir, "packages", f"{without[0]}'s natural packages take no union (they have no "
                         "conversation to attribute a store's memories to)")
    conversations = sources[0].conversations(data)
    stores, report = read_store(store, fmt, conversations)
    by_id = {c.sample_id: c for c in conversations}
    unions = []
    for base in bases:
        conversation_id = base.meta.get("conversation")
        if not isinstance(conversation_id, str):  # a dict key below; LongMemEval packages have none
            raise InputError(f"{packages_dir} [{base.package_id}]", "meta.conversation",
                             f"expected a LoCoMo conversation id, got {type(conversation_id).__name__}")
        if conversation_id in stores:
            unions.append(union_package(base, by_id[conversation_id], system, store=stores[conversation_id]))
    if not unions:
        raise InputError(store, "conversations", "the store holds none of the packages' conversations "
                         f"({', '.join(sorted({b.meta['conversation'] for b in bases}))})")
    targets = {u.package_id: inside(out, f"union/{u.package_id}.json") for u in unions}  # before any write
    if out.resolve() != packages_dir.resolve():
        out.mkdir(parents=True, exist_ok=True)
        for path in packages_dir.glob("locomo-natural-*.json"):
            shutil.copyfile(path, out / path.name)
        if (packages_dir / "union").is_dir():
            (out / "union").mkdir(exist_ok=True)
            for path in (packages_dir / "union").glob("*.json"):
                shutil.copyfile(path, out / "union" / path.name)
        if RunDir(packages_dir).manifest.is_file():  # the build's manifest (complete: true) travels with it
            shutil.copyfile(RunDir(packages_dir).manifest, RunDir(out).manifest)
    line = ["memeval", "natural", "union", "--packages", path_text(packages_dir), "--store", path_text(store),
            "--format", fmt, "--system", system, *(["--data", path_text(data)] if data else []),
            "--out", path_text(out)]
    manifest_path = out / "imported_stores.json"
    recorded = read_imported(manifest_path)
    entry = {"source": str(store), "format": fmt, "sha256": _sha256(Path(store)), "union_packages": len(unions),
             "attribution": report.as_dict(), **invocation(line)}
    # A second import under one system replaces that system's union packages whole: its packages a store no
    # longer covers go, so a sweep never scores what the first store wrote beside what the second did. Marked
    # unfinished first, so a sweep refuses the directory until the import has written everything.
    from memeval.records import PackageId

    stale = [p for p in sorted((out / "union").glob("*.json")) if PackageId.parse(p.stem).system == system
             and p.name not in {f"{u.package_id}.json" for u in unions}]
    previous = recorded.get(system)
    if previous is not None:
        entry["replaced"] = {k: previous.get(k) for k in ("source", "format", "sha256", "union_packages")}
    write_json_atomic(manifest_path, {**recorded, system: {**entry, "complete": False}})
    for package in unions:
        package.write(targets[package.package_id])
    for path in stale:
        path.unlink()
    write_json_atomic(manifest_path, {**recorded, system: {**entry, "complete": True}})
    return {"system": system, "union_packages": len(unions), "attribution": report.as_dict(),
            "replaced": entry.get("replaced"), "removed": len(stale)}


def _sha256(path: Path) -> str:
    import hashlib

    from memeval.input_files import read_input

    return hashlib.sha256(read_input(path, "store")).hexdigest()


def read_imported(path: Path) -> dict:
    """`imported_stores.json` (system → what was imported), {} when absent; a malformed one is one line."""
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(path, "imported stores", "not valid JSON; move it aside and rerun the imports") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise InputError(path, "imported stores", "expected an object of system → import; move it aside and rerun "
                         "the imports")
    return doc


def unfinished_imports(directory: Path) -> list[str]:
    """Systems whose union import into `directory` began and did not finish (`complete: false`)."""
    return sorted(s for s, e in read_imported(Path(directory) / "imported_stores.json").items()
                  if e.get("complete") is False)
