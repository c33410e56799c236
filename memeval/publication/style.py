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
PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
           "#1f78b4", "#b2df8a", "#fb9a99", "#cab2d6"]
WIDTH_SINGLE, WIDTH_DOUBLE = 3.4, 7.0  # inches: one and two paper columns

COLOURS: dict[str, str] = {
    # memory systems
    "full_context": PALETTE[0], "rag_turns": PALETTE[1], "observations": PALETTE[2], "summaries": PALETTE[3],
    "memory_graph": PALETTE[4], "no_memory": PALETTE[7], "chunks": PALETTE[5],
    # writers
    "opt": "#000000", "gvt": PALETTE[0], "estimated_gvt": PALETTE[8], "greedy": PALETTE[1],
    "density_greedy": PALETTE[9], "density_only": PALETTE[2], "recency_raw": PALETTE[3], "fact_only": PALETTE[4],
    "summary_only": PALETTE[5], "no_tombstone_opt": PALETTE[6], "random": PALETTE[7],
    # pruning rules of exported stores
    "recency": PALETTE[3], "salience": PALETTE[8], "upper": PALETTE[6],
}


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
