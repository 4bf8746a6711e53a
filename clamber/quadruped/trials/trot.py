"""A seeded trotting trial on ground terrain (the paper's walking tests, Fig. 11).

CLIK position control on a level plan, the IMU and leg odometry estimating the state; the
metrics are the attitude error (exponential coordinates, yaw free) and power.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import mujoco
import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.failures import FailureReason
from clamber.quadruped.controllers import JointCommand
from clamber.quadruped.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.gaits import TrotGait, TrotGaitSettings
from clamber.quadruped.kinematics import Clik
from clamber.quadruped.model import RobotModel, RobotState
from clamber.quadruped.robot import LEG_NAMES, N_JOINTS, Marcbot
from clamber.quadruped.sim.scene import ground_scene
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim, SimulationError, StepRecord
from clamber.quadruped.sim.world import ModelMismatch, ground_terrain
from clamber.quadruped.trials.log import TrialLog, feet_in_body
from clamber.quadruped.trials.result import (
    TrialIdentity,
    TrialResult,
    metric_recorder,
    reduce_trial,
)
from clamber.quadruped.trials.stance import initial_joints

#: The body frame of the trotting plan: level, heading along x, at the body reference.
_LEVEL_BODY = pin.SE3.Identity()


@dataclass(frozen=True)
class TrotSettings:
    """A trotting trial: terrain name, feet (``"gripper"`` or ``"rubber"``), gait, control
    rate [Hz] (100 Hz: a 0.28 s swing needs finer steps than climbing; a bus cycle takes
    about 3.2 ms at 1 Mbit/s), and the attitude error [deg] at which the robot has tipped."""

    terrain: str = "flat"
    feet: str = "gripper"
    gait: TrotGaitSettings = field(default_factory=TrotGaitSettings)
    control_rate: float = 100.0
    fall_attitude_deg: float = 45.0

    def __post_init__(self) -> None:
        ground_terrain(self.terrain)
        if self.feet not in ("gripper", "rubber"):
            raise ConfigError(f"feet must be 'gripper' or 'rubber', got {self.feet!r}")


class TrotTrial:
    """One seeded trot: :meth:`step` runs one control cycle, :meth:`result` reads it out.

    ``initial_tilt`` (a rotation matrix) starts the body tilted, its feet on the ground;
    ``log`` keeps a :class:`TrialLog` with snapshots every ``snapshot_period`` [s].
    """

    def __init__(self, settings: TrotSettings, seed: int, log: bool = False,
                 robot: Marcbot | None = None, initial_tilt: np.ndarray | None = None,
                 snapshot_period: float = 1.0) -> None:
        t0 = time.perf_counter()
        self.settings, self.seed = settings, seed
        robot = robot or Marcbot()
        gp = self.gp = settings.gait
        self.sim_robot = ModelMismatch().perturb(robot, seed)
        servos = ServoBank(self.sim_robot)
        model = ground_scene(self.sim_robot, ground_terrain(settings.terrain), servos,
                             settings.feet, seed=seed, size=trot_ground_size(gp))
        self.sim = QuadrupedSim(model, self.sim_robot, servos, settings.control_rate)
        self.gait = TrotGait(gp, robot=robot)
        self.rm = RobotModel(robot)
        lift = 0.003 + terrain_height(model)
        self.body0 = pin.SE3(np.eye(3) if initial_tilt is None else np.asarray(initial_tilt),
                             self.gait.body(0.0) + np.array([0, 0, lift]))
        tops = {leg: self.gait.foot(0.0, leg) + np.array([0, 0, lift]) for leg in LEG_NAMES}
        q0 = initial_joints(RobotModel(self.sim_robot), self.body0, tops,
                            dict.fromkeys(LEG_NAMES, np.array([0, 0, 1.0])))
        self.sim.set_state(self.body0.translation, self.body0.rotation, q0)
        self.clik = Clik(self.rm, gain=1.0)
        self.imu = SimulatedImu(seed=seed + 101)
        self.ekf = LegOdometryEkf(self.rm, self.body0.translation, self.body0.rotation,
                                  self.imu.spec)
        self.log = TrialLog(snapshot_period=snapshot_period) if log else None
        self.samples = metric_recorder()
        self.dt = self.sim.dt
        self.n = int(round(gp.duration / self.dt))
        self.start_step = int(round(gp.start_time / self.dt))
        self.failure: FailureReason | None = None
        self.reason = ""
        self.k = 0
        #: Control cycles entered (a cycle that ends the trial counts).
        self.cycles = 0
        self.finished = self.n == 0
        self.setup_time = time.perf_counter() - t0
        self._loop_start = time.perf_counter()

    def step(self) -> bool:
        """Run one control cycle; False once the trial has ended."""
        if self.finished:
            return False
        self.cycles += 1
        try:
            self._cycle()
        except SimulationError as e:
            self.failure, self.reason, self.finished = FailureReason.UNSTABLE, str(e), True
        if not self.finished:
            self.k += 1
            self.finished = self.k >= self.n
        return not self.finished

    def _cycle(self) -> None:
        gp, sim, k, dt = self.gp, self.sim, self.k, self.dt
        t = k * dt
        truth = sim.true_state()
        est = self._estimate(t, truth)
        # The plan is in a level frame heading along x, moving with the body reference:
        # the grippers' targets relative to the body in that frame are the body-frame
        # targets of a level body. A tilted body sees its grounded feet elsewhere in its
        # own frame, so the stance legs turn it back. (Expressing the targets through the
        # measured attitude instead cancels exactly: the tilt becomes invisible.)
        body_ref = self.gait.body(t)
        targets = {}
        for leg in LEG_NAMES:
            pose = self.gait.foot_pose(t, leg)
            targets[leg] = pin.SE3(pose.rotation, pose.translation - body_ref)
        goal = self.clik.step(truth.joint_positions, _LEVEL_BODY, targets)
        rec = sim.step(JointCommand(goal, np.zeros(N_JOINTS), self.rm.current_max.copy()))
        a_err = float(np.linalg.norm(pin.log3(tilt_true(truth))))
        if t >= gp.start_time:
            self._sample(rec, a_err, est, truth)
        if self.log is not None:
            self.log.record(t, truth.body_position, body_ref, est.body_position,
                            feet_in_body(sim), math.degrees(a_err), rec.power)
            self.log.snapshot(t, sim)
        if math.degrees(a_err) > self.settings.fall_attitude_deg:
            self.failure, self.reason = FailureReason.TIPPED_OVER, "robot tipped over"
            self.finished = True

    def _estimate(self, t: float, truth: RobotState) -> RobotState:
        """The EKF (restarted at the end of the standing start), updated with the feet well
        inside their scheduled stance (not touching down or lifting off)."""
        gp, k, dt, gait = self.gp, self.k, self.dt, self.gait
        f, w = self.sim.imu_truth()
        if k == self.start_step:
            self.ekf = LegOdometryEkf(self.rm, truth.body_position, truth.body_rotation,
                                      self.imu.spec)
        elif k > 0:
            self.ekf.predict(*self.imu.measure(f, w, dt), dt)
        settled = tuple(leg for leg in LEG_NAMES if gait.phase(t, leg)[0]
                        and (t < gp.start_time or 0.15 <= gait.phase(t, leg)[1] <= 0.9))
        self.ekf.update(truth.joint_positions, settled, dt)
        return self.ekf.state(truth.joint_positions, truth.joint_velocities)

    def _sample(self, rec: StepRecord, a_err: float, est: RobotState,
                truth: RobotState) -> None:
        s, row = self.samples, self.samples.rows
        s.write(row, "power_w", rec.power)
        s.write(row, "attitude_rad", a_err)
        s.write(row, "est_position_m",
                float(np.linalg.norm(est.body_position - truth.body_position)))
        s.write(row, "est_attitude_rad", float(np.linalg.norm(pin.log3(
            est.body_rotation.T @ truth.body_rotation))))

    def run(self) -> tuple[TrialResult, TrialLog | None]:
        """Step until the trial ends; its result and (if logged) its time series."""
        while self.step():
            pass
        return self.result(), self.log

    def result(self) -> TrialResult:
        """The trial's metrics; a walk shorter than half the plan is a failure."""
        gp, s, sim = self.gp, self.settings, self.sim
        distance = float(sim.true_state().body_position[0] - self.body0.translation[0])
        expected = gp.speed * (gp.duration - gp.start_time)
        failure, reason = self.failure, self.reason
        if not reason and distance < 0.5 * expected:
            failure = FailureReason.SHORT_DISTANCE
            reason = f"covered {distance:.2f} m of {expected:.2f} m"
        if self.log is not None:
            self.log.model = sim.model
            self.log.bands = [(gp.start_time + c * gp.period, gp.start_time + (c + gp.duty)
                               * gp.period, "LF+RR stance", "") for c in range(gp.cycles)]
        return reduce_trial(
            TrialIdentity("trot", s.feet, s.terrain, self.seed), failure, reason,
            self.samples, sim_time=max(1, self.cycles) * self.dt,
            wall=time.perf_counter() - self._loop_start, setup_time=self.setup_time,
            distance=distance, mass=float(sim.model.body_mass.sum()), dt=self.dt,
            peak_load=math.nan)


def run_trot(settings: TrotSettings, seed: int, log: bool = False,
             robot: Marcbot | None = None,
             initial_tilt: np.ndarray | None = None,
             snapshot_period: float = 1.0) -> tuple[TrialResult, TrialLog | None]:
    """One trotting trial (see :class:`TrotTrial`); its result and, if ``log``, its series."""
    return TrotTrial(settings, seed, log, robot, initial_tilt, snapshot_period).run()


def trot_ground_size(gait: TrotGaitSettings) -> float:
    """Length [m] of the trotting ground: from 0.5 m behind the start to 1 m past the end of
    the walk (at least 3 m)."""
    return max(3.0, gait.speed * gait.duration + 1.5)


def terrain_height(model: mujoco.MjModel, radius: float = 0.4) -> float:
    """Highest point [m] of the ground within ``radius`` [m] of the start (0 for a plane)."""
    g = model.geom("ground")
    if g.type[0] != mujoco.mjtGeom.mjGEOM_HFIELD:
        return 0.0
    h = g.dataid[0]
    nrow, ncol = model.hfield_nrow[h], model.hfield_ncol[h]
    sx, sy, sz, _ = model.hfield_size[h]
    adr = model.hfield_adr[h]
    z = model.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol)
    x = g.pos[0] + np.linspace(-sx, sx, ncol)
    y = g.pos[1] + np.linspace(-sy, sy, nrow)
    near = (np.abs(y)[:, None] <= radius) & (np.abs(x)[None, :] <= radius)
    return float(g.pos[2] + sz * z[near].max())


def tilt_true(state: RobotState) -> np.ndarray:
    """Roll-pitch part of the body attitude (yaw removed) as a rotation matrix."""
    R = state.body_rotation
    yaw = math.atan2(R[1, 0], R[0, 0])
    return pin.utils.rotate("z", yaw).T @ R
