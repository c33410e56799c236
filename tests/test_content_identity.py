"""Silent wrong results (issue 29): what a stored row was computed from is part of what it is stored under, so a
row is never reused for other input. Sweep rows carry their package's content hash and a natural sweep's identity
the digest of its package set; a package id is scored once; a natural build is swept only once it finished; a
second union import of a system replaces its packages whole; the Anthropic endpoint is in the cache key and the
run's identity; an imported run's failed rows are not answers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memeval.records import AnswerRow, SweepRow, read_records
from tests.rows import answer_row

SWEEP = ("--budgets", "30", "--methods", "opt,greedy", "--jobs", "1", "--no-progress")


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _refused(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(_lines(result.stderr)) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(locomo_dir, tmp_path_factory) -> Path:
    from memeval.benchmarks.locomo.natural_build import build_directory

    out = tmp_path_factory.mktemp("natural") / "packages"
    build_directory(out, str(locomo_dir), target=3)
    return out


@pytest.fixture()
def packages(built, tmp_path) -> Path:
    shutil.copytree(built, tmp_path / "packages")
    return tmp_path / "packages"


def _sweep(cli, packages: Path, out: Path, *extra: str):
    return cli("memaudit", "sweep", "natural", "--packages", packages, *SWEEP, "--out", out, *extra)


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


# ---- 1: sweep rows are keyed by their package's content -------------------------------------------------------

def test_a_sweep_is_never_reused_after_its_packages_were_rebuilt_differently(packages, locomo_dir, tmp_path, cli):
    """The reported run: `natural build --cost bytes --restart` into the swept packages directory, then the same
    sweep: "0 computed, 33 reused", the word-cost rows standing for byte-cost packages."""
    out = tmp_path / "sweep"
    assert _sweep(cli, packages, out).returncode == 0
    before = _tree(out)
    rebuilt = cli("natural", "build", "--data", locomo_dir, "--target", "3", "--cost", "bytes", "--restart",
                  "--out", packages, "--no-progress")
    assert rebuilt.returncode == 0, rebuilt.stderr
    _refused(_sweep(cli, packages, out), "packages_sha256", "--restart")
    assert _tree(out) == before, "a refused sweep writes nothing"

    fresh = tmp_path / "fresh"
    assert _sweep(cli, packages, fresh).returncode == 0
    restarted = _sweep(cli, packages, out, "--restart")
    assert restarted.returncode == 0 and "0 reused" in restarted.stdout
    assert _summary(out)["rows"] == _summary(fresh)["rows"]


def test_rows_of_other_content_are_recomputed_where_the_identity_cannot_tell(packages, locomo_dir, tmp_path, cli):
    """A sweep directory whose identity was recorded before it held the package digest (or rows written before
    rows carried their hash): the rows themselves are checked, and rows of another content are recomputed,
    never reused; readers see the latest row per key."""
    out = tmp_path / "sweep"
    assert _sweep(cli, packages, out).returncode == 0
    first = read_records(out / "raw_results.jsonl", SweepRow)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["identity"]["fixed"].pop("packages_sha256", None)  # as recorded before the digest existed
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert cli("natural", "build", "--data", locomo_dir, "--target", "3", "--cost", "bytes", "--restart",
               "--out", packages, "--no-progress").returncode == 0
    again = _sweep(cli, packages, out)
    assert again.returncode == 0, again.stderr
    assert f"{len(first)} rows ({len(first)} computed, 0 reused)" in again.stdout
    assert _summary(out)["superseded_rows"] == len(first)
    fresh = tmp_path / "fresh"
    assert _sweep(cli, packages, fresh).returncode == 0
    assert _summary(out)["rows"] == _summary(fresh)["rows"]
    from memeval.memaudit.package import load_package
    from memeval.memaudit.sweep import content_hash, load_sweep_rows

    latest = load_sweep_rows(out)
    hashes = {load_package(p).package_id: content_hash(load_package(p))
              for p in [*packages.glob("*.json"), *(packages / "union").glob("*.json")] if p.name != "manifest.json"}
    assert len(latest) == len(first) and all(r.package_sha256 == hashes[r.package_id] for r in latest)
    assert {r.package_sha256 for r in first}.isdisjoint(hashes.values()), "every package changed with its costs"

    # rows written before rows carried a hash are recomputed too: nothing says what they were computed from
    path = out / "raw_results.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "package_sha256"}) + "\n"
                            for r in map(json.loads, path.read_text().splitlines())))
    assert SweepRow.from_row(json.loads(path.read_text().splitlines()[0])).package_sha256 is None
    assert f"({len(first)} computed, 0 reused)" in _sweep(cli, packages, out).stdout
    assert f"(0 computed, {len(first)} reused)" in _sweep(cli, packages, out).stdout


def test_rows_written_before_the_hash_still_load(tmp_path):
    fixtures = Path(__file__).parent / "fixtures" / "v1"
    for name in ("sweep_small", "sweep_natural"):
        rows = read_records(fixtures / name / "raw_results.jsonl", SweepRow)
        assert rows and all(r.package_sha256 is None for r in rows)
        assert "package_sha256" not in rows[0].to_row(), "an absent hash is not written back as null"


# ---- 2: one package per id; a build is swept once it finished -------------------------------------------------

def test_two_files_of_one_package_id_are_refused_naming_both(packages, tmp_path, cli):
    first = sorted(packages.glob("locomo-natural-*.json"))[0]
    shutil.copyfile(first, packages / "copy-of-first.json")
    _refused(_sweep(cli, packages, tmp_path / "sweep"), str(first), str(packages / "copy-of-first.json"),
             "package_id")
    assert not (tmp_path / "sweep").exists()


@pytest.mark.parametrize("manifest, needle", [
    (None, "unfinished `memeval natural build`"),
    ({"command": "natural build", "complete": False}, "did not finish"),
    ({"command": "natural build"}, "does not say the build finished"),
    ([1, 2], "expected a JSON object, got list"),
    ("{torn", "not valid JSON"),
])
def test_an_unfinished_build_is_not_swept(manifest, needle, packages, tmp_path, cli):
    """The reported run: a build killed after 76 of 87 packages (no manifest yet) was swept with exit 0."""
    for path in sorted(packages.glob("locomo-natural-*.json"))[2:]:
        path.unlink()
    if manifest is None:
        (packages / "manifest.json").unlink()
    else:
        (packages / "manifest.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    _refused(_sweep(cli, packages, tmp_path / "sweep"), str(packages / "manifest.json"), needle)
    assert not (tmp_path / "sweep").exists()


# ---- 3: a second union import of one system replaces it whole --------------------------------------------------

def _store(conversations, ids) -> dict:
    from memeval.memory.render import observation_items

    by_id = {c.sample_id: c for c in conversations}
    return {cid: [{"text": i.text, "source_ids": list(i.source_ids), "time": i.time}
                  for i in observation_items(by_id[cid])] for cid in ids}


def test_a_second_union_import_replaces_the_systems_packages_whole(packages, conversations, locomo_dir, tmp_path,
                                                                    cli):
    """The reported run: importing a store for two conversations, then one for one conversation, under one
    --system kept the first store's packages of the other conversation, and the sweep scored them."""
    from memeval.natural.build import load_packages

    ids = sorted({p.meta["conversation"] for p in load_packages(packages)})
    assert len(ids) >= 2
    (tmp_path / "all.json").write_text(json.dumps(_store(conversations, ids)))
    (tmp_path / "one.json").write_text(json.dumps(_store(conversations, ids[:1])))

    def union(store):
        return cli("natural", "union", "--packages", packages, "--store", tmp_path / store, "--format", "memeval",
                   "--system", "mine", "--data", locomo_dir, "--out", packages, check=True)

    union("all.json")
    everything = sorted(p.name for p in (packages / "union").glob("*+mine.json"))
    printed = union("one.json").stdout
    kept = sorted(p.name for p in (packages / "union").glob("*+mine.json"))
    wanted = sorted(f"{p.package_id}+mine.json" for p in load_packages(packages) if p.meta["conversation"] == ids[0])
    assert kept == wanted and len(everything) > len(kept)
    assert f"{len(everything) - len(kept)} packages its new store does not cover were removed" in printed
    recorded = json.loads((packages / "imported_stores.json").read_text())["mine"]
    assert recorded["union_packages"] == len(kept) and recorded["complete"] is True
    assert recorded["replaced"]["source"] == str(tmp_path / "all.json")

    out = tmp_path / "sweep"
    assert _sweep(cli, packages, out).returncode == 0
    scored = {r.package_id for r in read_records(out / "raw_results.jsonl", SweepRow) if r.system == "mine"}
    assert scored == {name.removesuffix(".json") for name in kept}

    # an import killed before it finished leaves its mark: the directory is not swept until it is rerun
    doc = json.loads((packages / "imported_stores.json").read_text())
    (packages / "imported_stores.json").write_text(json.dumps({**doc, "mine": {**doc["mine"], "complete": False}}))
    _refused(_sweep(cli, packages, tmp_path / "other"), "imported_stores.json", "mine", "did not finish")


def test_an_import_into_another_directory_carries_the_build_manifest(packages, conversations, locomo_dir, tmp_path,
                                                                    cli):
    from memeval.natural.build import load_packages

    ids = sorted({p.meta["conversation"] for p in load_packages(packages)})[:1]
    (tmp_path / "one.json").write_text(json.dumps(_store(conversations, ids)))
    out = tmp_path / "with-store"
    cli("natural", "union", "--packages", packages, "--store", tmp_path / "one.json", "--format", "memeval",
        "--system", "mine", "--data", locomo_dir, "--out", out, check=True)
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
    assert _sweep(cli, out, tmp_path / "sweep").returncode == 0


# ---- 4: the Anthropic endpoint is part of the cache key and of the run's identity -----------------------------

REQUEST = dict(model="claude-opus-4-6", messages=(("user", "What did Caroline research?"),),
               system="Answer briefly.", max_tokens=64, temperature=0.0, template_version="t1", role="answer")
DEFAULT_KEY = "5a491326f4e9c1fd7bbafb73e8b0c6ab4f60dd2351439a9165ac21ec5782f047"  # as computed before this change


def test_another_anthropic_endpoint_is_another_cache_key(tmp_path, monkeypatch):
    """The reported run: a run against endpoint B stored endpoint A's answers without sending a request."""
    from memeval.llm.client import LLMClient, LLMRequest, ReplayBackend, make_client
    from memeval.llm.manifest import llm_manifest, role_identity
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    request = LLMRequest(**REQUEST)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    default = LLMClient(ReplayBackend())
    assert default.resolve(request).key == DEFAULT_KEY, "the default endpoint's keys are unchanged: caches still hit"
    assert "endpoint" not in role_identity(default, "answer", 0.0)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com/")
    assert LLMClient(ReplayBackend()).resolve(request).key == DEFAULT_KEY

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
    with FakeAnthropic(lambda body: "from A") as a, FakeAnthropic(lambda body: "from B") as b:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", a.url)
        assert make_client("anthropic", cache_dir=str(tmp_path)).complete(request).text == "from A"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", b.url)
        client = make_client("anthropic", cache_dir=str(tmp_path))
        reply = client.complete(request)
        assert (reply.text, reply.cached, len(b.received)) == ("from B", False, 1)
        assert llm_manifest(client, {"answer": 0.0})["roles"]["answer"]["endpoint"] == b.url
        assert role_identity(client, "answer", 0.0)["endpoint"] == b.url
        monkeypatch.setenv("ANTHROPIC_BASE_URL", a.url)
        again = make_client("anthropic", cache_dir=str(tmp_path)).complete(request)
        assert again.cached and again.text == "from A" and len(a.received) == 1


def test_a_run_directory_is_not_resumed_against_another_endpoint(locomo_dir, tmp_path, cli, monkeypatch):
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic

    out = tmp_path / "run"
    args = ("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
            "rag_turns", "--reader", "claude", "--out", out, "--no-progress")
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(lambda body: "A") as a, FakeAnthropic(lambda body: "B") as b:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", a.url)
        assert cli(*args).returncode == 0
        before = _tree(out)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", b.url)
        _refused(cli(*args), "endpoint", a.url, b.url)
        assert _tree(out) == before and not b.received


# ---- 5: importing another run's answers.jsonl ------------------------------------------------------------------

@pytest.fixture()
def questions(conversations):
    return conversations[0].qa[:3]


def _row(qa, **fields) -> dict:
    return answer_row(qa.sample_id, conversation_id=qa.conversation_id, category=qa.category,
                      question=qa.question, gold=qa.answer, **fields)


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _import(cli, locomo_dir, source, out, *extra):
    return cli("locomo", "import", source, "--format", "memeval", "--system", "ext", "--data", locomo_dir,
               "--out", out, *extra)


def test_a_failed_row_is_not_imported_as_an_answer(questions, locomo_dir, tmp_path, cli):
    """The reported import: a row with `error` set became a final answer (F1 0, error cleared)."""
    a, b, c = questions
    source = _write(tmp_path / "answers.jsonl", [
        _row(a, prediction=str(a.answer)), _row(b, prediction="", f1=None, error="TransientError (429)"),
        _row(c, prediction=str(c.answer))])
    result = _import(cli, locomo_dir, source, tmp_path / "run")
    assert result.returncode == 0, result.stderr
    imported = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    assert sorted(r.sample_id for r in imported) == sorted([a.sample_id, c.sample_id])
    assert "1 ended in errors" in result.stdout and b.sample_id in result.stdout
    report = json.loads((tmp_path / "run" / "manifest.json").read_text())["imported"]["ext"]["report"]
    assert report["errored"] == 1 and report["rows"] == 3


def test_a_resumed_files_retry_is_imported_and_its_failed_row_is_not(questions, locomo_dir, tmp_path, cli):
    """The reported import: the error row and its retry were both dropped as duplicates."""
    a, b, _ = questions
    source = _write(tmp_path / "answers.jsonl", [
        _row(a, prediction="first"), _row(b, prediction="", f1=None, error="TransientError (529)"),
        _row(b, prediction="retried")])
    result = _import(cli, locomo_dir, source, tmp_path / "run")
    assert result.returncode == 0, result.stderr
    imported = {r.sample_id: r for r in read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)}
    assert set(imported) == {a.sample_id, b.sample_id} and imported[b.sample_id].prediction == "retried"
    assert "0 duplicated" in result.stdout and "1 earlier rows superseded" in result.stdout

    # and a question whose latest row failed (after an answer) has no answer to import
    later = _write(tmp_path / "later.jsonl", [_row(a, prediction="first"),
                                              _row(a, prediction="", f1=None, error="x")])
    _refused(_import(cli, locomo_dir, later, tmp_path / "run2"), "1 ended in errors")


def test_a_file_of_several_systems_needs_from_system(questions, locomo_dir, tmp_path, cli):
    """The reported import: a two-system file was refused as if nothing matched."""
    a, b, _ = questions
    source = _write(tmp_path / "answers.jsonl", [
        _row(a, system="rag_turns", prediction="r"), _row(a, system="full_context", prediction="f"),
        _row(b, system="rag_turns", prediction="r2"), _row(b, system="full_context", prediction="f2")])
    _refused(_import(cli, locomo_dir, source, tmp_path / "run"), "2 systems (full_context, rag_turns)",
             "--from-system")
    assert not (tmp_path / "run").exists()
    _refused(_import(cli, locomo_dir, source, tmp_path / "run", "--from-system", "nope"), "'nope'",
             "full_context, rag_turns")
    chosen = _import(cli, locomo_dir, source, tmp_path / "run", "--from-system", "full_context")
    assert chosen.returncode == 0, chosen.stderr
    rows = read_records(tmp_path / "run" / "answers.jsonl", AnswerRow)
    assert sorted(r.prediction for r in rows) == ["f", "f2"] and {r.system for r in rows} == {"ext"}
    entry = json.loads((tmp_path / "run" / "manifest.json").read_text())["imported"]["ext"]
    assert entry["from_system"] == "full_context" and "--from-system full_context" in entry["command_line"]
    assert entry["report"]["other_systems"] == 2
    jsonl = _write(tmp_path / "plain.jsonl", [{"question": a.question, "prediction": "x"}])
    _refused(cli("locomo", "import", jsonl, "--format", "jsonl", "--system", "other", "--data", locomo_dir,
                 "--out", tmp_path / "run3", "--from-system", "x"), "--from-system", "--format memeval")
