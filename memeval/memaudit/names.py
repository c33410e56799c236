"""The names MEMAUDIT's command line offers: its writers and its generated-package distributions. A module that
imports nothing, so `memeval --help` lists them without loading the solvers and generators (numpy); writers.py
and generators.py read the names from here, and tests/test_memaudit_names.py holds them to what those run."""

EXACT_WRITERS = ("opt", "fact_only", "summary_only", "no_tombstone_opt")
HEURISTIC_WRITERS = ("gvt", "estimated_gvt", "density_only", "greedy", "density_greedy", "recency_raw", "random")
ALL_WRITERS = EXACT_WRITERS + HEURISTIC_WRITERS
DISTRIBUTIONS = (
    "base", "update_chain", "temporal_interval", "density_trap", "scope_shift", "summary_tradeoff",
    "redundancy_heavy", "abstention_hard",
)
