"""Markdown tables and reports built from per-question rows (pure; the caller writes the file)."""
