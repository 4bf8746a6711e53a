"""Leg kinematics: foot poses, foot Jacobians, damped-least-squares IK with limits, and CLIK.

Jacobians are Pinocchio's in the gripper's LOCAL frame, the frame of its wrench limits, so a
gripper wrench ``F`` maps to generalized forces as ``J^T F``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS, leg_index
from clamber.quadruped.model.robot_model import NQ_BASE, NV_BASE, RobotModel, RobotState, leg_slice
from clamber.quadruped.model.statics_kernels import HOLD, TARGET, clik_goal

_IDENTITY_BASE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_N_LEGS = len(LEG_NAMES)


def body_configuration(q_joints: np.ndarray) -> np.ndarray:
    """Configuration (27,) with the body at the world origin: kinematics in {B}."""
    return np.concatenate([_IDENTITY_BASE, q_joints])


def foot_poses(rm: RobotModel, q: np.ndarray) -> list[pin.SE3]:
    """World placements of the four gripper frames for configuration ``q`` (27,)."""
    pin.framesForwardKinematics(rm.model, rm.data, q)
    return [rm.data.oMf[f].copy() for f in rm.foot_ids]


def foot_jacobians(rm: RobotModel, q: np.ndarray) -> np.ndarray:
    """LOCAL frame Jacobians of the four grippers, shape (4, 6, 26); also updates placements."""
    if np.shape(q) != (rm.model.nq,):
        raise ConfigError(f"q must have shape ({rm.model.nq},), got {np.shape(q)}")
    pin.computeJointJacobians(rm.model, rm.data, q)
    pin.updateFramePlacements(rm.model, rm.data)
    return np.stack([pin.getFrameJacobian(rm.model, rm.data, f, pin.LOCAL)
                     for f in rm.foot_ids])


@dataclass(frozen=True)
class IKResult:
    """Outcome of :func:`leg_ik`: joint angles [rad] and the remaining pose error."""

    q: np.ndarray
    converged: bool
    position_error: float
    rotation_error: float
    iterations: int


def _dls(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """Damped least squares ``J^T (J J^T + d^2 I)^-1 e``."""
    return J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(J.shape[0]), e)


def leg_ik(rm: RobotModel, leg: str, target: pin.SE3, q_start: np.ndarray,
           rotation_weight: float = 0.3, damping: float = 1e-3, tol: float = 1e-6,
           max_iter: int = 100) -> IKResult:
    """Joint angles of ``leg`` putting its gripper at ``target`` (pose in {B}): damped least
    squares on the LOCAL pose error, rotation rows weighted by ``rotation_weight`` [m/rad],
    each step clipped to the joint limits; the other legs keep ``q_start``'s angles."""
    q = np.array(q_start, dtype=float)
    if q.shape != (N_JOINTS,) or not np.all(np.isfinite(q)):
        raise ConfigError(f"q_start must be {N_JOINTS} finite angles, got shape {q.shape}")
    q = rm.clip_joints(q)
    s, i = leg_slice(leg), leg_index(leg)
    w = np.array([1.0, 1.0, 1.0, rotation_weight, rotation_weight, rotation_weight])
    e = np.zeros(6)
    for it in range(max_iter):
        J = foot_jacobians(rm, body_configuration(q))[i][:, NV_BASE + s.start:NV_BASE + s.stop]
        e = pin.log6(rm.data.oMf[rm.foot_ids[i]].actInv(target)).vector
        if np.linalg.norm(w * e) < tol:
            return IKResult(q, True, float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:])),
                            it)
        q[s] = np.clip(q[s] + _dls(w[:, None] * J, w * e, damping), rm.q_min[s], rm.q_max[s])
    return IKResult(q, False, float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:])),
                    max_iter)


class Clik:
    """Closed-loop inverse kinematics, one damped-least-squares step per leg and cycle on the
    LOCAL pose error scaled by ``gain`` (1: a full Gauss-Newton step), clipped to limits."""

    def __init__(self, rm: RobotModel, gain: float = 0.5, damping: float = 1e-2,
                 rotation_weight: float = 0.3) -> None:
        if not 0.0 < gain <= 1.0:
            raise ConfigError(f"CLIK gain must lie in (0, 1], got {gain}")
        self.rm, self.gain, self.damping = rm, gain, damping
        self.w = np.array([1.0, 1.0, 1.0] + [rotation_weight] * 3)
        self._q = body_configuration(np.zeros(N_JOINTS))

    def kinematics(self, q_joints: np.ndarray) -> tuple[list[pin.SE3], np.ndarray]:
        """Gripper poses in {B} and LOCAL leg Jacobians (4, 6, 5) at ``q_joints``."""
        rm = self.rm
        self._q[NQ_BASE:] = q_joints
        pin.computeJointJacobians(rm.model, rm.data, self._q)
        pin.updateFramePlacements(rm.model, rm.data)
        feet = [rm.data.oMf[f].copy() for f in rm.foot_ids]
        J = np.empty((len(LEG_NAMES), 6, JOINTS_PER_LEG))
        for i, f in enumerate(rm.foot_ids):
            lo = NV_BASE + i * JOINTS_PER_LEG
            J[i] = pin.getFrameJacobian(rm.model, rm.data, f, pin.LOCAL)[:, lo:lo + 5]
        return feet, J

    def step(self, q_joints: np.ndarray, body_target: pin.SE3,
             foot_targets: dict[str, pin.SE3]) -> np.ndarray:
        """Next joint position command (20,) [rad] toward the ``foot_targets`` (world poses;
        legs without one hold their angles), in one compiled call
        (:func:`~clamber.quadruped.model.statics_kernels.clik_goal`, the body at the origin)."""
        feet_body, leg_jacobians = self.kinematics(q_joints)
        modes = np.full(_N_LEGS, HOLD, dtype=np.int64)
        rotations, translations = np.zeros((_N_LEGS, 3, 3)), np.zeros((_N_LEGS, 3))
        for i, leg in enumerate(LEG_NAMES):
            target = foot_targets.get(leg)
            if target is not None:
                modes[i] = TARGET
                rotations[i], translations[i] = target.rotation, target.translation
        feet_R = np.array([f.rotation for f in feet_body])
        feet_p = np.array([f.translation for f in feet_body])
        out = np.empty(N_JOINTS)
        clik_goal(feet_R, feet_p, np.eye(3), np.zeros(3), body_target.rotation,
                  body_target.translation, rotations, translations, modes,
                  np.asarray(q_joints, dtype=float), leg_jacobians, self.gain, self.w,
                  self.damping**2, self.rm.q_min, self.rm.q_max, out)
        return out


def world_foot_poses(rm: RobotModel, state: RobotState) -> dict[str, pin.SE3]:
    """World poses of the four grippers for a measured state."""
    return dict(zip(LEG_NAMES, foot_poses(rm, state.q()), strict=True))
