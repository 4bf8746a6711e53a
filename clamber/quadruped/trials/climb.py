"""A seeded climbing trial: set up a wall and a perturbed robot, step the gait, read the result.

A climbing trial builds a wall (seeded holds), a perturbed robot (seeded
:class:`~clamber.quadruped.sim.world.ModelMismatch`), places the robot on its four start holds
with every gripper attached, and runs the free-climbing gait with one controller in the loop
at the control rate. It fails when a gripper breaks off, a grasp misses its hold, the body
strays more than ``fall_error`` from its reference, or the physics goes unstable; it
succeeds when the gait completes. Every controller gets the same gait, servos, estimator and
gains multipliers it is given (:mod:`clamber.quadruped.control.variants`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.exceptions import InfeasibleStart
from clamber.failures import FailureReason
from clamber.quadruped.control.controllers import Controller, JointCommand, MotionReference
from clamber.quadruped.control.variants import check_name, make_controller
from clamber.quadruped.estimation.contact import FootForceEstimator
from clamber.quadruped.estimation.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.gaits import ClimbEvent, ClimbGait, ClimbGaitSettings
from clamber.quadruped.model.kinematics import Clik, world_foot_poses
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.model.windup import held_turns, landing_normal, windup
from clamber.quadruped.options import StateSource
from clamber.quadruped.sim.disturbance import Disturbance, DisturbanceDriver
from clamber.quadruped.sim.grippers import SoleCompliance
from clamber.quadruped.sim.rates import (
    FINE_CLIMB_PHYSICS_DT,
    check_physics_step,
    climb_step,
    marginal_verdict,
)
from clamber.quadruped.sim.scene import climb_scene
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim, SimulationError, StepRecord
from clamber.quadruped.sim.world import ModelMismatch, RockSpec, wall_layout
from clamber.quadruped.trials.log import TrialLog, feet_in_body
from clamber.quadruped.trials.metric_kernels import load_ratio, sample_row
from clamber.quadruped.trials.result import (
    TrialIdentity,
    TrialResult,
    metric_recorder,
    reduce_trial,
)
from clamber.quadruped.trials.stance import NOMINAL_FEET, initial_joints

_BOX24 = np.tile(PAPER_BOX_HALF_WIDTHS, 4)
#: Standing on the start holds before the gait starts [s]; grippers cannot break meanwhile.
PLACEMENT_TIME = 1.0


#: Standard deviation [m] per axis of the body camera's position fix among the mapped holds
#: (the map's own error, 5 mm per axis on the known hold tops, averaged over the holds in
#: view).
SIGHTING = 0.003
#: Weight of the body's turn against the sole-hinge moments a body move winds [N m/rad per
#: N m/rad of sole stiffness] when the move also turns the body (``body_tilt``).
TILT_WEIGHT = 0.5
#: Standard deviation [m] of leg odometry's walk over one swing, against which a position fix
#: is weighed (about 1.5-3 mm a cycle along the wall's normal on the tuning seeds' climbs).
ODOMETRY_WALK = 0.002


@dataclass(frozen=True)
class ClimbSettings:
    """What a climbing trial runs: controller name, wall incline [deg], control rate [Hz] and
    physics step [s] (None: :func:`~clamber.quadruped.sim.rates.climb_step`, 10 ms or, for a
    long breakable climb, 4 ms at 50 Hz; :mod:`clamber.quadruped.sim.simulator` for the rate),
    whether controllers see the EKF's estimate (``"estimate"``) or the true state, the gait,
    the mismatch and the fall threshold [m]. ``breakable=False`` records gripper overloads
    without breaking (to measure tracking and power of a controller that would fail).
    ``sole`` is the grippers' sole compliance (None: rigid weld). ``gains`` are the
    controller's gain multipliers (:mod:`clamber.quadruped.control.variants`), ``rocks`` the holds'
    shape, ``heading_deg`` the climb's direction on the wall, ``disturbance`` an optional
    push or payload, ``scenario`` a label. ``time_limit`` [s] stops the trial early (a quick
    look; such a trial fails with the reason "time limit"). ``verdict_rerun``: a climb that
    came near a gripper's boundary is climbed again at the fine step (:func:`run_climb`).
    ``sighting`` [m]: as each swing begins, the body camera locates the body among the
    mapped holds to this standard deviation per axis and the estimator takes it as a
    position fix, so the drift of leg odometry (which walks the feet off their holds over a
    long climb) stays bounded; 0: leg odometry alone; None: :data:`SIGHTING` when the gait
    re-seats (climbs of more than one cycle), leg odometry alone otherwise (the paper's).
    ``attitude_integral`` [1/s]: integral action on the body's attitude for Q-WBC and VMC
    (:class:`~clamber.quadruped.control.controllers.PoseIntegral`; 0: none)."""

    controller: str = "qwbc"
    incline_deg: float = 90.0
    control_rate: float = 50.0
    physics_dt: float | None = None
    state: StateSource = StateSource.ESTIMATE
    gait: ClimbGaitSettings = field(default_factory=ClimbGaitSettings)
    mismatch: ModelMismatch = field(default_factory=ModelMismatch)
    fall_error: float = 0.05
    breakable: bool = True
    sole: SoleCompliance | None = field(default_factory=SoleCompliance)
    gains: tuple[tuple[str, float], ...] = ()
    rocks: RockSpec = field(default_factory=RockSpec)
    heading_deg: float = 0.0
    disturbance: Disturbance | None = None
    scenario: str = ""
    time_limit: float | None = None
    verdict_rerun: bool = True
    sighting: float | None = None
    attitude_integral: float = 0.0

    def __post_init__(self) -> None:
        dt = climb_step(self.control_rate, self.gait.cycles,
                        self.breakable and self.verdict_rerun) if self.physics_dt is None \
            else check_physics_step(self.control_rate, self.physics_dt)
        object.__setattr__(self, "physics_dt", dt)
        if self.time_limit is not None:
            check.positive("climb", "time_limit", self.time_limit)
        if self.sighting is None:
            object.__setattr__(self, "sighting", SIGHTING if self.gait.reseat_every else 0.0)
        check.number("climb", "sighting", self.sighting, low=0.0, high=0.1)
        check.in_range("climb", "attitude_integral", self.attitude_integral,
                       "attitude_integral")
        check_name(self.controller)
        object.__setattr__(self, "state", StateSource.parse(self.state, "climb", "state"))


class ClimbTrial:
    """One seeded climb: :meth:`step` runs one control cycle, :meth:`result` reads it out.

    Per cycle: sense (true pose, encoders, IMU), estimate (EKF), ask the gait for the
    reference and its grasp/release events, command the controller, step the physics, sample
    the metrics, check for failure. ``time_limit`` [s] stops the trial early (default: the
    settings' own); ``log`` keeps a :class:`TrialLog` for figures.
    """

    def __init__(self, settings: ClimbSettings, seed: int, log: bool = False,
                 robot: Marcbot | None = None, time_limit: float | None = None) -> None:
        t0 = time.perf_counter()
        self.settings, self.seed = settings, seed
        self.time_limit = settings.time_limit if time_limit is None else time_limit
        self.robot = robot or Marcbot()
        #: The body state the controller saw this cycle (none before the first).
        self.seen: RobotState | None = None
        self._setup_scene()
        self._setup_placement()
        self._setup_control()
        self.log = TrialLog() if log else None
        self.samples = metric_recorder()
        self.failure: FailureReason | None = None
        self.reason = ""
        self.finished = False
        self.k = 0
        self.setup_time = time.perf_counter() - t0
        self._loop_start = time.perf_counter()

    # ---- set-up ----------------------------------------------------------------------------
    def _setup_scene(self) -> None:
        """The seeded wall and perturbed robot, compiled into one scene."""
        s, gp = self.settings, self.settings.gait
        self.sim_robot = s.mismatch.perturb(self.robot, self.seed)
        self.layout = wall_layout(s.incline_deg, gp.stance_offsets(NOMINAL_FEET), gp.stride,
                                  gp.cycles, self.seed, spec=s.rocks,
                                  heading_deg=s.heading_deg)
        servos = ServoBank(self.sim_robot)
        self.sim = QuadrupedSim(climb_scene(self.sim_robot, self.layout, servos, s.physics_dt,
                                            s.sole), self.sim_robot, servos, s.control_rate,
                                grippers=True)
        self.dt = self.sim.dt

    def _setup_placement(self) -> None:
        """The gait on the holds the robot knows, and the robot on its start holds, attached."""
        layout, gp = self.layout, self.settings.gait
        known = self.settings.mismatch.known_holds(layout, self.seed)
        normals = {leg: [h.normal for h in layout.holds[leg]] for leg in LEG_NAMES}
        self.gait = ClimbGait(known, normals, layout.rotation, gp)
        R = self.R = layout.rotation
        self.body0 = pin.SE3(R, np.mean([layout.holds[leg][0].top for leg in LEG_NAMES],
                                        axis=0) + gp.standoff * R[:, 2])
        # Soles start as near the wall's normal as the landing cone allows (the attitude the
        # gait's swings land them at), or along their holds' normals where that is out of the
        # legs' reach or the gait keeps attitudes.
        tops = {leg: layout.holds[leg][0].top for leg in LEG_NAMES}
        along = {leg: normals[leg][0] for leg in LEG_NAMES}
        model = RobotModel(self.sim_robot)
        q0 = None
        if gp.landing_cone is not None:
            landed = {leg: landing_normal(n, R[:, 2], gp.landing_cone)
                      for leg, n in along.items()}
            try:
                q0 = initial_joints(model, self.body0, tops, landed, lift=0.001)
            except InfeasibleStart:
                q0 = None
        if q0 is None:
            q0 = initial_joints(model, self.body0, tops, along, lift=0.001)
        self.sim.set_state(self.body0.translation, self.body0.rotation, q0)
        self.held: tuple[str, ...] = ()
        for leg in LEG_NAMES:
            self._grip(leg, layout.holds[leg][0])
        self.sim.grippers.breakable = False
        self.t_end = gp.settle_time + PLACEMENT_TIME + 1.6 * gp.cycles * gp.nominal_cycle_time

    def _setup_control(self) -> None:
        """Controller (nominal model), disturbance, IMU and EKF."""
        s = self.settings
        self.rm = RobotModel(self.robot)
        self.ctrl: Controller = make_controller(s.controller, self.rm, s.gains,
                                                1.0 / s.control_rate, s.attitude_integral)
        self.push = DisturbanceDriver(s.disturbance, self.sim.model, self.sim.data,
                                      self.sim.body_id)
        self.first_release: float | None = None
        self.n_active = self.n_cycles = self.reseat_retries = self.early_releases = 0
        self.planned_load = 0.0
        self.imu = SimulatedImu(seed=self.seed + 101)
        self.ekf = LegOdometryEkf(self.rm, self.body0.translation, self.body0.rotation,
                                  self.imu.spec)
        self.sight_noise = np.random.default_rng(self.seed + 202)
        self.force_estimator = FootForceEstimator(RobotModel(self.robot),
                                                  ServoBank(self.robot).kv)
        self.clik = Clik(self.rm)
        self.gait.move_moments = self._move_moments
        if self.gait.p.body_tilt:
            self.gait.move_tilt = self._move_tilt
        #: World attitude [3x3] of each holding gripper when it was welded, from the estimate.
        self.seated: dict[str, np.ndarray] = {}
        if self.gait.p.reseat_order == "wound":
            self.gait.wound = self._wound

    def _move_moments(self, displacement: np.ndarray,
                      attitude: np.ndarray | None = None) -> np.ndarray:
        """Sole-hinge moments (4,) [N m] a body move by ``displacement`` [m, world] ending at
        ``attitude`` [3x3, world; default: the present one] would wind into the welded
        grippers, predicted from the estimate and the encoders
        (:func:`~clamber.quadruped.model.windup.windup`, the sole's stiffness known)."""
        state, sole = self.seen, self.settings.sole
        if state is None or sole is None:
            return np.zeros(len(LEG_NAMES))
        q = state.joint_positions
        body = pin.SE3(state.body_rotation, state.body_position)
        feet = [body * f for f in self.clik.kinematics(q)[0]]
        end = pin.SE3(state.body_rotation if attitude is None else attitude,
                      state.body_position + displacement)
        return sole.stiffness * windup(self.clik, q, end, feet)

    def _held_moments(self, displacement: np.ndarray, attitude: np.ndarray) -> np.ndarray:
        """Sole-hinge moments (8,) [N m, x and y per gripper] the welded grippers would hold
        once a body move by ``displacement`` [m, world] ends at ``attitude`` [3x3, world]:
        each one's turn since its weld (:func:`~clamber.quadruped.model.windup.held_turns`,
        from the estimate and the encoders) times the sole's stiffness, as
        :meth:`wound_moments` senses them."""
        state, sole = self.seen, self.settings.sole
        q = state.joint_positions
        body = pin.SE3(state.body_rotation, state.body_position)
        feet = [body * f for f in self.clik.kinematics(q)[0]]
        end = pin.SE3(attitude, state.body_position + displacement)
        turns = held_turns(self.clik, q, end, feet, [self.seated.get(g) for g in LEG_NAMES])
        return -sole.stiffness * turns[:, :2].ravel()

    def _move_tilt(self, displacement: np.ndarray, tilt: np.ndarray) -> np.ndarray:
        """The body attitude offset [rad, {S}] a body move by ``displacement`` [m] should
        end at, from ``tilt``: one Gauss-Newton step on the sole-hinge moments the move
        winds into the welded grippers (:meth:`_move_moments` at the turned end, its
        Jacobian by differences of 1 mrad), weighted against the offset by
        :data:`TILT_WEIGHT` times the stiffness."""
        sole = self.settings.sole
        if self.seen is None or sole is None:
            return tilt
        R = self.gait.R

        held = self.gait.p.tilt_goal == "held"

        def moments(w: np.ndarray) -> np.ndarray:
            if held:
                return self._held_moments(displacement, pin.exp3(w) @ R)
            return self._move_moments(displacement, pin.exp3(w) @ R)

        m0 = moments(tilt)
        J = np.stack([(moments(tilt + 1e-3 * e) - m0) / 1e-3 for e in np.eye(3)], axis=1)
        lam = (TILT_WEIGHT * sole.stiffness) ** 2
        return tilt - np.linalg.solve(J.T @ J + lam * np.eye(3), J.T @ m0 + lam * tilt)

    # ---- one control cycle -----------------------------------------------------------------
    def step(self) -> bool:
        """Run one control cycle; False once the trial has ended (then it steps no more)."""
        if self.finished:
            return False
        try:
            self._cycle()
        except SimulationError as e:
            self._fail(FailureReason.UNSTABLE, str(e))
        if not self.finished:
            self.k += 1
        return not self.finished

    def _fail(self, failure: FailureReason | None, reason: str) -> None:
        self.failure, self.reason, self.finished = failure, reason, True

    def _cycle(self) -> None:
        sim, t = self.sim, self.k * self.dt
        if self.k == round(PLACEMENT_TIME / self.dt):  # the placement ends
            sim.grippers.breakable = self.settings.breakable
            sim.grippers.reset_peaks()
        p_true, R_true = sim.body_pose()
        state = self.seen = self._estimate()
        ref, events = self._reference(t, state)
        self._apply(events, t)
        if self.finished:
            return
        cmd = self.ctrl.step(state, ref)
        self.push.update(None if self.first_release is None else t - self.first_release,
                         self.R)
        rec = sim.step(cmd)
        err = self._body_error(p_true, state, ref)
        if t >= PLACEMENT_TIME:
            self._sample(cmd, rec, err, p_true, R_true)
        if self.log is not None:
            self._record(t, p_true, R_true, ref, rec)
        self._check(t, rec, err)

    def _slipped(self, legs: set[str]) -> None:
        """Count grippers that slipped off as they were let go, and record their breaks as
        slips (they end nothing)."""
        self.early_releases += len(legs)
        events = self.sim.grippers.events
        for i in range(len(events) - 1, -1, -1):
            e = events[i]
            if e.kind == "break" and e.leg in legs:
                events[i] = replace(e, kind="slip")
                legs = legs - {e.leg}
                if not legs:
                    break

    def _lets_go(self, leg: str) -> bool:
        """Whether a gripper that broke off was one the gait was letting go of anyway (then
        its spines slipped early, and the climb goes on); never on the plane walls."""
        return False

    def _body_error(self, p_true: np.ndarray, state: RobotState, ref: MotionReference
                    ) -> float:
        """How far [m] the body is from its reference: the true body against a reference
        that lives in the world frame (the plane walls' holds are known there)."""
        return float(np.linalg.norm(p_true - ref.body_pose.translation))

    def _estimate(self) -> RobotState:
        """The state the controller sees (:meth:`_odometry`); each gripper's attitude at its
        weld is kept while it holds (:meth:`wound_moments`)."""
        state = self._odometry()
        self._track_seats(state)
        return state

    def _odometry(self) -> RobotState:
        """EKF predict (IMU) and update (leg odometry); the estimate, or the true state."""
        sim, dt = self.sim, self.dt
        qj, dqj = sim.joints()
        f, w = sim.imu_truth()
        self.ekf.step(self.imu.measure(f, w, dt) if self.k > 0 else None, dt, qj, self.held)
        return self.ekf.state(qj, dqj) if self.settings.state == "estimate" \
            else sim.true_state()

    def _track_seats(self, state: RobotState) -> None:
        """Keep the world attitude of each holding gripper as the robot saw it at its grasp."""
        if set(self.seated) != set(self.held):
            feet = world_foot_poses(self.rm, state)
            self.seated = {g: self.seated.get(g, feet[g].rotation.copy()) for g in self.held}

    def wound_moments(self, state: RobotState) -> dict[str, np.ndarray]:
        """Per holding gripper, the wrench (6,) [N m] its sole's hinges put on it, sensed: the
        gripper's turn since its weld (its attitude now against then, both from the
        estimate and the encoders) times the sole's stiffness, about the hinges' x and y.
        Zero without a compliant sole."""
        sole = self.settings.sole
        if sole is None or not self.seated:
            return {}
        feet = world_foot_poses(self.rm, state)
        out = {}
        for g, then in self.seated.items():
            turn = pin.log3(then.T @ feet[g].rotation)
            out[g] = np.array([0.0, 0.0, 0.0, -sole.stiffness * turn[0],
                               -sole.stiffness * turn[1], 0.0])
        return out

    def _wound(self) -> dict[str, float]:
        """Sensed sole-hinge moment [N m] of each holding gripper (:meth:`wound_moments`)."""
        if self.seen is None:
            return {}
        return {g: float(np.linalg.norm(w[3:5]))
                for g, w in self.wound_moments(self.seen).items()}

    def _reference(self, t: float, state: RobotState
                   ) -> tuple[MotionReference, list[ClimbEvent]]:
        """The gait's reference (held at its start during the placement) and events."""
        sim = self.sim
        feet = partial(world_foot_poses, self.rm, state)
        forces = partial(self._foot_forces, state)
        if t < PLACEMENT_TIME:
            return self.gait.reference(0.0, feet, sim.joint4_torques(), forces)[0], []
        return self.gait.reference(t - PLACEMENT_TIME, feet, sim.joint4_torques(), forces)

    def _foot_forces(self, state: RobotState) -> np.ndarray:
        """Estimated foot forces (4, 3) [N, world axes] from servo torques and encoders."""
        qj, dqj = self.sim.joints()
        return self.force_estimator.forces(qj, dqj, self.sim.joint_torques(),
                                           state.body_rotation)

    def _grip(self, leg: str, hold) -> bool:
        """Close ``leg``'s gripper on ``hold``; True when it holds. The robot's own record of
        which grippers hold (``held``: its commands and the grasps it saw take, never the
        simulator's attachment state) is what its estimator uses."""
        if not self.sim.grippers.attach(leg, hold):
            return False
        self.held = tuple(g for g in LEG_NAMES if g in self.held or g == leg)
        return True

    def _let_go(self, leg: str) -> None:
        """Open ``leg``'s gripper; the robot no longer counts it as holding."""
        self.sim.grippers.release(leg)
        self.held = tuple(g for g in self.held if g != leg)

    def _apply(self, events: list[ClimbEvent], t: float) -> None:
        """Release or grasp as the gait says; a grasp that misses its hold is tried again as
        the gait allows (a re-seat pressed again, :meth:`ClimbGait.reseat_again`; a swing
        flown again after a camera fix, :meth:`ClimbGait.retry_swing`), then ends the
        trial."""
        for ev in events:
            if ev.action == "release":
                self._let_go(ev.leg)
                self.first_release = t if self.first_release is None else self.first_release
                if self.settings.sighting and not ev.reseat:
                    self._sight()
            elif self._grip(ev.leg, self.layout.holds[ev.leg][ev.hold]):
                continue
            elif ev.reseat and self.gait.reseat_again(ev.t):
                self.reseat_retries += 1
            elif not ev.reseat and self.gait.retry_swing(ev.t):
                if self.settings.sighting:
                    self._sight()
            else:
                self._fail(FailureReason.GRASP_MISSED, f"{ev.leg} missed hold {ev.hold}"
                           + (" re-seating" if ev.reseat else ""))

    def _sight(self) -> None:
        """The body camera's position fix (the true body position with the camera's noise),
        weighed against the odometry's walk since the last one (:data:`ODOMETRY_WALK`)."""
        sigma = self.settings.sighting
        gain = ODOMETRY_WALK**2 / (ODOMETRY_WALK**2 + sigma**2)
        self.ekf.register(self.sim.body_pose()[0] + self.sight_noise.normal(0.0, sigma, 3),
                          gain)

    def _sample(self, cmd: JointCommand, rec: StepRecord, err: float, p_true: np.ndarray,
                R_true: np.ndarray) -> None:
        """Metric samples of one cycle after the placement."""
        self.planned_load = max(self.planned_load, load_ratio(cmd.wrenches, _BOX24))
        self.n_cycles += 1
        # Whether a stance gripper's planned wrench lay on a bound of its limits (Q-WBC).
        sol = getattr(self.ctrl, "last_solution", None)
        self.n_active += sol is not None and sol.limit_active()
        ekf = self.ekf
        # One row of METRIC_COLUMNS, in its order.
        sample_row(self.samples.next_row(), err, rec.power, self.R, ekf.R, R_true, ekf.p, p_true)

    def _record(self, t: float, p_true: np.ndarray, R_true: np.ndarray,
                ref: MotionReference, rec: StepRecord) -> None:
        log = self.log
        log.record(t, p_true, ref.body_pose.translation, self.ekf.p, feet_in_body(self.sim),
                   float(np.degrees(np.linalg.norm(pin.log3(self.R.T @ R_true)))), rec.power)
        log.snapshot(t, self.sim)

    def _check(self, t: float, rec: StepRecord, err: float) -> None:
        """End the trial on a broken gripper, a strayed body, the gait's end or a time limit."""
        lost = [g for g in rec.broken if not self._lets_go(g)]
        if len(lost) < len(rec.broken):
            self._slipped(set(rec.broken) - set(lost))
        if lost:
            self._fail(FailureReason.GRIPPER_BROKE, f"gripper {', '.join(lost)} broke off")
        elif err > self.settings.fall_error:
            self._fail(FailureReason.BODY_STRAYED,
                       f"body strayed {err * 1000:.0f} mm from its reference")
        elif self.gait.done:
            self._fail(None, "")
        elif t > self.t_end:
            self._fail(FailureReason.TIME_LIMIT, "gait did not finish in time")
        elif self.time_limit is not None and t >= self.time_limit:
            self._fail(FailureReason.TIME_LIMIT, "time limit")

    # ---- read-out --------------------------------------------------------------------------
    def run(self) -> tuple[TrialResult, TrialLog | None]:
        """Step until the trial ends; its result and (if logged) its time series."""
        while self.step():
            pass
        return self.result(), self.log

    def result(self) -> TrialResult:
        """The trial's metrics (call once, after the last :meth:`step`)."""
        s, sim, k, dt = self.settings, self.sim, self.k, self.dt
        self.gait.close(max(0.0, k * dt - PLACEMENT_TIME))
        moved = float((sim.true_state().body_position - self.body0.translation) @ self.R[:, 0])
        result = reduce_trial(
            TrialIdentity("climb", s.controller, s.scenario or f"{s.incline_deg:g}deg",
                          self.seed),
            self.failure, self.reason, self.samples, sim_time=k * dt,
            wall=time.perf_counter() - self._loop_start, setup_time=self.setup_time,
            distance=moved, mass=self.sim_robot.total_mass, dt=dt,
            peak_load=max(sim.grippers.peak_loads().values()), physics_dt_s=s.physics_dt)
        failed = self.failure is not None
        placing = k * dt < PLACEMENT_TIME
        phase = "" if not failed else "placement" if placing else \
            f"{self.gait.phase.value} {self.gait.bands[-1][3] if self.gait.bands else ''}".strip()
        active = self.n_active / self.n_cycles \
            if self.n_cycles and s.controller.startswith("qwbc") else float("nan")
        if self.log is not None:
            self.log.model = sim.model
            self.log.bands = [(a + PLACEMENT_TIME, b + PLACEMENT_TIME, name, leg)
                              for a, b, name, leg in self.gait.bands]
        # What the failure check measured: the broken grippers' gauges and wrenches.
        broken = "; ".join(f"{e.leg} {e.detail}" for e in sim.grippers.events if e.kind == "break")
        return replace(result, failure_phase=phase,
                       failure_distance_m=moved if failed else float("nan"),
                       failure_cycle=0 if not failed or placing else self.gait.cycle,
                       failure_time_s=float(sim.data.time) if failed else float("nan"),
                       failure_detail=broken if failed else "",
                       limit_active_fraction=active, planned_load=self.planned_load,
                       reseat_retries=self.reseat_retries,
                       swing_retries=self.gait.swings_retried,
                       moves_paused=self.gait.moves_paused)


def run_climb(settings: ClimbSettings, seed: int, log: bool = False,
              robot: Marcbot | None = None,
              time_limit: float | None = None) -> tuple[TrialResult, TrialLog | None]:
    """One seeded climbing trial; returns its result and, if ``log``, its time series.

    ``time_limit`` [s] stops the trial early (default: the settings' own). A seed whose
    start stance cannot be placed is recorded as ``infeasible_start``, nothing simulated; a
    climb near a gripper's boundary is climbed again at the fine step (:func:`settle_verdict`).
    """
    def climb_at(dt: float) -> tuple[TrialResult, TrialLog | None]:
        return ClimbTrial(replace(settings, physics_dt=dt), seed, log, robot,
                          time_limit).run()

    try:
        return settle_verdict(settings, climb_at)
    except InfeasibleStart as e:
        who = TrialIdentity("climb", settings.controller,
                            settings.scenario or f"{settings.incline_deg:g}deg", seed)
        return TrialResult.unmeasured(who, FailureReason.INFEASIBLE_START, str(e)), None


def settle_verdict(settings: ClimbSettings,
                   climb_at: Callable[[float], tuple[TrialResult, TrialLog | None]]
                   ) -> tuple[TrialResult, TrialLog | None]:
    """Climb at the settings' step (``climb_at(dt)`` runs the climb at step ``dt``); if the
    climb is breakable, its step coarser than the fine one and its peak gripper gauge near 1
    (:func:`~clamber.quadruped.sim.rates.marginal_verdict`), climb again at the fine step and
    report that climb, with the coarse climb's peak gauge and both climbs' wall time."""
    result, trace = climb_at(settings.physics_dt)
    if not (settings.verdict_rerun and settings.breakable
            and settings.physics_dt > FINE_CLIMB_PHYSICS_DT * (1 + 1e-9)
            and marginal_verdict(result.peak_gripper_load)):
        return result, trace
    rerun, trace = climb_at(FINE_CLIMB_PHYSICS_DT)
    return replace(rerun, verdict_rerun=True,
                   coarse_peak_gripper_load=result.peak_gripper_load,
                   wall_time_s=result.wall_time_s + rerun.wall_time_s), trace
