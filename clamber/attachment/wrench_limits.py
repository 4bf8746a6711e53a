"""Gripper wrench limits as linear inequalities ``H w <= h`` in the gripper's own frame.

A wrench is ``w = [f_x, f_y, f_z, t_x, t_y, t_z]`` in [N, N, N, N m, N m, N m], applied by
the substrate on the gripper, expressed in the gripper frame (z along the surface normal,
pointing out of the surface). A box is the special case the paper fits; a general
polytope (H-representation) is a tighter fit the Q-WBC accepts just as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as v
from clamber.exceptions import ConfigError

WRENCH_AXES = ("fx", "fy", "fz", "tx", "ty", "tz")

#: The paper's conservative box at 1.75 N m phalange driving torque (MARCBot, Experimental Section).
PAPER_BOX_HALF_WIDTHS = np.array([35.0, 35.0, 62.0, 0.25, 0.25, 1.4])


@dataclass(frozen=True)
class WrenchLimits:
    """Convex set ``{w : H w <= h}`` of gripper-frame wrenches a gripper holds."""

    H: np.ndarray
    h: np.ndarray
    name: str = "polytope"

    def __post_init__(self) -> None:
        H = v.finite_array("wrench limits", "H", np.atleast_2d(self.H), (None, 6))
        h = v.finite_array("wrench limits", "h", np.atleast_1d(self.h), (H.shape[0],))
        if np.any(h < 0):
            raise ConfigError("wrench limits must contain the zero wrench (h >= 0)")
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "h", h)

    @classmethod
    def box(cls, half_widths: np.ndarray | None = None, lower: np.ndarray | None = None,
            upper: np.ndarray | None = None) -> WrenchLimits:
        """Axis-aligned box; symmetric from ``half_widths`` or from explicit ``lower``/``upper``."""
        if half_widths is not None:
            hw = np.asarray(half_widths, dtype=float)
            lower, upper = -hw, hw
        if lower is None or upper is None:
            lower, upper = -PAPER_BOX_HALF_WIDTHS, PAPER_BOX_HALF_WIDTHS
        lower = np.asarray(lower, dtype=float)
        upper = np.asarray(upper, dtype=float)
        if lower.shape != (6,) or upper.shape != (6,):
            raise ConfigError("wrench box bounds must have 6 entries (fx, fy, fz, tx, ty, tz)")
        if np.any(lower > 0) or np.any(upper < 0):
            raise ConfigError(f"wrench box must contain zero: lower={lower}, upper={upper}")
        eye = np.eye(6)
        return cls(H=np.vstack([eye, -eye]), h=np.concatenate([upper, -lower]), name="box")

    @classmethod
    def paper_box(cls) -> WrenchLimits:
        """fx, fy in +-35 N, fz in +-62 N, tx, ty in +-0.25 N m, tz in +-1.4 N m."""
        return cls.box(PAPER_BOX_HALF_WIDTHS)

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``h - H w``; negative entries are violated rows."""
        return self.h - np.asarray(w, dtype=float) @ self.H.T

    def contains(self, w: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        return self.margins(w).min(axis=-1) >= -tol

    def scaled(self, factor: float) -> WrenchLimits:
        """The same shape shrunk (factor < 1) or grown about the zero wrench."""
        if not (factor >= 0 and np.isfinite(factor)):
            raise ConfigError(f"scale factor must be finite and >= 0, got {factor}")
        return WrenchLimits(self.H, self.h * factor, self.name)
