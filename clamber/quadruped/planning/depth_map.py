"""The wall as a depth camera on the body sees it: heights with range-dependent noise.

Axial noise grows with the square of the range, ``sigma(d) = sigma_0 + k d^2`` (about 1 mm
at 0.3 m for a D435-class camera); steep cells drop out at random. The camera looks along
the wall normal from ``standoff`` [m] and sees the whole grid with fresh noise each time;
dropped cells are filled with the median of their valid neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.rock.wall import RockWall


@dataclass(frozen=True)
class DepthNoise:
    """``sigma_0`` [m] and ``k`` [1/m] of ``sigma(d) = sigma_0 + k d^2``, the camera's
    ``standoff`` [m] from the mean plane, and the probability ``dropout`` that a cell whose
    slope exceeds ``steep`` (rise over run) returns no depth."""

    sigma_0: float = 0.5e-3
    k: float = 4e-3
    standoff: float = 0.35
    dropout: float = 0.5
    steep: float = 1.0

    def __post_init__(self) -> None:
        check.numeric_fields(self, "depth noise", names=("sigma_0", "k"))
        check.number("depth noise", "dropout", self.dropout, low=0.0, high=1.0)
        check.numeric_fields(self, "depth noise", strict=True, names=("standoff", "steep"))

    def sigma(self, distance: np.ndarray) -> np.ndarray:
        """Axial noise [m] at range ``distance`` [m]."""
        return self.sigma_0 + self.k * np.asarray(distance) ** 2


def _fill_holes(h: np.ndarray) -> np.ndarray:
    """Replace NaN cells by the median of their valid 3 x 3 neighbours, repeatedly, so
    holes fill from their rims inward."""
    h = h.copy()
    for _ in range(max(h.shape)):
        holes = np.isnan(h)
        if not holes.any():
            return h
        windows = np.lib.stride_tricks.sliding_window_view(
            np.pad(h, 1, mode="edge"), (3, 3))[holes].reshape(-1, 9)
        seen = ~np.all(np.isnan(windows), axis=1)
        idx = np.flatnonzero(holes.ravel())[seen]
        h.ravel()[idx] = np.nanmedian(windows[seen], axis=1)
    raise ConfigError("the depth map has no valid cell")


def observe_wall(wall: RockWall, noise: DepthNoise, rng: np.random.Generator) -> np.ndarray:
    """Measured heights (n_u, n_y) [m] of the wall's grid: truth plus range noise, with
    dropped steep cells filled from their neighbours' measurements."""
    z = wall.z
    d = np.maximum(noise.standoff - z, 0.05)
    measured = z + rng.standard_normal(z.shape) * noise.sigma(d)
    gu, gy = np.gradient(z, wall.spacing)
    drop = (np.hypot(gu, gy) > noise.steep) & (rng.random(z.shape) < noise.dropout)
    return _fill_holes(np.where(drop, np.nan, measured))
