"""The simulator: MuJoCo physics at ``physics_dt``, servo commands and sensors at the control rate.

Climbing runs at 50 Hz: one Dynamixel bus cycle (sync read of current, velocity and position
of five servos, sync writes of goal position and current, about 192 bytes) takes 1.9 ms at
1 Mbit/s and 16.7 ms at 115.2 kbit/s, and the fastest climbing motion (the 20 mm/s descent)
moves the foot 0.4 mm per cycle. The servo loop runs inside MuJoCo at the physics rate
(:mod:`.servos`); the physics step is chosen in :mod:`.rates`.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import GRAVITY_VECTOR, N_JOINTS, Marcbot
from clamber.quadruped.model.robot_model import RobotState
from clamber.quadruped.sim.grippers import GripperBank
from clamber.quadruped.sim.servos import ServoBank
from clamber.sim_stability import StabilityWatch, UnstableSimulation


class SimulationError(UnstableSimulation):
    """The physics went unstable (non-finite state or a MuJoCo warning)."""


@dataclass(frozen=True)
class StepRecord:
    """One control cycle: time [s], mean servo torques (20,) [N m] and electrical power [W]
    over the cycle, and the legs whose grippers broke off in it."""

    t: float
    torque: np.ndarray
    power: float
    broken: tuple[str, ...]


class QuadrupedSim:
    """A compiled scene with its servos and (for climbing) grippers, stepped per control cycle."""

    def __init__(self, model: mujoco.MjModel, robot: Marcbot, servos: ServoBank,
                 control_rate: float = 50.0, grippers: bool = False) -> None:
        if control_rate <= 0:
            raise ConfigError(f"control_rate must be > 0 Hz, got {control_rate}")
        self.model, self.robot, self.servos = model, robot, servos
        self.data = mujoco.MjData(model)
        self.substeps = max(1, round(1.0 / (control_rate * model.opt.timestep)))
        self.dt = self.substeps * model.opt.timestep
        self.grippers = GripperBank(model, self.data) if grippers else None
        #: The physics step [s].
        self._h = model.opt.timestep
        self.body_id = model.body("body").id
        #: qpos and qvel addresses of the 20 servo joints (a scene may add passive joints).
        joints = model.actuator_trnid[:, 0]
        self.qadr = model.jnt_qposadr[joints].copy()
        self.vadr = model.jnt_dofadr[joints].copy()
        #: Servo forces of the period's physics steps (substeps, 20) [N m].
        self._forces = np.zeros((self.substeps, N_JOINTS))
        self._prev_velocity = np.zeros(3)
        #: The body's orientation (quaternion) at the start of the period, for the gyro.
        self._prev_quat = np.zeros(4)
        # Views into MjData's buffers, which never move.
        d = self.data
        self._qpos, self._qvel, self._force = d.qpos, d.qvel, d.actuator_force
        self._body_xmat = d.xmat[self.body_id].reshape(3, 3)
        self._position, self._lin_vel, self._quat = d.qpos[:3], d.qvel[:3], d.qpos[3:7]
        self._instability = StabilityWatch(d)
        mujoco.mj_forward(model, self.data)

    def set_state(self, position: np.ndarray, rotation: np.ndarray,
                  joints: np.ndarray) -> None:
        """Place the robot at rest: body pose in {S} and joint angles [rad]."""
        d = self.data
        d.qpos[:] = self.model.qpos0  # passive joints (compliant soles) at rest
        d.qpos[:3] = position
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation).reshape(-1))
        d.qpos[3:7] = quat
        d.qpos[self.qadr] = joints
        d.qvel[:] = 0.0
        d.ctrl[:] = joints
        mujoco.mj_forward(self.model, d)
        self._prev_velocity[:] = 0.0
        self._prev_quat[:] = self._quat

    def true_state(self) -> RobotState:
        """Body pose, body twist in {B} and joints, read from the physics."""
        d = self.data
        R = d.xmat[self.body_id].reshape(3, 3).copy()
        v = np.concatenate([R.T @ d.qvel[:3], d.qvel[3:6]])
        return RobotState(d.qpos[:3].copy(), R, d.qpos[self.qadr], v, d.qvel[self.vadr])

    def body_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """True body position [m] and rotation matrix, read without building a state."""
        return self._position.copy(), self._body_xmat.copy()

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions [rad] and velocities [rad/s] (the servos' encoder readings)."""
        return self._qpos.take(self.qadr), self._qvel.take(self.vadr)

    def imu_truth(self) -> tuple[np.ndarray, np.ndarray]:
        """Specific force [m/s^2] and angular rate [rad/s] in {B}, both averaged over the last
        cycle (an IMU's delta-velocity and delta-angle outputs), so vibrations the cycle does
        not resolve stay out of them whatever the physics step."""
        acc = (self._lin_vel - self._prev_velocity) / self.dt - GRAVITY_VECTOR
        rate = np.empty(3)
        # The rotation vector r with q_prev * exp(r) = q_now, in the start's body frame.
        mujoco.mju_subQuat(rate, self._quat, self._prev_quat)
        return self._body_xmat.T @ acc, rate / self.dt

    def step(self, cmd: JointCommand) -> StepRecord:
        """Apply ``cmd`` and advance one control period, the grippers' failure model checked
        after every physics step; the record's torques are the mean ``|force|`` per servo
        over the period, its power the servos' at those torques."""
        m, d, g = self.model, self.data, self.grippers
        self.servos.apply(m, d, cmd)
        self._prev_velocity[:] = self._lin_vel
        self._prev_quat[:] = self._quat
        forces, force, h = self._forces, self._force, self._h
        broken: list[str] = []
        for j in range(self.substeps):
            mujoco.mj_step(m, d)
            forces[j] = force
            if g is not None and g.attached:
                broken += g.check(h)
        problem = self._instability()
        if problem is not None:
            raise SimulationError(f"simulation unstable at t = {d.time:.3f} s ({problem})")
        torque = np.empty(N_JOINTS)
        power = self.servos.period(forces, torque)
        return StepRecord(d.time, torque, power, tuple(broken))

    def joint_torques(self) -> np.ndarray:
        """Torques (20,) [N m] the servos apply now (their current readings)."""
        return self._force.copy()

    def joint4_torques(self) -> np.ndarray:
        """Torque [N m] each leg's joint-4 servo applies now (from its current reading)."""
        return self._force[3::5].copy()
