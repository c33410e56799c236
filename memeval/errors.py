"""Errors that reach the user as one line: which file, which field, what is wrong."""

from __future__ import annotations


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
