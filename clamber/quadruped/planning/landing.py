"""The attitude a swing lands its sole with, chosen for the body motions that follow.

A 5-DOF leg turns its sole's normal only within the leg's plane, which contains the body
normal. Once welded, body motions turn that plane, and the sole's tilt out of it is taken
by the sole's hinges and passed to the rock as a moment (25 N m/rad); a sole parallel to
the body normal keeps its attitude however the body translates. So the landing normal is
the direction within ``cone`` [rad] of the hold's normal nearest to the body normal.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError


def landing_normal(hold_normal: np.ndarray, body_normal: np.ndarray, cone: float
                   ) -> np.ndarray:
    """Unit direction within ``cone`` [rad] of ``hold_normal`` nearest to ``body_normal``
    (both 3-vectors in one frame)."""
    if not 0.0 <= cone < math.pi:
        raise ConfigError(f"landing cone must lie in [0, pi) rad, got {cone}")
    h = np.asarray(hold_normal, dtype=float)
    b = np.asarray(body_normal, dtype=float)
    h, b = h / np.linalg.norm(h), b / np.linalg.norm(b)
    axis = np.cross(h, b)
    s, c = float(np.linalg.norm(axis)), float(h @ b)
    angle = math.atan2(s, c)
    if angle <= cone:
        return b
    if s < 1e-12:  # opposite directions: no nearest turn; keep the hold's normal
        return h
    return pin.exp3(axis / s * cone) @ h
