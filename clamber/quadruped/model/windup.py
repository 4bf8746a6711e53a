"""Sole wind-up: the turn a welded gripper takes about the one axis its 5-DOF leg cannot turn it.

Holding its gripper in place, a leg's five joints turn the gripper about a plane of axes
only; about the normal to that plane (the *blind axis*, the rotation part of the wrench
``n`` with ``J^T n = 0``) it can neither turn it nor feel a moment. As the body moves with
the grippers welded, each turns about that axis by what the geometry fixes, and the sole's
hinges carry it as a moment: a sole parallel to the wall keeps its attitude as the body
slides along it, a sole tilted to a rock top does not.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES

#: Largest turn [rad] of a landing sole from its hold's normal toward the body's normal
#: (:func:`landing_normal`): the rock walls' default, chosen on their tuning walls
#: (docs/results/rock_climbing.md); on a plane wall's rocks, tilted up to 6 deg, it lands
#: most soles along the wall's normal.
LANDING_CONE = 0.1


def blind_axis(jacobian: np.ndarray) -> np.ndarray:
    """Unit axis (3,) [gripper frame] about which the leg with LOCAL Jacobian ``jacobian``
    (6, 5) cannot turn its gripper while holding the gripper's position, signed so that its
    largest component is positive."""
    n = np.linalg.svd(jacobian.T)[2][-1][3:]
    n = n / np.linalg.norm(n)
    return n if n[np.argmax(np.abs(n))] > 0 else -n


def follow(clik: Clik, q: np.ndarray, body: pin.SE3, feet: list[pin.SE3],
           iterations: int = 30) -> np.ndarray:
    """Joint angles (20,) that keep every gripper exactly at its world position in ``feet``
    and as close to its world attitude as its leg can (turned about its blind axis only)
    with the body at ``body``: Gauss-Newton on the pose error with the attitude error's
    unreachable part, along the blind axis, taken out each step."""
    q = np.array(q, dtype=float)
    for _ in range(iterations):
        in_body, J = clik.kinematics(q)
        for i in range(len(LEG_NAMES)):
            e = pin.log6(in_body[i].actInv(body.actInv(feet[i]))).vector
            n = np.linalg.svd(J[i].T)[2][-1]
            e[3:] -= (n @ e) / (n[3:] @ n[3:]) * n[3:]
            s = slice(JOINTS_PER_LEG * i, JOINTS_PER_LEG * (i + 1))
            q[s] += np.linalg.lstsq(J[i], e, rcond=None)[0]
    return q


def windup(clik: Clik, q: np.ndarray, body: pin.SE3, feet: list[pin.SE3]) -> np.ndarray:
    """Each gripper's turn (4,) [rad] about its blind axis at ``q`` away from its attitude
    in ``feet`` when the body is at ``body`` (the legs following with :func:`follow` from
    ``q``): the hinge deflection welded soles take when the body moves there."""
    _, J = clik.kinematics(q)
    axes = [blind_axis(J[i]) for i in range(len(LEG_NAMES))]
    in_body, _ = clik.kinematics(follow(clik, q, body, feet))
    return np.array([pin.log3((body.rotation @ f.rotation).T @ w.rotation) @ a
                     for f, w, a in zip(in_body, feet, axes, strict=True)])


def held_turns(clik: Clik, q: np.ndarray, body: pin.SE3, feet: list[pin.SE3],
               seated: list[np.ndarray | None]) -> np.ndarray:
    """Each welded gripper's turn (4, 3) [rad, its weld's frame] away from its attitude at the
    weld (``seated``, world; None: not welded, a zero row) once the body is at ``body``, the
    legs following (:func:`follow`) from ``q`` with the grippers at ``feet``: the wind-up
    earlier moves left plus the one this move adds, which the sole's hinges hold about x and
    y."""
    in_body, _ = clik.kinematics(follow(clik, q, body, feet))
    out = np.zeros((len(LEG_NAMES), 3))
    for i, then in enumerate(seated):
        if then is not None:
            out[i] = pin.log3(np.asarray(then).T @ (body.rotation @ in_body[i].rotation))
    return out


def landing_normal(hold_normal: np.ndarray, body_normal: np.ndarray, cone: float
                   ) -> np.ndarray:
    """Unit direction within ``cone`` [rad] of ``hold_normal`` nearest to ``body_normal``.

    A 5-DOF leg turns its sole only within the leg's plane, which contains the body normal;
    once welded, body motions turn that plane, and the sole's tilt out of it goes to the rock
    as a moment through the hinges (25 N m/rad). A sole along the body normal keeps its
    attitude however the body translates, so it lands as near to it as the cone allows.
    """
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
