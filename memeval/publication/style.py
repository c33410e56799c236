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

# One entry per name: colour, marker, line style and bar hatch, so every pair differs by at least two of them
# (colour alone is not enough for a reader with a colour-vision deficiency or a grey-scale print). No two
# writers share a hue family: the two greens and two oranges of earlier figures were told apart by nobody.
LOOKS: dict[str, tuple[str, str, str, str]] = {
    # memory systems
    "full_context": ("#0072B2", "o", "-", ""), "rag_turns": ("#E69F00", "s", "--", "///"),
    "observations": ("#009E73", "^", "-.", "\\\\\\"), "summaries": ("#CC79A7", "D", ":", "..."),
    "memory_graph": ("#D55E00", "v", (0, (5, 1)), "xx"), "no_memory": ("#666666", "x", (0, (1, 1)), "--"),
    "chunks": ("#56B4E9", "P", (0, (3, 1, 1, 1)), "++"),
    "memory_graph:hops=0": ("#CC79A7", "v", (0, (5, 1)), "xx"), "memory_graph:hops=1": ("#E69F00", "X", "-.", "\\\\\\"),
    "memory_graph:hops=2": ("#117733", "p", ":", "oo"),
    # writers
    "opt": ("#000000", "*", "-", ""), "gvt": ("#0072B2", "o", "-", ""),
    "estimated_gvt": ("#56B4E9", "h", "--", "..."), "greedy": ("#E69F00", "s", "-", "///"),
    "density_greedy": ("#999933", "<", "--", "\\\\\\"), "density_only": ("#D55E00", "D", ":", "xx"),
    "recency_raw": ("#CC79A7", "v", "-.", "++"), "fact_only": ("#009E73", "^", "-", "--"),
    "summary_only": ("#332288", ">", (0, (5, 1)), "oo"), "no_tombstone_opt": ("#882255", "P", (0, (1, 1)), "||"),
    "random": ("#666666", "x", (0, (3, 1, 1, 1)), ".."),
    # pruning rules of exported stores
    "recency": ("#CC79A7", "v", "-.", "++"), "salience": ("#56B4E9", "h", "--", "..."),
    "upper": ("#000000", "*", "-", ""),
}
COLOURS: dict[str, str] = {name: look[0] for name, look in LOOKS.items()}
MARKERS: dict[str, str] = {name: look[1] for name, look in LOOKS.items()}
_SHAPES = ["o", "s", "^", "D", "v", "P", "X", "h", "<", ">", "p", "*"]
_DASHES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1)), (0, (3, 1, 1, 1))]
_HATCHES = ["", "///", "\\\\\\", "...", "xx", "++", "--", "||", "oo"]
SAFE_COLOURS = frozenset([*PALETTE, "#000000", "#666666", GREY])


def _pick(name: str, options: list, salt: str):
    return options[zlib.crc32((salt + name).encode()) % len(options)]


def marker(name: str) -> str:
    return LOOKS[name][1] if name in LOOKS else _pick(name, _SHAPES, "marker")


def linestyle(name: str):
    return LOOKS[name][2] if name in LOOKS else _pick(name, _DASHES, "dash")


def hatch(name: str) -> str:
    return LOOKS[name][3] if name in LOOKS else _pick(name, _HATCHES, "hatch")


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
    if name in LOOKS:
        return LOOKS[name][0]
    return PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]


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
    from memeval.atomic import atomic_open, write_text_atomic
    from memeval.publication.marks import figure_data

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
