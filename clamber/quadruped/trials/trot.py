"""A seeded trotting trial on ground terrain (the paper's walking tests, Fig. 11).

CLIK position control on a level plan; metrics: attitude error (yaw free), power and the
estimate's drift from encoders (4096 ticks a turn), noisy servo currents and a biased IMU.
``contacts``: the torque detector, its detections inside the scheduled stance
(``fused``), the schedule, or the truth (a reference only). ``level_gain`` > 0 turns the
body target against the estimated roll and pitch (PI) and holds its height over the anchors.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import mujoco
import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.exceptions import InfeasibleStart
from clamber.failures import FailureReason
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.estimation.contact import (
    ContactDetector,
    FootForceEstimator,
    ServoCurrentSensor,
    contact_scores,
)
from clamber.quadruped.estimation.contact_ekf import AnchorEkf, calibrate_gyro, nees
from clamber.quadruped.estimation.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.gaits import TrotGait, TrotGaitSettings
from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS, Marcbot
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.options import ContactSource, Estimator
from clamber.quadruped.sim.scene import FEET, ground_scene, robot_with_feet
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
#: One encoder tick of the servos (4096 per turn) [rad].
ENCODER_TICK = 2 * math.pi / 4096
#: The robot stands still this long before walking while its gyro bias is averaged [s].
GYRO_CALIBRATION_S = 5.0
#: Stance progress from which "fused" contacts drop a foot ahead of its lift-off.
FUSED_LIFT_OFF = 0.8


@dataclass(frozen=True)
class TrotSettings:
    """A trotting trial: terrain, feet, gait, control rate [Hz], the attitude error [deg] at
    which it has tipped, estimator, contact source, ``level_gain`` [1/s] (0: open loop;
    proportional ``0.1 s * level_gain``) and model ``mismatch``."""

    terrain: str = "flat"
    feet: str = "gripper"
    gait: TrotGaitSettings = field(default_factory=TrotGaitSettings)
    control_rate: float = 100.0
    fall_attitude_deg: float = 45.0
    estimator: Estimator = Estimator.ANCHOR
    contacts: ContactSource = ContactSource.TORQUE
    level_gain: float = 0.0
    mismatch: ModelMismatch = field(default_factory=ModelMismatch)

    def __post_init__(self) -> None:
        ground_terrain(self.terrain)
        check.choice("trot", "feet", self.feet, FEET)
        object.__setattr__(self, "estimator",
                           Estimator.parse(self.estimator, "trot", "estimator"))
        object.__setattr__(self, "contacts",
                           ContactSource.parse(self.contacts, "trot", "contacts"))
        check.non_negative("trot", "level_gain", self.level_gain)


class TrotTrial:
    """One seeded trot: :meth:`step` runs one control cycle, :meth:`result` reads it out;
    ``initial_tilt`` (a rotation) starts the body tilted, ``log`` keeps a :class:`TrialLog`.
    """

    def __init__(self, settings: TrotSettings, seed: int, log: bool = False,
                 robot: Marcbot | None = None, initial_tilt: np.ndarray | None = None,
                 snapshot_period: float = 1.0) -> None:
        t0 = time.perf_counter()
        self.settings, self.seed = settings, seed
        robot = robot or Marcbot()
        gp = self.gp = settings.gait
        self.sim_robot = settings.mismatch.perturb(robot, seed)
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
        self.gyro_bias = calibrate_gyro(self.imu, self.body0.rotation, GYRO_CALIBRATION_S,
                                        self.sim.dt)
        self.ekf = self._new_filter(self.body0.translation, self.body0.rotation)
        feet_robot = RobotModel(robot_with_feet(robot, settings.feet))
        self.force_model = FootForceEstimator(feet_robot, servos.kv)
        self.currents = ServoCurrentSensor(servos.current_per_torque, seed=seed + 202)
        self.detector = ContactDetector()
        self.contact_log: tuple[list, list] = ([], [])
        self.level = np.zeros(3)
        self.height_offset = 0.0
        self.drift_start: np.ndarray | None = None
        self.nees: list[float] = []
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
        # Targets of a level body: the stance legs of a tilted one turn it back.
        body_ref = self.gait.body(t)
        targets = {}
        for leg in LEG_NAMES:
            pose = self.gait.foot_pose(t, leg)
            targets[leg] = pin.SE3(pose.rotation, pose.translation - body_ref)
        goal = self.clik.step(truth.joint_positions, self._body_target(est), targets)
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

    def _new_filter(self, position: np.ndarray, rotation: np.ndarray
                    ) -> LegOdometryEkf | AnchorEkf:
        if self.settings.estimator is Estimator.ODOMETRY:
            return LegOdometryEkf(self.rm, position, rotation, self.imu.spec)
        ekf = AnchorEkf(self.rm, position, rotation, self.imu.spec)
        ekf.set_gyro_bias(*self.gyro_bias)
        return ekf

    def _body_target(self, est: RobotState) -> pin.SE3:
        """The body target in the plan's level frame: level (open loop), or turned against
        the estimated roll and pitch and raised by the height error (``level_gain`` > 0)."""
        gain = self.settings.level_gain
        if gain == 0.0 or self.k < self.start_step:
            return _LEVEL_BODY
        tilt = pin.log3(tilt_true(est))
        tilt[2] = 0.0
        self.level -= gain * self.dt * tilt
        ekf = self.ekf
        if isinstance(ekf, AnchorEkf) and ekf.active.any():
            ground = float(ekf.anchors[ekf.active, 2].mean())
            height = est.body_position[2] - ground
            self.height_offset += gain * self.dt * (self.gp.body_height - height)
        rotation = pin.exp3(self.level - 0.1 * gain * tilt)
        return pin.SE3(rotation, np.array([0.0, 0.0, self.height_offset]))

    def _estimate(self, t: float, truth: RobotState) -> RobotState:
        """The EKF, restarted after the standing start, fed IMU, encoders and contacts."""
        gp, k, dt = self.gp, self.k, self.dt
        f, w = self.sim.imu_truth()
        q = np.round(truth.joint_positions / ENCODER_TICK) * ENCODER_TICK
        if k == self.start_step:
            old, self.ekf = self.ekf, self._new_filter(truth.body_position,
                                                         truth.body_rotation)
            if isinstance(old, AnchorEkf) and isinstance(self.ekf, AnchorEkf):
                self.ekf.keep_biases(old)
            self.drift_start = truth.body_position.copy()
        elif k > 0:
            self.ekf.predict(*self.imu.measure(f, w, dt), dt)
        force = self.force_model.forces(q, truth.joint_velocities,
                                        self.currents.read(self.sim.joint_torques()),
                                        self.ekf.R)
        detected = self.detector.update(force[:, 2])
        source = self.settings.contacts
        if source == "torque":
            contacts = detected
        elif source == "fused":
            contacts = tuple(leg for leg in detected if self.gait.phase(t, leg)[0]
                             and self.gait.phase(t, leg)[1] < FUSED_LIFT_OFF)
        elif source == "truth":
            contacts = _true_contacts(self.sim)
        else:
            contacts = tuple(leg for leg in LEG_NAMES if self.gait.phase(t, leg)[0] and (
                t < gp.start_time or 0.15 <= self.gait.phase(t, leg)[1] <= 0.9))
        if t >= gp.start_time:
            self.contact_log[0].append(detected)
            self.contact_log[1].append(_true_contacts(self.sim))
        if isinstance(self.ekf, AnchorEkf):
            self.ekf.update(q, contacts)
            if t >= gp.start_time:
                e = np.concatenate([truth.body_position - self.ekf.p,
                                    truth.body_rotation @ truth.body_twist[:3] - self.ekf.v,
                                    pin.log3(self.ekf.R.T @ truth.body_rotation)])
                self.nees.append(nees(e, self.ekf.body_covariance()))
        else:
            self.ekf.update(q, contacts, dt)
        return self.ekf.state(q, truth.joint_velocities)

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
        extra = self._estimation_summary(distance)
        if self.log is not None:
            self.log.model = sim.model
            self.log.bands = [(gp.start_time + c * gp.period, gp.start_time + (c + gp.duty)
                               * gp.period, "LF+RR stance", "") for c in range(gp.cycles)]
        return reduce_trial(
            TrialIdentity("trot", s.feet, s.terrain, self.seed), failure, reason,
            self.samples, sim_time=max(1, self.cycles) * self.dt,
            wall=time.perf_counter() - self._loop_start, setup_time=self.setup_time,
            distance=distance, mass=float(sim.model.body_mass.sum()), dt=self.dt,
            peak_load=math.nan, **extra)

    def _estimation_summary(self, distance: float) -> dict[str, float]:
        """Drift, contact precision and recall, and the anchor EKF's mean NIS and NEES."""
        truth = self.sim.true_state().body_position
        drift = float(np.linalg.norm(self.ekf.p - truth))
        walked = float(np.linalg.norm((truth - self.drift_start)[:2])) \
            if self.drift_start is not None else 0.0
        scores = contact_scores(*self.contact_log) if self.contact_log[0] else {
            "precision": math.nan, "recall": math.nan}
        nis = getattr(self.ekf, "nis", [])
        return {"estimation_drift_m": drift,
                "estimation_drift_percent": 100 * drift / walked if walked > 1e-3 else math.nan,
                "contact_precision": scores["precision"], "contact_recall": scores["recall"],
                "estimation_nis": (float(sum(v for v, _ in nis) / sum(d for _, d in nis))
                                   if nis else math.nan),
                "estimation_nees": float(np.mean(self.nees)) / 9 if self.nees else math.nan}


def run_trot(settings: TrotSettings, seed: int, log: bool = False,
             robot: Marcbot | None = None,
             initial_tilt: np.ndarray | None = None,
             snapshot_period: float = 1.0) -> tuple[TrialResult, TrialLog | None]:
    """One trotting trial (see :class:`TrotTrial`); its result and, if ``log``, its series."""
    try:
        trial = TrotTrial(settings, seed, log, robot, initial_tilt, snapshot_period)
    except InfeasibleStart as e:
        who = TrialIdentity("trot", settings.feet, settings.terrain, seed)
        return TrialResult.unmeasured(who, FailureReason.INFEASIBLE_START, str(e)), None
    return trial.run()


def trot_ground_size(gait: TrotGaitSettings) -> float:
    """Length [m] of the trotting ground: the walk plus 1.5 m, at least 3 m."""
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


def _true_contacts(sim: QuadrupedSim) -> tuple[str, ...]:
    """Legs whose foot geom touches the ground now (MuJoCo's contacts: the truth the robot
    does not see)."""
    m, d = sim.model, sim.data
    ground = m.geom("ground").id
    feet = {m.geom(f"{leg}_gripper_geom").id: leg for leg in LEG_NAMES}
    n = d.ncon
    g1, g2, dist = d.contact.geom1[:n], d.contact.geom2[:n], d.contact.dist[:n]
    touching = set()
    for a, b, gap in zip(g1, g2, dist, strict=True):
        if gap <= 0.0 and ground in (a, b):
            other = int(b if a == ground else a)
            if other in feet:
                touching.add(feet[other])
    return tuple(leg for leg in LEG_NAMES if leg in touching)
