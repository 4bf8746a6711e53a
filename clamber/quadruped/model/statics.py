"""Quasi-static Newton-Euler model of the body, ``A F = B``, and the wrench-to-torque map.

``M(q) a + h = S^T tau + sum_i J_i^T F_i`` without velocity terms and joint accelerations
(the climb is slow; the body acceleration ``a_B`` is kept), split into its base rows ``A F =
B`` (``A = [J_1,B^T ... J_4,B^T]``, ``B = M_BB a_B + g_B(q)``) and joint rows ``tau = M_JB
a_B + g_J(q) - sum_i J_i,J^T F_i``. ``F_i = [f, tau]`` is the rock's wrench on gripper ``i``
in its LOCAL frame (that of its wrench limits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import JOINTS_PER_LEG, N_JOINTS, N_LEGS
from clamber.quadruped.model.robot_model import NV_BASE, RobotModel
from clamber.quadruped.model.statics_kernels import fill_statics, joint_torques

N_WRENCH = 6 * N_LEGS
#: Row and column (6, 6) in a mass matrix of the upper-triangle entry that equals each
#: entry of the symmetric base block ``M_BB`` (CRBA writes the upper triangle only).
_ROW, _COL = np.indices((NV_BASE, NV_BASE))
_UPPER_ROW, _UPPER_COL = np.minimum(_ROW, _COL), np.maximum(_ROW, _COL)


@dataclass
class Statics:
    """The model at one configuration; arrays are owned by the evaluator and reused."""

    A: np.ndarray
    B: np.ndarray
    leg_jacobians: np.ndarray
    tau_bias: np.ndarray
    #: World placements of the four grippers at the evaluated configuration: rotations
    #: (4, 3, 3) and translations (4, 3).
    foot_rotations: np.ndarray = field(default_factory=lambda: np.zeros((N_LEGS, 3, 3)))
    foot_translations: np.ndarray = field(default_factory=lambda: np.zeros((N_LEGS, 3)))

    @property
    def foot_poses(self) -> list[pin.SE3]:
        """The four grippers' world placements as ``SE3`` objects (copies)."""
        return [pin.SE3(R, p) for R, p in zip(self.foot_rotations, self.foot_translations,
                                               strict=True)]

    def torques(self, F: np.ndarray) -> np.ndarray:
        """Joint torques (20,) [N m] that hold the body with gripper wrenches ``F`` (24,)."""
        return joint_torques(self.tau_bias, self.leg_jacobians,
                             np.ascontiguousarray(F, dtype=float).reshape(N_WRENCH))


class StaticsEvaluator:
    """Evaluates :class:`Statics` with Pinocchio (Jacobians, placements, gravity, the mass
    matrix under a body acceleration) and one compiled call
    (:func:`~clamber.quadruped.model.statics_kernels.fill_statics`), reusing its arrays."""

    def __init__(self, rm: RobotModel) -> None:
        self.rm = rm
        self._out = Statics(np.zeros((6, N_WRENCH)), np.zeros(6),
                            np.zeros((N_LEGS, 6, JOINTS_PER_LEG)), np.zeros(N_JOINTS))
        #: Flat indices into the (nv, nv) mass matrix of the symmetric ``M_BB`` (6, 6).
        self._base_block = _UPPER_ROW * rm.model.nv + _UPPER_COL

    def evaluate(self, q: np.ndarray, body_acceleration: np.ndarray | None = None) -> Statics:
        """The model at configuration ``q`` (27,) and body acceleration (6,) in {B} [m/s^2].
        The arrays returned are the evaluator's, overwritten by its next evaluation."""
        rm, out = self.rm, self._out
        model, data = rm.model, rm.data
        pin.computeJointJacobians(model, data, q)
        pin.computeGeneralizedGravity(model, data, q)
        place, (f0, f1, f2, f3) = pin.updateFramePlacement, rm.foot_ids
        feet = (place(model, data, f0).homogeneous, place(model, data, f1).homogeneous,
                place(model, data, f2).homogeneous, place(model, data, f3).homogeneous)
        fill_statics(data.J, feet, data.g, out.A, out.leg_jacobians, out.B, out.tau_bias,
                     out.foot_rotations, out.foot_translations)
        if body_acceleration is None:
            return out
        return self._accelerate(q, body_acceleration)

    def _accelerate(self, q: np.ndarray, body_acceleration: np.ndarray) -> Statics:
        """Add the body acceleration's inertial terms (``M_BB a``, ``M_JB a``) to ``B`` and
        the joint torques."""
        rm, out = self.rm, self._out
        a = body_acceleration
        if not (type(a) is np.ndarray and a.dtype == np.float64):
            try:
                a = np.asarray(body_acceleration, dtype=float)
            except (TypeError, ValueError):
                raise ConfigError("body_acceleration must be 6 finite numbers") from None
        if a.shape != (6,):
            if a.any():
                raise ConfigError(f"body_acceleration must be 6 finite numbers, got {a}")
            return out
        x = a.tolist()
        if any(x):
            if not (math.isfinite(sum(x)) or np.isfinite(a).all()):
                raise ConfigError(f"body_acceleration must be 6 finite numbers, got {a}")
            M = pin.crba(rm.model, rm.data, q)  # upper triangle only
            Mbb = M.take(self._base_block)  # the base block made symmetric, one copy
            out.B += Mbb @ a
            out.tau_bias += M[:NV_BASE, NV_BASE:].T @ a
        return out
