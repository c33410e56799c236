"""The audit's files at one pinned commit, each with the SHA-256 of its bytes there (`git show COMMIT:PATH |
sha256sum`), so a moved branch or an edited copy never passes for the audit."""

from __future__ import annotations

from dataclasses import dataclass

AUDIT_REPO = "dial481/locomo-audit"
AUDIT_COMMIT = "9493fb4b4af4256ed17a18e8fd0b3cfdeec29539"
AUDIT_LICENCE = "CC BY-NC 4.0"


@dataclass(frozen=True)
class AuditFile:
    name: str  # what memeval calls the file
    path: str  # inside the repository, and under audit_dir()
    sha256: str  # of the file's bytes at AUDIT_COMMIT
    holds: str

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{AUDIT_REPO}/{AUDIT_COMMIT}/{self.path}"

    @property
    def origin(self) -> str:
        return f"{AUDIT_REPO}@{AUDIT_COMMIT[:12]}:{self.path}"


def _fc(config: str, sha256: str) -> AuditFile:
    return AuditFile(f"fc_{config}", f"fc-baseline/results/{config}/eval_results.json", sha256,
                     f"full context, {config}: the EverMemOS detailed_results of three judgment runs")


_FILES = (
    AuditFile("errors", "errors.json", "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e",
              "the 156 errors found in the key: type, corrected answer and evidence, the audit's reasoning"),
    AuditFile("answer_key", "ap-baseline/answer_key.json",
              "7345d1c23c5a182be7ccc35b184b405a136134f2e28323e41c6698322902737b",
              "the 1,540 non-adversarial questions with their gold answers"),
    AuditFile("v1_answers", "ap-baseline/v1/ap_eval_results.json",
              "080338f63c229d36b2a177cf4c0720a47aedff830f8202c908c40412d76f5feb",
              "specific-but-wrong answers to every question (v1)"),
    AuditFile("v1_scored", "ap-baseline/v1/ap_eval_results_scored.json",
              "a83882eda3ff02fd04dace6edddd0ceed533a245fedb3069ffde02a9503c4e3a",
              "the v1 answers with gpt-4o-mini's recorded judgments"),
    AuditFile("v2_answers", "ap-baseline/v2/ap_eval_results.json",
              "3118fcc86f683d32e0b7294f65345ff8d612e74bd8d5da9af82627d12b82810a",
              "vague-but-topical wrong answers to every question (v2)"),
    AuditFile("v2_scored", "ap-baseline/v2/ap_eval_results_scored.json",
              "3c32acbdcf667967a4e1f9f541b06566ae5e7361dc92f79f9043af7d068adc6b",
              "the v2 answers with gpt-4o-mini's recorded judgments"),
    _fc("gpt-4o-mini-memos", "1c55eb0ee66f9eb784c222ec54492cc39702652baa4e6c66b7fb89a7bb8a3d8f"),
    _fc("gpt-4o-mini-cot", "08212320401c65fa9a97f78dd18adfb1d527137ec9f04b1b518420aa8e651bfe"),
    _fc("gpt-4.1-mini-memos", "f573c091606b5c7691d7801ef30aada0bc8c54e406e31da3a2f807ab1ffa02e8"),
    _fc("gpt-4.1-mini-cot", "7fa10ba1d8976bdc215172f9d4e1840c015644b28e8e97de840b690051e354f3"),
)
AUDIT_FILES: dict[str, AuditFile] = {f.name: f for f in _FILES}
