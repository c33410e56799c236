"""One figure style for every publication figure: sizes, fonts, a fixed colour per system or writer, and a
saver that writes PDF and PNG side by side."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt

STYLE = {
    "figure.dpi": 110, "savefig.dpi": 200, "savefig.bbox": "tight", "font.size": 9, "axes.titlesize": 10,
    "axes.labelsize": 9, "legend.fontsize": 7, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
}
PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
           "#1f78b4", "#b2df8a", "#fb9a99", "#cab2d6"]
WIDTH_SINGLE, WIDTH_DOUBLE = 3.4, 7.0  # inches: one and two paper columns

_assigned: dict[str, str] = {}


def color(name: str) -> str:
    """The same colour for the same system or writer in every figure of a session."""
    if name not in _assigned:
        _assigned[name] = PALETTE[len(_assigned) % len(PALETTE)]
    return _assigned[name]


@contextmanager
def style():
    with mpl.rc_context(STYLE):
        yield


def save(fig, name: str, figures_dir: str | Path) -> list[Path]:
    """`name`.pdf and `name`.png in figures_dir."""
    directory = Path(figures_dir)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.pdf", directory / f"{name}.png"]
    for path in paths:
        fig.savefig(path, bbox_inches="tight", dpi=STYLE["savefig.dpi"])
    plt.close(fig)
    return paths
