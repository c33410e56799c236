"""A fixed look per name — colour, marker, line style and bar hatch — for every system, writer and pruning rule,
the same in every figure whatever the drawing order. Plain data, below the marks layer (which draws with it) and
the style (which saves what the marks recorded)."""

from __future__ import annotations

import zlib

# Okabe & Ito's colour-blind-safe set, then Tol's muted set for the names beyond eight; writers also differ by
# marker (MARKERS), so no pair is told apart by hue alone.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
TOL_MUTED = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]
PALETTE = OKABE_ITO[:7] + TOL_MUTED
GREY = "#BBBBBB"

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


def color(name: str) -> str:
    """A fixed colour per name: from the table, else one chosen by the name's hash (so `memory_graph:hops=2`
    has the same colour in every figure and every session)."""
    if name in LOOKS:
        return LOOKS[name][0]
    return PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]
