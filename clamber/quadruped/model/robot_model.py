"""The Pinocchio model of a :class:`Marcbot`, built once, with named leg slices and limits."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.description import build_pinocchio_model, foot_name, joint_name
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS, Marcbot, leg_index
from clamber.quadruped.model.se3_kernels import rotation_defect

#: Size of the free-flyer part of q (position + unit quaternion x, y, z, w) and of v.
NQ_BASE, NV_BASE = 7, 6


_F64 = np.dtype(np.float64)


def _vector(name: str, x, n: int) -> np.ndarray:
    """``x`` as a float array of ``n`` finite numbers (a float array of that shape is taken
    as it is, its finiteness proved by a finite sum where it can be)."""
    a = x if type(x) is np.ndarray and x.dtype == _F64 else np.asarray(x, dtype=float)
    if a.shape != (n,):
        raise ConfigError(f"{name} must have shape ({n},), got {a.shape}")
    if not (math.isfinite(np.add.reduce(a)) or np.isfinite(a).all()):
        raise ConfigError(f"{name} must be finite, got {a}")
    return a


@dataclass
class RobotState:
    """Measured state: body pose in the world, body twist in {B}, joint positions and speeds.

    ``body_twist`` is ``[v, w]`` of the body origin in the body frame [m/s, rad/s] (Pinocchio's
    free-flyer convention); joints are in leg-major order of ``LEG_NAMES`` [rad, rad/s].
    """

    body_position: np.ndarray
    body_rotation: np.ndarray
    joint_positions: np.ndarray
    body_twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    joint_velocities: np.ndarray = field(default_factory=lambda: np.zeros(N_JOINTS))

    def __post_init__(self) -> None:
        self.body_position = _vector("body_position", self.body_position, 3)
        self.joint_positions = _vector("joint_positions", self.joint_positions, N_JOINTS)
        self.body_twist = _vector("body_twist", self.body_twist, 6)
        self.joint_velocities = _vector("joint_velocities", self.joint_velocities, N_JOINTS)
        R = self.body_rotation
        if not (type(R) is np.ndarray and R.dtype == _F64):
            R = np.asarray(R, dtype=float)
        if R.shape != (3, 3):
            raise ConfigError(f"body_rotation must be a finite 3x3 matrix, got shape {R.shape}")
        if not rotation_defect(R) <= 1e-6:
            raise ConfigError("body_rotation must be a finite rotation matrix (R^T R = I, "
                              "det R = 1)")
        self.body_rotation = R

    @classmethod
    def trusted(cls, body_position: np.ndarray, body_rotation: np.ndarray,
                joint_positions: np.ndarray, body_twist: np.ndarray,
                joint_velocities: np.ndarray) -> RobotState:
        """The constructor with every field positional (the simulator's and estimators'
        spelling); checked like any other state."""
        return cls(body_position, body_rotation, joint_positions, body_twist, joint_velocities)

    @property
    def body_pose(self) -> pin.SE3:
        return pin.SE3(self.body_rotation, self.body_position)

    def q(self) -> np.ndarray:
        """Pinocchio configuration (27,)."""
        return configuration(self.body_pose, self.joint_positions)

    def v(self) -> np.ndarray:
        """Pinocchio velocity (26,)."""
        return np.concatenate([self.body_twist, self.joint_velocities])

    def leg_joints(self, leg: str) -> np.ndarray:
        """The five joint angles of ``leg`` [rad]."""
        return self.joint_positions[leg_slice(leg)]


def configuration(body_pose: pin.SE3, joint_positions: np.ndarray) -> np.ndarray:
    """Pinocchio configuration (27,) of a body pose and joint angles [rad]: position, unit
    quaternion ``(x, y, z, w)`` of the rotation (Pinocchio's ``SE3ToXYZQUAT``, the same
    numbers as ``Quaternion(R).coeffs()`` in a tenth of the time), joints."""
    return np.concatenate([pin.SE3ToXYZQUAT(body_pose), joint_positions])


def leg_slice(leg: str) -> slice:
    """Slice of ``leg``'s five joints in a 20-vector of joints."""
    i = leg_index(leg)
    return slice(i * JOINTS_PER_LEG, (i + 1) * JOINTS_PER_LEG)


class RobotModel:
    """Pinocchio model and data of the robot, with limits as arrays over the 20 joints.

    Built once; every kinematic and dynamic query reuses ``data``.
    """

    def __init__(self, robot: Marcbot | None = None) -> None:
        self.robot = robot or Marcbot()
        self.model = build_pinocchio_model(self.robot)
        self.data = self.model.createData()
        for i, leg in enumerate(LEG_NAMES):
            for j in range(JOINTS_PER_LEG):
                jid = self.model.getJointId(joint_name(leg, j + 1))
                if self.model.joints[jid].idx_q != NQ_BASE + i * JOINTS_PER_LEG + j:
                    raise ConfigError(f"joint {joint_name(leg, j + 1)} is out of leg-major order")
        self.foot_ids = tuple(self.model.getFrameId(foot_name(leg)) for leg in LEG_NAMES)
        self.q_min, self.q_max = self.robot.joint_limits()
        self.tau_max = self.robot.torque_limits()
        self.current_per_torque = self.robot.current_per_torque()
        self.current_max = self.robot.current_limits()
        self.mass = float(sum(I.mass for I in self.model.inertias))

    def default_state(self, height: float | None = None) -> RobotState:
        """Default stance with the body level and the soles on the plane z = 0."""
        qj = self.robot.default_joint_angles()
        q = np.concatenate([np.zeros(3), [0, 0, 0, 1.0], qj])
        pin.framesForwardKinematics(self.model, self.data, q)
        sole_z = self.data.oMf[self.foot_ids[0]].translation[2]
        z = -sole_z if height is None else height
        return RobotState(np.array([0.0, 0.0, z]), np.eye(3), qj)

    def clip_joints(self, q_joints: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(q_joints, self.q_min), self.q_max)
