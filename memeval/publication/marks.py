"""Every data mark of a figure goes through a `Panel`, which draws it and records what it drew: values,
intervals, style and the protocol that measured them. `save_figure` writes that record beside the image
(`name.json`), so the figure rules (`publication/figure_rules.py`) are checked on what was saved, not on what a
figure function meant to draw.

Why a layer and not plain matplotlib calls: the rules a reviewer applies (no published number from another
protocol on our axes, every series told apart by more than colour, zero visibly different from "not run", an
interval on every estimate, one category convention) need facts the pixels do not carry.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from memeval.publication.looks import GREY, color, hatch, linestyle, marker

Uncertainty = Literal["interval", "distribution", "published", "exact"]
# interval: every value carries its low and high; distribution: the mark is the whole distribution (ECDF, box);
# published: a number copied from a paper, which reports none; exact: a count or a certified optimum, not an
# estimate.
Mark = Literal["value", "zero", "not_run"]

NOT_RUN_TEXT = "n/r"  # drawn where a value does not exist, so an empty place never reads as zero


class SeriesData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str  # the system, writer or rule: what fixes its colour, marker and line style
    label: str
    kind: Literal["line", "bar", "point", "step", "cell", "box"]
    protocol: str
    colour: str
    marker: str | None = None
    linestyle: str | None = None
    hatch: str | None = None
    x: list[float | str]
    y: list[float | None]
    low: list[float | None] | None = None
    high: list[float | None] | None = None
    n: list[int | None] | None = None
    marks: list[Mark]
    uncertainty: Uncertainty
    interval: str = ""  # what the interval is: "bootstrap 95% over conversations"


class PanelData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    xlabel: str
    ylabel: str
    protocol: str
    categories: str | None = None
    series: list[SeriesData]
    unrecorded: list[str] = []  # labelled artists drawn around the layer: a rule violation


class FigureData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    caption: str
    panels: list[PanelData]


_PANELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # figure → its Panels, in drawing order
_CAPTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # figure → its caption


def finish(fig, caption: str) -> tuple:
    """(figure, caption), as every figure function returns, with the caption kept for the saved record."""
    _CAPTIONS[fig] = caption
    return fig, caption


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _numbers(values) -> list[float | None] | None:
    return None if values is None else [_number(v) for v in values]


def _marks(values: Sequence[float | None]) -> list[Mark]:
    return ["not_run" if v is None else "zero" if v == 0 else "value" for v in values]


class Panel:
    """One axes and the protocol every mark on it was measured by. `categories` names the LoCoMo categories a
    score averages over; the figure rules check it appears in a label."""

    def __init__(self, ax, protocol: str, categories: str | None = None):
        self.ax, self.protocol, self.categories = ax, protocol, categories
        self.series: list[SeriesData] = []
        _PANELS.setdefault(ax.figure, []).append(self)

    def _record(self, **fields) -> SeriesData:
        fields.setdefault("protocol", self.protocol)
        series = SeriesData(**fields)
        self.series.append(series)
        return series

    def line(self, name: str, x, y, low=None, high=None, *, label: str | None = None, interval: str = "",
             uncertainty: Uncertainty = "interval", protocol: str | None = None, offset: float = 1.0,
             band: bool = True, ms: float = 3.5):
        """A line with its markers and a band (or error bars when `band` is false); `offset` multiplies x
        (log axes) so series with equal values stay visible side by side."""
        y, low, high = _numbers(y), _numbers(low), _numbers(high)
        xs = [float(v) * offset for v in x]
        kw = {"color": color(name), "marker": marker(name), "ls": linestyle(name), "ms": ms, "lw": 1.2,
              "markevery": max(1, len(xs) // 10)}
        self.ax.plot(xs, [math.nan if v is None else v for v in y], label=label or name, **kw)
        if low is not None and high is not None:
            lo = [math.nan if v is None else v for v in low]
            hi = [math.nan if v is None else v for v in high]
            if band:
                self.ax.fill_between(xs, lo, hi, color=color(name), alpha=0.15, lw=0)
            else:
                self.ax.errorbar(xs, [math.nan if v is None else v for v in y],
                                 yerr=[[max(0.0, (v or 0) - (a if a is not None else (v or 0))) for v, a in zip(y, lo, strict=True)],
                                       [max(0.0, (b if b is not None else (v or 0)) - (v or 0)) for v, b in zip(y, hi, strict=True)]],
                                 fmt="none", ecolor=color(name), elinewidth=0.8, capsize=1.5)
        self._not_run(xs, y)
        return self._record(name=name, label=label or name, kind="line", colour=color(name), marker=marker(name),
                            linestyle=str(linestyle(name)), x=xs, y=y, low=low, high=high, marks=_marks(y),
                            uncertainty=uncertainty, interval=interval, **({"protocol": protocol} if protocol else {}))

    def bars(self, name: str, x, y, low=None, high=None, *, width: float, label: str | None = None,
             interval: str = "", uncertainty: Uncertainty = "interval", horizontal: bool = False,
             n: Sequence[int | None] | None = None, protocol: str | None = None):
        """Bars with error bars; a zero is a visible tick at the base and a missing value says "n/r"."""
        y, low, high = _numbers(y), _numbers(low), _numbers(high)
        xs = [float(v) for v in x]
        heights = [0.0 if v is None else v for v in y]
        err = None
        if low is not None and high is not None:
            err = [[0.0 if v is None or a is None else max(0.0, v - a) for v, a in zip(y, low, strict=True)],
                   [0.0 if v is None or b is None else max(0.0, b - v) for v, b in zip(y, high, strict=True)]]
        common = {"color": color(name), "hatch": hatch(name), "edgecolor": "black", "linewidth": 0.4,
                  "label": label or name}
        if horizontal:
            self.ax.barh(xs, heights, width, xerr=err, capsize=1.5, error_kw={"elinewidth": 0.7}, **common)
        else:
            self.ax.bar(xs, heights, width, yerr=err, capsize=1.5, error_kw={"elinewidth": 0.7}, **common)
        for position, value in zip(xs, y, strict=True):
            if value == 0:
                span = (position - width / 2, position + width / 2)
                if horizontal:
                    self.ax.plot([0, 0], span, color="black", lw=2.2, solid_capstyle="butt", zorder=4)
                    self.ax.text(0, position, " 0", ha="left", va="center", fontsize=5)
                else:
                    self.ax.plot(span, [0, 0], color="black", lw=2.2, solid_capstyle="butt", zorder=4)
                    self.ax.text(position, 0, "0", ha="center", va="bottom", fontsize=5)
        self._not_run(xs, y, horizontal=horizontal)
        return self._record(name=name, label=label or name, kind="bar", colour=color(name), hatch=hatch(name),
                            x=xs, y=y, low=low, high=high, n=None if n is None else list(n), marks=_marks(y),
                            uncertainty=uncertainty, interval=interval, **({"protocol": protocol} if protocol else {}))

    def points(self, name: str, x, y, low=None, high=None, *, label: str | None = None, interval: str = "",
               uncertainty: Uncertainty = "interval", protocol: str | None = None, size: float = 30,
               mark: str | None = None, colour: str | None = None, alpha: float = 1.0):
        y, low, high = _numbers(y), _numbers(low), _numbers(high)
        xs = [float(v) for v in x]
        shape, tone = mark or marker(name), colour or color(name)
        ys = [math.nan if v is None else v for v in y]
        if low is not None and high is not None:
            self.ax.errorbar(xs, ys, yerr=[[0.0 if v is None or a is None else max(0.0, v - a) for v, a in zip(y, low, strict=True)],
                                           [0.0 if v is None or b is None else max(0.0, b - v) for v, b in zip(y, high, strict=True)]],
                             fmt="none", ecolor=tone, elinewidth=0.8, capsize=2, zorder=3)
        self.ax.scatter(xs, ys, s=size, marker=shape, color=tone, label=label or name, zorder=4, alpha=alpha,
                        edgecolors="black" if shape not in ("x", "+", "_", "|") else None, linewidths=0.4)
        self._not_run(xs, y)
        return self._record(name=name, label=label or name, kind="point", colour=tone, marker=shape, x=xs, y=y,
                            low=low, high=high, marks=_marks(y), uncertainty=uncertainty, interval=interval,
                            **({"protocol": protocol} if protocol else {}))

    def steps(self, name: str, x, y, *, label: str | None = None):
        """An ECDF: the whole distribution, so no interval."""
        self.ax.step(x, y, where="post", color=color(name), ls=linestyle(name), lw=1.2, label=label or name,
                     marker=marker(name), markevery=max(1, len(x) // 8), ms=3.5)
        y = _numbers(y)
        return self._record(name=name, label=label or name, kind="step", colour=color(name), marker=marker(name),
                            linestyle=str(linestyle(name)), x=[float(v) for v in x], y=y, marks=_marks(y),
                            uncertainty="distribution", interval="the empirical distribution itself")

    def record_cells(self, name: str, x: Sequence[str], y, low=None, high=None, *, interval: str = "",
                     uncertainty: Uncertainty = "interval", n=None):
        """A heatmap row drawn by the caller (imshow + text): recorded so its values and intervals are checked."""
        y = _numbers(y)
        return self._record(name=name, label=name, kind="cell", colour=GREY, x=list(x), y=y, low=_numbers(low),
                            high=_numbers(high), n=None if n is None else list(n), marks=_marks(y),
                            uncertainty=uncertainty, interval=interval)

    def record_box(self, name: str, x, medians, *, label: str | None = None):
        medians = _numbers(medians)
        return self._record(name=name, label=label or name, kind="box", colour=color(name), x=[float(v) for v in x],
                            y=medians, marks=_marks(medians), uncertainty="distribution",
                            interval="box: quartiles, whiskers 1.5 IQR")

    def _not_run(self, xs, y, horizontal: bool = False) -> None:
        for position, value in zip(xs, y, strict=True):
            if value is None:
                if horizontal:
                    self.ax.text(0, position, f" {NOT_RUN_TEXT}", ha="left", va="center", fontsize=6, color="dimgrey")
                else:
                    self.ax.text(position, 0, NOT_RUN_TEXT, ha="center", va="bottom", fontsize=6, color="dimgrey",
                                 rotation=90)

    def data(self) -> PanelData:
        ax = self.ax
        recorded = {s.label for s in self.series}
        drawn = [label for label in ax.get_legend_handles_labels()[1] if label not in recorded]
        return PanelData(title=ax.get_title(), xlabel=ax.get_xlabel(), ylabel=ax.get_ylabel(),
                         protocol=self.protocol, categories=self.categories, series=self.series,
                         unrecorded=drawn)


def figure_data(fig, name: str) -> FigureData | None:
    """What `fig`'s panels recorded, or None for a figure drawn without the layer (a notebook's own sketch)."""
    panels = _PANELS.get(fig)
    if panels is None:
        return None
    return FigureData(name=name, caption=_CAPTIONS.get(fig, ""), panels=[p.data() for p in panels])
