"""`memeval memaudit ...` and `memeval natural ...` take their flags from configurations declared once
(memeval/memaudit/config.py, memeval/natural/config.py): a sweep's recorded rerun command is built from
`SweepConfig` and parses back to it, and notebook parameters are checked by those declarations without the
command line."""

import shlex
import subprocess
import sys
from dataclasses import asdict

import pytest

from memeval.cli import build_parser
from memeval.memaudit.config import DEFAULT_NATURAL_METHODS, DEFAULT_SMALL_METHODS, SweepConfig
from memeval.natural.config import BuildConfig, SensitivityConfig
from memeval.parameters import ParameterError, checked_parameters
from memeval.settings import config_from

SMALL = "memaudit sweep small --n-seeds 2 --budgets 4 --out /tmp/o"


def _sweep(argv: str) -> SweepConfig:
    return config_from(build_parser().parse_args(shlex.split(argv)), SweepConfig)


@pytest.mark.parametrize(("argv", "line"), [
    (SMALL, "memeval memaudit sweep small --n-seeds 2 --budgets 4 --methods "
            f"{','.join(DEFAULT_SMALL_METHODS)} --out /tmp/o"),
    ("memaudit sweep small --budgets 2,4.5 --n-seeds 500 --distribution density_trap --seed-start 9 --methods opt,gvt "
     "--certify milp --facts 4 --updates 0 --count 3 --jobs 1 --backend dask --scheduler tcp://h:1 --max-per-group 2 "
     "--out /tmp/o --restart --no-progress",
     "memeval memaudit sweep small --distribution density_trap --seed-start 9 --budgets 2,4.5 --methods opt,gvt "
     "--max-per-group 2 --certify milp --facts 4 --updates 0 --count 3 --jobs 1 --backend dask --scheduler tcp://h:1 "
     "--out /tmp/o"),
    ("sweep natural --packages /tmp/p --budgets 30,60,100 --distribution update_chain --certify parts --out /tmp/o",
     "memeval memaudit sweep natural --packages /tmp/p --budgets 30,60,100 --methods "
     f"{','.join(DEFAULT_NATURAL_METHODS)} --certify parts --out /tmp/o"),
])
def test_a_sweeps_rerun_command_is_the_line_it_always_recorded_and_parses_back(argv, line):
    config = _sweep(argv)
    assert shlex.join(config.command_line("/tmp/o")) == line
    assert _sweep(line.removeprefix("memeval ")) == config


def test_a_sweep_made_in_python_keeps_what_it_recorded():
    """The configuration's defaults are the command line's except the seed count, which a sweep made in Python has
    always recorded as 0 (a natural sweep ignores it); the family decides the writers and a natural sweep has no
    distribution, whichever way it was made."""
    natural = SweepConfig(kind="natural", budgets=[30], packages_dir="p")
    assert (natural.distribution, natural.seeds, natural.methods) == (None, 0, list(DEFAULT_NATURAL_METHODS))
    assert asdict(natural) == asdict(_sweep("memaudit sweep natural --packages p --budgets 30 --out o")) | \
        {"seeds": 0}
    small = SweepConfig(kind="small", budgets=[2], seeds=3)
    assert (small.distribution, small.methods) == ("base", list(DEFAULT_SMALL_METHODS))
    assert shlex.join(natural.command_line("o")).split(" --out ")[0] == \
        f"memeval memaudit sweep natural --packages p --budgets 30 --methods {','.join(DEFAULT_NATURAL_METHODS)}"


def test_the_natural_commands_read_their_configurations_defaults():
    args = build_parser().parse_args(["natural", "build", "--out", "o"])
    assert config_from(args, BuildConfig) == BuildConfig()
    args = build_parser().parse_args(["natural", "sensitivity", "--packages", "p", "--output", "s.json"])
    assert config_from(args, SensitivityConfig) == SensitivityConfig(packages="p") and args.budgets == [30, 60, 100]


@pytest.mark.parametrize(("notebook", "name", "value", "said"), [
    ("03_memaudit_small", "seeds", "0", "(read as `memeval memaudit sweep --n-seeds`)"),
    ("03_memaudit_small", "jobs", 1000, "expected an integer from 1 to 256"),
    ("04_memaudit_validity", "budget", "-1", "(read as `memeval memaudit solve --budget`)"),
    ("05_memaudit_natural87", "source", "nope", "expected one of locomo, longmemeval"),
    ("05_memaudit_natural87", "noise_rate", 2, "(read as `memeval natural sensitivity --noise-rate`)"),
])
def test_memaudit_and_natural_parameters_are_read_by_the_declarations(notebook, name, value, said):
    with pytest.raises(ParameterError, match=f"notebook {notebook}: {name}: .*" + said.replace("(", r"\(")
                       .replace(")", r"\)")):
        checked_parameters(notebook, {name: value})


def test_checking_these_notebooks_parameters_builds_no_parser():
    """The MEMAUDIT and natural notebooks' parameters are read by their configurations' declarations: nothing of
    the command line is imported (memeval.commands imports the notebook runner, which imports this check)."""
    code = ("import sys; from memeval.parameters import checked_parameters\n"
            "for nb in ('03_memaudit_small', '04_memaudit_validity', '05_memaudit_natural87'):\n"
            "    checked_parameters(nb, {'budgets': '2,6', 'seeds': '5', 'certify': 'milp', 'source': 'locomo'})\n"
            "print(sorted(m for m in sys.modules if m.startswith('memeval.commands') or m == 'numpy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

