"""Instantaneous mobility of the body with grippers attached, by screw theory.

Each attached leg is a serial chain from the body to a gripper fixed to the rock. Its joint
twists ``xi_j`` (unit screws of the revolute axes, Plucker coordinates ``[v, w]`` at the body
origin) span the twists the body can make relative to that gripper. The leg's constraint
wrenches are the screws reciprocal to all of them, ``f . v + tau . w = 0``; the body keeps
``6 - rank(all constraint wrenches)`` degrees of freedom, and the twists it can still make are
the screws reciprocal to every constraint wrench.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import body_configuration
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS, leg_index
from clamber.quadruped.model.robot_model import NV_BASE, RobotModel, leg_slice


@dataclass(frozen=True)
class Mobility:
    """Result of :func:`body_mobility`.

    ``twists`` (6, dof): orthonormal basis of feasible body twists ``[v, w]`` in {B}.
    ``constraint_wrenches`` (6, k): basis of the wrenches ``[f, tau]`` the legs can resist
    with locked actuators removed, i.e. the reciprocal screws of all legs together.
    """

    dof: int
    twists: np.ndarray
    constraint_wrenches: np.ndarray


def _null_space(M: np.ndarray, tol: float) -> np.ndarray:
    """Orthonormal basis (columns) of the null space of ``M``."""
    if M.shape[0] == 0:
        return np.eye(M.shape[1])
    _, s, Vt = np.linalg.svd(M)
    rank = int(np.sum(s > tol * max(1.0, s[0])))
    return Vt[rank:].T


def joint_screws(rm: RobotModel, q_joints: np.ndarray, leg: str) -> np.ndarray:
    """Unit twists (6, 5) of ``leg``'s joint axes in {B}, Plucker ``[v, w]`` at the origin."""
    q = body_configuration(np.asarray(q_joints, dtype=float))
    pin.computeJointJacobians(rm.model, rm.data, q)
    J = pin.getJointJacobian(rm.model, rm.data, rm.model.getJointId(f"{leg}_j5"), pin.WORLD)
    s = leg_slice(leg)
    return J[:, NV_BASE + s.start:NV_BASE + s.stop]


def body_mobility(rm: RobotModel, q_joints: np.ndarray, attached: tuple[str, ...] = LEG_NAMES,
                  locked_joints: tuple[int, ...] = (), tol: float = 1e-9) -> Mobility:
    """Degrees of freedom of the body with the ``attached`` grippers fixed.

    ``locked_joints`` lists joint numbers (1..5) removed from every leg, e.g. ``(5,)`` for the
    4-DOF leg without the ankle yaw joint.
    """
    q_joints = np.asarray(q_joints, dtype=float)
    if q_joints.shape != (N_JOINTS,):
        raise ConfigError(f"q_joints must have shape ({N_JOINTS},), got {q_joints.shape}")
    if not attached:
        raise ConfigError("body_mobility needs at least one attached gripper")
    bad = [j for j in locked_joints if j not in range(1, JOINTS_PER_LEG + 1)]
    if bad:
        raise ConfigError(f"locked_joints must be joint numbers 1..5, got {bad}")
    keep = [j for j in range(JOINTS_PER_LEG) if j + 1 not in locked_joints]
    wrenches = []
    for leg in attached:
        leg_index(leg)
        xi = joint_screws(rm, q_joints, leg)[:, keep]
        # Reciprocal screws: w = [f, tau] with f . v + tau . w = 0 for every joint twist.
        wrenches.append(_null_space(xi.T, tol))
    W = np.hstack(wrenches)
    _, s, Vt = np.linalg.svd(W.T)
    rank = int(np.sum(s > tol * max(1.0, s[0]))) if s.size else 0
    basis_w = Vt[:rank].T
    twists = _null_space(basis_w.T, tol)
    return Mobility(dof=twists.shape[1], twists=twists, constraint_wrenches=basis_w)
