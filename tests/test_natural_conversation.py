"""Conversation-scale packages: one LoCoMo conversation as one package (every turn, every question's evidence
units), its union packages with the built-in stores, byte-identical rebuilds, and a natural sweep over them with
every OPT certified by both solvers."""

import json

from memeval.benchmarks.locomo.natural_conversation import build_conversation_package, questions
from memeval.natural.build import load_packages
from memeval.natural.union import union_package


def test_one_conversation_is_one_package_of_all_its_turns_and_questions(conversations):
    conversation = next(c for c in conversations if c.sample_id == "conv-26")
    pkg = build_conversation_package(conversation)
    turns = [t.dia_id for s in conversation.sessions for t in s.turns]
    assert [e.id for e in pkg.experiences] == turns
    asked = questions(conversation)
    assert pkg.meta["questions"] == len(asked) == len(pkg.queries)
    assert abs(sum(u.weight for u in pkg.units) - len(asked)) < 1e-9, "every question weighs 1"
    assert {c.kind for c in pkg.candidates} >= {"raw", "fact", "dated_fact", "summary"}
    assert pkg.compiled.n_candidates > 1000 and "no tombstone" in pkg.meta["tombstones"]
    observations = union_package(pkg, conversation, "observations")
    external = [c for c in observations.candidates if c.kind == "external"]
    assert len(external) == len(conversation.observations)
    covered = {u for c, u, _ in observations.coverage if c.endswith(":external")}
    assert covered and covered <= {u.id for u in pkg.units}


def test_build_and_sweep_with_every_opt_certified(locomo_dir, tmp_path, cli):
    out = tmp_path / "conv"
    result = cli("natural", "build", "--scope", "conversation", "--conversations", "conv-26,conv-30", "--data",
                 locomo_dir, "--out", out, check=True)
    summary = json.loads(result.stdout)
    assert set(summary["sizes"]) == {"locomo-conversation-conv-26", "locomo-conversation-conv-30"}
    assert len(list((out / "union").glob("*.json"))) == 6 and len(load_packages(out)) == 2
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.json")}
    cli("natural", "build", "--scope", "conversation", "--conversations", "conv-26,conv-30", "--data", locomo_dir,
        "--out", out, check=True)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*.json")} == first
    sweep = cli("memaudit", "sweep", "natural", "--packages", out, "--budgets", "300,1500", "--methods",
                "opt,gvt,density_only,recency_raw", "--certify", "milp", "--out", tmp_path / "sweep", "--no-progress",
                check=True)
    assert "OPT certified 4/4, solver disagreements 0; union rows certified 36/36" in sweep.stdout


def test_conversations_outside_the_conversation_scope_is_refused(locomo_dir, tmp_path, cli):
    """The question scope samples Natural-87 across every conversation: --conversations there used to be ignored
    silently (a trial built all 87 packages when it asked for conv-26)."""
    refused = cli("natural", "build", "--conversations", "conv-26", "--data", locomo_dir, "--out", tmp_path / "q")
    assert refused.returncode == 2 and "--conversations" in refused.stderr and "--scope conversation" in refused.stderr
    assert not (tmp_path / "q").exists()
