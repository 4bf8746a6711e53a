"""The simulator: MuJoCo physics at ``physics_dt``, servo commands and sensors at the control rate.

Control rate. Climbing runs at 50 Hz. The paper's robot drives its 20 Dynamixel servos over
four TTL buses, five servos each. One cycle on a bus (Protocol 2.0) is a sync read of
present current, velocity and position (a 19-byte instruction and five 21-byte status
packets) and sync writes of goal position and goal current (39 + 29 bytes): about 192 bytes,
1.9 ms at 1 Mbit/s or 16.7 ms at 115.2 kbit/s, plus five 250 us return delays. 50 Hz thus
fits every baud rate from 115.2 kbit/s up, and at 1 Mbit/s leaves the bus 85 % idle. The
climbing gait needs no more: its fastest motion, the 20 mm/s descent onto a hold, moves the
foot 0.4 mm per cycle, which bounds how late the joint-4 contact threshold is seen.
The servo loop itself runs inside MuJoCo at the physics rate (see :mod:`.servos`); a climb's
physics step is chosen in :mod:`.rates` (10 ms at 50 Hz, checked against 4 ms and 1 ms).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import N_JOINTS, Marcbot
from clamber.quadruped.model.robot_model import RobotState
from clamber.quadruped.sim import period_kernel, step_kernel
from clamber.quadruped.sim.grippers import GripperBank
from clamber.quadruped.sim.servos import ServoBank
from clamber.sim_stability import _FATAL, _SAFE, StabilityWatch, UnstableSimulation

#: The state a control period is rerun from: everything integration depends on.
_STATE = mujoco.mjtState.mjSTATE_INTEGRATION
#: The same as the integer the compiled period passes to MuJoCo's ``mj_getState``.
_STATE_BITS = int(_STATE)
#: World gravity vector [m/s^2].
GRAVITY_VECTOR = np.array([0.0, 0.0, -9.81])


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

    @classmethod
    def trusted(cls, t: float, torque: np.ndarray, power: float,
                broken: tuple[str, ...]) -> StepRecord:
        """The record of the simulator's own numbers, without the frozen dataclass's
        per-field set-up (the same record)."""
        r = object.__new__(cls)
        r.__dict__.update(t=t, torque=torque, power=power, broken=broken)
        return r


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
        self.body_id = model.body("body").id
        #: qpos and qvel addresses of the 20 servo joints (a scene may add passive joints).
        joints = model.actuator_trnid[:, 0]
        self.qadr = model.jnt_qposadr[joints].copy()
        self.vadr = model.jnt_dofadr[joints].copy()
        self._torque = np.zeros(N_JOINTS)
        #: Servo forces of the period's physics steps (substeps, 20) [N m].
        self._forces = np.zeros((self.substeps, N_JOINTS))
        self._abs = np.zeros((self.substeps, N_JOINTS))
        self._saved = np.empty(mujoco.mj_stateSize(model, _STATE))
        self._prev_velocity = np.zeros(3)
        #: The body's orientation (quaternion) at the start of the period, for the gyro.
        self._prev_quat = np.zeros(4)
        # Views into MjData's buffers, which never move: reading them costs no binding call
        # per cycle (the same memory, so the same numbers).
        d = self.data
        self._qpos, self._qvel, self._force = d.qpos, d.qvel, d.actuator_force
        self._body_xmat = d.xmat[self.body_id].reshape(3, 3)
        self._body_xmat_t = self._body_xmat.T
        self._position, self._lin_vel, self._quat = d.qpos[:3], d.qvel[:3], d.qpos[3:7]
        self._instability = StabilityWatch(d)
        #: The period's steps in one compiled call where MuJoCo's library links (the same
        #: numbers as the Python loop of :meth:`_advance`, which runs otherwise).
        self.compiled = period_kernel.AVAILABLE
        #: What the kernel records of each step for the grippers (their record_step's
        #: sources), and placeholders of its recording arrays where none are recorded.
        self._sources = (d.cfrc_ext, d.subtree_com, d.site_xpos, d.site_xmat)
        self._no_cycle = (np.empty((0, 0, 0)),) * 4
        #: The physics step [s] (fixed with ``substeps``).
        self._h = model.opt.timestep
        #: What :meth:`step` passes the compiled cycle: the servos' ctrl and force ranges
        #: (views that never move), the power it writes, and placeholders of the grippers'
        #: check where none is checked.
        self._ctrl, self._forcerange = d.ctrl, model.actuator_forcerange
        self._power = np.zeros(1)
        self._fixed: tuple | None = None
        self._unchecked = (np.zeros((5, 0), dtype=np.int64), False, np.zeros((0, 6)),
                           np.zeros((self.substeps, 0, 6)), np.zeros((6, 0)), np.zeros((6, 0)),
                           0.0, 0.0, (np.zeros((0, 6)), np.zeros(0), np.zeros(0),
                                      np.zeros((0, 6)), np.zeros((0, 6)), np.zeros(0),
                                      np.zeros(0), np.zeros(0)), np.zeros(0))
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
        return RobotState.trusted(d.qpos[:3].copy(), R, d.qpos[self.qadr], v,
                                  d.qvel[self.vadr])

    def body_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """True body position [m] and rotation matrix, read without building a state."""
        return self._position.copy(), self._body_xmat.copy()

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions [rad] and velocities [rad/s] (the servos' encoder readings)."""
        return self._qpos.take(self.qadr), self._qvel.take(self.vadr)

    def imu_truth(self) -> tuple[np.ndarray, np.ndarray]:
        """Specific force [m/s^2] and angular rate [rad/s] in {B}, both averaged over the last
        cycle: the velocity change over the cycle's length, and the rotation from the cycle's
        start to its end over its length (an IMU's delta-velocity and delta-angle outputs).

        Averaging the rate, as the accelerometer is averaged, keeps vibrations the cycle does
        not resolve out of it: the rate at the cycle's last physics step carried them by an
        amount that depended on the physics step (docs/quadruped_sim.md, "Physics step")."""
        # The same operations as ``R.T @ ((v - v_prev) / dt - g)``, in one work array.
        acc = np.subtract(self._lin_vel, self._prev_velocity)
        acc /= self.dt
        acc -= GRAVITY_VECTOR
        rate = np.empty(3)
        # The rotation vector r with q_prev * exp(r) = q_now, in the start's body frame.
        mujoco.mju_subQuat(rate, self._quat, self._prev_quat)
        rate /= self.dt
        return self._body_xmat_t @ acc, rate

    def step(self, cmd: JointCommand) -> StepRecord:
        """:meth:`step_plain` in one compiled call (:func:`.step_kernel.step`) where the
        period is compiled, the servos are a :class:`ServoBank` and the command three float
        vectors of the 20 servos: the same numbers, records and errors. What the kernel
        leaves to Python (a command not finite, a period not certified, a suspect state)
        is finished as :meth:`step_plain` finishes it."""
        p, t, c = cmd.position, cmd.torque, cmd.current_limit
        sv = self.servos
        if not (self.compiled and type(sv) is ServoBank
                and type(p) is type(t) is type(c) is np.ndarray
                and p.shape == t.shape == c.shape == (N_JOINTS,)
                and p.dtype == t.dtype == c.dtype == np.float64):
            return self.step_plain(cmd)
        m, d, g = self.model, self.data, self.grippers
        gripped = g is not None and g.begin_cycle(self.substeps)
        if gripped:
            save = g.breakable
            check = g.cycle_check()
            cycle = g.cycle_data
        elif g is not None and g.attached:  # a gripper to check after every step
            return self.step_plain(cmd)
        else:
            save, check, cycle = False, self._unchecked, self._no_cycle
        fixed = self._fixed
        if fixed is None or fixed[0] is not sv:
            fixed = self._fixed = (sv, self._kernel_head(sv))
        fix = fixed[1]
        self._prev_quat[:] = self._quat
        verdict = step_kernel.step(*fix, p, t, c, gripped, cycle, save, *check)  # the physics steps
        if verdict == step_kernel.DONE:
            return StepRecord.trusted(d.time, self._torque.copy(), float(self._power[0]), ())
        if verdict >= 0:
            names = ("position", "torque", "current_limit")
            raise ConfigError(f"command {names[verdict]} must be {N_JOINTS} finite numbers")
        broken: list[str] = []
        if verdict == step_kernel.UNSETTLED and not g.advance_recorded(self._h, check[3]):
            mujoco.mj_setState(m, d, self._saved, _STATE)
            broken = self._advance(check=True)
        return self._finish(broken)

    def _kernel_head(self, sv: ServoBank) -> tuple:
        """:func:`.step_kernel.step`'s first arguments: this simulator's and its servos'
        arrays and numbers, fixed while they live (MjData's buffers never move)."""
        m, d, watch = self.model, self.data, self._instability
        return (m._address, d._address, self.substeps, sv.kp, sv.current_per_torque,
                sv.tau_max, self._ctrl, self._forcerange, self._qvel, self._prev_velocity,
                self._force, self._forces, self._torque, self._sources, self._saved,
                _STATE_BITS, watch._warnings, _FATAL, watch._qpos, _SAFE,
                sv.params.idle_current, sv.params.voltage, self._power)

    def step_plain(self, cmd: JointCommand) -> StepRecord:
        """Apply ``cmd`` and advance one control period.

        The grippers' failure model is checked after every physics step. The steps' wrenches
        are recorded and checked together at the end of the period (the failure clocks
        advanced over them step by step where one is not certified inside its set); only
        if a gripper broke off in the period, which changes the physics from that step on,
        is the period rerun from its saved state with a check after every step (the physics
        is deterministic, so the result is the step-by-step one either way). While the
        grippers cannot break, no period is rerun and no state is saved.
        """
        m, d = self.model, self.data
        self.servos.apply(m, d, cmd)
        self._prev_velocity[:] = self._qvel[:3]
        self._prev_quat[:] = self._quat
        g = self.grippers
        broken: list[str] = []
        if g is not None and g.begin_cycle(self.substeps):
            self._advance(record=True, save=g.breakable)
            if not g.end_cycle(self._h):
                mujoco.mj_setState(m, d, self._saved, _STATE)
                broken = self._advance(check=True)
        else:
            broken = self._advance(check=g is not None)
        return self._finish(broken)

    def _finish(self, broken: list[str]) -> StepRecord:
        """The end of a period: the stability check, then its record."""
        problem = self._instability()
        if problem is not None:
            t = self.data.time
            raise SimulationError(f"simulation unstable at t = {t:.3f} s ({problem})")
        return StepRecord(self.data.time, self._torque.copy(),
                          self.servos.power(self._torque), tuple(broken))

    def _advance(self, record: bool = False, check: bool = False,
                 save: bool = False) -> list[str]:
        """The period's physics steps, with the gripper data recorded or checked after each
        (the state saved first into ``_saved`` if ``save``); mean servo torques into
        ``_torque``. Returns the legs that broke off."""
        m, d, g = self.model, self.data, self.grippers
        forces, force = self._forces, self._force
        broken: list[str] = []
        if self.compiled and not (check and g.attached):
            # With no gripper attached the check has nothing to check.
            cycle = g.cycle_data if record else self._no_cycle
            args = (self.substeps, force, forces, self._torque, record, self._sources, cycle,
                    save, self._saved, _STATE_BITS)
            period_kernel.advance(m._address, d._address, *args)  # the physics steps
            return broken
        if save:
            mujoco.mj_getState(m, d, self._saved, _STATE)
        h = self._h
        step = mujoco.mj_step
        if record:
            rec = g.record_step
            for j in range(self.substeps):
                step(m, d)
                forces[j] = force
                rec(j)
        else:
            for j in range(self.substeps):
                step(m, d)
                forces[j] = force
                if check:
                    broken += g.check(h)
        # The sum over the steps adds them in order, as a running sum from zero would.
        torque = np.abs(forces, out=self._abs).sum(axis=0, out=self._torque)
        torque *= 1.0 / self.substeps
        return broken

    def joint_torques(self) -> np.ndarray:
        """Torques (20,) [N m] the servos apply now (their current readings)."""
        return self._force.copy()

    def joint4_torques(self) -> np.ndarray:
        """Torque [N m] each leg's joint-4 servo applies now (from its current reading)."""
        return self._force[3::5].copy()
