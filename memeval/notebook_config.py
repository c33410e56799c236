"""Where a notebook run keeps its results: its parameters checked first, as the command line checks the same flags
(memeval.parameters), then its own configuration directory named by the artifact index (memeval.artifacts). A
module above both, so the index never calls the checks, which read the command line's parsers; a refused
parameter leaves no directory behind."""

from __future__ import annotations

import os
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
    check_run_inputs(notebook, namespace)
    values = configuration_parameters(notebook, namespace)
    path = artifacts_dir(notebook, explicit) / configuration_name(notebook, values)
    path.mkdir(parents=True, exist_ok=True)
    return path


# A notebook's parameters that its run reads only once it runs, by the run configuration's field each fills, and
# the notebooks whose run always reads them (08 reports missing data itself, so its data_path is not refused)
RUN_INPUTS = {"data_path": "data", "conversations": "conversations", "questions": "questions"}
INPUTS_CHECKED = ("01_prototype_scoring", "02_full_run", "09_trust")


def check_run_inputs(notebook: str, values: dict) -> None:
    """The data, conversations and questions a notebook hands its run, checked as the run checks them (its task's
    `prepare` finds and reads the data and selects the conversations and questions, writing nothing): a misspelled
    one is one line naming the parameter before the configuration directory, or a kernel, exists."""
    given = {name: values[name] for name in RUN_INPUTS if values.get(name) is not None}
    if notebook not in INPUTS_CHECKED or not given:
        return
    from memeval.benchmarks import load
    from memeval.engine.registry import run_kinds, task_class
    from memeval.errors import DataNotFoundError, InputError
    from memeval.parameters import ParameterError, notebook_runs
    from memeval.settings import setting_fields

    kind, where = notebook_runs()[notebook], f"notebook {notebook}"
    config_class = load(run_kinds()[kind].config)
    named = {f.metadata["setting"].spelling: name for name in RUN_INPUTS for f in setting_fields(config_class)
             if f.name == RUN_INPUTS[name]}
    config = config_class(out=os.devnull, **{RUN_INPUTS[name]: value for name, value in given.items()})
    try:
        task_class(kind)(config).prepare()
    except (DataNotFoundError, InputError) as exc:
        flag = getattr(exc, "source", None)
        if flag in named and named[flag] != "data_path":
            raise ParameterError(where, named[flag], f"{exc.field}: {exc.problem} (read as `memeval {kind} {flag}`)"
                                 ) from None
        raise ParameterError(where, "data_path", str(exc)) from None
