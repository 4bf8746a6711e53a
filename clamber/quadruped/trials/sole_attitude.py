"""Attached grippers keep the attitude their weld closed at.

The weld holds the sole pad where it landed, on two spring hinges (sole x and y,
:class:`~clamber.quadruped.sim.grippers.SoleCompliance`): every radian the gripper turns
from the pad reaches the rock as a hinge moment (25 N m/rad). With four grippers welded,
each leg can turn about its foot against the hinges alone, and unbalanced feed-forward
turns accumulate from swing to swing. So each attached gripper's attitude at weld closing,
as the controller estimates it, is kept as its stance leg's attitude target; the hinges
then deflect only by the tilt a 5-DOF leg cannot undo.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin


class WeldAttitudes:
    """World attitudes (3x3) of the attached grippers at weld closing, and the integral of
    each one's hinge error (``gain`` [1/s], at most ``limit`` [rad] per axis), which moves
    the target on until the error is gone: one CLIK step against the stiff hinges turns
    the gripper back only part of the way."""

    def __init__(self, gain: float = 1.0, limit: float = 0.2) -> None:
        self.attitude: dict[str, np.ndarray] = {}
        self.integral: dict[str, np.ndarray] = {}
        self.gain, self.limit = gain, limit

    def targets(self, feet: dict[str, pin.SE3], dt: float) -> dict[str, np.ndarray]:
        """The attitude targets (3x3) of the kept grippers after one control cycle of
        ``dt`` [s]: the hinge error plus its integral (:func:`stance_targets`)."""
        for leg, K in self.attitude.items():
            e = hinge_error(feet[leg].rotation, K)
            self.integral[leg] = np.clip(self.integral[leg] + self.gain * dt * e,
                                         -self.limit, self.limit)
        return stance_targets(feet, self.attitude, self.integral)

    def update(self, attached: tuple[str, ...], feet: Callable[[], dict[str, pin.SE3]]
               ) -> dict[str, np.ndarray]:
        """Forget released grippers, record new ones from ``feet()`` (world gripper poses,
        called only when one has attached); returns the attitudes to keep."""
        for leg in [g for g in self.attitude if g not in attached]:
            del self.attitude[leg], self.integral[leg]
        new = [g for g in attached if g not in self.attitude]
        if new:
            poses = feet()
            for leg in new:
                self.attitude[leg] = poses[leg].rotation.copy()
                self.integral[leg] = np.zeros(3)
        return dict(self.attitude)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def hinge_error(current: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The turn (3,) [rad, gripper frame] from ``current`` to ``kept`` about the hinge axes x
    and y (z is 0: the sole has no hinge about its normal)."""
    e = pin.log3(current.T @ kept)
    e[2] = 0.0
    return e


def stance_targets(feet: dict[str, pin.SE3], kept: dict[str, np.ndarray],
                   extra: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Attitude targets (3x3) of the kept grippers: their present attitude (``feet``, world
    poses) turned back toward the kept one about the hinges' axes only, and on by
    ``extra[leg]`` (3,) [rad, gripper frame] if given."""
    out = {}
    for leg, K in kept.items():
        R = feet[leg].rotation
        e = hinge_error(R, K)
        if extra is not None:
            e = e + extra[leg]
        out[leg] = R @ pin.exp3(e)
    return out


def body_turn(feet_body: list[pin.SE3], leg_jacobians: np.ndarray, body_rotation: np.ndarray,
              kept: dict[int, np.ndarray], position_weight: float = 10.0,
              turn_weight: float = 0.3) -> tuple[np.ndarray, float]:
    """The body rotation (3,) [rad, {B}] that, with the kept legs' joints, best turns the
    kept grippers back to their attitudes about the hinge axes with positions fixed; and
    the hinge error [rad] (root sum of squares) left, to first order.

    ``feet_body``: gripper poses in {B}; ``leg_jacobians`` (4, 6, 5) their LOCAL
    Jacobians; ``kept``: leg index to world attitude. Turning the body moves every leg's
    plane, reaching the tilt a 5-DOF leg cannot. Linear least squares in the turn ``d`` and
    joint steps ``dq_i``: ``J_i dq_i = [-R_i^T (d x p_i), e_i - R_i^T d]`` on the position
    and the two hinge rows, position rows weighted ``position_weight`` [1/m], the turn
    regularised by ``turn_weight`` [1/rad].
    """
    legs = sorted(kept)
    k = len(legs)
    if k == 0:
        return np.zeros(3), 0.0
    A = np.zeros((5 * k + 3, 3 + 5 * k))
    b = np.zeros(5 * k + 3)
    for n, i in enumerate(legs):
        f = feet_body[i]
        R = f.rotation
        e = hinge_error(body_rotation @ R, kept[i])
        J = leg_jacobians[i]
        r = 5 * n
        # J dq + R^T (d x p) = 0 (position);  Jw dq + R^T d = e (x, y attitude rows)
        A[r:r + 3, 3 + 5 * n:8 + 5 * n] = position_weight * J[:3]
        A[r:r + 3, :3] = -position_weight * R.T @ _skew(f.translation)
        A[r + 3:r + 5, 3 + 5 * n:8 + 5 * n] = J[3:5]
        A[r + 3:r + 5, :3] = R.T[:2]
        b[r + 3:r + 5] = e[:2]
    A[5 * k:, :3] = turn_weight * np.eye(3)
    x, *_ = np.linalg.lstsq(A, b, rcond=None)
    res = (A[:5 * k] @ x - b[:5 * k]).reshape(k, 5)[:, 3:]
    return x[:3], float(np.sqrt((res**2).sum()))


class BodyTilt:
    """A slowly adapted offset of the body's attitude reference that lets the kept
    grippers reach their attitudes (:func:`body_turn`), within ``limit`` [rad]; ``gain``
    is the share of the gap closed per control cycle."""

    def __init__(self, gain: float = 0.05, limit: float = 0.08) -> None:
        self.gain, self.limit = gain, limit
        self.offset = np.zeros(3)

    def update(self, feet_body: list[pin.SE3], leg_jacobians: np.ndarray,
               body_rotation: np.ndarray, reference_rotation: np.ndarray,
               kept: dict[int, np.ndarray]) -> np.ndarray:
        """The new offset (3,) [rad, in the reference's frame] after one control cycle."""
        d, _ = body_turn(feet_body, leg_jacobians, body_rotation, kept)
        goal = pin.log3(reference_rotation.T @ body_rotation @ pin.exp3(d))
        self.offset = self.offset + self.gain * (goal - self.offset)
        n = float(np.linalg.norm(self.offset))
        if n > self.limit:
            self.offset *= self.limit / n
        return self.offset
