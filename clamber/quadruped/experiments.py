"""Seeded climbing and trotting trials of the quadruped in simulation (one trial each).

A climbing trial builds a wall (seeded holds), a perturbed robot (seeded
:class:`~clamber.quadruped.sim.world.ModelMismatch`), places the robot on its four start holds
with every gripper attached, and runs the free-climbing gait with one controller in the loop
at the control rate. It fails when a gripper breaks off, a grasp misses its hold, the body
strays more than ``fall_error`` from its reference, or the physics goes unstable; it
succeeds when the gait completes. Every controller gets the same gait, servos, estimator and
gains: each runs with the defaults its class was written with (no per-controller tuning).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from functools import partial

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.exceptions import ConfigError
from clamber.failures import FailureReason
from clamber.quadruped.controllers import (
    CLIKController,
    Controller,
    JointCommand,
    QWBCController,
    VMCController,
)
from clamber.quadruped.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.gaits import ClimbGait, ClimbGaitParams, TrotGait, TrotParams
from clamber.quadruped.kinematics import Clik, leg_ik, world_foot_poses
from clamber.quadruped.model import RobotModel, RobotState
from clamber.quadruped.robot import GRAVITY, LEG_NAMES, N_JOINTS, Marcbot
from clamber.quadruped.sim.grippers import SoleCompliance
from clamber.quadruped.sim.scene import climb_scene, ground_scene
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim, SimulationError
from clamber.quadruped.sim.world import (
    ModelMismatch,
    ground_terrain,
    wall_layout,
)

CONTROLLERS = {"qwbc": QWBCController, "clik": CLIKController, "vmc": VMCController}
#: Nominal footholds relative to the body centre (u, y) [m] (mid-cycle, each leg).
NOMINAL_FEET = {"LF": np.array([0.17, 0.25]), "LR": np.array([-0.17, 0.25]),
                "RF": np.array([0.17, -0.25]), "RR": np.array([-0.17, -0.25])}


@dataclass(frozen=True)
class ClimbSettings:
    """What a climbing trial runs: controller name, wall incline [deg], control rate [Hz] and
    physics step [s] (see :mod:`clamber.quadruped.sim.simulator` for the choice),
    whether controllers see the EKF's estimate (``"estimate"``) or the true state, the gait,
    the mismatch and the fall threshold [m]. ``breakable=False`` records gripper overloads
    without breaking (to measure tracking and power of a controller that would fail).
    ``sole`` is the grippers' sole compliance (None: rigid weld)."""

    controller: str = "qwbc"
    incline_deg: float = 90.0
    control_rate: float = 50.0
    physics_dt: float = 0.004
    state: str = "estimate"
    gait: ClimbGaitParams = field(default_factory=ClimbGaitParams)
    mismatch: ModelMismatch = field(default_factory=ModelMismatch)
    fall_error: float = 0.05
    breakable: bool = True
    sole: SoleCompliance | None = field(default_factory=SoleCompliance)

    def __post_init__(self) -> None:
        if self.controller not in CONTROLLERS:
            raise ConfigError(f"unknown controller {self.controller!r}; "
                              f"controllers are {', '.join(CONTROLLERS)}")
        if self.state not in ("estimate", "true"):
            raise ConfigError(f"state must be 'estimate' or 'true', got {self.state!r}")


@dataclass(frozen=True)
class TrialResult:
    """Outcome and metrics of one trial (SI units, errors in mm, powers in W).

    ``attitude_error_*`` is the true body attitude's deviation from the reference (climbing:
    the wall frame; trotting: level, yaw free; exponential coordinates), ``estimation_*``
    the EKF's position and attitude errors. ``wall_time_s`` is the simulation loop's wall
    time, ``setup_time_s`` building the scene and placing the robot. ``peak_gripper_load``
    is the largest gripper wrench over its true capacity (per axis) after the placement;
    ``cost_of_transport`` the energy over ``m g distance``.
    """

    kind: str
    controller: str
    setting: str
    seed: int
    success: bool
    reason: str
    failure: FailureReason | None
    sim_time_s: float
    wall_time_s: float
    distance_m: float
    max_tracking_error_mm: float
    mean_power_w: float
    peak_power_w: float
    energy_j: float
    cost_of_transport: float
    estimation_rms_mm: float
    estimation_max_mm: float
    estimation_attitude_rms_deg: float
    attitude_error_rms_deg: float
    attitude_error_max_deg: float
    peak_gripper_load: float
    setup_time_s: float

    def to_dict(self) -> dict:
        """JSON-ready: the failure by name, non-finite numbers as None."""
        d = asdict(self)
        d["failure"] = self.failure.name.lower() if self.failure else None
        return {k: None if isinstance(v, float) and not math.isfinite(v) else v
                for k, v in d.items()}


@dataclass
class TrialLog:
    """Time series of a trial, sampled at the control rate (names say units)."""

    t: list[float] = field(default_factory=list)
    body_true: list[np.ndarray] = field(default_factory=list)
    body_ref: list[np.ndarray] = field(default_factory=list)
    body_est: list[np.ndarray] = field(default_factory=list)
    feet_body: list[np.ndarray] = field(default_factory=list)
    attitude_deg: list[float] = field(default_factory=list)
    power_w: list[float] = field(default_factory=list)
    bands: list[tuple[float, float, str, str]] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    #: Snapshots for animations every ``snapshot_period`` [s]: time [s], qpos, body xpos.
    snapshot_period: float = 1.0
    snapshots: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    #: The compiled scene the trial ran in (for offscreen rendering of the snapshots).
    model: object = None
    #: Largest planned gripper wrench over the controller's conservative box (per axis).
    planned_load: float = 0.0

    def snapshot(self, t: float, sim: QuadrupedSim) -> None:
        """Keep the simulator's configuration at ``t`` [s] if a snapshot is due."""
        if not self.snapshots or t >= self.snapshots[-1][0] + self.snapshot_period - 1e-9:
            self.snapshots.append((t, sim.data.qpos.copy(), sim.data.xpos.copy()))

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series as an array: ``t`` (n,), ``body_*`` (n, 3), ``feet_body`` (n, 4, 3)."""
        return {k: np.asarray(getattr(self, k)) for k in
                ("t", "body_true", "body_ref", "body_est", "feet_body", "attitude_deg",
                 "power_w")}


def _feet_in_body(sim: QuadrupedSim) -> np.ndarray:
    d, b = sim.data, sim.body_id
    R, p = d.xmat[b].reshape(3, 3), d.xpos[b]
    return np.array([R.T @ (d.site_xpos[sim.grippers.site[leg] if sim.grippers else
                                        sim.model.site(f"{leg}_foot").id] - p)
                     for leg in LEG_NAMES])


def _initial_joints(rm_true: RobotModel, body: pin.SE3, tops: dict[str, np.ndarray],
                    normals: dict[str, np.ndarray], lift: float = 0.0) -> np.ndarray:
    """Joint angles putting each sole on its hold top (true geometry), soles along the
    normal, radial axis kept from the mount yaw."""
    q = rm_true.robot.default_joint_angles()
    for i, leg in enumerate(LEG_NAMES):
        n = body.rotation.T @ normals[leg]
        x = pin.utils.rotate("z", rm_true.robot.mount_yaw[i])[:, 0]
        x = x - (x @ n) * n
        x /= np.linalg.norm(x)
        Rf = np.column_stack([x, np.cross(n, x), n])
        tgt = body.actInv(pin.SE3(np.eye(3), tops[leg] + lift * normals[leg])).translation
        # Position first (a loose rotation weight leaves the local minima), then the pose.
        res = leg_ik(rm_true, leg, pin.SE3(Rf, tgt), q, rotation_weight=0.05, max_iter=200)
        res = leg_ik(rm_true, leg, pin.SE3(Rf, tgt), res.q, max_iter=200)
        if res.position_error > 3e-3:
            raise ConfigError(f"start stance out of reach for {leg} "
                              f"({res.position_error * 1000:.1f} mm)")
        q = res.q
    return q


def run_climb(settings: ClimbSettings, seed: int, log: bool = False,
              robot: Marcbot | None = None,
              time_limit: float | None = None) -> tuple[TrialResult, TrialLog | None]:
    """One seeded climbing trial; returns its result and, if ``log``, its time series.

    ``time_limit`` [s] stops the trial early (reason "time limit", not a success).
    """
    wall_t0 = time.perf_counter()
    robot = robot or Marcbot()
    gp = settings.gait
    sim_robot = settings.mismatch.perturb(robot, seed)
    layout = wall_layout(settings.incline_deg, gp.stance_offsets(NOMINAL_FEET), gp.stride,
                         gp.cycles, seed)
    servos = ServoBank(sim_robot)
    sim = QuadrupedSim(climb_scene(sim_robot, layout, servos, settings.physics_dt,
                                   settings.sole), sim_robot, servos,
                       settings.control_rate, grippers=True)
    known = settings.mismatch.known_holds(layout, seed)
    normals = {leg: [h.normal for h in layout.holds[leg]] for leg in LEG_NAMES}
    gait = ClimbGait(known, normals, layout.rotation, gp)
    R = layout.rotation
    body0 = pin.SE3(R, np.mean([layout.holds[leg][0].top for leg in LEG_NAMES], axis=0)
                    + gp.standoff * R[:, 2])
    q0 = _initial_joints(RobotModel(sim_robot), body0,
                         {leg: layout.holds[leg][0].top for leg in LEG_NAMES},
                         {leg: normals[leg][0] for leg in LEG_NAMES}, lift=0.001)
    sim.set_state(body0.translation, body0.rotation, q0)
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    rm = RobotModel(robot)
    ctrl: Controller = CONTROLLERS[settings.controller](rm)
    imu = SimulatedImu(seed=seed + 101)
    ekf = LegOdometryEkf(rm, body0.translation, body0.rotation, imu.spec)
    record = TrialLog() if log else None
    reason = ""
    failure: FailureReason | None = None
    errors, powers, est_err, att_err, attitude = [], [], [], [], []
    dt, t_place = sim.dt, 1.0
    t_end = gp.settle_time + t_place + 1.6 * gp.cycles * gp.nominal_cycle_time
    sim.grippers.breakable = False
    setup_time = time.perf_counter() - wall_t0
    wall_t0 = time.perf_counter()
    k = 0
    try:
        while True:
            t = k * dt
            p_true, R_true = sim.body_pose()
            qj, dqj = sim.joints()
            f, w = sim.imu_truth()
            if k > 0:
                ekf.predict(*imu.measure(f, w, dt), dt)
            ekf.update(qj, sim.grippers.attached, dt)
            state = ekf.state(qj, dqj) if settings.state == "estimate" else sim.true_state()
            feet = partial(world_foot_poses, rm, state)
            if t < t_place:
                ref = gait.reference(0.0, feet, sim.joint4_torques())[0]
                events = []
            else:
                if k == round(t_place / dt):
                    sim.grippers.breakable = settings.breakable
                    sim.grippers.peak_ratio = dict.fromkeys(LEG_NAMES, 0.0)
                ref, events = gait.reference(t - t_place, feet, sim.joint4_torques())
            for ev in events:
                if ev.action == "release":
                    sim.grippers.release(ev.leg)
                elif not sim.grippers.attach(ev.leg, layout.holds[ev.leg][ev.hold]):
                    failure, reason = (FailureReason.GRASP_MISSED,
                                       f"{ev.leg} missed hold {ev.hold}")
            if reason:
                break
            cmd = ctrl.step(state, ref)
            rec = sim.step(cmd)
            if record is not None:
                planned = np.abs(cmd.wrenches.reshape(4, 6)) / PAPER_BOX_HALF_WIDTHS
                record.planned_load = max(record.planned_load, float(planned.max()))
            err = float(np.linalg.norm(p_true - ref.body_pose.translation))
            if t >= t_place:
                errors.append(err)
                powers.append(rec.power)
                est_err.append(float(np.linalg.norm(ekf.p - p_true)))
                att_err.append(float(np.linalg.norm(pin.log3(ekf.R.T @ R_true))))
                attitude.append(float(np.linalg.norm(pin.log3(R.T @ R_true))))
            if record is not None:
                record.t.append(t)
                record.body_true.append(p_true)
                record.body_ref.append(ref.body_pose.translation.copy())
                record.body_est.append(ekf.p.copy())
                record.feet_body.append(_feet_in_body(sim))
                record.attitude_deg.append(float(np.degrees(np.linalg.norm(pin.log3(
                    R.T @ R_true)))))
                record.power_w.append(rec.power)
                record.snapshot(t, sim)
            if rec.broken:
                failure = FailureReason.GRIPPER_BROKE
                reason = f"gripper {', '.join(rec.broken)} broke off"
                break
            if err > settings.fall_error:
                failure = FailureReason.BODY_STRAYED
                reason = f"body strayed {err * 1000:.0f} mm from its reference"
                break
            if gait.done:
                break
            if t > t_end:
                failure, reason = FailureReason.TIME_LIMIT, "gait did not finish in time"
                break
            if time_limit is not None and t >= time_limit:
                failure, reason = FailureReason.TIME_LIMIT, "time limit"
                break
            k += 1
    except SimulationError as e:
        failure, reason = FailureReason.UNSTABLE, str(e)
    gait.close(max(0.0, k * dt - t_place))
    start = body0.translation
    moved = float((sim.true_state().body_position - start) @ R[:, 0])
    series = TrialSeries(errors, powers, attitude, est_err, att_err)
    result = _result(
        TrialIdentity("climb", settings.controller, f"{settings.incline_deg:g}deg", seed),
        failure, reason, series, sim_time=k * dt, wall=time.perf_counter() - wall_t0,
        setup_time=setup_time, distance=moved, mass=sim_robot.total_mass, dt=dt,
        peak_load=max(sim.grippers.peak_ratio.values()))
    if record is not None:
        record.model = sim.model
        record.bands = [(a + t_place, b + t_place, name, leg) for a, b, name, leg in gait.bands]
        record.events = [asdict(e) for e in sim.grippers.events]
    return result, record


@dataclass(frozen=True)
class TrialIdentity:
    """Which trial: its kind (climb/trot), controller or feet, setting (wall/terrain), seed."""

    kind: str
    controller: str
    setting: str
    seed: int


@dataclass
class TrialSeries:
    """Per-control-cycle samples a trial reduces to its metrics (SI units): body tracking
    error [m], power [W], attitude error [rad], estimation position [m] and attitude
    [rad] errors."""

    errors: list[float] = field(default_factory=list)
    powers: list[float] = field(default_factory=list)
    attitude: list[float] = field(default_factory=list)
    est_position: list[float] = field(default_factory=list)
    est_attitude: list[float] = field(default_factory=list)


def _result(who: TrialIdentity, failure: FailureReason | None, reason: str,
            series: TrialSeries, *, sim_time: float, wall: float, setup_time: float,
            distance: float, mass: float, dt: float, peak_load: float) -> TrialResult:
    """Reduce a trial's per-cycle series (SI units) to a :class:`TrialResult`."""
    p = np.asarray(series.powers) if series.powers else np.zeros(1)
    energy = float(p.sum() * dt)
    cot = energy / (mass * GRAVITY * distance) if distance > 1e-3 else float("nan")

    def rms_max(x: list[float], scale: float) -> tuple[float, float]:
        a = np.asarray(x) * scale if x else np.zeros(1)
        return float(np.sqrt(np.mean(a**2))), float(a.max())

    att_rms, att_max = rms_max(series.attitude, 180 / math.pi)
    est_rms, est_max = rms_max(series.est_position, 1000.0)
    est_att_rms, _ = rms_max(series.est_attitude, 180 / math.pi)
    return TrialResult(
        kind=who.kind, controller=who.controller, setting=who.setting, seed=who.seed,
        success=failure is None, reason=reason, failure=failure, sim_time_s=sim_time,
        wall_time_s=wall, distance_m=distance,
        max_tracking_error_mm=1000 * max(series.errors) if series.errors else math.nan,
        mean_power_w=float(p.mean()), peak_power_w=float(p.max()), energy_j=energy,
        cost_of_transport=cot, estimation_rms_mm=est_rms, estimation_max_mm=est_max,
        estimation_attitude_rms_deg=est_att_rms, attitude_error_rms_deg=att_rms,
        attitude_error_max_deg=att_max, peak_gripper_load=float(peak_load),
        setup_time_s=setup_time)


@dataclass(frozen=True)
class TrotSettings:
    """A trotting trial: terrain name, feet (``"gripper"`` or ``"rubber"``), gait, control
    rate [Hz] (100 Hz: a 0.28 s swing needs finer steps than climbing; a bus cycle takes
    about 3.2 ms at 1 Mbit/s)."""

    terrain: str = "flat"
    feet: str = "gripper"
    gait: TrotParams = field(default_factory=TrotParams)
    control_rate: float = 100.0
    fall_attitude_deg: float = 45.0

    def __post_init__(self) -> None:
        ground_terrain(self.terrain)
        if self.feet not in ("gripper", "rubber"):
            raise ConfigError(f"feet must be 'gripper' or 'rubber', got {self.feet!r}")


def run_trot(settings: TrotSettings, seed: int, log: bool = False,
             robot: Marcbot | None = None,
             initial_tilt: np.ndarray | None = None) -> tuple[TrialResult, TrialLog | None]:
    """One trotting trial: CLIK position control on a level plan, the IMU and leg odometry
    estimating the state (as in the paper's walking tests); metrics are the attitude error
    (exponential coordinates) and power. ``initial_tilt`` (a rotation matrix) starts the
    body tilted, its feet on the ground."""
    wall_t0 = time.perf_counter()
    robot = robot or Marcbot()
    gp = settings.gait
    sim_robot = ModelMismatch().perturb(robot, seed)
    servos = ServoBank(sim_robot)
    terrain = ground_terrain(settings.terrain)
    model = ground_scene(sim_robot, terrain, servos, settings.feet, seed=seed,
                         size=trot_ground_size(gp))
    sim = QuadrupedSim(model, sim_robot, servos, settings.control_rate)
    gait = TrotGait(gp, robot=robot)
    rm = RobotModel(robot)
    rm_true = RobotModel(sim_robot)
    lift = 0.003 + _terrain_height(model)
    body0 = pin.SE3(np.eye(3) if initial_tilt is None else np.asarray(initial_tilt),
                    gait.body(0.0) + np.array([0, 0, lift]))
    tops = {leg: gait.foot(0.0, leg) + np.array([0, 0, lift]) for leg in LEG_NAMES}
    q0 = _initial_joints(rm_true, body0, tops, dict.fromkeys(LEG_NAMES, np.array([0, 0, 1.0])))
    sim.set_state(body0.translation, body0.rotation, q0)
    clik = Clik(rm, gain=1.0)
    imu = SimulatedImu(seed=seed + 101)
    ekf = LegOdometryEkf(rm, body0.translation, body0.rotation, imu.spec)
    record = TrialLog() if log else None
    dt = sim.dt
    powers, att, est_err, est_att, reason = [], [], [], [], ""
    failure: FailureReason | None = None
    setup_time = time.perf_counter() - wall_t0
    wall_t0 = time.perf_counter()
    n = int(round(gp.duration / dt))
    k = 0
    start_step = int(round(gp.start_time / dt))
    try:
        for k in range(n):
            t = k * dt
            truth = sim.true_state()
            f, w = sim.imu_truth()
            if k == start_step:
                ekf = LegOdometryEkf(rm, truth.body_position, truth.body_rotation, imu.spec)
            elif k > 0:
                ekf.predict(*imu.measure(f, w, dt), dt)
            # Feet well inside their scheduled stance (not touching down or lifting off).
            settled = tuple(leg for leg in LEG_NAMES if gait.phase(t, leg)[0]
                            and (t < gp.start_time or 0.15 <= gait.phase(t, leg)[1] <= 0.9))
            ekf.update(truth.joint_positions, settled, dt)
            est = ekf.state(truth.joint_positions, truth.joint_velocities)
            # The plan is in a level frame heading along x, moving with the body reference:
            # the grippers' targets relative to the body in that frame are the body-frame
            # targets of a level body. A tilted body sees its grounded feet elsewhere in its
            # own frame, so the stance legs turn it back. (Expressing the targets through the
            # measured attitude instead cancels exactly: the tilt becomes invisible.)
            body_ref = gait.body(t)
            targets = {}
            for leg in LEG_NAMES:
                pose = gait.foot_pose(t, leg)
                targets[leg] = pin.SE3(pose.rotation, pose.translation - body_ref)
            goal = clik.step(truth.joint_positions, _LEVEL_BODY, targets)
            cmd = JointCommand(goal, np.zeros(N_JOINTS), rm.current_max.copy())
            rec = sim.step(cmd)
            a_err = float(np.linalg.norm(pin.log3(tilt_true(truth))))
            if t >= gp.start_time:
                powers.append(rec.power)
                att.append(a_err)
                est_err.append(float(np.linalg.norm(est.body_position - truth.body_position)))
                est_att.append(float(np.linalg.norm(pin.log3(est.body_rotation.T
                                                              @ truth.body_rotation))))
            if record is not None:
                record.t.append(t)
                record.body_true.append(truth.body_position)
                record.body_ref.append(body_ref)
                record.body_est.append(est.body_position)
                record.feet_body.append(_feet_in_body(sim))
                record.attitude_deg.append(math.degrees(a_err))
                record.power_w.append(rec.power)
                record.snapshot(t, sim)
            if math.degrees(a_err) > settings.fall_attitude_deg:
                failure, reason = FailureReason.TIPPED_OVER, "robot tipped over"
                break
    except SimulationError as e:
        failure, reason = FailureReason.UNSTABLE, str(e)
    distance = float(sim.true_state().body_position[0] - body0.translation[0])
    expected = gp.speed * (gp.duration - gp.start_time)
    if not reason and distance < 0.5 * expected:
        failure = FailureReason.SHORT_DISTANCE
        reason = f"covered {distance:.2f} m of {expected:.2f} m"
    result = _result(
        TrialIdentity("trot", settings.feet, settings.terrain, seed), failure, reason,
        TrialSeries([], powers, att, est_err, est_att), sim_time=(k + 1) * dt,
        wall=time.perf_counter() - wall_t0, setup_time=setup_time, distance=distance,
        mass=float(sim.model.body_mass.sum()), dt=dt, peak_load=math.nan)
    if record is not None:
        record.model = sim.model
        record.bands = [(gp.start_time + c * gp.period, gp.start_time + (c + gp.duty)
                         * gp.period, "LF+RR stance", "") for c in range(gp.cycles)]
    return result, record


#: The body frame of the trotting plan: level, heading along x, at the body reference.
_LEVEL_BODY = pin.SE3.Identity()


def trot_ground_size(gait: TrotParams) -> float:
    """Length [m] of the trotting ground: from 0.5 m behind the start to 1 m past the end of
    the walk (at least 3 m)."""
    return max(3.0, gait.speed * gait.duration + 1.5)


def _terrain_height(model, radius: float = 0.4) -> float:
    """Highest point of the ground within ``radius`` [m] of the start (0 for a plane)."""
    import mujoco

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
