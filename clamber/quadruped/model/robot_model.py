"""The Pinocchio model of a :class:`Marcbot`, built once, with named leg slices and limits."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.compiled import kernel
from clamber.exceptions import ConfigError
from clamber.quadruped.model.description import build_pinocchio_model, foot_name, joint_name
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS, Marcbot, leg_index
from clamber.quadruped.model.se3_kernels import configuration, rotation_defect

#: Size of the free-flyer part of q (position + unit quaternion x, y, z, w) and of v.
NQ_BASE, NV_BASE = 7, 6


_F64 = np.dtype(np.float64)
#: A :class:`RobotState`'s fields and shapes; :func:`_state_defect` answers a field's index
#: + 1, or the last code for a matrix that is not a rotation.
_FIELDS = ("body_position", "body_rotation", "joint_positions", "body_twist",
           "joint_velocities")
_SHAPES = ((3,), (3, 3), (N_JOINTS,), (6,), (N_JOINTS,))
_NOT_ROTATION = len(_FIELDS) + 1


@kernel
def _state_defect(p: np.ndarray, R: np.ndarray, q: np.ndarray, v: np.ndarray,
                  dq: np.ndarray) -> int:
    """0 if every entry is finite and ``R`` a rotation (to 1e-6), else the first bad field's
    index + 1 or :data:`_NOT_ROTATION` (one compiled call: states are built every cycle)."""
    for j in range(p.shape[0]):
        if not math.isfinite(p[j]):
            return 1
    for i in range(3):
        for j in range(3):
            if not math.isfinite(R[i, j]):
                return 2
    for j in range(q.shape[0]):
        if not math.isfinite(q[j]):
            return 3
    for j in range(v.shape[0]):
        if not math.isfinite(v[j]):
            return 4
    for j in range(dq.shape[0]):
        if not math.isfinite(dq[j]):
            return 5
    return 0 if rotation_defect(R) <= 1e-6 else _NOT_ROTATION


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
        arrays = [self.body_position, self.body_rotation, self.joint_positions,
                  self.body_twist, self.joint_velocities]
        for k, shape in enumerate(_SHAPES):
            x = arrays[k]
            if not (type(x) is np.ndarray and x.dtype == _F64):
                x = arrays[k] = np.asarray(x, dtype=float)
            if x.shape != shape:
                raise ConfigError(f"{_FIELDS[k]} must have shape {shape}, got {x.shape}")
        bad = _state_defect(*arrays)
        if bad == _NOT_ROTATION:
            raise ConfigError("body_rotation must be a rotation matrix (R^T R = I, det R = 1)")
        if bad:
            raise ConfigError(f"{_FIELDS[bad - 1]} must be finite, got {arrays[bad - 1]}")
        (self.body_position, self.body_rotation, self.joint_positions, self.body_twist,
         self.joint_velocities) = arrays

    @property
    def body_pose(self) -> pin.SE3:
        return pin.SE3(self.body_rotation, self.body_position)

    def q(self, out: np.ndarray | None = None) -> np.ndarray:
        """Pinocchio configuration (27,): position, unit quaternion ``(x, y, z, w)`` of the
        rotation, joints; written into ``out`` (27,) if given."""
        if out is None:
            out = np.empty(NQ_BASE + N_JOINTS)
        configuration(self.body_rotation, self.body_position, self.joint_positions, out)
        return out


def leg_slice(leg: str) -> slice:
    """Slice of ``leg``'s five joints in a 20-vector of joints."""
    i = leg_index(leg)
    return slice(i * JOINTS_PER_LEG, (i + 1) * JOINTS_PER_LEG)


class RobotModel:
    """Pinocchio model and data of the robot (built once, ``data`` reused by every query),
    with limits as arrays over the 20 joints."""

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
