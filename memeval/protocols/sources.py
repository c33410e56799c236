"""The pinned source files the published prompts come from: repository, commit, path and the file's SHA-256.

The hashes were taken from the files at these commits (`git show COMMIT:PATH | sha256sum`); a file with another
hash is refused, so a moved branch or an edited copy can never pass for the protocol. The templates' hash is
pinned too (of what extract.py takes from the file), so a stored protocol edited by hand — even with its recorded
hash recomputed — is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolSource:
    name: str  # what memeval calls the protocol (a file under data/protocols/)
    repo: str  # owner/name on GitHub
    commit: str
    path: str  # inside the repository
    sha256: str  # of the file's bytes at `commit`
    holds: str  # what the file gives this project, for the help text and the closing note
    templates_sha256: str = ""  # of what extract.py takes from it: a stored file must hold exactly these templates
    also_at: tuple[str, ...] = ()  # where the same bytes sit in the repository today (a folder is searched there too)

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"

    @property
    def origin(self) -> str:
        return f"{self.repo}@{self.commit[:12]}:{self.path}"


MEM0_JUDGE = ProtocolSource(
    "mem0_judge", "mem0ai/mem0", "aae5989e78a6188b3b047c104d960c9ad0927e75", "evaluation/metrics/llm_judge.py",
    "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c",
    "the Mem0 paper's CORRECT/WRONG judge prompt (`--judge binary`)",
    "15212fb630216cdfc38beef3db76166ebf6903d59345d0b423695061057e83c4")
LONGMEMEVAL_JUDGE = ProtocolSource(
    "longmemeval_judge", "xiaowu0162/LongMemEval", "d6dc8b50a2d9ac0c99485ea28fa5755c62414c34",
    "src/evaluation/evaluate_qa.py", "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251",
    "LongMemEval's five answer-check prompts by question type (`--judge longmemeval`)",
    "f8f78a6f7e071e2a0948846f8d5e38cb92b9cd89cc1fb07e8cf2a4494d401e28")
LONGMEMEVAL_READER = ProtocolSource(
    "longmemeval_reader", "xiaowu0162/LongMemEval", "9e0b455f4ef0e2ab8f2e582289761153549043fc",
    "src/generation/run_generation.py", "4f1eb3c69d7ad40f04065b9c0bc86f6582441018fc6ff751d162d66c95baf672",
    "LongMemEval's reader prompt and session layout (history as JSON, no key expansion)",
    "96b7ac0dce8d8cc43ee5820754ff32e6a86d56f1960a22cfb7c0247526780791")
LOCOMO_READER = ProtocolSource(
    "locomo_reader", "snap-research/locomo", "92286325a40764bee61f77824ddb95233b11c4d6",
    "task_eval/evaluate_claude.py", "303acb8981d2e31a1b36080d08eee961f0fb71cc1434cfe36d60c03997268fac",
    "the LoCoMo paper's QA prompts (`--reader claude_official`)",
    "bda02ba4cc87574f6c8879f8de2866917ff690827648a66a50d0e6a9b7ac2e50")

EVERMEMOS_PROMPTS = ProtocolSource(
    "evermemos_prompts", "EverMind-AI/EverMemOS", "1f2f083d9fd07fd6580064bbdfc7b97da39c47bb",
    "evaluation/config/prompts.yaml", "ba4f668e72c3fba74a58b8ee56064568fb9c6aae1441e4f0f7a8f5edba498ee9",
    "the EverMemOS evaluation framework's judge and answer prompts (`--judge evermemos`, `--reader evermemos_mem0|"
    "evermemos_memos|evermemos_cot`)",
    "653cc042ea2f64414786b0f54a33c545e464de8f58ce273119540d722f6a8f1f",
    also_at=("methods/EverCore/evaluation/config/prompts.yaml",))

SOURCES: dict[str, ProtocolSource] = {s.name: s for s in (MEM0_JUDGE, LONGMEMEVAL_JUDGE, LONGMEMEVAL_READER,
                                                           LOCOMO_READER, EVERMEMOS_PROMPTS)}
