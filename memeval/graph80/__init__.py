"""graph80: the memory-graph study's synthetic corpus, systems and diagnostics."""
