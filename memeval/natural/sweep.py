"""Sweeping natural packages: writers on each package, pruning rules on each union package (an exported store
beside it). Kept here so that the MEMAUDIT core (`memaudit/sweep.py`) never imports `natural`."""

from __future__ import annotations

from pathlib import Path

from memeval.memaudit.outcomes import SweepSummary
from memeval.memaudit.package import Package
from memeval.memaudit.sweep import (
    PackageSource,
    SweepConfig,
    WriterScorer,
    check_packages_manifest,
    run_sweep,
)
from memeval.natural.union import PRUNINGS, union_rows
from memeval.records import SweepRow, union_method


def built_package_files(root: Path) -> list[Path]:
    """The files of `root` (and `root/union`) that only `memeval natural build` writes: its packages, by prefix."""
    from memeval.natural.source import package_prefixes

    return [p for prefix in package_prefixes() for folder in (root, root / "union")
            for p in folder.glob(f"{prefix}*.json")]


class UnionAwareScorer(WriterScorer):
    """Natural sweeps: a union package (an exported store beside a natural package) is scored by pruning
    rule at k = 1; every other package by the sweep's writers. A directory holding a `natural build`'s packages
    is swept only when its manifest says the build finished (`complete: true`, written last); a directory of
    other package files needs no manifest."""

    def check_directory(self, root: Path) -> None:
        from memeval.errors import InputError
        from memeval.natural.stores import unfinished_imports

        check_packages_manifest(root, required=bool(built_package_files(root)))
        unfinished = unfinished_imports(root)
        if unfinished:
            raise InputError(root / "imported_stores.json", unfinished[0], "its union import did not finish; rerun "
                             "`memeval natural union` for it before sweeping the directory")

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
                      other_configuration: str = "refuse", restart: bool = False) -> SweepSummary:
    return run_sweep(config, out_dir, progress, scorer=UnionAwareScorer(), other_configuration=other_configuration,
                     restart=restart)
