"""What the spiny gripper holds on a patch of rock, from the patch's geometry.

The paper's wrench set holds on its basalt; elsewhere each axis is scaled by the product of
spine engagement ``min(1, R_q / R_q,paper)``, the seat ``clip(1 - step / seat_step, 0, 1)``
(an edge under the footpad) and the wrap ``base + (1 - base) w``, ``w = clip(kappa r^2 / (2
wrap_depth), 0, 1)`` (the clamps pull only around a protrusion). A phenomenological model:
thresholds are design guesses, each factor monotone in its quantity, which hold selection
relies on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clamber import _validate as check
from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.rock.wall import PAPER_MICRO_RMS, SurfaceFeatures, surface_features


@dataclass(frozen=True)
class GripperSurfaceModel:
    """Thresholds of the holding model [m]; ``base`` (6,): each axis's share held where the
    clamps cannot wrap. Normal and convexity are fitted over ``footprint_radius``, the step
    over ``pad_radius``; with ``footpad_push`` a seventh factor scales compression by the
    seat alone (the footpad bears it)."""

    footprint_radius: float = 0.06
    pad_radius: float = 0.035
    wrap_depth: float = 0.015
    seat_step: float = 0.008
    reference_micro_rms: float = PAPER_MICRO_RMS
    base: np.ndarray = field(default_factory=lambda: np.array([0.6, 0.6, 0.3, 0.5, 0.5, 0.6]))
    footpad_push: bool = False

    def __post_init__(self) -> None:
        check.numeric_fields(self, "gripper surface", strict=True,
                             names=("footprint_radius", "pad_radius", "wrap_depth",
                                    "seat_step", "reference_micro_rms"))
        b = np.asarray(self.base, dtype=float)
        if b.shape != (6,) or not np.all((b >= 0) & (b <= 1)):
            raise ConfigError(f"base shares must be 6 numbers in [0, 1], got {b}")
        object.__setattr__(self, "base", b)

    def wrap(self, convexity: np.ndarray) -> np.ndarray:
        """Share [0, 1] of the clamps' closing that a patch of ``convexity`` [1/m] allows."""
        sagitta = np.asarray(convexity, dtype=float) * self.footprint_radius**2 / 2
        return np.clip(sagitta / self.wrap_depth, 0.0, 1.0)

    def seat(self, step: np.ndarray) -> np.ndarray:
        """Share [0, 1] of contact left by a step/edge of RMS ``step`` [m]."""
        return np.clip(1.0 - np.asarray(step, dtype=float) / self.seat_step, 0.0, 1.0)

    def spine(self, micro_rms: float) -> float:
        """Share [0, 1] of spines that engage on asperities of RMS ``micro_rms`` [m]."""
        return float(min(1.0, max(0.0, micro_rms / self.reference_micro_rms)))

    def capacity_factor(self, convexity: np.ndarray, step: np.ndarray,
                        micro_rms: float) -> np.ndarray:
        """Per-axis factors (..., 6) scaling the gripper's wrench set on the patches, or
        (..., 7) with ``footpad_push`` (the seventh: compression, :func:`push_factor`)."""
        w = self.wrap(convexity)[..., None]
        shape = self.base + (1.0 - self.base) * w
        seat = self.seat(step)
        out = self.spine(micro_rms) * seat[..., None] * shape
        if self.footpad_push:
            out = np.concatenate([out, seat[..., None]], axis=-1)
        return out


def push_factor(factor: np.ndarray) -> np.ndarray:
    """Compression (``+f_z``) factor (...,): the seventh number if any, else ``f_z``'s."""
    f = np.asarray(factor, dtype=float)
    return f[..., 6] if f.shape[-1] == 7 else f[..., 2]


def hold_limits(factor: np.ndarray) -> WrenchLimits:
    """The paper's conservative box scaled per axis by ``factor`` (6,), the Q-WBC's limits
    on that patch; a seventh factor scales the compression side (``+f_z``) alone."""
    f = np.asarray(factor, dtype=float)
    if f.shape not in ((6,), (7,)) or not np.all((f >= 0) & np.isfinite(f)):
        raise ConfigError(f"capacity factor must be 6 or 7 numbers >= 0, got {f}")
    upper = PAPER_BOX_HALF_WIDTHS * f[:6]
    upper[2] = PAPER_BOX_HALF_WIDTHS[2] * push_factor(f)
    return WrenchLimits.box(lower=-PAPER_BOX_HALF_WIDTHS * f[:6], upper=upper)


def hold_polytope(factor: np.ndarray) -> WrenchLimits:
    """The gripper's inner polytope of its achievable wrench set (the fit the simulator's
    gauge uses as its upper bound, :func:`~clamber.quadruped.sim.failure.default_wrench_set`)
    scaled per axis by ``factor`` (6,) or (7,) like :func:`hold_limits`.

    The held set is ``{w : w / factor in W}`` with ``f_z`` over the seventh factor where it
    pushes, a map that is not linear in ``f_z``. A row that bounds pushing scales ``f_z`` by
    the push factor (exact where the gripper is pressed, conservative where pulled); a row
    that bounds pulling is kept once with each factor (exact on both sides). The result is
    convex and lies inside the held set.

    The paper's box, a conservative fit inside ``W``, caps a moment at 0.25 N m whatever the
    forces and a shear at 35 N whatever the moments; this polytope holds about twice either
    alone, so a check on it refuses less of what the gripper holds.
    """
    from clamber.quadruped.sim.failure import default_wrench_set

    f = np.asarray(factor, dtype=float)
    if f.shape not in ((6,), (7,)) or not np.all((f > 0) & np.isfinite(f)):
        raise ConfigError(f"capacity factor must be 6 or 7 numbers > 0, got {f}")
    inner = default_wrench_set().inner
    pull = inner[:, 2] < 0
    rows = np.vstack([inner, inner[pull]])
    scale = np.tile(f[:6], (rows.shape[0], 1))
    scale[:inner.shape[0], 2] = np.where(pull, f[2], push_factor(f))
    scale[inner.shape[0]:, 2] = push_factor(f)
    return WrenchLimits(H=rows / scale, h=np.ones(rows.shape[0]), name="polytope")


def fit_reach(spacing: float, model: GripperSurfaceModel) -> int:
    """Cells [-] beyond a grid point that :func:`patch_features` reads to fit it."""
    return max(int(math.floor(r / spacing)) for r in (model.footprint_radius, model.pad_radius))


def patch_features(z: np.ndarray, spacing: float, model: GripperSurfaceModel
                   ) -> SurfaceFeatures:
    """Normal, convexity and top over the footprint, step over the pad, at every grid point
    of heights ``z`` [m] with cell ``spacing`` [m]."""
    foot = surface_features(z, spacing, model.footprint_radius)
    pad = surface_features(z, spacing, model.pad_radius)
    return SurfaceFeatures(foot.normal, foot.convexity, pad.step, foot.top)
