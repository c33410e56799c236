"""One figure style for every figure, in the notebooks and the publication alike: sizes, fonts, panel letters, one
legend, and the one save function, which writes PDF and PNG side by side and the record of what was drawn
(publication/marks.py). The look of each system, writer and pruning rule is publication/looks.py."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib as mpl

from memeval.atomic import atomic_open, write_text_atomic
from memeval.publication.marks import figure_data

STYLE = {
    "figure.dpi": 110, "savefig.dpi": 200, "savefig.bbox": "tight", "font.size": 9, "axes.titlesize": 10,
    "axes.labelsize": 9, "legend.fontsize": 7, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
}
WIDTH_SINGLE, WIDTH_DOUBLE = 3.4, 7.0  # inches: one and two paper columns


def panel_letters(axes, y: float = 1.02) -> None:
    """(a), (b), … at the top left of each panel, as a paper refers to them."""
    for i, ax in enumerate(axes):
        ax.text(-0.02, y, f"({chr(ord('a') + i)})", transform=ax.transAxes, fontsize=9, fontweight="bold",
                ha="right", va="bottom")


def legend_below(fig, axes, ncol: int = 4) -> None:
    """One legend for the figure, below the panels, from every labelled artist (never over the data)."""
    handles, labels = {}, []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles:
                handles[label] = h
                labels.append(label)
    if handles:
        fig.legend([handles[k] for k in labels], labels, loc="upper center", bbox_to_anchor=(0.5, -0.01),
                   ncol=min(ncol, len(labels)), frameon=False)


@contextmanager
def style():
    """The shared rcParams for one figure. Leaving an rc_context restores every rcParam, `interactive` too: a
    notebook's first figure turns interactive mode on (pyplot's inline backend), and restoring it would stop
    every later figure of the session from being shown, so the state reached inside is kept."""
    with mpl.rc_context(STYLE):
        yield
        interactive = mpl.is_interactive()
    mpl.interactive(interactive)


def save_figure(fig, name: str, directory: str | Path) -> list[Path]:
    """`name`.pdf and `name`.png in `directory`, and `name`.json — what each panel drew, for the figure rules —
    when the figure was drawn through `marks.Panel`. The figure stays open, so a notebook cell still shows it;
    callers that draw many (memeval publish) close it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.pdf", directory / f"{name}.png"]
    for path in paths:  # through the output rule, like every file written: whole, a link's target, no /dev
        with atomic_open(path, "wb") as fh:
            fig.savefig(fh, format=path.suffix[1:], bbox_inches="tight", dpi=STYLE["savefig.dpi"])
    data = figure_data(fig, name)
    if data is not None:
        paths.append(directory / f"{name}.json")
        write_text_atomic(paths[-1], data.model_dump_json(indent=1) + "\n")
    return paths
