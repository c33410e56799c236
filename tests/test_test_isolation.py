"""The suite touches only what it creates, whatever the developer's shell holds: conftest.py's session defaults win
over exported MEMEVAL_* directories (and matplotlib's, IPython's and Jupyter's caches), a key in the shell never reaches a test, and Hypothesis keeps its example
database and caches out of the checkout. Checked by running pytest on the probe below with such a shell."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.data.paths import project_root

PROBE = "MEMEVAL_ISOLATION_PROBE"
DIRECTORIES = ("MEMEVAL_CACHE_DIR", "MEMEVAL_ARTIFACTS", "MEMEVAL_FIGURES", "MEMEVAL_PROTOCOLS_DIR",
               "MEMEVAL_JUDGE_CALIBRATIONS_DIR", "MEMEVAL_LOCOMO_AUDIT_DIR", "MEMEVAL_LOCOMO_PLUS_DIR",
               "MEMEVAL_LOCAL_MODEL_DIR", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR")


@pytest.mark.skipif(PROBE not in os.environ, reason="run by test_a_developers_shell_does_not_reach_the_tests")
def test_probe():
    import hypothesis
    from hypothesis.configuration import storage_directory

    shell = Path(os.environ[PROBE])
    for name in DIRECTORIES:
        assert not Path(os.environ[name]).is_relative_to(shell), f"{name} is the shell's"
    assert "ANTHROPIC_API_KEY" not in os.environ and "ANTHROPIC_BASE_URL" not in os.environ
    assert not storage_directory("constants").path.is_relative_to(project_root())
    database = hypothesis.settings.default.database
    assert database is None or type(database).__name__ == "InMemoryExampleDatabase", database


def test_a_developers_shell_does_not_reach_the_tests(tmp_path):
    shell = tmp_path / "shell"
    env = {**os.environ, PROBE: str(shell), "ANTHROPIC_API_KEY": "sk-ant-from-the-shell",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", **{name: str(shell / name) for name in DIRECTORIES}}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"{Path(__file__)}::test_probe"], cwd=project_root(), env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert not shell.exists(), "nothing was written where the shell pointed"
