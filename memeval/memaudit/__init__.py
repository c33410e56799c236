"""MEMAUDIT: packages, the coverage objective, certified exact optima, writers, generators and sweeps."""
