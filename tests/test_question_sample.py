"""`--questions N` is a seeded sample stratified by category (the first N in file order are mostly categories 1–3
and say little about the rest); `first:N` keeps the file-order selection, and runs recorded with a bare N before
samples existed resume under it."""

from __future__ import annotations

import json
from collections import Counter

from memeval.qa.selection import select_questions


def _conv26(conversations):
    return next(c for c in conversations if c.sample_id == "conv-26")


def test_n_is_a_seeded_sample_with_every_category(conversations):
    conv26 = _conv26(conversations)
    present = {q.category for q in conv26.qa}
    for n in (5, 12, 40):
        chosen = select_questions(conv26, str(n))
        assert len(chosen) == n and {q.category for q in chosen} == present
        assert [q.index for q in chosen] == sorted(q.index for q in chosen)  # file order
        assert select_questions(conv26, f"sample:{n}") == chosen
    # the first 5 in file order hold fewer categories: the sample is not that selection
    assert len({q.category for q in conv26.qa[:5]}) < len(present)
    # proportional beyond one each: the largest category gets the most
    counts = Counter(q.category for q in select_questions(conv26, "40"))
    sizes = Counter(q.category for q in conv26.qa)
    assert max(counts, key=counts.get) == max(sizes, key=sizes.get)
    assert select_questions(conv26, "12", seed=1) != select_questions(conv26, "12", seed=0)
    assert select_questions(conv26, "12", seed=1) == select_questions(conv26, "12", seed=1)


def test_first_n_is_the_old_file_order(conversations):
    conv26 = _conv26(conversations)
    assert select_questions(conv26, "first:7") == list(conv26.qa[:7])


def test_the_help_says_what_n_means(cli):
    shown = " ".join(cli("locomo", "run", "--help").stdout.split())
    assert "sample:N" in shown and "first:N" in shown and "stratified by category" in shown
    assert "--question-seed" in shown


def _run(cli, locomo_dir, out, *extra):
    return cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--out", out, "--no-progress",
               *extra)


def test_the_seed_is_part_of_the_identity(cli, locomo_dir, tmp_path):
    out = tmp_path / "run"
    assert _run(cli, locomo_dir, out, "--questions", "4").returncode == 0
    fixed = json.loads((out / "manifest.json").read_text())["identity"]["fixed"]
    assert fixed["questions"] == "sample:4" and fixed["question_seed"] == 0
    refused = _run(cli, locomo_dir, out, "--questions", "4", "--question-seed", "3")
    assert refused.returncode == 2 and "question_seed: 0 here, 3 asked" in refused.stderr
    assert _run(cli, locomo_dir, out, "--questions", "sample:4").returncode == 0  # the same run, resumed


def test_a_run_recorded_with_a_bare_n_resumes_under_first_n(cli, locomo_dir, tmp_path):
    """Directories written before samples existed recorded `questions: "3"` for the first 3; `first:3` records the
    same identity, so such a directory resumes (and `3`, now a sample, is refused there rather than mixed in)."""
    out = tmp_path / "run"
    assert _run(cli, locomo_dir, out, "--questions", "first:3").returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["identity"]["fixed"]["questions"] == "3" and "question_seed" not in manifest["identity"]["fixed"]
    again = _run(cli, locomo_dir, out, "--questions", "first:3")
    assert again.returncode == 0, again.stderr
    before = (out / "manifest.json").read_bytes()
    refused = _run(cli, locomo_dir, out, "--questions", "3")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "the first 3 questions per conversation in file order" in refused.stderr
    assert "resume it with --questions first:3" in refused.stderr and (out / "manifest.json").read_bytes() == before
    assert _run(cli, locomo_dir, out, "--questions", "3", "--restart").returncode == 0  # a sample, the old run aside


def test_bad_specs_are_one_line(cli, locomo_dir, tmp_path):
    for spec, says in (("first:0", "from 1 to 100,000"), ("some:3", "sample:N or first:N"), ("x", "first:N"),
                       ("9" * 30, "from 1 to 100,000"), ("5_000", "first:N"), ("sample:\u0665", "first:N")):
        result = _run(cli, locomo_dir, tmp_path / "r", "--questions", spec)
        assert result.returncode == 2 and says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    negative = _run(cli, locomo_dir, tmp_path / "r", "--questions", "3", "--question-seed", "-1")
    assert negative.returncode == 2 and "--question-seed" in negative.stderr
    assert not (tmp_path / "r").exists()
