"""The readers and judge protocols a LoCoMo run can name (kept import-light: the CLI builds its parsers from
these)."""

ANSWERERS = ("extractive", "claude", "claude_official")
LLM_ANSWERERS = ("claude", "claude_official")  # claude_official: the LoCoMo paper's setting (qa/official.py)
JUDGE_PROTOCOLS = ("graded", "binary")
JUDGE_CHOICES = ("none", *JUDGE_PROTOCOLS)
