"""The readers and judge protocols a LoCoMo run can name (kept import-light: the CLI builds its parsers from
these)."""

EVERMEMOS_READERS = ("evermemos_mem0", "evermemos_memos", "evermemos_cot")  # qa/evermemos_reader.py
ANSWERERS = ("extractive", "claude", "claude_official", *EVERMEMOS_READERS)
LLM_ANSWERERS = ("claude", "claude_official", *EVERMEMOS_READERS)  # claude_official: the LoCoMo paper's (qa/official.py)
JUDGE_PROTOCOLS = ("graded", "binary", "evermemos")
JUDGE_CHOICES = ("none", *JUDGE_PROTOCOLS)
