from __future__ import annotations

from pathlib import Path

import pytest

from memeval.data.paths import project_root

SHARED_LOCOMO = project_root().parent / "shared" / "data" / "locomo"


def _hypothesis_outside_the_checkout() -> None:
    """Hypothesis keeps its example database and caches (constants, unicode data) in ./.hypothesis, the checkout,
    unless told: here a temporary directory removed at exit, and the database in memory. Set when this file is
    imported, before the test modules build their settings."""
    import atexit
    import shutil
    import tempfile

    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="memeval-hypothesis-")
    atexit.register(shutil.rmtree, home, True)
    set_hypothesis_home_dir(home)
    settings.register_profile("memeval-tests", database=None)
    settings.load_profile("memeval-tests")


_hypothesis_outside_the_checkout()


def _tool_caches_outside_the_home() -> None:
    """Matplotlib's font cache, IPython's profile and Jupyter's kernel connection files go to the home folder unless
    told: here a temporary directory removed at exit, set when this file is imported (before any test module imports
    matplotlib) and inherited by the notebooks' kernels."""
    import atexit
    import os
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="memeval-tool-caches-"))
    atexit.register(shutil.rmtree, home, True)
    for name in TOOL_CACHES:
        os.environ[name] = str(home / name.lower())


TOOL_CACHES = ("MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR")
_tool_caches_outside_the_home()


@pytest.fixture(scope="session", autouse=True)
def _writes_stay_in_temporary_directories(tmp_path_factory):
    """Nothing a test runs writes into the checkout or where the developer's shell points: the LLM cache, the
    notebooks' artifacts and figures are a session directory even when the shell exports them (a test that needs its
    own sets its own); no fetched protocol or data set is read from the checkout."""
    import os

    root = tmp_path_factory.mktemp("defaults")
    defaults = {"MEMEVAL_CACHE_DIR": root / "cache", "MEMEVAL_ARTIFACTS": root / "artifacts",
                "MEMEVAL_FIGURES": root / "figures",
                "MEMEVAL_PROTOCOLS_DIR": root / "protocols",  # none fetched: a test that needs them writes its own
                "MEMEVAL_JUDGE_CALIBRATIONS_DIR": root / "judge-calibrations",  # calibration runs register here
                "MEMEVAL_LOCOMO_AUDIT_DIR": root / "locomo-audit",  # not fetched: a test that needs it writes its own
                "MEMEVAL_LOCOMO_PLUS_DIR": root / "locomo-plus",  # likewise
                "MEMEVAL_LOCAL_MODEL_DIR": root / "models"}  # Gemma's file is assembled here (≈1 s), not in ~/.cache
    before = {name: os.environ.get(name) for name in defaults}
    for name, value in defaults.items():
        os.environ[name] = str(value)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def locomo_dir() -> Path:
    if not (SHARED_LOCOMO / "locomo10_v2").is_dir():
        pytest.fail(f"LoCoMo test data missing at {SHARED_LOCOMO} (developer machines and CI have it)")
    return SHARED_LOCOMO


@pytest.fixture(scope="session")
def conversations(locomo_dir):
    from memeval.benchmarks.locomo.data import load_locomo

    return load_locomo(locomo_dir / "locomo10_v2")


@pytest.fixture()
def fake(monkeypatch):
    """A loopback Anthropic-compatible server echoing the first message; the real SDK is pointed at it."""
    from tests.fake_anthropic import TEST_SECRET, FakeAnthropic, first_text

    with FakeAnthropic(responder=lambda body: f"echo: {first_text(body)}") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch):
    """A key or base URL in the developer's shell must not turn a test's replay into live calls."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture()
def fake_openai(monkeypatch):
    """A loopback OpenAI chat-completions server replying 'ok'; the real openai SDK is pointed at it."""
    from tests.fake_openai import TEST_KEY, FakeOpenAI

    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


@pytest.fixture()
def cli(capsys):
    """`memeval ARGS...` in this process (stdout, stderr, exit code), for tests that do not test the process
    boundary itself; `check=True` fails on a non-zero exit like subprocess.run(check=True)."""
    from dataclasses import dataclass

    from memeval.cli import main

    @dataclass
    class Result:
        returncode: int
        stdout: str
        stderr: str

    def run(*argv, check: bool = False) -> Result:
        capsys.readouterr()
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse rejects its own arguments this way
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        if check and code != 0:
            pytest.fail(f"memeval {' '.join(map(str, argv))} exited {code}: {err}")
        return Result(code, out, err)

    return run
