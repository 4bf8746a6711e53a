"""A body turn planned per body move so that the welded grippers wind up least.

As the body moves between swings, each welded gripper turns about its leg's blind axis by an
amount the geometry fixes (:mod:`clamber.quadruped.model.windup`), and the sole's hinges
carry that turn as a moment. Turning the body changes those turns, so at the start of each
body move the robot predicts, from its encoders and its estimate of the grippers' attitudes
when they closed, the wind-up at the move's end pose and picks the body turn that keeps it
smallest (Gauss-Newton on finite differences, the turn regularised); the turn is blended in
over the move like the move itself and held until the next one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.windup import windup

#: Finite-difference step of the turn [rad].
_STEP = 1e-3


class BodyTurn:
    """The body's turn (3,) [rad, in the reference frame] against the grippers' wind-up.

    ``regularization`` [1/rad] weighs the turn against the wind-up [rad] it removes;
    ``limit`` [rad] bounds each axis of the turn.
    """

    def __init__(self, clik: Clik, regularization: float = 1.0, limit: float = 0.08) -> None:
        self.clik, self.regularization, self.limit = clik, regularization, limit
        #: World poses of the attached grippers when they closed (the robot's estimate).
        self.welds: dict[str, pin.SE3] = {}
        self.start = np.zeros(3)
        self.end = np.zeros(3)

    def track(self, held: tuple[str, ...], feet: Callable[[], dict[str, pin.SE3]]) -> None:
        """Forget released grippers and record newly closed ones from ``feet()`` (the world
        gripper poses now, called only when one has closed)."""
        for leg in [g for g in self.welds if g not in held]:
            del self.welds[leg]
        new = [g for g in held if g not in self.welds]
        if new:
            poses = feet()
            for leg in new:
                self.welds[leg] = poses[leg].copy()

    def plan(self, q_joints: np.ndarray, body_end: pin.SE3) -> np.ndarray:
        """Start a body move ending at ``body_end`` (the gait's pose) from joints
        ``q_joints``: the turn to reach by its end, within the limits. Needs every gripper
        welded; otherwise the present turn is kept."""
        self.start = self.end.copy()
        if len(self.welds) < len(LEG_NAMES):
            return self.end
        feet = [self.welds[leg] for leg in LEG_NAMES]

        def wound(x: np.ndarray) -> np.ndarray:
            return windup(self.clik, q_joints,
                          pin.SE3(body_end.rotation @ pin.exp3(x), body_end.translation), feet)

        x = self.end.copy()
        lam = self.regularization
        for _ in range(3):
            r = wound(x)
            J = np.column_stack([(wound(x + _STEP * e) - r) / _STEP for e in np.eye(3)])
            A = np.vstack([J, lam * np.eye(3)])
            x = x + np.linalg.lstsq(A, -np.concatenate([r, lam * x]), rcond=None)[0]
        self.end = np.clip(x, -self.limit, self.limit)
        return self.end

    def turn(self, progress: float) -> np.ndarray:
        """The turn [rad] a share ``progress`` (0-1, the move's own blend) into the move."""
        return self.start + progress * (self.end - self.start)
