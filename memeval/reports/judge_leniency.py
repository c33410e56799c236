"""The sentence every J carries: how often that exact judge configuration accepts wrong answers, as measured
(`memeval judge calibrate`, or the audit's recorded judgments), or "leniency not measured".

A run's judge configuration is the identity its manifest records under `identity.additive.judges[protocol]`
(model, provider, sampling, temperature sent, prompt version, runs): the lookup gets exactly that, with the
judge's name, so a rate measured for another model, prompt or sampling is never shown beside this J.
"""

from __future__ import annotations

from collections.abc import Mapping

NOT_MEASURED = "leniency not measured"


def judge_identities(manifest: Mapping | None) -> dict[str, dict]:
    """protocol → the judge configuration a run's manifest records (empty for a run without judges)."""
    identity = (manifest or {}).get("identity")
    additive = identity.get("additive") if isinstance(identity, Mapping) else None
    judges = additive.get("judges") if isinstance(additive, Mapping) else None
    found = {} if not isinstance(judges, Mapping) else {  # none recorded, or a hand-edited manifest: nothing
        str(name): {"judge": str(name), "judge_model": entry.get("model"), **entry}
        for name, entry in judges.items() if isinstance(entry, Mapping)}
    found.update(_recorded_identities(manifest))
    return found


def _recorded_identities(manifest: Mapping | None) -> dict[str, dict]:
    """protocol → the judge configuration imported files' producers state for their recorded judgments
    (`locomo import --judge-model/--judge-prompt`), when every imported system of that protocol states the same
    one; none when any leaves it unstated or two differ (a rate is never shown for a judge it may not be)."""
    imported = (manifest or {}).get("imported")
    if not isinstance(imported, Mapping):
        return {}
    stated: dict[str, list] = {}
    for entry in imported.values():
        judge = entry.get("judge") if isinstance(entry, Mapping) else None
        if isinstance(judge, Mapping) and isinstance(judge.get("protocol"), str):
            identity = judge.get("identity")
            stated.setdefault(judge["protocol"], []).append(dict(identity) if isinstance(identity, Mapping)
                                                           else None)
    return {protocol: {"judge_model": found[0].get("model"), **found[0]} for protocol, found in stated.items()
            if found[0] is not None and all(f == found[0] for f in found)}


def leniency_line(identity: Mapping | None) -> str:
    """"this judge accepts 62.8% [60.4–65.2] of vague wrong answers, …" for a configuration that was measured,
    else "leniency not measured" (also before the leniency module exists)."""
    if not identity:
        return NOT_MEASURED
    try:
        from memeval.scoring.leniency import leniency_for, leniency_text
    except ImportError:
        return NOT_MEASURED
    measured = leniency_for(dict(identity))
    return leniency_text(measured) if measured else NOT_MEASURED


def leniency_by_protocol(manifest: Mapping | None, protocols) -> dict[str, str]:
    """protocol → `leniency_line` for each judge protocol of a run (one without a recorded identity: not
    measured)."""
    identities = judge_identities(manifest)
    return {p: leniency_line(identities.get(p)) for p in protocols}
