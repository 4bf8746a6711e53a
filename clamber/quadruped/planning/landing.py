"""The attitude a swing lands its sole with, chosen for the body motions that follow.

A 5-DOF leg (hip yaw, three parallel pitch joints, sole yaw) can turn its sole's normal
only within the leg's plane, which contains the hip's yaw axis (the body normal). Once the
gripper is welded, every body motion turns that plane about the yaw axis, and the part of
the sole's tilt away from the body normal that leaves the plane can no longer be followed:
the sole's hinges take it up and pass it to the rock as a moment (25 N m/rad). A sole tilted
by ``alpha`` from the body normal, in a plane turned by ``psi``, leaves it by about
``alpha sin(psi)``: 15-25 mrad for ``alpha`` = 0.15 rad and the 0.1-0.17 rad a 5.5 cm body
step turns a foot 0.3 m beside its hip. A sole landed parallel to the body normal lies in
every leg plane and keeps its attitude however the body translates.

So the landing normal is taken as close to the body normal as the hold allows: the
direction within ``cone`` [rad] of the hold's normal nearest to the body normal (the hold's
normal itself when the body normal lies farther away than that, turned toward it by
``cone``). The planner's graspability check (within 0.2 rad of the hold's normal) still
applies to the attitude the leg then reaches.
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
