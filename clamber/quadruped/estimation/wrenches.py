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
null space of the grasp map (the statics' ``A``), squeezes the chain without moving it: the
*internal* wrench. It is computed in capacity-scaled units (each axis divided by the paper's
box half-width), so that a newton and a newton metre count as fractions of what a gripper
holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_LEGS
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.model.statics import StaticsEvaluator


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


def internal_part(wrenches: np.ndarray, grasp: np.ndarray) -> np.ndarray:
    """The component (k, 6) of gripper wrenches ``wrenches`` (k, 6) in the null space of the
    grasp map ``grasp`` (6, 6k; gripper-frame wrenches to their net wrench on the body, in
    any frame: the null space is the same), orthogonal in capacity-scaled units."""
    scale = np.tile(PAPER_BOX_HALF_WIDTHS, len(wrenches))
    G = grasp * scale
    u = wrenches.reshape(-1) / scale
    return ((u - np.linalg.pinv(G) @ (G @ u)) * scale).reshape(-1, 6)


class GripperWrenchEstimator:
    """Gripper wrenches from joint angles and speeds, servo torques and the body's pose
    (the robot's own model: its state estimate and sensors, or the truth for a check), with
    the servos' viscous ``damping`` (20,) [N m s/rad]."""

    def __init__(self, rm: RobotModel, damping: np.ndarray) -> None:
        self.statics = StaticsEvaluator(rm)
        self.damping = np.asarray(damping, dtype=float)

    def estimate(self, state: RobotState, torques: np.ndarray,
                 legs: tuple[str, ...]) -> GripperWrenches:
        """The wrenches on the grippers of ``legs`` given ``state`` (body pose, joint
        angles and speeds) and the servo torques (20,) [N m]."""
        st = self.statics.evaluate(state.q())
        rhs = st.tau_bias + self.damping * state.joint_velocities - np.asarray(torques, float)
        rows = [LEG_NAMES.index(leg) for leg in legs]
        jacobians = st.leg_jacobians[rows]
        w, n = np.zeros((len(rows), 6)), np.zeros((len(rows), 6))
        for k, i in enumerate(rows):
            J_T = jacobians[k].T
            w[k] = np.linalg.lstsq(J_T, rhs[JOINTS_PER_LEG * i:JOINTS_PER_LEG * (i + 1)],
                                   rcond=None)[0]
            n[k] = np.linalg.svd(J_T)[2][-1]
        grasp = st.A.reshape(6, N_LEGS, 6)[:, rows].reshape(6, -1)
        poses = st.foot_poses
        return GripperWrenches(tuple(legs), w, n, internal_part(w, grasp),
                               tuple(poses[i] for i in rows), jacobians)
