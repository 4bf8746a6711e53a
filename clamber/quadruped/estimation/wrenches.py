"""Gripper wrenches and the closed chain's internal wrench, from what the robot senses.

An attached leg's five servo torques balance its weight, its damping and the wrench ``w``
the rock applies on its gripper: ``tau = g(q) + kv qdot - J^T w`` (quasi-static; ``J`` the
gripper frame's LOCAL Jacobian over the leg's joints, 6 x 5). Five equations fix five of
the wrench's six components: the sixth, the direction ``n`` with ``J^T n = 0``, is a wrench
the leg can neither apply nor feel (mostly a moment about the gripper's x and y axes, which
the sole's hinges carry). The estimate is the least-norm solution, exact on the observable
part and zero along ``n``; ``unobservable`` returns ``n`` so a caller can project.

With several grippers attached the body is a closed chain. The net wrench they put on the
body is fixed by the body's dynamics; the rest, the component of the stacked wrenches in the
null space of the grasp map, squeezes the chain without moving it: the *internal* wrench.
It is computed in capacity-scaled units (each axis divided by the paper's box half-width),
so that a newton and a newton metre count as fractions of what a gripper holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, RobotState

#: Base velocity coordinates in Pinocchio's free-flyer model.
_NV_BASE = 6


@dataclass(frozen=True)
class GripperWrenches:
    """Estimated wrenches of the attached grippers ``legs`` (k,).

    ``wrenches`` (k, 6) [N, N m]: ``[f, tau]`` the rock applies, each in its gripper frame,
    about the frame's origin (observable part; zero along ``unobservable``);
    ``unobservable`` (k, 6): each leg's unit wrench direction ``n`` with ``J^T n = 0``;
    ``internal`` (k, 6) [N, N m]: the part of ``wrenches`` that sums to no net wrench on the
    body; ``placements``: the grippers' world poses used; ``jacobians`` (k, 6, 5): each
    gripper frame's LOCAL Jacobian over its leg's joints (``tau = ... - J^T w``).
    """

    legs: tuple[str, ...]
    wrenches: np.ndarray
    unobservable: np.ndarray
    internal: np.ndarray
    placements: tuple[pin.SE3, ...]
    jacobians: np.ndarray

    def internal_norm(self) -> float:
        """Size of the internal wrench in capacity units (root sum of squares of each axis
        over the paper's box half-width)."""
        return float(np.linalg.norm(self.internal / PAPER_BOX_HALF_WIDTHS))


def grasp_map(placements: tuple[pin.SE3, ...], point: np.ndarray) -> np.ndarray:
    """The 6 x 6k map from gripper-frame wrenches ``[f, tau]`` (each about its frame's
    origin) to their sum as one world-axes wrench ``[f, tau]`` about ``point`` [m]."""
    G = np.zeros((6, 6 * len(placements)))
    for i, M in enumerate(placements):
        R, r = M.rotation, M.translation - point
        c = slice(6 * i, 6 * i + 6)
        G[:3, c][:, :3] = R
        G[3:, c][:, :3] = pin.skew(r) @ R
        G[3:, c][:, 3:] = R
    return G


def internal_part(wrenches: np.ndarray, placements: tuple[pin.SE3, ...],
                  point: np.ndarray) -> np.ndarray:
    """The component (k, 6) of gripper wrenches ``wrenches`` (k, 6) in the null space of the
    grasp map about ``point``, orthogonal in capacity-scaled units."""
    k = len(placements)
    if k == 0:
        return np.zeros((0, 6))
    scale = np.tile(PAPER_BOX_HALF_WIDTHS, k)
    G = grasp_map(placements, point) * scale
    u = wrenches.reshape(-1) / scale
    u_int = u - np.linalg.pinv(G) @ (G @ u)
    return (u_int * scale).reshape(k, 6)


class GripperWrenchEstimator:
    """Gripper wrenches from joint angles and speeds, servo torques and the body's pose
    (the robot's own model: its state estimate and sensors, or the truth for a check)."""

    def __init__(self, rm: RobotModel, damping: np.ndarray | None = None) -> None:
        self.rm = rm
        self.damping = np.zeros(len(LEG_NAMES) * JOINTS_PER_LEG) if damping is None \
            else np.asarray(damping, dtype=float)

    def estimate(self, state: RobotState, torques: np.ndarray,
                 legs: tuple[str, ...]) -> GripperWrenches:
        """The wrenches on the grippers of ``legs`` given ``state`` (body pose, joint
        angles and speeds) and the servo torques (20,) [N m]."""
        m, d = self.rm.model, self.rm.data
        q = state.q()
        g = pin.computeGeneralizedGravity(m, d, q)[_NV_BASE:]
        pin.computeJointJacobians(m, d, q)
        pin.updateFramePlacements(m, d)
        rhs = g + self.damping * state.joint_velocities - np.asarray(torques, dtype=float)
        w = np.zeros((len(legs), 6))
        n = np.zeros((len(legs), 6))
        jacobians = np.zeros((len(legs), 6, JOINTS_PER_LEG))
        placements = []
        for k, leg in enumerate(legs):
            i = LEG_NAMES.index(leg)
            cols = slice(_NV_BASE + JOINTS_PER_LEG * i, _NV_BASE + JOINTS_PER_LEG * (i + 1))
            J = jacobians[k] = pin.getFrameJacobian(m, d, self.rm.foot_ids[i], pin.LOCAL)[:, cols]
            w[k] = np.linalg.lstsq(J.T, rhs[cols.start - _NV_BASE:cols.stop - _NV_BASE],
                                   rcond=None)[0]
            n[k] = np.linalg.svd(J.T)[2][-1]
            placements.append(d.oMf[self.rm.foot_ids[i]].copy())
        placements = tuple(placements)
        return GripperWrenches(tuple(legs), w, n,
                               internal_part(w, placements, state.body_position), placements,
                               jacobians)
