"""The conversations a LoCoMo-Plus run's rows were asked over, rebuilt for `memeval view` from what the run recorded:
LoCoMo's (its questions') and each Cognitive item's stitched conversation, under its own id ("conv-26.plus-0003"),
so the page shows the cue's turns and date of every item, even where two items went into one conversation and
their cues share turn ids. Without the recorded items file, or with one whose SHA-256 is not the run's, only
LoCoMo's conversations are given and a cue's turns show their ids."""

from __future__ import annotations

from pathlib import Path

from memeval.benchmarks.locomo.data import load_locomo
from memeval.benchmarks.locomo_plus import data as plus
from memeval.benchmarks.locomo_plus.datasets import ITEMS_FILE
from memeval.conversations import Conversation


def _recorded_items(manifest: dict) -> tuple[Path | None, str | None]:
    """The run's locomo_plus.json, where the manifest says it was (a relative path also against the project root),
    if it still holds the bytes the run read; else None and why (None where the manifest records no items file)."""
    from memeval.data.fetch import sha256_file
    from memeval.data.paths import project_root

    data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    text, hashes = data.get("items"), data.get("sha256")
    if not isinstance(text, str) or not text or not isinstance(hashes, dict):
        return None, None
    recorded = hashes.get(ITEMS_FILE)
    present = [path for path in (Path(text), project_root() / text) if path.is_file()]
    changed = []
    for path in present:
        actual = sha256_file(path)
        if actual == recorded:
            return path, None
        changed.append((path, actual))
    unusable = "so each Cognitive item's cue turns show their ids only: \"(turn text not available)\""
    if changed:
        path, actual = changed[0]
        return None, (f"{path}: its SHA-256 ({actual[:12]}…) differs from the run's ({str(recorded)[:12]}…): the "
                      f"items file changed since the run, {unusable}")
    return None, f"{text}: the run's items file is not found, {unusable}"


def run_conversations(path: str | Path, manifest: dict, notes: list[str] | None = None) -> list[Conversation]:
    """LoCoMo's conversations from `path`, then the stitched conversation of every item the run asked, placed by the
    rule, seed, item count and conversations its identity records; why the items could not be rebuilt goes into
    `notes`."""
    from memeval.benchmarks.locomo_plus.task import item_count

    conversations = load_locomo(path)
    identity = manifest.get("identity") if isinstance(manifest.get("identity"), dict) else {}
    fixed = identity.get("fixed") if isinstance(identity.get("fixed"), dict) else {}
    choice = fixed.get("choice") if isinstance(fixed.get("choice"), dict) else {}
    items_path, problem = _recorded_items(manifest)
    if problem is not None and notes is not None:
        notes.append(problem)
    wanted = fixed.get("conversations")
    if items_path is None or choice.get("rule") not in plus.CHOICES or not isinstance(wanted, list):
        return conversations
    items = plus.load_items(items_path)
    n = item_count(fixed.get("items", "all"))
    return conversations + [s.conversation for s in plus.placed(items if n is None else items[:n], conversations,
                                                                 choice["rule"], choice.get("seed") or 0, set(wanted))]
