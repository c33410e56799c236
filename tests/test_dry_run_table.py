"""`locomo run --dry-run` as a person reads it: a table with rounded tokens and dollars, the judge's tokens said to
be an estimate while its answers do not exist; `--json` keeps the raw numbers."""

import json
import re

ARGS = ("locomo", "run", "--conversations", "conv-26", "--questions", "prototype", "--systems", "full_context",
        "--reader", "claude", "--judge", "graded", "--judge-runs", "2", "--no-progress", "--dry-run")


def test_the_dry_run_prints_a_rounded_table_and_the_raw_numbers_under_json(locomo_dir, tmp_path, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "run"
    printed = cli(*ARGS, "--data", locomo_dir, "--llm", "replay", "--out", out, check=True).stdout
    raw = json.loads(cli(*ARGS, "--data", locomo_dir, "--llm", "replay", "--out", out, "--json", check=True).stdout)
    assert not out.exists()
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line.split()[:1] in
            (["stage"], ["answers"], ["judge"], ["total"])}
    assert rows["stage"][:4] == ["stage", "requests", "cached", "to"]
    assert rows["judge"][1:4] == [f"{raw['judge']['requests']:,}", "0", f"{raw['judge']['to_send']:,}"]
    assert rows["total"][-2:] == [f"${raw['usd_est_total']:.2f}", f"${raw['usd_max_total']:.2f}"]
    assert not re.search(r"\d\.\d{3,}", printed), "no unrounded float reaches the table"
    tokens = raw["answers"]["input_tokens_est"]
    assert rows["answers"][4] == f"≈{round(tokens, 3 - len(str(tokens))):,}"
    assert "judge: input tokens estimate: 40 of 40 prompts judge an answer not written yet" in \
        " ".join(printed.split())
    assert raw["judge"]["token_count"].startswith("estimate: 40 of 40 prompts judge an answer not written yet")


def test_counted_judge_prompts_around_answers_not_written_are_still_an_estimate(fake, locomo_dir, tmp_path, cli):
    raw = json.loads(cli(*ARGS, "--data", locomo_dir, "--out", tmp_path / "run", "--json", check=True).stdout)
    assert raw["answers"]["token_count"].startswith("exact"), "the answer prompts are the real ones: counted"
    assert raw["judge"]["token_count"] == ("estimate: 40 of 40 prompts judge an answer not written yet, a short "
                                           f"placeholder in its place; {raw['answers']['token_count']}")
    assert fake.received == [], "a dry run sends no message"
