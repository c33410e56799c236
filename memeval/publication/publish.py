"""Publishing: run a figure or table builder over stored results and write its files, recording what was
written, what is missing (a notebook to run first) and what was not measured (an LLM nobody ran). Notebook 07
and `memeval publish` share it, so both write the same files and the same metrics. The builders are the shared
ones (figures.FIGURES, tables.TABLES, the headline) and those each registered benchmark contributes
(publication/contribution.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt

from memeval.publication.contribution import contributions
from memeval.publication.figures import FIGURES
from memeval.publication.headline import headline_table
from memeval.publication.readers import MissingResults
from memeval.publication.style import save_figure
from memeval.publication.tables import TABLES, PublishedTable, save_table


@dataclass
class Published:
    name: str
    status: str  # written | missing
    message: str = ""
    caption: str = ""
    paths: list[str] = field(default_factory=list)
    markdown: str | None = None


def figures() -> dict[str, Callable[[Path], tuple]]:
    """Every publication figure by name: the shared ones, then each benchmark's in registration order."""
    return {**FIGURES, **{name: build for c in contributions() for name, build in c.figures.items()}}


def tables() -> dict[str, Callable[[Path], PublishedTable]]:
    """Every publication table by name: the shared ones, each benchmark's, and the headline last."""
    return {**TABLES, **{name: build for c in contributions() for name, build in c.tables.items()},
            "tab_headline": headline_table}


def publish_figure(name: str, root: Path, out: Path) -> Published:
    try:
        fig, caption = figures()[name](root)
    except MissingResults as exc:
        return Published(name, "missing", str(exc))
    paths = save_figure(fig, name, out)
    plt.close(fig)
    return Published(name, "written", caption=caption, paths=[str(p) for p in paths])


def publish_table(name: str, root: Path, out: Path) -> Published:
    try:
        table = tables()[name](root)
    except MissingResults as exc:
        return Published(name, "missing", str(exc))
    paths = save_table(table, name, out)
    return Published(name, "written", caption=table.caption, paths=[str(p) for p in paths],
                     markdown=table.markdown)


def publish_named(name: str, root: Path, out: Path) -> Published:
    """One figure (`fig_...`) or table (`tab_...`) by name; an unknown name is a one-line error listing the known."""
    known_figures, known_tables = figures(), tables()
    if name in known_figures:
        return publish_figure(name, root, out)
    if name in known_tables:
        return publish_table(name, root, out)
    from memeval.errors import InputError

    raise InputError("publish", name, f"no such figure or table; known: {', '.join([*known_figures, *known_tables])}")


def publish_all(root: Path, out: Path) -> list[Published]:
    return ([publish_figure(name, root, out) for name in figures()]
            + [publish_table(name, root, out) for name in tables()])


def publication_metrics(results: list[Published], root: Path | None = None) -> dict:
    """The publication's metrics.json: files per figure and table, captions, what was not drawn and which
    configuration of each notebook the numbers come from."""
    written = [r for r in results if r.status == "written"]
    known_figures, known_tables = figures(), tables()
    return {"figures": {r.name: r.paths for r in written if r.name in known_figures},
            "tables": {r.name: r.paths for r in written if r.name in known_tables},
            "missing": {r.name: r.message for r in results if r.status == "missing"},
            "captions": {r.name: r.caption for r in written},
            **({"configurations": configurations_read(root)} if root is not None else {})}


def configurations_read(root: Path) -> dict[str, dict]:
    """Per stored artifact: the directory read and whether it is the paper's configuration."""
    from memeval.artifacts import ARTIFACTS, UNCONFIGURED, stored_configuration

    out = {}
    for key, artifact in ARTIFACTS.items():
        if artifact.notebook in UNCONFIGURED:
            continue
        directory, which = stored_configuration(key, root)
        if which != "absent":
            out[key] = {"directory": str(directory / artifact.path), "configuration": which}
    return out
