"""Errors that reach the user as one line: which file, which field, what is wrong."""

from __future__ import annotations

# Exit codes of every `memeval` command (docs/layout.md): 0 only when every requested row exists.
EXIT_OK = 0
EXIT_FAILED = 1  # a deterministic API rejection or a failed notebook: nothing more can be done by rerunning
EXIT_INPUT = 2  # bad input or flags, a refused directory: one line naming the file and field, nothing written
EXIT_UNCERTIFIED = 3  # a sweep's two exact solvers disagreed (docs/memaudit.md)
EXIT_INCOMPLETE = 4  # the run finished but some requested rows are missing (failed calls, budget, plug-in errors)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143  # `kill` (SIGTERM): 128 + 15, as a shell reports a process that signal ended


class Terminated(KeyboardInterrupt):
    """SIGTERM in a memeval command: it leaves the way Ctrl-C does (lock released, rows whole, the run's manifest
    left incomplete for a rerun to resume), not killed between two writes."""


class InputError(ValueError):
    """Bad input named by its source and field; the CLI prints it as one line and exits 2."""

    def __init__(self, source: str, field: str, problem: str):
        self.source = str(source)
        self.field = field
        self.problem = problem
        super().__init__(f"{self.source}: {field}: {problem}")


class DataNotFoundError(FileNotFoundError):
    """No data set where we looked; the message says which command fetches it."""


class NotebookFailed(RuntimeError):
    """A notebook raised during `memeval reproduce`; the executed copy (with the traceback) is kept for reading."""

    def __init__(self, notebook: str, executed: str, cause: str):
        self.executed = executed
        super().__init__(f"{notebook} failed ({cause}); the executed copy with the error is {executed}")


class PluginFailed(RuntimeError):
    """A plug-in memory system's own `ingest` or `search` raised (a `sys.exit` in plug-in code included). A run
    records it in the question's answer row and goes on; with `--fail-fast`, or where there is no row to record it
    in (a dry run), it reaches the user as one line naming the system, the question and the exception."""

    def __init__(self, system: str, stage: str, where: str, cause: BaseException):
        self.system, self.stage, self.where = system, stage, where
        text = " ".join(str(cause).split())  # one line, whatever the plug-in's message holds
        self.cause = f"{type(cause).__name__}: {text}" if text else type(cause).__name__
        super().__init__(f"plug-in {system} failed in {stage} on {where}: {self.cause}")

    @property
    def row_error(self) -> str:
        """The answer row's `error`: starts with `plugin:` so plug-in failures are told apart from API failures."""
        return f"plugin: {self.cause} (raised by {self.system} in {self.stage})"
