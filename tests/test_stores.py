"""Exported memory stores of other systems as MEMAUDIT union packages: the stores are written by the tests from
LoCoMo's own observation annotations (what a memory system could have written; nothing invented), in each
format."""

import json

import pytest

from memeval.benchmarks.locomo.data import load_locomo
from memeval.memory.render import observation_items
from memeval.natural.build import load_packages
from memeval.natural.stores import read_store, union_from_store
from memeval.natural.union import union_package


@pytest.fixture(scope="module")
def packages(locomo_dir, tmp_path_factory):
    from memeval.benchmarks.locomo.natural_build import build_directory

    out = tmp_path_factory.mktemp("natural") / "packages"
    build_directory(out, str(locomo_dir), target=6)
    return out


def _store(fmt, conversations):
    doc = {}
    for c in conversations:
        items = observation_items(c)
        if fmt == "memeval":
            doc[c.sample_id] = [{"text": i.text, "source_ids": list(i.source_ids), "time": i.time, "kind": i.kind}
                                for i in items]
        elif fmt == "mem0":
            doc[c.sample_id] = {"results": [{"id": str(n), "memory": i.text, "created_at": i.time,
                                             "updated_at": None, "metadata": {}} for n, i in enumerate(items)]}
        elif fmt == "letta":
            doc[c.sample_id] = [{"id": f"passage-{n}", "text": i.text, "created_at": i.time}
                                for n, i in enumerate(items)]
        else:
            doc[c.sample_id] = {str(n): {"content": i.text, "keywords": [], "tags": [], "context": "General",
                                         "timestamp": i.time} for n, i in enumerate(items)}
    return doc


def test_a_store_with_source_ids_builds_the_same_union_packages_as_the_builtin_export(locomo_dir, packages,
                                                                                     tmp_path):
    conversations = load_locomo(locomo_dir)
    (tmp_path / "store.json").write_text(json.dumps(_store("memeval", conversations)))
    result = union_from_store(packages, tmp_path / "store.json", "memeval", "outside", tmp_path / "out",
                              str(locomo_dir))
    assert result["attribution"]["with_source_ids"] == result["attribution"]["items"]
    by_id = {c.sample_id: c for c in conversations}
    imported = {p.meta["union_of"]: p for p in load_packages(tmp_path / "out", union=True)
                if p.meta["external_system"] == "outside"}
    assert len(imported) == len(load_packages(packages)) == result["union_packages"]
    for base in load_packages(packages):
        builtin = union_package(base, by_id[base.meta["conversation"]], "observations")
        mine = imported[base.package_id]
        assert [c.cost for c in mine.candidates] == [c.cost for c in builtin.candidates]
        assert [v for *_, v in mine.coverage] == [v for *_, v in builtin.coverage]
        assert mine.package_id.endswith("+outside")


@pytest.mark.parametrize("fmt", ["mem0", "letta", "amem"])
def test_stores_without_source_ids_are_attributed_by_content_and_say_so(fmt, locomo_dir, tmp_path):
    conversations = load_locomo(locomo_dir)[:1]
    (tmp_path / "store.json").write_text(json.dumps(_store(fmt, conversations)))
    stores, report = read_store(tmp_path / "store.json", fmt, load_locomo(locomo_dir))
    items = stores["conv-26"]
    truth = observation_items(conversations[0])
    recovered = sum(1 for mine, true in zip(items, truth, strict=True) if set(mine.source_ids) & set(true.source_ids))
    assert report.items == len(truth) and report.given == 0
    assert report.attributed + report.unattributed == report.items
    assert report.as_dict()["share_attributed_by_content"] == report.attributed / report.items > 0.9
    assert recovered / len(truth) > 0.7, "content attribution finds the observation's own turn most of the time"


def test_imported_store_rows_in_the_natural_sweep(locomo_dir, packages, tmp_path, cli):
    conversations = load_locomo(locomo_dir)
    (tmp_path / "store.json").write_text(json.dumps(_store("mem0", conversations)))
    out = tmp_path / "packages"
    printed = cli("natural", "union", "--packages", packages, "--store", tmp_path / "store.json", "--format", "mem0",
                  "--system", "mem0", "--data", locomo_dir, "--out", out, check=True).stdout
    assert "attributed by content" in printed
    cli("memaudit", "sweep", "natural", "--packages", out, "--budgets", "30,100", "--methods", "opt,gvt", "--jobs",
        "1", "--out", tmp_path / "sweep", "--no-progress", check=True)
    from memeval.memaudit.sweep import load_sweep_rows

    rows = [r for r in load_sweep_rows(tmp_path / "sweep") if r.system == "mem0"]
    assert rows and {r.pruning for r in rows} == {"recency", "salience", "upper"} and all(r.certified for r in rows)
    assert all(r.exported is not None and r.exported_fitting is not None for r in rows)
    recorded = json.loads((out / "imported_stores.json").read_text())
    assert recorded["mem0"]["format"] == "mem0" and len(recorded["mem0"]["sha256"]) == 64


@pytest.mark.parametrize("doc, fmt, message", [
    ({"conv-26": [{"created_at": "x"}]}, "mem0", "memory: missing"),
    ({"conv-999": []}, "mem0", "not a LoCoMo conversation"),
    ({"conv-26": [{"text": "x", "source_ids": ["D999:1"]}]}, "memeval", "not turns of conv-26"),
    ({"conv-26": "nope"}, "letta", "expected a list"),
    ([], "amem", "expected an object keyed by conversation"),
])
def test_bad_stores_are_one_line(doc, fmt, message, locomo_dir, packages, tmp_path, cli):
    (tmp_path / "store.json").write_text(json.dumps(doc))
    result = cli("natural", "union", "--packages", packages, "--store", tmp_path / "store.json", "--format", fmt,
                 "--system", "x", "--data", locomo_dir, "--out", tmp_path / "out")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_builtin_store_names_are_refused(locomo_dir, packages, tmp_path, cli):
    (tmp_path / "store.json").write_text(json.dumps({"conv-26": []}))
    result = cli("natural", "union", "--packages", packages, "--store", tmp_path / "store.json", "--format", "mem0",
                 "--system", "observations", "--data", locomo_dir, "--out", tmp_path / "out")
    assert result.returncode == 2 and "built-in store" in result.stderr
