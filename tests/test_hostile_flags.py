"""Garbage flags and package fields are refused at the edge (issue 29): one error line naming the flag or field,
exit 2, no traceback, nothing written; the former hangs (a huge max_per_group) finish in seconds."""

from __future__ import annotations

import argparse
import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.errors import InputError
from memeval.memaudit.generators import generate
from tests.alarms import deadline

GOOD = generate("base", 1).to_json_dict()


def _package(tmp: Path, name: str, **changes) -> Path:
    doc = copy.deepcopy(GOOD)
    doc.update(changes)
    path = tmp / name
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def graph80_corpus(tmp_path_factory) -> Path:
    from memeval.benchmarks.graph80.data import write_corpus

    out = tmp_path_factory.mktemp("graph80") / "corpus"
    write_corpus(out, 0)
    return out


@pytest.fixture(scope="module")
def natural_dir(tmp_path_factory, locomo_dir) -> Path:
    """Two natural packages and their audit frame: real inputs, so only the garbage flag can be refused."""
    from memeval.cli import main

    out = tmp_path_factory.mktemp("natural") / "natural"
    assert main(["natural", "build", "--data", str(locomo_dir / "locomo10_v2"), "--target", "2", "--no-union",
                 "--no-progress", "--out", str(out)]) == 0
    assert main(["natural", "audit-export", "--packages", str(out), "--output", str(out / "frame.csv")]) == 0
    return out


@pytest.fixture()
def inputs(tmp_path, locomo_dir, conversations, graph80_corpus, natural_dir, monkeypatch) -> dict:
    from tests.test_longmemeval_data import instance

    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    tmp = tmp_path / "in"
    tmp.mkdir()
    qa = conversations[0].qa[0]
    (tmp / "answers.jsonl").write_text(json.dumps({"question": qa.question, "prediction": str(qa.answer)}) + "\n")
    (tmp / "lme.json").write_text(json.dumps([instance("q1", "single-session-user"),
                                              instance("q2", "temporal-reasoning")]))
    return {
        "in": str(tmp), "out": str(tmp_path / "out"), "g80": str(graph80_corpus), "natural": str(natural_dir),
        "pkg": str(_package(tmp, "p.json")),
        "zero_budget": str(_package(tmp, "zero_budget.json", budget=0)),
        "empty": str(_package(tmp, "empty.json", candidates=[], coverage=[])),
        "no_units": str(_package(tmp, "no_units.json", units=[], coverage=[], invalidation_units=[])),
        "lme": str(tmp / "lme.json"), "answers": str(tmp / "answers.jsonl"),
        "locomo": str(locomo_dir / "locomo10_v2"),
    }


def snapshot(*roots) -> dict:
    """Every file and directory under the roots: bytes and modification time (a rewrite of the same bytes shows)."""
    state = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            stat = path.stat()
            state[str(path)] = (path.read_bytes() if path.is_file() else None, stat.st_mtime_ns)
    return state


def assert_refused_in_one_line(result, fragment: str) -> None:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    assert result.returncode == 2, (result.returncode, text)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and errors[0] == lines[-1], result.stderr
    # argparse prints its usage (wrapped over several lines) before its one error line; InputError only the line
    assert len(lines) == 1 or lines[0].startswith("usage:"), result.stderr
    assert fragment in errors[0], (fragment, errors[0])


SOLVE = ("memaudit", "solve", "{pkg}")
GENERATE = ("memaudit", "generate", "small", "--output", "{out}/p.json")
SWEEP = ("memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "4", "--no-progress", "--out", "{out}")
LOCOMO = ("locomo", "run", "--data", "{locomo}", "--conversations", "conv-26", "--questions", "first:2", "--no-progress",
          "--out", "{out}")
IMPORT = ("locomo", "import", "{answers}", "--format", "jsonl", "--data", "{locomo}", "--out", "{out}")
LME = ("longmemeval", "run", "--data", "{lme}", "--no-progress", "--out", "{out}")
GRAPH80 = ("graph80", "run", "--data", "{g80}", "--no-progress", "--out", "{out}")
NATURAL = "{natural}"

CASES = [
    # memaudit solve (and its first spelling `memeval solve`)
    (SOLVE + ("--budget", "-1"), "argument --budget: expected a finite number > 0, got '-1'"),
    (SOLVE + ("--budget", "nan"), "argument --budget: expected a finite number > 0, got 'nan'"),
    (SOLVE + ("--budget", "nan", "--json"), "argument --budget"),
    (SOLVE + ("--budget", "inf"), "argument --budget"),
    (SOLVE + ("--budget", "0"), "argument --budget"),
    (SOLVE + ("--budget", "6", "--max-per-group", "0"), "argument --max-per-group: expected an integer >= 1"),
    (("solve", "{pkg}", "--budget=-inf"), "argument --budget"),
    (("memaudit", "solve", "{zero_budget}"), "budget: must be a finite number > 0, got 0"),
    (("memaudit", "solve", "{empty}", "--budget", "4"), "candidates: empty"),
    (("memaudit", "validate", "{empty}"), "candidates: empty"),
    (("memaudit", "validate", "{no_units}"), "units: empty"),
    # memaudit generate
    (GENERATE + ("--seed", "-1"), "argument --seed: expected an integer from 0 to 4,294,967,295"),
    (GENERATE + ("--facts", "-1"), "argument --facts"),
    (GENERATE + ("--updates", "-1"), "argument --updates"),
    (GENERATE + ("--distribution", "update_chain", "--count", "0"), "argument --count: expected an integer from 1 to 10,000"),
    (GENERATE + ("--distribution", "density_trap", "--count", "-1"), "argument --count"),
    (GENERATE + ("--facts", "0", "--updates", "0"), "--facts/--updates/--count: these counts give"),
    # memaudit sweep (and `memeval sweep`)
    (SWEEP + ("--budgets", "-1"), "argument --budgets: expected a finite number > 0, got '-1'"),
    (SWEEP + ("--budgets", "nan"), "argument --budgets: expected a finite number > 0, got 'nan'"),
    (SWEEP + ("--budgets", "4,inf"), "argument --budgets"),
    (SWEEP + ("--budgets", "0"), "argument --budgets"),
    (SWEEP + ("--budgets", "4,4.0"), "argument --budgets: budget 4 given twice"),
    (SWEEP + ("--max-per-group", "0"), "argument --max-per-group"),
    (SWEEP + ("--n-seeds", "0"), "argument --n-seeds"),
    (SWEEP + ("--seeds", "-2"), "argument --n-seeds/--seeds"),
    (SWEEP + ("--seed-start", "-1"), "argument --seed-start"),
    (SWEEP + ("--jobs", "0"), "argument --jobs"),
    (SWEEP + ("--jobs", "-1"), "argument --jobs"),
    (SWEEP + ("--facts", "-1"), "argument --facts"),
    (SWEEP + ("--updates", "-1"), "argument --updates"),
    (SWEEP + ("--distribution", "update_chain", "--count", "0"), "argument --count"),
    (SWEEP + ("--facts", "0", "--updates", "0"), "--facts/--updates/--count"),
    (("sweep", "natural", "--packages", NATURAL, "--budgets", "nan", "--out", "{out}"), "argument --budgets"),
    # locomo run and import
    (LOCOMO + ("--judge-runs", "0"), "argument --judge-runs: expected an integer from 1 to 100 (judge runs per answer), got '0'"),
    (LOCOMO + ("--judge", "binary", "--llm", "replay", "--judge-runs", "-2"), "argument --judge-runs"),
    (LOCOMO + ("--systems", "rag_turns:chunk_tokens=abc"), "chunk_tokens must be an integer >= 1, got 'abc'"),
    (LOCOMO + ("--systems", "rag_turns:chunk_tokens=0"), "chunk_tokens must be an integer >= 1"),
    (LOCOMO + ("--systems", "rag_turns:chunk_tokens=-5"), "chunk_tokens"),
    (LOCOMO + ("--systems", "rag_turns:chunk_tokens=1.5"), "chunk_tokens"),
    (LOCOMO + ("--systems", "memory_graph:top_k=0"), "top_k must be an integer >= 1"),
    (LOCOMO + ("--systems", "memory_graph:chunk_tokens=abc"), "chunk_tokens"),
    (IMPORT + ("--system", ""), "argument --system: expected a system name"),
    (IMPORT + ("--system", "a,b"), "argument --system: 'a,b' holds ','"),
    (IMPORT + ("--system", "x:y=1"), "argument --system: 'x:y=1' holds ':'"),
    (IMPORT + ("--system", "a;b"), "argument --system"),
    (IMPORT + ("--system", " mem0"), "argument --system"),
    (IMPORT + ("--system", "mem\n0"), "argument --system"),
    # longmemeval run
    (LME + ("--questions", "-1"), "argument --questions: expected an integer from 1 to 100,000 (questions), got '-1'"),
    (LME + ("--questions", "0"), "argument --questions"),
    (LME + ("--k", "0"), "argument --k"),
    (LME + ("--k", "-3"), "argument --k"),
    (LME + ("--systems", "observations"), "LongMemEval runs full_context, no_memory, rag_turns"),
    (LME + ("--systems", "rag_turns,summaries"), "summaries are LoCoMo annotations"),
    (LME + ("--systems", "memory_graph"), "memory_graph"),
    (LME + ("--systems", "rag_turns:chunk_tokens=abc"), "chunk_tokens must be an integer >= 1"),
    # graph80
    (("graph80", "generate", "--seed", "-1", "--out", "{out}"), "argument --seed"),
    (GRAPH80 + ("--systems", "chunks", "--repeats", "0"), "argument --repeats"),
    (GRAPH80 + ("--systems", "chunks", "--repeats", "-1"), "argument --repeats"),
    (GRAPH80 + ("--systems", "memory_graph:top_k=abc"), "top_k must be an integer >= 1, got 'abc'"),
    (GRAPH80 + ("--systems", "memory_graph:top_k=0"), "top_k"),
    (GRAPH80 + ("--systems", "chunks:k=0"), "parameter k must be an integer >= 1"),
    (GRAPH80 + ("--systems", "chunks:k=abc"), "parameter k"),
    # natural
    (("natural", "build", "--target", "0", "--out", "{out}"), "argument --target"),
    (("natural", "build", "--seed", "-1", "--out", "{out}"), "argument --seed"),
    (("natural", "sensitivity", "--packages", NATURAL, "--budgets", "nan", "--output", "{out}/s.json"),
     "argument --budgets"),
    (("natural", "sensitivity", "--packages", NATURAL, "--budgets", "-30", "--output", "{out}/s.json"),
     "argument --budgets"),
    (("natural", "sensitivity", "--packages", NATURAL, "--noise-rate", "1.5", "--output", "{out}/s.json"),
     "argument --noise-rate: expected a number in [0, 1]"),
    (("natural", "sensitivity", "--packages", NATURAL, "--noise-rate", "nan", "--output", "{out}/s.json"),
     "argument --noise-rate"),
    (("natural", "sensitivity", "--packages", NATURAL, "--noise-seeds", "0", "--output", "{out}/s.json"),
     "argument --noise-seeds"),
    (("natural", "audit-export", "--packages", NATURAL, "--zero-rate", "-0.1", "--output", "{out}/f.csv"),
     "argument --zero-rate"),
    (("natural", "audit-export", "--packages", NATURAL, "--seed", "-1", "--output", "{out}/f.csv"), "argument --seed"),
    (("natural", "audit-llm", "--packages", NATURAL, "--zero-rate", "inf", "--output", "{out}/v.csv"),
     "argument --zero-rate"),
    (("natural", "audit-compare", "--packages", NATURAL, "--labels", "{natural}/frame.csv", "--budgets", "0"),
     "argument --budgets"),
]


@pytest.mark.parametrize("argv, fragment", CASES, ids=[" ".join(a[:2]) + " " + " ".join(a[-2:]) for a, _ in CASES])
def test_garbage_is_one_line_exit_2_and_nothing_written(argv, fragment, inputs, cli, tmp_path):
    before = snapshot(tmp_path, inputs["g80"], inputs["natural"])
    result = cli(*[part.format(**inputs) for part in argv])
    assert_refused_in_one_line(result, fragment)
    assert not Path(inputs["out"]).exists(), "nothing is written under --out"
    assert snapshot(tmp_path, inputs["g80"], inputs["natural"]) == before, "no existing file changed"


@pytest.fixture(scope="module")
def existing_sweep(tmp_path_factory) -> Path:
    from memeval.cli import main

    out = tmp_path_factory.mktemp("sweep") / "sweep"
    assert main(["memaudit", "sweep", "small", "--n-seeds", "2", "--budgets", "4", "--no-progress",
                 "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("flags, fragment", [
    (("--budgets", "nan"), "argument --budgets"),  # was: rows written, then "reused_rows -N"
    (("--budgets", "4,4"), "argument --budgets"),  # was: "40 computed, -20 reused"
    (("--budgets", "-1"), "argument --budgets"),
    (("--budgets", "4", "--max-per-group", "0"), "argument --max-per-group"),
])
def test_a_resumed_sweep_directory_is_left_alone(flags, fragment, existing_sweep, cli):
    before = snapshot(existing_sweep)
    result = cli("memaudit", "sweep", "small", "--n-seeds", "2", "--no-progress", "--out", existing_sweep, *flags)
    assert_refused_in_one_line(result, fragment)
    assert snapshot(existing_sweep) == before


# --- the former hangs: a max_per_group far beyond any group's size -------------------------------------------------
def time_bound(seconds: int):
    """The loop must not depend on max_per_group."""
    return deadline(seconds)


def _memeval(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memeval.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=20, cwd=cwd)


def _value_at_group_size(budget: float) -> float:
    from memeval.memaudit.solvers import solve_exact

    cp = generate("base", 1).compiled
    return solve_exact(cp, budget, max(len(g) for g in cp.groups), None, "both").value


def test_group_options_clamp_k_to_the_group_size():
    from memeval.memaudit.solvers import group_options

    cp = generate("base", 1).compiled
    largest = max(len(g) for g in cp.groups)
    with time_bound(10):
        huge = group_options(cp, 12.0, 10**30)
    exact = group_options(cp, 12.0, largest)
    assert [subsets for subsets, _, _ in huge] == [subsets for subsets, _, _ in exact]


def test_a_package_max_per_group_of_10_to_the_30_solves_in_seconds(tmp_path):
    path = _package(tmp_path, "big.json", max_per_group=10**30)
    proc = _memeval("memaudit", "solve", path, "--budget", "6", "--method", "both", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert doc["certified"] is True and doc["value"] == pytest.approx(_value_at_group_size(6.0))


def test_max_per_group_flag_of_10_to_the_8_solves_and_sweeps_in_seconds(tmp_path):
    path = _package(tmp_path, "p.json")
    proc = _memeval("memaudit", "solve", path, "--budget", "12", "--max-per-group", "100000000", "--json",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["value"] == pytest.approx(_value_at_group_size(12.0))
    sweep = _memeval("memaudit", "sweep", "small", "--n-seeds", "1", "--seed-start", "1", "--budgets", "6,12",
                     "--max-per-group", "100000000", "--certify", "milp", "--no-progress", "--out",
                     tmp_path / "sweep", cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    assert "OPT certified 2/2, solver disagreements 0" in sweep.stdout


# --- property tests of the validators ------------------------------------------------------------------------------
def _accepts(parse, text):
    try:
        return True, parse(text)
    except argparse.ArgumentTypeError as exc:
        assert "\n" not in str(exc)  # argparse's error stays one line
        return False, None


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6))


@given(NUMBERS)
def test_positive_finite_float_accepts_exactly_finite_positive_numbers(x):
    from memeval.commands.arguments import positive_finite_float

    ok, value = _accepts(positive_finite_float, repr(x))
    assert ok == (math.isfinite(x) and x > 0)
    if ok:
        assert value == float(x)


@given(NUMBERS)
def test_non_negative_finite_float_accepts_exactly_finite_numbers_from_0(x):
    from memeval.commands.arguments import non_negative_finite_float

    ok, value = _accepts(non_negative_finite_float, repr(x))
    assert ok == (math.isfinite(x) and x >= 0)
    if ok:
        assert value == float(x)


@given(NUMBERS)
def test_share_accepts_exactly_numbers_in_0_1(x):
    from memeval.commands.arguments import share

    ok, _ = _accepts(share, repr(x))
    assert ok == (math.isfinite(x) and 0 <= x <= 1)


@given(st.lists(NUMBERS, min_size=1, max_size=6))
def test_budgets_are_finite_positive_and_distinct(xs):
    from memeval.commands.arguments import positive_finite_floats

    ok, values = _accepts(positive_finite_floats, ",".join(map(repr, xs)))
    floats = [float(x) for x in xs]
    assert ok == (all(math.isfinite(x) and x > 0 for x in floats) and len(set(floats)) == len(floats))
    if ok:
        assert values == floats


@given(st.one_of(st.integers(-10**40, 10**40).map(str), st.text(max_size=8), NUMBERS.map(repr)))
def test_counts_are_integers_above_their_bound(text):
    from memeval.commands.arguments import non_negative_int, positive_int

    try:
        number = int(text)
    except ValueError:
        number = None
    for parse, low in ((positive_int, 1), (non_negative_int, 0)):
        ok, value = _accepts(parse, text)
        assert ok == (number is not None and number >= low)
        if ok:
            assert value == number


@given(st.text(max_size=12))
def test_an_accepted_system_name_is_addressed_whole_by_systems(name):
    from memeval.commands.arguments import split_systems, system_name
    from memeval.memory.base import SystemConfig

    def addressable() -> bool:  # `--systems NAME` names exactly this one system, without parameters
        if split_systems(name) != [name] or not name.isprintable():
            return False
        try:
            config = SystemConfig.parse(name)
        except ValueError:
            return False
        return config.name == name and not config.params

    ok, _ = _accepts(system_name, name)
    if ok:
        assert addressable()
    else:  # refused: not addressable, or read as a factory path (`module:Factory`), which an import cannot be
        assert not addressable() or ":" in name


MAX_PER_GROUP = st.one_of(st.integers(-3, 8), st.integers(10**6, 10**40), st.booleans(), st.floats(0, 10), st.none(),
                          st.text(max_size=3))
BUDGET = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**6),
                   st.booleans(), st.text(max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=MAX_PER_GROUP, budget=BUDGET)
def test_package_loading_accepts_exactly_valid_max_per_group_and_budget(k, budget):
    from memeval.memaudit.package import package_from_dict
    from memeval.memaudit.solvers import solve_exact

    doc = copy.deepcopy(GOOD)
    doc["max_per_group"] = k
    doc["budget"] = budget
    k_ok = isinstance(k, int) and not isinstance(k, bool) and k >= 1
    budget_ok = budget is None or (isinstance(budget, (int, float)) and not isinstance(budget, bool)
                                   and math.isfinite(budget) and budget > 0)
    if not (k_ok and budget_ok):
        with pytest.raises(InputError) as err:
            package_from_dict(doc, "pkg.json")
        assert ("budget" if not budget_ok else "max_per_group") in str(err.value) and "\n" not in str(err.value)
        return
    pkg = package_from_dict(doc, "pkg.json")
    cp = pkg.compiled
    at = pkg.budget if pkg.budget is not None else 6.0
    with time_bound(10):
        result = solve_exact(cp, at, None, None, "bnb")
    reference = solve_exact(cp, at, min(k, max(len(g) for g in cp.groups)), None, "bnb")
    assert result.certified and result.value == pytest.approx(reference.value)
