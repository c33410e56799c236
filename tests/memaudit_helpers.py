"""Small hand-made packages for pinning writer rules."""

from memeval.memaudit.package import package_from_dict


def make_package(groups, units, package_id="tiny", k=1, invalidation=()):
    """groups: list of lists of (variant, kind, cost, {unit: a}); units: {unit: weight}."""
    doc = {"schema": "memaudit.package/v1", "package_id": package_id, "max_per_group": k,
           "experiences": [], "candidates": [], "units": [], "coverage": []}
    for g, cands in enumerate(groups):
        eid = f"e{g}"
        doc["experiences"].append({"id": eid, "text": "", "time": g})
        for variant, kind, cost, cover in cands:
            cid = f"{eid}:{variant}"
            doc["candidates"].append({"id": cid, "experience": eid, "kind": kind, "cost": cost, "text": f"{kind} {g}"})
            for unit, value in cover.items():
                doc["coverage"].append({"candidate": cid, "unit": unit, "value": value})
    doc["units"] = [{"id": u, "weight": w, "kind": "fact"} for u, w in units.items()]
    if invalidation:
        doc["invalidation_units"] = list(invalidation)
    return package_from_dict(doc)
