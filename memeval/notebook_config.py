"""Where a notebook run keeps its results: its parameters checked first, as the command line checks the same flags
(memeval.parameters), then its own configuration directory named by the artifact index (memeval.artifacts). A
module above both, so the index never calls the checks, which read the command line's parsers; a refused
parameter leaves no directory behind."""

from __future__ import annotations

from pathlib import Path

from memeval.artifacts import artifacts_dir, configuration_name, configuration_parameters, notebook_parameters
from memeval.parameters import checked_parameters


def configuration_for(notebook: str, parameters: dict) -> str:
    """The configuration directory's name for a notebook executed with these (papermill) parameters, read as
    the notebook reads them (`"2,6"` is [2, 6])."""
    values = checked_parameters(notebook, {**notebook_parameters(notebook), **parameters})
    return configuration_name(notebook, configuration_parameters(notebook, values))


def configuration_dir(notebook: str, namespace: dict, explicit: str | Path | None = None) -> Path:
    """Where a notebook run with these parameters keeps its results: its own directory per configuration.
    The parameters are checked first, as the command line checks the same flags (memeval.parameters), and text
    papermill passed is read into the value it spells in `namespace` itself — a notebook passes its globals(), so
    `-p budgets "2,6"` is the list [2, 6] in the cells below — so a refused one leaves no directory behind."""
    given = {n: namespace[n] for n in notebook_parameters(notebook) if n in namespace}
    namespace.update(checked_parameters(notebook, given))
    values = configuration_parameters(notebook, namespace)
    path = artifacts_dir(notebook, explicit) / configuration_name(notebook, values)
    path.mkdir(parents=True, exist_ok=True)
    return path
