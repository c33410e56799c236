"""Hostile and broken input files, for every loader and every command that reads one: each is refused in one line
(`memeval: error: SOURCE: FIELD: PROBLEM`, or score's one skipped-row line), with a non-zero exit, no traceback,
nothing written outside `--out` and no existing file changed. Ids that become file names are refused when loaded
(`/`, `..`, NUL), zip members are capped before they are read, and a byte-order mark is read the same everywhere.

Table-driven over (command × hostile input), then hypothesis over the loaders with random JSON, random bytes and
random ids."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memeval.errors import InputError
from memeval.memaudit.package import SCHEMA
from tests.rows import answer_row

QUESTION = "When did Caroline go to the LGBTQ support group?"  # conv-26:q0000


# --- the tree a command may touch --------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, str | None]:
    """Every path under `root`: a file's SHA-256, None for a directory."""
    return {str(p.relative_to(root)): None if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))}


def check_refused(result, before: dict, after: dict, out: str | None, argv) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, f"memeval {argv} exited 0 on a hostile file: {result.stdout[:300]}"
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}: {result.stderr[:600]}"
    changed = [p for p, digest in before.items() if after.get(p, "gone") != digest]
    assert not changed, f"existing files changed: {changed}"
    outside = [p for p in after if p not in before and not (out and (p == out or p.startswith(out + os.sep)))]
    assert not outside, f"written outside --out: {outside}"


@pytest.fixture()
def refused(cli, tmp_path):
    """`memeval ARGV` in this process, checked to be refused as above (`out`: the --out path relative to tmp)."""

    def run(*argv, out: str | None = None, root: Path | None = None):
        root = root or tmp_path
        before = snapshot(root)
        try:
            result = cli(*argv)
        except Exception as exc:  # noqa: BLE001 - what reached the user as a traceback
            pytest.fail(f"memeval {' '.join(map(str, argv))} raised {type(exc).__name__}: {str(exc)[:300]}")
        check_refused(result, before, snapshot(root), out, argv)
        return result

    return run


# --- one small valid document per loader, with slots where a hostile value goes --------------------------------------
def fill(doc, **raw: bytes) -> bytes:
    """`doc` as JSON with each "@SLOT@" string replaced by raw JSON text (bytes)."""
    data = json.dumps(doc).encode()
    for slot, value in raw.items():
        marker = f'"@{slot.upper()}@"'.encode()
        assert marker in data, slot
        data = data.replace(marker, value)
    return data


def locomo_doc(id=b'"conv-1"', number=b"1", text=b'"I moved to Denver last May."') -> bytes:
    conversation = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "@TEXT@"},
                                  {"speaker": "Bob", "dia_id": "D1:2", "text": "How is Denver so far?"}]}
    return fill([{"sample_id": "@ID@", "conversation": conversation,
                  "qa": [{"question": "Where did Ann move?", "answer": "Denver", "evidence": ["D1:1"],
                          "category": "@NUMBER@"}]}], id=id, number=number, text=text)


def lme_doc(id=b'"q1"', number=b"7", text=b'"I just moved to Denver!"') -> bytes:
    from tests.test_longmemeval_data import instance

    row = instance("@ID@", "single-session-user", answer="@NUMBER@")
    row["haystack_sessions"][0][0]["content"] = "@TEXT@"
    return fill([row], id=id, number=number, text=text)


def package_doc(id=b'"p1"', number=b"2", text=b'"a turn"') -> bytes:
    return fill({"schema": SCHEMA, "package_id": "@ID@", "budget": 3,
                 "experiences": [{"id": "e1", "text": "@TEXT@", "time": 0}],
                 "candidates": [{"id": "c1", "experience": "e1", "kind": "raw", "cost": "@NUMBER@", "text": "x"}],
                 "units": [{"id": "u1", "weight": 1.0}],
                 "coverage": [{"candidate": "c1", "unit": "u1", "value": 1.0}]}, id=id, number=number, text=text)


def store_doc(id=b'"D1:3"', number=b"1", text=b'"Caroline went to an LGBTQ support group"') -> bytes:
    return fill({"conv-26": [{"text": "@TEXT@", "source_ids": ["@ID@"], "time": "@NUMBER@"}]},
                id=id, number=number, text=text)


def mem0_doc(id=json.dumps(QUESTION).encode(), number=b"0.5", text=b'"7 May 2023"') -> bytes:
    return fill({"0": [{"question": "@ID@", "response": "@TEXT@", "answer": "7 May 2023",
                        "response_time": "@NUMBER@"}]}, id=id, number=number, text=text)


def jsonl_doc(id=b'"conv-26:q0000"', number=b"0.5", text=json.dumps(QUESTION).encode()) -> bytes:
    return fill({"sample_id": "@ID@", "question": "@TEXT@", "prediction": "7 May 2023", "latency_s": "@NUMBER@"},
                id=id, number=number, text=text) + b"\n"


def answers_doc(id=b'"conv-26:q0000"', number=b"0.5", text=json.dumps(QUESTION).encode()) -> bytes:
    row = answer_row("conv-26:q0000", question="q", latency_total_s=0.0, conversation_id="conv-26")
    row.update(sample_id="@ID@", question="@TEXT@", latency_total_s="@NUMBER@")
    return fill(row, id=id, number=number, text=text) + b"\n"


def score_doc(id=b'"s"', number=b"1", text=b'"Denver"') -> bytes:
    return fill({"prediction": "@TEXT@", "answer": "Denver", "category": "@NUMBER@", "system": "@ID@"},
                id=id, number=number, text=text) + b"\n"


NATURAL_PACKAGE: list[Path] = []  # the first package of the module's natural build (set by `base`)


def natural_package_doc(id=None, number=b"2", text=b'"a turn"') -> bytes:
    """A real natural package (so that `natural union` accepts it) with the slots in place."""
    doc = json.loads(NATURAL_PACKAGE[0].read_text())
    default_id = json.dumps(doc["package_id"]).encode()
    doc["package_id"], doc["candidates"][0]["cost"], doc["experiences"][0]["text"] = "@ID@", "@NUMBER@", "@TEXT@"
    return fill(doc, id=id or default_id, number=number, text=text)


# --- the commands that read each -----------------------------------------------------------------------------------
@dataclass
class Ctx:
    tmp: Path
    data: Path  # LoCoMo's conv-26 alone (per-conversation layout), for commands matched against LoCoMo
    packages: Path  # a natural build of it


@dataclass
class Loader:
    name: str
    file: str  # the hostile file's name under tmp/in/
    make: Callable[..., bytes]
    argv: Callable[[Ctx, Path], list]
    out: str | None = "out"  # what --out is, relative to tmp (None: the command writes nothing)
    wrap: Callable[[Ctx, Path, bytes], Path] | None = None  # where the bytes go (default: the file itself)


def _zip(ctx: Ctx, path: Path, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("locomo10.json", data)
    return path


def _in_packages(ctx: Ctx, path: Path, data: bytes) -> Path:
    directory = path.parent / "packages"
    shutil.copytree(ctx.packages, directory)
    first = sorted(directory.glob("locomo-natural-*.json"))[0]
    first.write_bytes(data)
    return directory


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


OUT = "out"
LOADERS = [
    Loader("data stats (LoCoMo file)", "locomo10.json", locomo_doc, lambda c, p: ["data", "stats", p], None),
    Loader("data stats (LoCoMo zip)", "locomo10.zip", locomo_doc, lambda c, p: ["data", "stats", p], None, _zip),
    Loader("data fetch locomo", "locomo10.json", locomo_doc,
           lambda c, p: ["data", "fetch", "locomo", "--source", p, "--sha256", _sha(p), "--dest", c.tmp / OUT]),
    Loader("natural build (LoCoMo)", "locomo10.json", locomo_doc,
           lambda c, p: ["natural", "build", "--data", p, "--target", "1", "--no-progress", "--out", c.tmp / OUT]),
    Loader("natural build --scope conversation", "locomo10.json", locomo_doc,
           lambda c, p: ["natural", "build", "--scope", "conversation", "--data", p, "--out", c.tmp / OUT]),
    Loader("locomo run", "locomo10.json", locomo_doc,
           lambda c, p: ["locomo", "run", "--data", p, "--systems", "rag_turns", "--no-progress", "--out",
                         c.tmp / OUT]),
    Loader("data stats (LongMemEval)", "lme.json", lme_doc,
           lambda c, p: ["data", "stats", "--dataset", "longmemeval", p], None),
    Loader("data fetch longmemeval", "lme.json", lme_doc,
           lambda c, p: ["data", "fetch", "longmemeval", "--source", p, "--sha256", _sha(p), "--dest", c.tmp / OUT]),
    Loader("longmemeval run", "lme.json", lme_doc,
           lambda c, p: ["longmemeval", "run", "--data", p, "--systems", "rag_turns", "--no-progress", "--out",
                         c.tmp / OUT]),
    Loader("natural build --source longmemeval", "lme.json", lme_doc,
           lambda c, p: ["natural", "build", "--source", "longmemeval", "--data", p, "--no-progress", "--out",
                         c.tmp / OUT]),
    Loader("memaudit validate", "package.json", package_doc, lambda c, p: ["memaudit", "validate", p], None),
    Loader("memaudit solve", "package.json", package_doc, lambda c, p: ["memaudit", "solve", p, "--json"], None),
    Loader("natural union (a package)", "package.json", natural_package_doc,
           lambda c, p: ["natural", "union", "--packages", p, "--store", c.tmp / "store.json", "--format", "memeval",
                         "--system", "mine", "--data", c.data, "--out", c.tmp / OUT], wrap=_in_packages),
    Loader("natural union --store", "store.json", store_doc,
           lambda c, p: ["natural", "union", "--packages", c.packages, "--store", p, "--format", "memeval",
                         "--system", "mine", "--data", c.data, "--out", c.tmp / OUT]),
    Loader("locomo import --format mem0", "mem0.json", mem0_doc,
           lambda c, p: ["locomo", "import", p, "--format", "mem0", "--system", "imp", "--data", c.data, "--out",
                         c.tmp / OUT]),
    Loader("locomo import --format jsonl", "rows.jsonl", jsonl_doc,
           lambda c, p: ["locomo", "import", p, "--format", "jsonl", "--system", "imp", "--data", c.data, "--out",
                         c.tmp / OUT]),
    Loader("locomo import --format memeval", "answers.jsonl", answers_doc,
           lambda c, p: ["locomo", "import", p, "--format", "memeval", "--system", "imp", "--data", c.data,
                         "--out", c.tmp / OUT]),
    Loader("score", "predictions.jsonl", score_doc, lambda c, p: ["score", p, "--by", "system"], None),
]

SLOTS = [  # (what, slot, raw JSON text put there)
    ("a list where a string id belongs", "id", b"[1, 2]"),
    ("an object where a string id belongs", "id", b'{"a": [1]}'),
    ("a 400-digit integer", "number", b"1" + b"0" * 400),
    ("nesting 100,000 deep", "text", b"[" * 100_000 + b"]" * 100_000),
    ("a Latin-1 byte (not UTF-8)", "text", b'"caf\xe9"'),
    ("a lone surrogate escape", "text", b'"\\ud800"'),
]
WHOLE = [  # (what, the whole file from the valid one)
    ("an empty file", lambda valid: b""),
    ("a file cut in half", lambda valid: valid[: len(valid) // 2].rstrip(b"\n") or b"{"),
    ("UTF-16 text", lambda valid: valid.decode().encode("utf-16")),
    ("NUL bytes", lambda valid: b"\x00" * 64),
    ("deep nesting as the whole file", lambda valid: b"[" * 100_000 + b"]" * 100_000),
]


@pytest.fixture(scope="module")
def base(locomo_dir, tmp_path_factory) -> tuple[Path, Path]:
    from memeval.benchmarks.locomo.natural_build import build_directory

    root = tmp_path_factory.mktemp("hostile-base")
    data = root / "conv26"
    data.mkdir()
    shutil.copyfile(locomo_dir / "locomo10_v2" / "26.json", data / "26.json")
    packages = root / "packages"
    build_directory(packages, str(data), target=2, union=False)
    NATURAL_PACKAGE[:] = [sorted(packages.glob("locomo-natural-*.json"))[0]]
    return data, packages


@pytest.fixture()
def ctx(base, tmp_path) -> Ctx:
    data, packages = base
    (tmp_path / "in").mkdir()
    (tmp_path / "store.json").write_bytes(store_doc())
    return Ctx(tmp_path, data, packages)


def _place(loader: Loader, ctx: Ctx, data: bytes) -> Path:
    path = ctx.tmp / "in" / loader.file
    if loader.wrap is None:
        path.write_bytes(data)
        return path
    return loader.wrap(ctx, path, data)


def _ids(loaders):
    return [loader.name for loader in loaders]


@pytest.mark.parametrize("loader", LOADERS, ids=_ids(LOADERS))
def test_the_valid_file_is_read_with_and_without_a_byte_order_mark(loader, ctx, cli):
    """The fixture documents are valid for their command, and a UTF-8 BOM changes nothing, in every loader."""
    outputs = []
    for n, prefix in enumerate((b"", b"\xef\xbb\xbf")):
        sub = ctx.tmp / f"try{n}"
        (sub / "in").mkdir(parents=True)
        (sub / "store.json").write_bytes(store_doc())
        c = Ctx(sub, ctx.data, ctx.packages)
        result = cli(*loader.argv(c, _place(loader, c, prefix + loader.make())))
        assert result.returncode == 0, (prefix, result.stderr)
        outputs.append(re.sub(r'(_s": )[-0-9.e]+', r"\1T", result.stdout.replace(str(sub), "TMP")))  # runtimes
    if loader.out is None:  # the others' output holds timings
        assert outputs[0] == outputs[1]


@pytest.mark.parametrize("what, slot, raw", SLOTS, ids=[s[0] for s in SLOTS])
@pytest.mark.parametrize("loader", LOADERS, ids=_ids(LOADERS))
def test_a_hostile_value_is_one_line_and_writes_nothing(loader, what, slot, raw, ctx, refused):
    path = _place(loader, ctx, loader.make(**{slot: raw}))
    refused(*loader.argv(ctx, path), out=loader.out)


@pytest.mark.parametrize("what, whole", WHOLE, ids=[w[0] for w in WHOLE])
@pytest.mark.parametrize("loader", LOADERS, ids=_ids(LOADERS))
def test_a_broken_file_is_one_line_and_writes_nothing(loader, what, whole, ctx, refused):
    path = _place(loader, ctx, whole(loader.make()))
    refused(*loader.argv(ctx, path), out=loader.out)


# --- ids that would become file names ---------------------------------------------------------------------------
TRAVERSAL = "conv-26/../../../../x"


@pytest.fixture()
def conv26_renamed(locomo_dir, tmp_path):
    """conv-26's real content under a hostile sample id, in the single-file layout (so that a build accepts
    packages and would write them)."""

    def make(sample_id: str) -> Path:
        flat = json.loads((locomo_dir / "locomo10_v2" / "26.json").read_text())
        conversation = {k: v for k, v in flat.items() if k.startswith(("speaker_", "session_"))
                        and not k.endswith(("_observation", "_summary"))}
        sample = {"sample_id": sample_id, "conversation": conversation, "qa": flat["qa"],
                  "observation": {k: v for k, v in flat.items() if k.endswith("_observation")},
                  "session_summary": {k: v for k, v in flat.items() if k.endswith("_summary")}}
        path = tmp_path / "data" / "locomo10.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps([sample]))
        return path

    return make


@pytest.mark.parametrize("scope", ["question", "conversation"])
def test_a_sample_id_with_a_path_never_leaves_out(scope, conv26_renamed, tmp_path, refused):
    data = conv26_renamed(TRAVERSAL)
    out = Path("a") / "b" / "c" / "d" / "out"
    result = refused("natural", "build", "--scope", scope, "--data", data, "--target", "2", "--no-progress",
                     "--out", tmp_path / out, out=str(out))
    assert "sample_id" in result.stderr and "not a safe id" in result.stderr, result.stderr


@pytest.mark.parametrize("sample_id", ["../x", "conv-1\x00", "/etc/x", ".hidden", "a" * 200, "conv+1", "conv 1",
                                       "..", "ü"])
def test_unsafe_sample_ids_are_refused_when_loaded(sample_id, tmp_path, refused):
    path = tmp_path / "locomo10.json"
    path.write_bytes(locomo_doc(id=json.dumps(sample_id).encode()))
    result = refused("data", "stats", path)
    assert f"{path}" in result.stderr and "sample_id" in result.stderr


def test_a_question_id_with_a_path_never_leaves_out(tmp_path, refused):
    from tests.test_natural_longmemeval import LONG_TURN, _with_turn

    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_with_turn("../../../../y", "single-session-user", LONG_TURN)]))
    out = Path("a") / "b" / "c" / "out"
    result = refused("natural", "build", "--source", "longmemeval", "--data", path, "--no-progress",
                     "--out", tmp_path / out, out=str(out))
    assert "question_id" in result.stderr, result.stderr


@pytest.mark.parametrize("system", ["../..", "../../../x", "a/b", "x\x00", ".", "+x", "x+y"])
def test_a_system_name_with_a_path_never_leaves_out(system, base, tmp_path, refused):
    data, packages = base
    (tmp_path / "store.json").write_bytes(store_doc())
    out = Path("a") / "b" / "c" / "out"
    result = refused("natural", "union", "--packages", packages, "--store", tmp_path / "store.json", "--format",
                     "memeval", "--system", system, "--data", data, "--out", tmp_path / out, out=str(out))
    assert "--system" in result.stderr


@pytest.mark.parametrize("package_id", ["../../../../y", "../..", "a/b", "x\x00"])
def test_a_package_id_with_a_path_never_leaves_out(package_id, base, tmp_path, refused):
    data, packages = base
    copy = tmp_path / "packages"
    shutil.copytree(packages, copy)
    first = sorted(copy.glob("locomo-natural-*.json"))[0]
    doc = json.loads(first.read_text())
    doc["package_id"] = package_id
    first.write_text(json.dumps(doc))
    (tmp_path / "store.json").write_bytes(store_doc())
    out = Path("a") / "b" / "c" / "out"
    result = refused("natural", "union", "--packages", copy, "--store", tmp_path / "store.json", "--format",
                     "memeval", "--system", "mine", "--data", data, "--out", tmp_path / out, out=str(out))
    assert "package_id" in result.stderr and first.name in result.stderr, result.stderr


@pytest.mark.parametrize("key", ["²", "1" * 5000, "-1", " 0", "0x1"])
def test_odd_conversation_keys_are_one_line(key, base, tmp_path, refused):
    data, packages = base
    store = tmp_path / "store.json"
    store.write_text(json.dumps({key: []}))
    refused("natural", "union", "--packages", packages, "--store", store, "--format", "mem0", "--system", "mine",
            "--data", data, "--out", tmp_path / "out", out="out")
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(json.dumps({key: [{"question": QUESTION, "response": "x"}]}))
    refused("locomo", "import", mem0, "--format", "mem0", "--system", "imp", "--data", data, "--out",
            tmp_path / "out", out="out")


def test_an_empty_locomo_file_is_not_a_data_set(tmp_path, refused):
    path = tmp_path / "locomo10.json"
    path.write_text("[]")
    assert "no conversations" in refused("data", "stats", path).stderr


# --- zips ---------------------------------------------------------------------------------------------------------
def test_a_zip_bomb_is_refused_before_it_is_read(tmp_path, refused):
    bomb = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("locomo10.json", "w") as member:
            member.write(b"[")
            block = b" " * (1 << 20)
            for _ in range(64):
                member.write(block)
            member.write(b"]")
    assert bomb.stat().st_size < 1 << 20
    result = refused("data", "stats", bomb)
    assert "locomo10.json" in result.stderr and "compress" in result.stderr, result.stderr


def test_an_oversized_zip_member_is_refused_by_its_declared_size(tmp_path, monkeypatch, refused):
    import memeval.zip_members as zip_members

    archive = tmp_path / "locomo10.zip"
    _zip(None, archive, locomo_doc())
    monkeypatch.setattr(zip_members, "MAX_MEMBER_BYTES", 100)
    monkeypatch.setattr(zipfile.ZipFile, "read", lambda *a, **k: pytest.fail("a member was read"))
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: pytest.fail("a member was opened"))
    result = refused("data", "stats", archive)
    assert "locomo10.json" in result.stderr and "100" in result.stderr


@pytest.mark.parametrize("name", ["..", "../x.json", "a/../../x.json"])
def test_a_download_name_never_leaves_dest(name, tmp_path, monkeypatch, refused):
    """`data fetch --source URL` keeps the URL's last name: a name like `..` must not become the target."""
    import memeval.data.fetch as fetch

    data = locomo_doc()
    monkeypatch.setattr(fetch, "read_source", lambda source, timeout, kind, fallback: (data, name))
    refused("data", "fetch", "locomo", "--source", "https://example.invalid/x", "--sha256",
            hashlib.sha256(data).hexdigest(), "--dest", tmp_path / "out" / "d", out="out")


# --- hypothesis ---------------------------------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _paths(value, prefix=()):
    """Every position in a parsed document (for replacing one with a random value)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replaced(doc, path, new):
    if not path:
        return new
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return doc


@pytest.fixture(scope="module")
def readers(base):
    """Each loader as a function of a file path; every one must return or raise InputError, nothing else."""
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.benchmarks.locomo.imports import match, read_source
    from memeval.benchmarks.longmemeval.data import load_longmemeval
    from memeval.commands.score import score_rows
    from memeval.memaudit.package import load_package
    from memeval.natural.stores import read_store

    data, _ = base
    conversations = load_locomo(data)
    return {
        "locomo": (locomo_doc, load_locomo),
        "longmemeval": (lme_doc, load_longmemeval),
        "package": (package_doc, load_package),
        "store": (store_doc, lambda p: read_store(p, "memeval", conversations)),
        "mem0": (mem0_doc, lambda p: match(read_source(p, "mem0", conversations), conversations)),
        "jsonl": (jsonl_doc, lambda p: match(read_source(p, "jsonl", conversations), conversations)),
        "memeval": (answers_doc, lambda p: match(read_source(p, "memeval", conversations), conversations)),
        "score": (score_doc, lambda p: score_rows(p, "locomo")),
    }


def _read_or_refuse(read, path: Path) -> None:
    try:
        read(path)
    except InputError as exc:
        assert "\n" not in str(exc).strip(), str(exc)


@pytest.mark.parametrize("name", ["locomo", "longmemeval", "package", "store",
                                  "mem0", "jsonl", "memeval", "score"])
@SETTINGS
@given(data=st.data())
def test_any_value_anywhere_is_read_or_refused_in_one_line(name, readers, tmp_path, data):
    make, read = readers[name]
    valid = make()
    lines = valid.endswith(b"\n")
    doc = json.loads(valid)
    path = data.draw(st.sampled_from(list(_paths(doc))))
    new = data.draw(JSON)
    text = json.dumps(_replaced(doc, path, new))
    target = tmp_path / f"{name}.json"
    target.write_bytes(text.encode() + (b"\n" if lines else b""))
    _read_or_refuse(read, target)


@pytest.mark.parametrize("name", ["locomo", "longmemeval", "package", "store", "mem0", "jsonl", "memeval", "score"])
@SETTINGS
@given(noise=st.binary(max_size=200), cut=st.integers(min_value=0, max_value=10_000), bom=st.booleans())
def test_random_bytes_and_cut_files_are_read_or_refused_in_one_line(name, readers, tmp_path, noise, cut, bom):
    make, read = readers[name]
    valid = make()
    target = tmp_path / f"{name}.json"
    for data in (noise, valid[:cut] + noise, valid[:cut] + noise + valid[cut:]):
        target.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
        _read_or_refuse(read, target)


@SETTINGS
@given(doc=JSON)
def test_random_json_through_the_parser_is_value_or_one_line(doc):
    from memeval.safe_json import parse_json

    text = json.dumps(doc)
    assert parse_json(text, "x") == json.loads(text)


HOSTILE_ID = st.lists(st.sampled_from([*"ab1./\\\x00+- :~", "..", "ü", "\u2028"]), min_size=1, max_size=8).map("".join)


@SETTINGS
@given(sample_id=HOSTILE_ID)
def test_random_sample_ids_are_safe_file_names_or_refused(sample_id, tmp_path):
    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.safe_paths import ID, inside

    path = tmp_path / "locomo10.json"
    path.write_bytes(locomo_doc(id=json.dumps(sample_id).encode()))
    try:
        conversations = load_locomo(path)
    except InputError as exc:
        assert "sample_id" in str(exc)
        return
    assert ID.fullmatch(conversations[0].sample_id)
    out = tmp_path / "out"
    target = inside(out, f"union/locomo-natural-{sample_id}-q0000+mine.json")
    assert os.path.commonpath([out, target]) == str(out) and target.parent == out / "union"


@SETTINGS
@given(name=st.text(min_size=0, max_size=30))
def test_a_name_is_inside_out_or_refused(name, tmp_path):
    from memeval.safe_paths import inside

    out = tmp_path / "out"
    try:
        target = inside(out, name)
    except InputError as exc:
        assert "file name" in str(exc)
        return
    full = os.path.normpath(target)
    assert full.startswith(str(out) + os.sep), (name, full)


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(system=HOSTILE_ID)
def test_random_system_names_never_leave_out(system, base, tmp_path_factory, cli):
    from memeval.safe_paths import ID

    assume(not ID.fullmatch(system))
    data, packages = base
    root = tmp_path_factory.mktemp("system")
    (root / "store.json").write_bytes(store_doc())
    before = snapshot(root)
    result = cli("natural", "union", "--packages", packages, "--store", root / "store.json", "--format", "memeval",
                 f"--system={system}", "--data", data, "--out", root / "a" / "out")
    check_refused(result, before, snapshot(root), os.path.join("a", "out"), system)
