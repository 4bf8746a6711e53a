"""Candidate holds on a height map: cells whose estimated capacity (the smallest force
factor, ties broken by convexity) is positive and largest within ``spacing``; top, normal
and factors from the measured heights. Every selection rule chooses from these."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import maximum_filter

from clamber.quadruped.rock.holding import GripperSurfaceModel, fit_reach, patch_features
from clamber.quadruped.rock.wall import RockWall


@dataclass(frozen=True)
class HoldCandidate:
    """A candidate hold: wall coordinates ``u``, ``y`` [m] of its grid cell ``(i, j)``,
    ``top`` (3,) and ``normal`` (3,) in the world {S} [m], and the estimated per-axis
    ``factor`` (6,) of the gripper's capacity there."""

    i: int
    j: int
    u: float
    y: float
    top: np.ndarray
    normal: np.ndarray
    factor: np.ndarray


@dataclass(frozen=True)
class HoldMap:
    """Candidates on one map of ``wall`` (measured heights ``z``) and their grid lookup."""

    wall: RockWall
    z: np.ndarray
    candidates: tuple[HoldCandidate, ...]
    uy: np.ndarray

    def near(self, u: float, y: float, radius: float) -> list[HoldCandidate]:
        """Candidates within ``radius`` [m] of wall point ``(u, y)``, nearest first."""
        if not self.candidates:
            return []
        d = np.hypot(self.uy[:, 0] - u, self.uy[:, 1] - y)
        order = np.argsort(d)
        return [self.candidates[k] for k in order if d[k] <= radius]


def build_hold_map(wall: RockWall, z: np.ndarray, model: GripperSurfaceModel,
                   spacing: float = 0.01, margin: float = 0.08,
                   window: tuple[float, float] | None = None) -> HoldMap:
    """Candidates on heights ``z`` (n_u, n_y) [m]: capacity maxima ``spacing`` [m] apart,
    ``margin`` [m] inside the wall's edges; with ``window`` ``(u_lo, u_hi)`` [m] only those
    between, exactly as on the whole map (the slab fitted includes the rows the fits reach)."""
    n_u = z.shape[0]
    r = max(1, int(round(spacing / wall.spacing)))
    if window is None:
        lo, hi = 0, n_u
    else:
        lo = max(0, int(np.searchsorted(wall.u, window[0], side="left")))
        hi = min(n_u, int(np.searchsorted(wall.u, window[1], side="right")))
    pad = fit_reach(wall.spacing, model) + r
    a, b = max(0, lo - pad), min(n_u, hi + pad)
    f = patch_features(z[a:b], wall.spacing, model)
    factor = model.capacity_factor(f.convexity, f.step, wall.micro_rms)
    score = factor[..., :3].min(axis=-1) + 1e-4 * np.tanh(f.convexity)
    peak = (score == maximum_filter(score, size=2 * r + 1, mode="nearest"))
    peak &= factor[..., :3].min(axis=-1) > 0
    m = int(np.ceil(margin / wall.spacing))
    rows = np.arange(a, b)
    peak &= ((rows >= max(m, lo)) & (rows < min(n_u - m, hi)))[:, None]
    peak[:, :m], peak[:, -m:] = False, False
    ii, jj = np.nonzero(peak)
    factors = factor[ii, jj]
    tops = wall.to_world(wall.u[ii + a], wall.y[jj], f.top[ii, jj])
    normals = f.normal[ii, jj] @ wall.rotation.T
    cands = tuple(HoldCandidate(int(i + a), int(j), float(wall.u[i + a]), float(wall.y[j]),
                                tops[k], normals[k], factors[k])
                  for k, (i, j) in enumerate(zip(ii, jj, strict=True)))
    uy = np.array([[c.u, c.y] for c in cands]).reshape(-1, 2)
    return HoldMap(wall, z, cands, uy)


#: Half-width [m] of the gripper's square footpad (the sole of its 7 cm box).
PAD_HALF_WIDTH = 0.035
#: Band [m] around the footpad whose mapped rock the seat check also reads (0: under the
#: pad only). The box's corners land in such a band when the sole lands a little off the
#: hold or turned about its normal, and rock there can stop a descent above the hold; a
#: 10 mm band plans further but did not climb further (docs/results/rock_climbing.md).
SEAT_MARGIN = 0.0


def seat_rise(hold_map: HoldMap, cell: tuple[int, int], top: np.ndarray,
              rotation: np.ndarray, half_width: float = PAD_HALF_WIDTH) -> float:
    """Rise [m] of the highest mapped rock under a square footpad of ``half_width`` [m]
    above the sole's plane, the sole at ``top`` (3,) [m, {S}] of ``cell`` with attitude
    ``rotation`` (3, 3) in {S}. Rock this high holds the pad off the hold top, out of the
    spines' reach."""
    wall, z = hold_map.wall, hold_map.z
    r = int(np.ceil(half_width * math.sqrt(2.0) / wall.spacing))
    i, j = cell
    ii = np.arange(max(0, i - r), min(z.shape[0], i + r + 1))
    jj = np.arange(max(0, j - r), min(z.shape[1], j + r + 1))
    U, Y = np.meshgrid(wall.u[ii], wall.y[jj], indexing="ij")
    points = wall.to_world(U, Y, z[np.ix_(ii, jj)]).reshape(-1, 3)
    local = (points - top) @ rotation
    under = (np.abs(local[:, 0]) <= half_width) & (np.abs(local[:, 1]) <= half_width)
    return float(local[under, 2].max(initial=0.0))
