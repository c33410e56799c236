"""The natural-package build's published settings (import-light: the CLI shows them in --help)."""

SAMPLE_SEED = 87  # the examination order of LoCoMo questions
TARGET_ACCEPTED = 87  # packages accepted, as in the MEMAUDIT paper's Natural-87
