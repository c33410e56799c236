"""Per-unit concave saturation h_r of the objective F(X) = sum_r w_r h_r(z_r), z_r = sum_{u in X} a_ur (pure).

A unit without one saturates at 1 (h = min(1, z), the default and the paper's published numbers). A package may
give a unit `{"cap": c}` (h = min(c, z)) or `{"breakpoints": [[0, 0], [z1, h1], ...]}`: piecewise linear through
the points, flat after the last, required non-decreasing and concave (slopes never increase), so that F stays
monotone submodular — B&B's bounds stay valid and the MILP needs one linear cut per piece (y_r <= s z_r + b). A
concave piecewise-linear function is the minimum of its pieces' lines, which is how it is evaluated here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SLOPE_TOL = 1e-12


class SaturationError(ValueError):
    """A saturation that is not a non-decreasing concave piecewise-linear function through the origin."""


def pieces(spec: dict | None) -> list[tuple[float, float]]:
    """(slope, intercept) lines whose minimum is h; the default is min(1, z)."""
    if spec is None:
        return [(1.0, 0.0), (0.0, 1.0)]
    if set(spec) == {"cap"}:
        cap = spec["cap"]
        if not isinstance(cap, (int, float)) or isinstance(cap, bool) or not np.isfinite(cap) or cap <= 0:
            raise SaturationError(f"cap must be a number > 0, got {cap!r}")
        return [(1.0, 0.0), (0.0, float(cap))]
    if set(spec) == {"breakpoints"}:
        return _breakpoint_pieces(spec["breakpoints"])
    raise SaturationError(f"expected {{'cap': c}} or {{'breakpoints': [[z, h], ...]}}, got keys {sorted(spec)}")


def _breakpoint_pieces(points: Sequence) -> list[tuple[float, float]]:
    try:
        pts = [(float(z), float(h)) for z, h in points]
    except (TypeError, ValueError):
        raise SaturationError("breakpoints must be a list of [z, h] number pairs") from None
    if len(pts) < 2 or pts[0] != (0.0, 0.0):
        raise SaturationError("breakpoints must start at [0, 0] and have at least two points")
    if not all(np.isfinite(v) for p in pts for v in p):
        raise SaturationError("breakpoints must be finite")
    lines, last_slope = [], np.inf
    for (z0, h0), (z1, h1) in zip(pts, pts[1:], strict=False):
        if z1 <= z0:
            raise SaturationError(f"breakpoint z values must increase strictly ({z0} then {z1})")
        slope = (h1 - h0) / (z1 - z0)
        if slope < -SLOPE_TOL:
            raise SaturationError(f"h decreases between z = {z0} and z = {z1}")
        if slope > last_slope + SLOPE_TOL:
            raise SaturationError(f"not concave: the slope rises to {slope:g} after z = {z0}")
        last_slope = slope
        lines.append((slope, h0 - slope * z0))
    lines.append((0.0, pts[-1][1]))  # flat after the last point
    return lines


def normalised(spec: dict | None) -> dict | None:
    """The spec as written back to JSON (None for the default), after validation."""
    pieces(spec)
    return None if spec is None else dict(spec)


@dataclass(frozen=True)
class Saturation:
    """Every unit's lines, padded to the same count with lines that never bind (slope 0, intercept +inf)."""

    slopes: np.ndarray  # (n_units, P)
    intercepts: np.ndarray  # (n_units, P)

    @classmethod
    def from_specs(cls, specs: Sequence[dict | None]) -> Saturation | None:
        """None when every unit has the default (so the default path keeps its exact arithmetic)."""
        if all(s is None for s in specs):
            return None
        lines = [pieces(s) for s in specs]
        width = max(len(x) for x in lines)
        slopes = np.zeros((len(lines), width))
        intercepts = np.full((len(lines), width), np.inf)
        for r, unit_lines in enumerate(lines):
            for p, (slope, intercept) in enumerate(unit_lines):
                slopes[r, p], intercepts[r, p] = slope, intercept
        return cls(slopes, intercepts)

    @property
    def width(self) -> int:
        return self.slopes.shape[1]

    def h(self, z: np.ndarray) -> np.ndarray:
        """h applied unit-wise along the last axis of z (any leading shape)."""
        return (np.asarray(z)[..., None] * self.slopes + self.intercepts).min(axis=-1)

    def h_at(self, values: np.ndarray, units: np.ndarray) -> np.ndarray:
        """h of each value at its own unit (values[i] belongs to units[i]): for sparse entries."""
        return (np.asarray(values)[:, None] * self.slopes[units] + self.intercepts[units]).min(axis=1)

    @property
    def h_max(self) -> np.ndarray:
        """Each unit's value at saturation (its flat line's height)."""
        return np.where(self.slopes == 0, self.intercepts, np.inf).min(axis=1)
