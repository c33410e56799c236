"""`--prices FILE` (memeval/llm/prices.py): a gateway's or local server's model ids priced from the user's file under
`--llm local`, so dry runs and `--budget-usd` count dollars; hostile files are one line naming the file and field."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from memeval.cli import main
from memeval.errors import InputError
from memeval.llm.client import LLMRequest, make_client
from memeval.llm.errors import BudgetExceeded
from memeval.llm.prices import load_prices
from memeval.llm.profiles import PROFILES, ProfileTable
from memeval.llm.settings import ModelSettings
from tests.fake_openai import FakeOpenAI

GATEWAY = "anthropic/claude-sonnet-4.6"  # an OpenRouter id: unknown to memeval's own table
ROW = {"input_usd_mtok": 3, "output_usd_mtok": 15, "cached_input_usd_mtok": 0.3}


def _write(tmp_path, table, name="prices.json") -> str:
    path = tmp_path / name
    path.write_text(table if isinstance(table, str) else json.dumps(table), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("g80") / "corpus"
    assert main(["graph80", "generate", "--out", str(out)]) == 0
    return out


def _memeval(*argv, env_extra=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env.update({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", **(env_extra or {})})
    return subprocess.run([sys.executable, "-m", "memeval", *map(str, argv)], capture_output=True, text=True,
                          env=env, timeout=300)


def _graph80(corpus, out, *extra):
    return ("graph80", "run", "--data", corpus, "--reader", "claude", "--systems", "chunks", "--repeats", "1",
            "--llm", "local", "--answer-model", GATEWAY, "--out", out, *extra)


def _dry_runs(tmp_path, command) -> tuple[dict, dict]:
    """The dry run of `command(extra...)` without and with a price file for GATEWAY: both must succeed."""
    prices = _write(tmp_path, {GATEWAY: ROW})
    env = {"MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    free = _memeval(*command("--dry-run"), env_extra=env)
    priced = _memeval(*command("--dry-run", "--prices", prices), env_extra=env)
    assert free.returncode == priced.returncode == 0, (free.stderr, priced.stderr)
    return json.loads(free.stdout), json.loads(priced.stdout)


def test_a_dry_run_prices_a_gateway_model_from_the_file(corpus, tmp_path):
    free, priced = _dry_runs(tmp_path, lambda *extra: _graph80(corpus, tmp_path / "run", *extra))
    assert free["usd_est"] == 0.0 and priced["to_send"] == free["to_send"] > 0
    assert priced["usd_est"] == pytest.approx((priced["input_tokens_est"] * 3 + priced["output_tokens_expected"] * 15) / 1e6)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("table", "llm", "expected"), [
    ({GATEWAY: {**ROW, "input_usd_mtok": -1}}, "local", f'"{GATEWAY}".input_usd_mtok: -1 is not a finite price'),
    ({GATEWAY: {**ROW, "input_usd_mtok": "3.00"}}, "local", f'"{GATEWAY}".input_usd_mtok: "3.00" is not a number'),
    ({GATEWAY: {**ROW, "batch_usd_mtok": 1}}, "local", f'"{GATEWAY}".batch_usd_mtok: unknown field'),
    ({GATEWAY: {"input_usd_mtok": 3}}, "local", f'"{GATEWAY}".output_usd_mtok: missing'),
    ('{"%s": {"input_usd_mtok": Infinity, "output_usd_mtok": 1}}' % GATEWAY, "local", "inf is not a finite price"),
    ({"claude-sonnet-4-6": ROW}, "local", '"claude-sonnet-4-6": a known cloud model'),
    ({"some/other-model": ROW}, "local", f"--answer-model: {GATEWAY}: no price for this model in --prices"),
    ({GATEWAY: ROW}, "auto", "--llm auto: prices the models of --llm local only"),
    ("{\"%s\": " % GATEWAY, "local", "file: not valid JSON"),
])
def test_hostile_price_files_are_one_line_naming_file_and_field(corpus, tmp_path, table, llm, expected):
    prices = _write(tmp_path, table)
    argv = [*_graph80(corpus, tmp_path / "run", "--dry-run", "--prices", prices)]
    argv[argv.index("--llm") + 1] = llm
    if llm != "local":
        argv[argv.index("--answer-model") + 1] = "claude-sonnet-4-6"
    done = _memeval(*argv, env_extra={"MEMEVAL_CACHE_DIR": str(tmp_path / "cache")})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert prices in lines[0] and expected in lines[0], lines[0]
    assert done.stdout == "" and not (tmp_path / "run").exists()


def test_a_live_run_stops_at_the_budget_and_its_manifest_names_the_table(corpus, tmp_path):
    prices = _write(tmp_path, {GATEWAY: ROW})
    with FakeOpenAI(lambda body: "ok", local=True) as server:
        done = _memeval(*_graph80(corpus, tmp_path / "run", "--prices", prices, "--budget-usd", "0.01",
                                  "--no-progress"),
                        env_extra={"OPENAI_BASE_URL": server.url, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")})
        sent = len(server.received)
    assert done.returncode == 4 and "BudgetExceeded" in done.stderr.strip().splitlines()[-1], done.stderr
    assert 0 < sent < 80, "priced at $0 all 80 questions would be sent; priced, the budget stops them"
    profile = json.loads((tmp_path / "run" / "manifest.json").read_text())["llm"]["roles"]["answer"]["profile"]
    digest = hashlib.sha256((tmp_path / "prices.json").read_bytes()).hexdigest()
    assert f"priced from --prices {prices} (sha256 {digest})" in profile["note"]
    assert (profile["input_usd_mtok"], profile["output_usd_mtok"], profile["cache_read_usd_mtok"]) == (3, 15, 0.3)


def test_the_table_prices_replies_and_stops_the_budget_through_the_api(tmp_path, monkeypatch):
    table = load_prices(_write(tmp_path, {GATEWAY: ROW}))
    with FakeOpenAI(lambda body: "42", local=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        client = make_client("local", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("local", models={"answer": GATEWAY}, prices=table, budget_usd=1e-9))
        request = LLMRequest(model=GATEWAY, role="answer", messages=(("user", "what is six times seven?"),),
                             max_tokens=8)
        response = client.complete(request)
        assert response.cost_usd == pytest.approx((response.input_tokens * 3 + response.output_tokens * 15) / 1e6)
        assert response.cost_usd > 0 and client.stats.cost_usd == response.cost_usd
        with pytest.raises(BudgetExceeded):
            client.complete(dataclasses.replace(request, messages=(("user", "and six times eight?"),)))
        assert len(server.received) == 1
    with pytest.raises(InputError, match="--llm local only"):
        make_client("auto", cache_dir=str(tmp_path / "cache"), settings=ModelSettings("auto", prices=table))


def test_a_good_table_defaults_the_cached_price_and_stays_immutable(tmp_path):
    path = _write(tmp_path, {GATEWAY: ROW, "azure-gpt4o-eastus": {"input_usd_mtok": 2.5, "output_usd_mtok": 10}})
    table = load_prices(path)
    assert table.sha256 == hashlib.sha256((tmp_path / "prices.json").read_bytes()).hexdigest()
    azure = table.price("azure-gpt4o-eastus")
    assert (azure.input_usd_mtok, azure.output_usd_mtok, azure.cached_input_usd_mtok) == (2.5, 10.0, 2.5)
    profiles = ProfileTable.with_local([GATEWAY, "azure-gpt4o-eastus"], table)
    assert profiles.profile(GATEWAY).cache_read_usd_mtok == 0.3 and profiles.profile(GATEWAY).provider == "local"
    assert profiles.profile("claude-sonnet-4-6") == PROFILES["claude-sonnet-4-6"], "cloud prices are untouched"
    assert ProfileTable.with_local([GATEWAY]).profile(GATEWAY).input_usd_mtok == 0.0, "no file: $0 as before"
    with pytest.raises(dataclasses.FrozenInstanceError):
        profiles.prices = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.rows = ()  # type: ignore[misc]


@pytest.mark.parametrize(("content", "field"), [
    ('{"m": {"input_usd_mtok": 1, "output_usd_mtok": 1}, "m": {"input_usd_mtok": 2, "output_usd_mtok": 2}}',
     '"m": given twice'),
    ('{"m": {"input_usd_mtok": NaN, "output_usd_mtok": 1}}', '"m".input_usd_mtok: nan'),
    ('{"m": {"input_usd_mtok": 1e999, "output_usd_mtok": 1}}', '"m".input_usd_mtok: inf'),
    ('{"m": {"input_usd_mtok": true, "output_usd_mtok": 1}}', '"m".input_usd_mtok: true is not a number'),
    ('{"m": {"input_usd_mtok": null, "output_usd_mtok": 1}}', '"m".input_usd_mtok: null is not a number'),
    ('{"m": {"input_usd_mtok": [1], "output_usd_mtok": 1}}', '"m".input_usd_mtok: [1] is not a number'),
    ('{"m": {"input_usd_mtok": 1, "output_usd_mtok": -0.5}}', '"m".output_usd_mtok: -0.5 is not a finite'),
    ('{"m": 3}', '"m": expected an object'),
    ('{" m": {"input_usd_mtok": 1, "output_usd_mtok": 1}}', '" m": not a model id'),
    ('{"a\\u0000b": {"input_usd_mtok": 1, "output_usd_mtok": 1}}', '"a\\u0000b": not a model id'),
    ('{"gpt-4o-mini": {"input_usd_mtok": 1, "output_usd_mtok": 1}}', '"gpt-4o-mini": a known cloud model'),
    ("{}", "file: expected a JSON object"),
    ("[]", "file: expected a JSON object"),
    ("", "file: empty"),
    ("[" * 200, "file: nested deeper"),
])
def test_hostile_tables_are_refused_with_the_field(tmp_path, content, field):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as caught:
        load_prices(path)
    message = str(caught.value)
    assert message.startswith(f"--prices {path}: ") and field in message and "\n" not in message, message


def test_files_that_are_not_price_tables_are_refused(tmp_path):
    (tmp_path / "big.json").write_bytes(b" " * (1 << 20) + b"{}")
    (tmp_path / "utf16.json").write_bytes('{"m": {}}'.encode("utf-16"))
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"m": ROW}).encode())
    for name, problem in [("big.json", "a price table is at most"), ("utf16.json", "not UTF-8"),
                          ("missing.json", "no such file"), (".", "not a regular file")]:
        with pytest.raises(InputError, match=problem):
            load_prices(tmp_path / name)
    assert load_prices(tmp_path / "bom.json").price("m").output_usd_mtok == 15.0, "a byte-order mark is skipped"


def _locomo(locomo_dir, out, *extra):
    return ("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:20", "--systems",
            "rag_turns", "--reader", "claude", "--llm", "local", "--answer-model", GATEWAY, "--no-progress", *extra,
            "--out", out)


def test_a_dry_run_prices_replies_within_the_reader_cap_and_states_the_worst_case(locomo_dir, tmp_path):
    prices, env = _write(tmp_path, {GATEWAY: ROW}), {"MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    runs = {cap: _memeval(*_locomo(locomo_dir, tmp_path / "run", "--dry-run", "--json", "--prices", prices,
                                  *(("--answer-max-tokens", cap) if cap else ())), env_extra=env)
            for cap in (None, 8, 600)}
    assert all(r.returncode == 0 for r in runs.values()), [r.stderr for r in runs.values()]
    default, tight, loose = (json.loads(runs[c].stdout)["answers"] for c in (None, 8, 600))
    assert tight["output_tokens_expected"] == tight["output_tokens_max"] == 20 * 8, "a cap below a typical reply"
    assert loose["output_tokens_expected"] == default["output_tokens_expected"] == 20 * 16
    assert loose["output_tokens_max"] == 20 * 600 and default["output_tokens_max"] >= default["output_tokens_expected"]
    assert loose["usd_max"] == pytest.approx((loose["input_tokens_est"] * 3 + 20 * 600 * 15) / 1e6)
    assert json.loads(runs[600].stdout)["usd_max_total"] == pytest.approx(loose["usd_max"])


def test_locomo_run_prices_its_dry_run_and_stops_at_the_budget_from_the_file(locomo_dir, tmp_path):
    free, priced = _dry_runs(tmp_path, lambda *extra: _locomo(locomo_dir, tmp_path / "run", "--json", *extra))
    prices, env = _write(tmp_path, {GATEWAY: ROW}), {"MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    answers = priced["answers"]
    assert free["usd_est_total"] == 0.0 and answers["to_send"] == free["answers"]["to_send"] == 20
    assert priced["usd_est_total"] == answers["usd_est"] > 0
    assert answers["usd_est"] == pytest.approx((answers["input_tokens_est"] * 3 + answers["output_tokens_expected"] * 15) / 1e6)
    assert f"--prices {prices}" in priced["note"] and not (tmp_path / "run").exists()

    other = _write(tmp_path, {GATEWAY: {"input_usd_mtok": 1, "output_usd_mtok": 2}}, "other.json")
    with FakeOpenAI(lambda body: "ok", local=True) as server:
        env["OPENAI_BASE_URL"] = server.url
        stopped = _memeval(*_locomo(locomo_dir, tmp_path / "run", "--prices", prices, "--budget-usd", "0.005"),
                           env_extra=env)
        sent = len(server.received)
        resumed = _memeval(*_locomo(locomo_dir, tmp_path / "run", "--prices", other), env_extra=env)
    last = stopped.stderr.strip().splitlines()[-1]
    assert stopped.returncode == 4 and last.startswith("memeval: incomplete") and "BudgetExceeded" in last, \
        stopped.stderr
    assert 0 < sent < 20, "priced at $0 all 20 questions would be sent; priced, the budget stops them"
    assert resumed.returncode == 0, "another price file changes dollars, not replies: the run resumes"
    assert len(server.received) == 20
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    digest = hashlib.sha256((tmp_path / "other.json").read_bytes()).hexdigest()
    assert manifest["config"]["prices"] == other and f"--prices {other}" in manifest["command_line"]
    assert f"priced from --prices {other} (sha256 {digest})" in manifest["llm"]["roles"]["answer"]["profile"]["note"]
    assert "prices" not in json.dumps(manifest["identity"])


def test_longmemeval_run_prices_its_dry_run_from_the_file(tmp_path):
    from tests.test_longmemeval_data import instance

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance("q1", "single-session-user")]))
    prices = _write(tmp_path, {GATEWAY: {"input_usd_mtok": 3000, "output_usd_mtok": 15000}})  # visible in cents
    argv = ("longmemeval", "run", "--data", data, "--systems", "full_context", "--reader", "llm", "--llm", "local",
            "--answer-model", GATEWAY, "--dry-run", "--out", tmp_path / "run")
    env = {"MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    free, priced = _memeval(*argv, env_extra=env), _memeval(*argv, "--prices", prices, env_extra=env)
    assert free.returncode == priced.returncode == 0, (free.stderr, priced.stderr)

    def reader(out: str) -> tuple[int, int, float]:
        line = next(x for x in out.splitlines() if x.startswith(f"reader {GATEWAY}: 1 calls to send"))
        tokens = re.search(r"~([\d,]+) input tokens .*≤([\d,]+) output tokens, ≈\$([\d.]+)$", line)
        assert tokens, line
        return int(tokens[1].replace(",", "")), int(tokens[2].replace(",", "")), float(tokens[3])

    (inputs, outputs, usd), (_, _, usd_free) = reader(priced.stdout), reader(free.stdout)
    assert usd_free == 0.0 and usd > 0 and usd == pytest.approx((inputs * 3000 + outputs * 15000) / 1e6, abs=0.005)
    assert not (tmp_path / "run").exists()
