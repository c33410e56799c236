"""Sweeping natural packages: writers on each package, pruning rules on each union package (an exported store
beside it). Kept here so that the MEMAUDIT core (`memaudit/sweep.py`) never imports `natural`."""

from __future__ import annotations

from pathlib import Path

from memeval.memaudit.package import Package
from memeval.memaudit.sweep import PackageSource, SweepConfig, WriterScorer, run_sweep
from memeval.natural.union import PRUNINGS, union_rows
from memeval.records import SweepRow, union_method


class UnionAwareScorer(WriterScorer):
    """Natural sweeps: a union package (an exported store beside a natural package) is scored by pruning
    rule at k = 1; every other package by the sweep's writers."""

    def planned(self, pkg: Package, config: SweepConfig) -> tuple[list[str], int]:
        system = (pkg.meta or {}).get("external_system")
        if not system:
            return super().planned(pkg, config)
        return [union_method(system, p) for p in PRUNINGS], 1

    def rows(self, pkg: Package, source: PackageSource, config: SweepConfig) -> list[SweepRow]:
        if not (pkg.meta or {}).get("external_system"):
            return super().rows(pkg, source, config)
        return union_rows(pkg, config.budgets, config.solver)


def run_natural_sweep(config: SweepConfig, out_dir: str | Path, progress: bool = True,
                      other_configuration: str = "refuse", restart: bool = False) -> dict:
    return run_sweep(config, out_dir, progress, scorer=UnionAwareScorer(), other_configuration=other_configuration,
                     restart=restart)
