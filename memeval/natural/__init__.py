"""LoCoMo-Natural packages: MEMAUDIT packages built from LoCoMo annotations, rule-adjudicated, no LLM."""
