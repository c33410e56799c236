"""One figure style for every figure, in the notebooks and the publication alike: sizes, fonts, a fixed colour
per system, writer and pruning rule (the same in every figure, whatever the drawing order), and the one save
function, which writes PDF and PNG side by side."""

from __future__ import annotations

import zlib
from contextlib import contextmanager
from pathlib import Path

import matplotlib as mpl

STYLE = {
    "figure.dpi": 110, "savefig.dpi": 200, "savefig.bbox": "tight", "font.size": 9, "axes.titlesize": 10,
    "axes.labelsize": 9, "legend.fontsize": 7, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
}
# Okabe & Ito's colour-blind-safe set, then Tol's muted set for the names beyond eight; writers also differ by
# marker (MARKERS), so no pair is told apart by hue alone.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
TOL_MUTED = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]
PALETTE = OKABE_ITO[:7] + TOL_MUTED
GREY = "#BBBBBB"
WIDTH_SINGLE, WIDTH_DOUBLE = 3.4, 7.0  # inches: one and two paper columns

COLOURS: dict[str, str] = {
    # memory systems
    "full_context": "#0072B2", "rag_turns": "#E69F00", "observations": "#009E73", "summaries": "#CC79A7",
    "memory_graph": "#D55E00", "no_memory": "#999999", "chunks": "#56B4E9",
    # writers
    "opt": "#000000", "gvt": "#0072B2", "estimated_gvt": "#56B4E9", "greedy": "#E69F00",
    "density_greedy": "#999933", "density_only": "#D55E00", "recency_raw": "#CC79A7", "fact_only": "#009E73",
    "summary_only": "#117733", "no_tombstone_opt": "#882255", "random": "#999999",
    # pruning rules of exported stores
    "recency": "#CC79A7", "salience": "#56B4E9", "upper": "#882255",
}
MARKERS: dict[str, str] = {
    "gvt": "o", "estimated_gvt": "o", "greedy": "s", "density_greedy": "s", "density_only": "D", "recency_raw": "v",
    "fact_only": "^", "summary_only": "^", "no_tombstone_opt": "P", "random": "x", "opt": "*",
}


def marker(name: str) -> str:
    return MARKERS.get(name, "o")


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


def color(name: str) -> str:
    """A fixed colour per name: from the table, else one chosen by the name's hash (so `memory_graph:hops=2`
    has the same colour in every figure and every session)."""
    if name in COLOURS:
        return COLOURS[name]
    return PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]


@contextmanager
def style():
    with mpl.rc_context(STYLE):
        yield


def save_figure(fig, name: str, directory: str | Path) -> list[Path]:
    """`name`.pdf and `name`.png in `directory`. The figure stays open, so a notebook cell still shows it;
    callers that draw many (memeval publish) close it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.pdf", directory / f"{name}.png"]
    for path in paths:
        fig.savefig(path, bbox_inches="tight", dpi=STYLE["savefig.dpi"])
    return paths
