"""Which systems of a run are the LoCoMo audit's reference answer sets: its v1/v2 answers, written to be wrong to
measure a judge's leniency. They keep their scores in every table but are never ranked or paired with a system.

Recognised by the imported file's SHA-256 (the manifest's `imported` entry) against the audit's pinned files, so a
renamed system is still a reference set and a system merely named like one is not.
"""

from __future__ import annotations

REFERENCE_ORIGIN = "reference answer set (locomo-audit, written to be wrong)"
REFERENCE_FILES = ("v1_answers", "v1_scored", "v2_answers", "v2_scored")


def reference_hashes() -> set[str]:
    """The pinned SHA-256 of the audit's v1/v2 answer files."""
    from memeval.benchmarks.locomo.audit.sources import AUDIT_FILES

    return {AUDIT_FILES[n].sha256 for n in REFERENCE_FILES if n in AUDIT_FILES}


def reference_systems(manifest: dict | None) -> set[str]:
    """The systems a run's manifest says were imported from one of the audit's reference answer files."""
    imported = (manifest or {}).get("imported")
    hashes = reference_hashes()
    return {name for name, entry in (imported.items() if isinstance(imported, dict) else ())
            if isinstance(entry, dict) and entry.get("sha256") in hashes}


def reference_note(names) -> str:
    """The one line under a paired table naming the reference sets left out of it."""
    return (f"Not paired: {', '.join(sorted(names))} — {REFERENCE_ORIGIN}: the audit's answers that measure a "
            "judge's leniency, not a system to compare (their scores are in the table above).")
