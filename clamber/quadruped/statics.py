"""Quasi-static Newton-Euler model of the body, ``A F = B``, and the wrench-to-torque map.

The floating-base equation of motion ``M(q) a + h(q, v) = S^T tau + sum_i J_i^T F_i`` split into
its six base rows and twenty joint rows, with the climbing motion slow enough that velocity
terms and joint accelerations are dropped (the body acceleration ``a_B`` is kept):

* base rows: ``A F = B`` with ``A = [J_1,B^T ... J_4,B^T]`` (6 x 24) and
  ``B = M_BB a_B + g_B(q)``; the legs' gravity enters ``g_B`` through the whole-robot model;
* joint rows: ``tau = M_JB a_B + g_J(q) - sum_i J_i,J^T F_i``.

``F_i = [f, tau]`` is the wrench the rock applies on gripper ``i`` in the gripper frame (the
frame of its wrench limits), ``J_i`` the gripper's LOCAL frame Jacobian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.clik_kernels import joint_torques
from clamber.quadruped.model import NV_BASE, RobotModel
from clamber.quadruped.robot import JOINTS_PER_LEG, N_JOINTS, N_LEGS

N_WRENCH = 6 * N_LEGS
#: Row and column (6, 6) in a mass matrix of the upper-triangle entry that equals each
#: entry of the symmetric base block ``M_BB`` (CRBA writes the upper triangle only).
_ROW, _COL = np.indices((NV_BASE, NV_BASE))
_UPPER_ROW, _UPPER_COL = np.minimum(_ROW, _COL), np.maximum(_ROW, _COL)


def _jacobian_indices(nv: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into the four grippers' stacked Jacobians (4, 6, ``nv``) of the entries
    of ``A`` (6, 24) (``A[c, 6 i + r] = J_i[r, c]``, base columns ``c``) and of the leg
    Jacobians (4, 6, 5) (``J_i[r, 6 + 5 i + c]``), in the order of those arrays."""
    c, i, r = np.meshgrid(np.arange(NV_BASE), np.arange(N_LEGS), np.arange(6), indexing="ij")
    to_a = (i * 6 * nv + r * nv + c).reshape(-1)
    i, r, c = np.meshgrid(np.arange(N_LEGS), np.arange(6), np.arange(JOINTS_PER_LEG),
                          indexing="ij")
    to_legs = (i * 6 * nv + r * nv + NV_BASE + JOINTS_PER_LEG * i + c).reshape(-1)
    return to_a, to_legs


@dataclass
class Statics:
    """The model at one configuration; arrays are owned by the evaluator and reused."""

    A: np.ndarray
    B: np.ndarray
    leg_jacobians: np.ndarray
    tau_bias: np.ndarray
    #: World placements of the four grippers at the evaluated configuration.
    foot_poses: list[pin.SE3] | None = None

    def torques(self, F: np.ndarray) -> np.ndarray:
        """Joint torques (20,) [N m] that hold the body with gripper wrenches ``F`` (24,)."""
        return joint_torques(self.tau_bias, self.leg_jacobians,
                             np.ascontiguousarray(F, dtype=float).reshape(N_WRENCH))

    def torque_map(self) -> np.ndarray:
        """Block-diagonal (20, 24) matrix ``T`` with ``tau = tau_bias - T F``."""
        T = np.zeros((N_JOINTS, N_WRENCH))
        for i in range(N_LEGS):
            T[i * 5:(i + 1) * 5, i * 6:(i + 1) * 6] = self.leg_jacobians[i].T
        return T


class StaticsEvaluator:
    """Evaluates :class:`Statics` with Pinocchio, reusing one data object and output arrays."""

    def __init__(self, rm: RobotModel) -> None:
        self.rm = rm
        self._out = Statics(np.zeros((6, N_WRENCH)), np.zeros(6),
                            np.zeros((N_LEGS, 6, JOINTS_PER_LEG)), np.zeros(N_JOINTS))
        #: The four grippers' LOCAL Jacobians (4, 6, nv), copied into ``A`` and the leg
        #: Jacobians by two flat takes (the same numbers as slicing each).
        self._jacobians = np.zeros((N_LEGS, 6, rm.model.nv))
        self._to_a, self._to_legs = _jacobian_indices(rm.model.nv)
        #: Flat indices into the (nv, nv) mass matrix of the symmetric ``M_BB`` (6, 6).
        self._base_block = _UPPER_ROW * rm.model.nv + _UPPER_COL

    def evaluate(self, q: np.ndarray, body_acceleration: np.ndarray | None = None) -> Statics:
        """The model at configuration ``q`` (27,) and body acceleration (6,) in {B} [m/s^2]."""
        rm, out = self.rm, self._out
        model, data = rm.model, rm.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        g = pin.computeGeneralizedGravity(model, data, q)
        out.B[:] = g[:NV_BASE]
        out.tau_bias[:] = g[NV_BASE:]
        oMf = data.oMf
        out.foot_poses = [oMf[f].copy() for f in rm.foot_ids]
        jacobians, get = self._jacobians, pin.getFrameJacobian
        for i, fid in enumerate(rm.foot_ids):
            jacobians[i] = get(model, data, fid, pin.LOCAL)
        flat = jacobians.reshape(-1)
        flat.take(self._to_a, out=out.A.reshape(-1))
        flat.take(self._to_legs, out=out.leg_jacobians.reshape(-1))
        if body_acceleration is None:
            return out
        a = body_acceleration
        if not (type(a) is np.ndarray and a.dtype == np.float64):
            try:
                a = np.asarray(body_acceleration, dtype=float)
            except (TypeError, ValueError):
                raise ConfigError("body_acceleration must be 6 finite numbers") from None
        if a.any():
            if a.shape != (6,) or not np.isfinite(a).all():
                raise ConfigError(f"body_acceleration must be 6 finite numbers, got {a}")
            M = pin.crba(model, data, q)  # upper triangle only
            Mbb = M.take(self._base_block)  # the base block made symmetric, one copy
            out.B += Mbb @ a
            out.tau_bias += M[:NV_BASE, NV_BASE:].T @ a
        return out
