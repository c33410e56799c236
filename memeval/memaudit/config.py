"""`memeval memaudit validate | solve | generate | sweep`'s settings, each declared once (memeval.settings): the
commands' arguments, the checks of a notebook's parameters and the rerun command a sweep's manifest records are
built from these fields.

Light on purpose: `memeval --help` imports it to build the parser, and memeval.parameters reads it without the
command line (nothing from memeval.commands, no numpy)."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.flag_types import bounded, names, positive_finite_float, positive_finite_floats, positive_int
from memeval.invocation import command_from, path_text
from memeval.memaudit.names import ALL_WRITERS, DISTRIBUTIONS
from memeval.settings import Setting, flag

DEFAULT_SMALL_METHODS = ("opt", "gvt", "greedy", "density_greedy", "density_only", "recency_raw", "fact_only",
                         "summary_only", "no_tombstone_opt", "random")
DEFAULT_NATURAL_METHODS = ("opt", "gvt", "estimated_gvt", "density_only", "greedy", "recency_raw", "fact_only",
                           "summary_only", "random")
BACKENDS = ("local", "dask")
SOLVE_METHODS = ("opt", "bnb", "milp", "parts", "both", *ALL_WRITERS[1:])

PACKAGE = Setting("package", help="a memaudit.package/v1 JSON file")
BUDGETS = Setting("--budgets", type=positive_finite_floats, help="comma-separated budgets in the packages' cost unit")
FACTS = Setting("--facts", 3, type=bounded("--facts"))
UPDATES = Setting("--updates", 2, type=bounded("--updates"))
COUNT = Setting("--count", None, type=bounded("--count"))


@dataclass
class ValidateConfig:
    package: str = flag(PACKAGE)


@dataclass
class SolveConfig:
    package: str = flag(PACKAGE)
    budget: float | None = flag("--budget", None, type=positive_finite_float,
                                help="default: the package's own budget, if it sets one (generated and natural "
                                     "packages set none: pass it)")
    method: str = flag("--method", "opt", choices=SOLVE_METHODS,
                       help="opt: the certified optimum by the solver that suits the package (default); bnb, milp: "
                            "that solver; parts: the exact solver over independent parts (fast where experiences "
                            "share few units); both: B&B and MILP, checked against each other; any other name: that "
                            "writer")
    max_per_group: int | None = flag("--max-per-group", None, type=positive_int,
                                     help="candidates kept per experience (default: the package's own, usually 1)")
    json: bool = flag("--json", False, switch=True, help="print the result as one JSON object")


@dataclass
class GenerateConfig:
    family: str = flag("family", choices=("small",), help="the package family (MEMAUDIT-Small)")
    distribution: str = flag("--distribution", "base", choices=DISTRIBUTIONS,
                             help="base (default) or a stress distribution")
    seed: int = flag("--seed", 0, type=bounded("--seed"), help="the one seed of this package")
    facts: int = flag(FACTS, help="stable facts in the package (default 3)")
    updates: int = flag(UPDATES, help="preferences that are later changed (default 2)")
    count: int | None = flag(COUNT, help="override a stress distribution's item count")


@dataclass(kw_only=True)
class SweepConfig:
    """A sweep's settings, in the order its rerun command writes them. `kind`, the family, is the command's word;
    a natural sweep's packages are files, so it has no distribution (None) and leaves the seed count out of its
    line. `methods` None (or empty): the family's writers, as `--methods` left out gives them. `seeds` is 0 unless told, as
    every sweep made in Python recorded it (a natural one ignores it), and 500 on the command line."""

    kind: str = flag("family", choices=("small", "natural"), rerun=False,
                     help="small: generated packages (--distribution, --n-seeds); natural: the package files in "
                          "--packages")
    distribution: str | None = flag("--distribution", "base", choices=DISTRIBUTIONS,
                                    help="small: base (default) or a stress distribution")
    seeds: int = flag("--n-seeds", 0, cli_default=500, aliases=("--seeds",), type=bounded("--n-seeds"),
                      help=lambda default: f"how many seeds (default {default}; --seeds: older spelling)")
    seed_start: int = flag("--seed-start", 0, type=bounded("--seed-start"), help="the first seed (default 0)")
    packages_dir: str | None = flag("--packages", None, path=True, help="directory of package files (natural)")
    budgets: list[float] = flag(BUDGETS)
    methods: list[str] | None = flag("--methods", None, type=names, help="comma-separated writers")
    max_per_group: int | None = flag("--max-per-group", None, type=positive_int,
                                     help="candidates kept per experience (default: each package's own)")
    certify: str = flag("--certify", "none", choices=("none", "milp", "parts"),
                        help="milp: solve every OPT row by the MILP as well; parts: by the exact solver over "
                             "independent parts (memaudit/parts.py, faster); either stops (exit 3) if the solvers "
                             "disagree")
    solver: str = "auto"  # B&B on small packages, MILP on large ones (solvers.AUTO_BNB_MAX_GROUPS)
    facts: int = flag(FACTS, help="small: stable facts per package (default 3)")
    updates: int = flag(UPDATES, help="small: preferences later changed, per package (default 2)")
    count: int | None = flag(COUNT, help="small: override a stress distribution's item count")
    n_jobs: int = flag("--jobs", 2, type=bounded("--jobs"),
                       help="worker processes (joblib; with --backend dask and no --scheduler, the local cluster's "
                            "workers)")
    chunk: int = 25
    n_boot: int = 2000
    backend: str = flag("--backend", "local", choices=BACKENDS,  # rows do not depend on it
                        help="local: joblib processes; dask: joblib's Dask backend (pip install 'memeval[dask]')")
    scheduler: str | None = flag("--scheduler", None,  # None with backend dask: a LocalCluster of n_jobs
                                 help="address of an existing Dask scheduler (tcp://host:8786); default: a local "
                                      "cluster")

    def __post_init__(self) -> None:
        if self.kind == "natural":
            self.distribution = None
        if not self.methods:
            self.methods = list(DEFAULT_NATURAL_METHODS if self.kind == "natural" else DEFAULT_SMALL_METHODS)

    def command_line(self, out) -> list[str]:
        """This configuration as a `memeval memaudit sweep` command writing into `out`."""
        return [*command_from(self, ["memeval", "memaudit", "sweep", self.kind]), "--out", path_text(out)]
