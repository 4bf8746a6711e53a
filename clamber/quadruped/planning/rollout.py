"""A quasi-static climb planned hold by hold on a generated wall, checked against the truth.

Before each swing (gait order) a fresh depth map is taken and the rule chooses among its
candidates. A grasp engages when the leg reaches the true hold and its true capacity
contains the expected wrench, else another candidate is tried (``attempts``); the climb
falls when the legs cannot follow the body or the true holds cannot carry it. With
``grasp="winch"`` the winch runs on its plant. No dynamics: this measures the choice of
holds, not the controller.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.attachment.winch import WinchController, WinchSettings
from clamber.exceptions import ConfigError
from clamber.quadruped.control.grasping import GraspReport, GraspStatus, grasp, release
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.planning.depth_map import DepthNoise, observe_wall
from clamber.quadruped.planning.holds import (
    PAD_HALF_WIDTH,
    SEAT_MARGIN,
    build_hold_map,
    seat_rise,
)
from clamber.quadruped.planning.selection import (
    NOMINAL_FEET,
    ChoiceStatus,
    Foothold,
    HoldPlanner,
    NearestHoldRule,
    StepContext,
)
from clamber.quadruped.planning.stance import HELD_TILT_TOLERANCE, body_over, reach, support
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits, patch_features
from clamber.quadruped.rock.wall import RockWall, RockWallSpec, generate_wall
from clamber.quadruped.sim.winch_plant import WinchPlant, WinchPlantParameters

RULES = {"planner": HoldPlanner, "nearest": NearestHoldRule}
GRASP_MODELS = ("instant", "winch")


class StopReason(enum.Enum):
    DISTANCE = "climbed the planned distance"
    START = "the start stance is not held"
    NO_HOLD = "no hold chosen for the swing leg"
    NOT_ENGAGED = "no grasp engaged within the attempts"
    FELL = "the true holds could not carry the body"
    STUCK = "a gripper did not open"


@dataclass(frozen=True)
class PlanClimbSettings:
    """Rule name, incline [deg], distance [m], gait order, standoff [m], grasp attempts
    (holds tried) per step, start height on the wall and sideways offset [m], map noise and
    wall texture.
    ``grasp``: ``"instant"`` (always closes, no time) or ``"winch"`` (the winch on its
    plant; a try that does not catch is re-grasped up to ``regrasps`` times)."""

    rule: str = "planner"
    incline_deg: float = 90.0
    distance: float = 1.0
    order: tuple[str, ...] = ("LR", "LF", "RR", "RF")
    standoff: float = 0.16
    attempts: int = 3
    start_u: float = 0.45
    start_y: float = 0.0
    noise: DepthNoise = field(default_factory=DepthNoise)
    wall: RockWallSpec = field(default_factory=RockWallSpec)
    grasp: str = "instant"
    winch: WinchSettings = field(default_factory=WinchSettings)
    plant: WinchPlantParameters = field(default_factory=WinchPlantParameters)
    regrasps: int = 1

    def __post_init__(self) -> None:
        if self.grasp not in GRASP_MODELS:
            raise ConfigError(f"unknown grasp model {self.grasp!r}; "
                              f"models are {', '.join(GRASP_MODELS)}")
        if self.regrasps < 0:
            raise ConfigError(f"regrasps must be >= 0, got {self.regrasps}")
        if self.rule not in RULES:
            raise ConfigError(f"unknown rule {self.rule!r}; rules are {', '.join(RULES)}")
        if sorted(self.order) != sorted(LEG_NAMES):
            raise ConfigError(f"order must list each leg once, got {self.order}")
        if not (self.distance > 0 and self.attempts >= 1):
            raise ConfigError("distance must be > 0 and attempts >= 1")
        if self.start_u + self.distance + 0.45 > self.wall.length:
            raise ConfigError(f"a {self.distance} m climb needs a wall longer than "
                              f"{self.wall.length} m")


@dataclass(frozen=True)
class PlanClimbResult:
    """One planned climb: distance [m] the body rose along the wall, swings completed,
    grasps attempted and engaged, candidates checked, why it stopped, and with the winch
    model the winch's tries and its total grasp and release time [s]."""

    rule: str
    incline_deg: float
    seed: int
    distance_m: float
    steps: int
    attempts: int
    engaged: int
    checked: int
    stop: StopReason
    winch_tries: int = 0
    grasp_time_s: float = 0.0
    release_time_s: float = 0.0

    @property
    def success(self) -> bool:
        return self.stop is StopReason.DISTANCE

    @property
    def grasp_success_rate(self) -> float:
        return self.engaged / self.attempts if self.attempts else float("nan")


class _Truth:
    """True geometry and capacity of the wall, per grid cell (computed once)."""

    def __init__(self, wall: RockWall, model: GripperSurfaceModel) -> None:
        self.wall, self.model = wall, model
        self.features = patch_features(wall.z, wall.spacing, model)
        self.factors = model.capacity_factor(self.features.convexity, self.features.step,
                                             wall.micro_rms)

    def foothold(self, cell: tuple[int, int], factor_believed: np.ndarray) -> Foothold:
        w, i, j = self.wall, cell[0], cell[1]
        top = w.to_world(w.u[i], w.y[j], self.features.top[i, j])
        return Foothold(cell, top, w.rotation @ self.features.normal[i, j], factor_believed)

    def factor(self, cell: tuple[int, int]) -> np.ndarray:
        return self.factors[cell]

    def catch_probability(self, cell: tuple[int, int]) -> float:
        """Chance that a try's spines catch: spine engagement times the seat [0, 1]."""
        seat = float(self.model.seat(self.features.step[cell]))
        return self.model.spine(self.wall.micro_rms) * seat


def _start(rm: RobotModel, truth: _Truth, hold_map, settings: PlanClimbSettings,
           seat: float | None = None, seat_margin: float = SEAT_MARGIN
           ) -> tuple[dict[str, Foothold], pin.SE3, np.ndarray] | None:
    """The start, the same for every rule: per leg the reachable candidate within 8 cm of
    its spot of largest capacity less tilt [rad] (with ``seat`` [m], one whose mapped rock
    under the footpad stands at most that far above the sole's plane as the leg reaches it,
    as the swings' holds are checked, before any other); the worst hold of a stance the legs cannot
    reach together is dropped and the choice repeated (at most ten times)."""
    wall, q4 = truth.wall, 0.22 / 4
    spots = {leg: np.array([settings.start_u, settings.start_y]) + NOMINAL_FEET[leg]
             + [(k - 1.5) * q4, 0.0]
             for k, leg in enumerate(settings.order)}
    body = body_over({leg: wall.to_world(*spots[leg], 0.0) for leg in LEG_NAMES},
                     wall.rotation, settings.standoff)
    dropped: set[tuple[int, int]] = set()
    for _ in range(10):
        q = rm.robot.default_joint_angles()
        holds = {}
        for leg in LEG_NAMES:
            near = sorted((c for c in hold_map.near(*spots[leg], 0.08)
                           if (c.i, c.j) not in dropped),
                          key=lambda c: -float(np.min(c.factor[:3]))
                          + float(np.arccos(np.clip(c.normal @ wall.rotation[:, 2], -1, 1))))
            unseated = None
            for c in near:
                h = truth.foothold((c.i, c.j), c.factor)
                r = reach(rm, body, {leg: h.top}, {leg: h.normal}, q, legs=(leg,))
                if not r.reachable:
                    continue
                if seat is None or _rise(rm, hold_map, body, r.q, leg, h,
                                         seat_margin) <= seat:
                    holds[leg], q = h, r.q
                    break
                unseated = unseated or (h, r.q)
            else:
                if unseated is None:
                    return None
                holds[leg], q = unseated
        tops = {leg: holds[leg].top for leg in LEG_NAMES}
        normals = {leg: holds[leg].normal for leg in LEG_NAMES}
        body = body_over(tops, wall.rotation, settings.standoff)
        r = reach(rm, body, tops, normals, q)
        if r.reachable:
            return holds, body, r.q
        worst = max(LEG_NAMES, key=lambda x: r.errors[x] / 3e-3 + r.tilts[x] / 0.2)
        dropped.add(holds[worst].cell)
    return None


def _rise(rm: RobotModel, hold_map, body: pin.SE3, q: np.ndarray, leg: str,
          hold: Foothold, margin: float = SEAT_MARGIN) -> float:
    """Mapped rock's rise [m] under ``leg``'s footpad on ``hold`` at joint angles ``q``, and
    ``margin`` [m] around it."""
    sole = foot_poses(rm, body_configuration(q))[LEG_NAMES.index(leg)]
    return seat_rise(hold_map, hold.cell, hold.top, body.rotation @ sole.rotation,
                     PAD_HALF_WIDTH + margin)


def plan_climb(settings: PlanClimbSettings, seed: int, rm: RobotModel | None = None,
               model: GripperSurfaceModel | None = None) -> PlanClimbResult:
    """One planned climb on the wall of ``seed`` (maps seeded from ``seed`` too)."""
    rm = rm or RobotModel()
    model = model or GripperSurfaceModel()
    wall = generate_wall(settings.incline_deg, seed, settings.wall)
    truth = _Truth(wall, model)
    rng = np.random.default_rng(seed + 7_000_003)
    rule = RULES[settings.rule](rm)
    order = settings.order
    winch = _Winches(settings, seed) if settings.grasp == "winch" else None

    def result(distance: float, steps: int, attempts: int, engaged: int, checked: int,
               stop: StopReason) -> PlanClimbResult:
        w = (winch.tries, winch.grasp_time, winch.release_time) if winch else (0, 0.0, 0.0)
        return PlanClimbResult(settings.rule, settings.incline_deg, seed, distance, steps,
                               attempts, engaged, checked, stop, *w)

    hold_map = build_hold_map(wall, observe_wall(wall, settings.noise, rng), model)
    start = _start(rm, truth, hold_map, settings)
    if start is None:
        return result(0.0, 0, 0, 0, 0, StopReason.START)
    holds, body, q = start
    u0 = wall.to_wall(body.translation)[0]
    steps = attempts = engaged = checked = 0
    while True:
        climbed = float(wall.to_wall(body.translation)[0] - u0)
        if climbed >= settings.distance:
            return result(climbed, steps, attempts, engaged, checked, StopReason.DISTANCE)
        leg, next_leg = order[steps % 4], order[(steps + 1) % 4]
        if winch is not None and not winch.release(leg):
            return result(climbed, steps, attempts, engaged, checked, StopReason.STUCK)
        hold_map = build_hold_map(wall, observe_wall(wall, settings.noise, rng), model)
        ctx = StepContext(hold_map, holds, body, q, leg, next_leg, settings.standoff)
        exclude: set[tuple[int, int]] = set()
        for _ in range(settings.attempts):
            choice = rule.choose(ctx, exclude)
            checked += choice.checked
            if choice.status is not ChoiceStatus.CHOSEN:
                return result(climbed, steps, attempts, engaged, checked, StopReason.NO_HOLD)
            c = choice.hold
            attempts += 1
            cell = (c.i, c.j)
            new = truth.foothold(cell, c.factor)
            trial = {**holds, leg: new}
            tops = {x: trial[x].top for x in LEG_NAMES}
            normals = {x: trial[x].normal for x in LEG_NAMES}
            true_factor = truth.factor(cell)
            landed = reach(rm, body, tops, normals, q, legs=(leg,)).reachable
            closed = True
            if landed and winch is not None:
                report = winch.grasp(leg, truth.catch_probability(cell))
                if report.status is GraspStatus.STUCK:
                    return result(climbed, steps, attempts, engaged, checked, StopReason.STUCK)
                closed = report.status is GraspStatus.HELD
            if landed and closed and hold_limits(true_factor).contains(choice.expected_wrench):
                engaged += 1
                break
            if winch is not None and closed and landed and not winch.release(leg):
                return result(climbed, steps, attempts, engaged, checked, StopReason.STUCK)
            exclude.add(cell)
        else:
            return result(climbed, steps, attempts, engaged, checked, StopReason.NOT_ENGAGED)
        holds = trial
        body = choice.body
        r = reach(rm, body, tops, normals, q)
        limits = [hold_limits(truth.factor(holds[x].cell)) for x in LEG_NAMES]
        held = r.within(HELD_TILT_TOLERANCE)
        if not (held and support(rm, rule.statics, body, r.q, limits).stable
                and support(rm, rule.statics, body, r.q, limits, swing=next_leg).stable):
            return result(climbed, steps + 1, attempts, engaged, checked, StopReason.FELL)
        q = r.q
        steps += 1


class _Winches:
    """The four winches (all holding) with the climb's tally of tries and time [s]."""

    def __init__(self, settings: PlanClimbSettings, seed: int) -> None:
        self.rng = np.random.default_rng(seed + 9_000_011)
        self.ctrl, self.plant = {}, {}
        for leg in LEG_NAMES:
            ctrl = WinchController(settings.winch)
            plant = WinchPlant(settings.winch, settings.plant, self.rng)
            grasp(ctrl, plant, lambda k: True)
            self.ctrl[leg], self.plant[leg] = ctrl, plant
        self.regrasps = settings.regrasps
        self.tries = 0
        self.grasp_time = self.release_time = 0.0

    def release(self, leg: str) -> bool:
        r = release(self.ctrl[leg], self.plant[leg])
        self.release_time += r.duration
        return r.status is GraspStatus.OPENED

    def grasp(self, leg: str, p_catch: float) -> GraspReport:
        r = grasp(self.ctrl[leg], self.plant[leg], lambda k: self.rng.random() < p_catch,
                  self.regrasps)
        self.tries += r.tries
        self.grasp_time += r.duration
        return r
