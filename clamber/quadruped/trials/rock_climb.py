"""A seeded dynamic climb on a generated rock wall, holds planned from noisy depth maps.

The wall is a MuJoCo height field generated from the seed. The planner
(:class:`~clamber.quadruped.planning.sequence.SequencePlanner`) plans one swing ahead from a
fresh noisy map; the gait aims at the holds as mapped and the Q-WBC limits each gripper to the
capacity the planner estimated. The simulator holds the truth: each gripper's capacity is the
holding model's factor at the true cell. With ``grasp="winch"`` releases and grasps run the
winch state machine on its tendon plant while the gait's clock stops; a try catches only when
the sole is on the hold, with the holding model's chance. A missed grasp is re-tried
(``regrasps``), then re-planned to another hold (``replacements``), then ends the climb.
A trial succeeds when the plan reaching ``distance`` is completed; it fails as on the plane
wall or with ``no_hold`` when the planner finds no further hold.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.attachment.winch import WinchController, WinchSettings
from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError, InfeasibleStart
from clamber.failures import FailureReason
from clamber.quadruped.control.controllers import MotionReference
from clamber.quadruped.control.grasping import GraspReport, GraspStatus, grasp, release
from clamber.quadruped.gaits import ClimbEvent, ClimbGait
from clamber.quadruped.gaits.climb import (
    CONTACT_FORCE,
    MOVE_MOMENT,
    RESEAT_ORDERS,
    TILT_GOALS,
    ClimbPhase,
)
from clamber.quadruped.model.kinematics import world_foot_poses
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.model.windup import LANDING_CONE, landing_normal
from clamber.quadruped.options import Estimator, GraspModel, MapFrame
from clamber.quadruped.planning.depth_map import DepthNoise
from clamber.quadruped.planning.holds import SEAT_MARGIN
from clamber.quadruped.planning.rollout import RULES, PlanClimbSettings, StopReason, _Truth
from clamber.quadruped.planning.selection import CAPACITY_WEIGHT, Foothold
from clamber.quadruped.planning.sequence import PlannedStep, SequencePlanner
from clamber.quadruped.planning.stance import KNEE, LANDED_TILT_TOLERANCE, reach, support
from clamber.quadruped.planning.swing import swing_lift
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits, hold_polytope
from clamber.quadruped.rock.scene import rock_scene
from clamber.quadruped.rock.wall import RockWall, RockWallSpec, generate_wall
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim
from clamber.quadruped.sim.winch_plant import WinchPlant, WinchPlantParameters
from clamber.quadruped.sim.world import Hold, RockSpec, WallLayout
from clamber.quadruped.trials.climb import (
    PLACEMENT_TIME,
    ClimbSettings,
    ClimbTrial,
    settle_verdict,
)
from clamber.quadruped.trials.log import TrialLog
from clamber.quadruped.trials.result import TrialIdentity, TrialResult
from clamber.quadruped.trials.shadow import AnchorShadow
from clamber.quadruped.trials.stance import initial_joints

#: Start of the climb on the wall [m up the slope], as in the planned climb.
START_U = 0.45
#: Wall length left above the last hold [m].
TOP_MARGIN = 0.45
#: Extra time allowed per swing with the winch in the loop [s].
WINCH_ALLOWANCE = 20.0
#: Step of the winch sequencer [s].
WINCH_DT = 0.01
#: Smallest capacity factor given to the Q-WBC (a zero would pin an axis's wrench to 0 and
#: make its weight infinite).
MIN_FACTOR = 0.05
#: The gripper limits a re-seat's three-gripper check holds the others to, each scaled by
#: the hold's planned capacity: the paper's box, the gripper's wrench-set polytope less the
#: moment each holding sole's sensed wind-up already puts on it (``wound``), or the
#: polytope alone (compared in docs/results/rock_climbing.md).
CARRY_LIMITS = ("box", "wound", "polytope")
#: What a gripper that slips off its hold while the gait unloads it to let go does: it is
#: released early and the gait goes on, or it ends the climb as a broken gripper.
UNLOAD_SLIPS = ("release", "fail")
#: The rock climb's share of each hold's planned capacity that a planned stance and a
#: re-seat's three-gripper check may load (the planner alone keeps
#: :data:`~clamber.quadruped.planning.selection.CAPACITY_MARGIN`); chosen together with the
#: body turn (:data:`BODY_TILT`) on tuning walls 0-9 (docs/results/rock_climbing.md).
ROCK_CAPACITY_MARGIN = 0.9
#: How far [rad] rock body moves may turn the body, in all, for the least moment the welded
#: soles hold at each move's end (``tilt_goal="held"``); the plane walls' studied value.
BODY_TILT = 0.05
#: Sole offset [m] off the start holds' tops at placement (within the grasp's 2 cm reach).
START_CLEARANCE = 0.01
#: Clearance [m] a start sole found in the rock is lifted by beyond its depth.
START_LIFT_MARGIN = 0.001
#: How many times the start soles are lifted at most.
START_LIFTS = 3
#: Seat check [m]: no hold where mapped rock under the footpad rises more than this above
#: the landing sole's plane.
SEAT_RISE = 0.01
#: A missed swing is re-planned off the cells within this radius [m] of the missed hold.
REPLACE_EXCLUSION = 0.02
#: The shortest climb the default wall is sized for [m] (longer climbs get longer walls).
DEFAULT_WALL_CLIMB = 2.0
#: Where the robot may be set on the wall [m] (up the slope, sideways) off the nominal start,
#: nearest first: with ``start_probe``, the first from which that many swings plan.
START_SHIFTS = ((0.0, 0.0), (0.0, 0.05), (0.0, -0.05), (0.05, 0.0), (-0.05, 0.0),
                (0.05, 0.05), (0.05, -0.05), (-0.05, 0.05), (-0.05, -0.05),
                (0.0, 0.1), (0.0, -0.1))
#: Swings a start must plan before it is taken (``start_probe``): the first four gait
#: cycles, about 0.8 m of rock that a robot set at the foot of the wall can map. Chosen
#: against 8 by planning alone on tuning walls 0-19 at 110 deg (docs/results/rock_climbing.md).
START_PROBE = 16
#: Swings the planner plans ahead of each choice to see whether it leads to a stop
#: (``lookahead``, :meth:`~.sequence.SequencePlanner.next`). Chosen against 0, 1 and 3 by
#: planning alone on tuning walls 0-19 at 90 and 110 deg (docs/results/rock_climbing.md).
LOOKAHEAD = 6
#: The least knee angle [rad] a planned stance may ask of a leg (``knee_bend``,
#: :func:`~clamber.quadruped.planning.stance.planning_model`): rear knees planned nearly
#: straight under the overhang passed through the straight knee in body moves and broke
#: their grippers at the knee's limit (docs/results/rock_climbing.md).
KNEE_BEND = 0.3


def wall_for(distance: float) -> RockWallSpec:
    """The default wall for a climb of ``distance`` [m]: the start, the climb (at least
    :data:`DEFAULT_WALL_CLIMB`) and the margin above the last hold."""
    return RockWallSpec(length=START_U + max(distance, DEFAULT_WALL_CLIMB) + TOP_MARGIN + 0.2)


@dataclass(frozen=True)
class RockClimbSettings:
    """A dynamic rock climb.

    * ``climb``: the plane trial's settings (its ``gait.cycles`` and ``rocks`` unused);
      ``distance`` [m]; ``wall`` texture and size (None: :func:`wall_for` the distance);
      ``noise`` of the depth map.
    * Planning: ``rule``; ``reorder`` (try other legs when the due one finds no hold);
      ``landing_cone`` [rad] (tilt of the sole from the hold normal towards the body's;
      None: along the normal); ``seat_rise`` [m] (None: off) and ``seat_margin`` [m]
      (the band around the footpad it also reads); ``body_search`` (move each
      stance's body to lower its wrench QP's largest gauge); ``pre_move`` (when no leg finds
      a hold, move the body on its stance before the swing,
      :meth:`~.sequence.SequencePlanner.next`); ``held_tilt`` [rad] (largest change of an
      attached sole's tilt since it landed that a plan may ask of it); ``capacity_margin``
      (the share of each hold's planned capacity a planned stance, and a re-seat's
      three-gripper check, may load); ``capacity_weight`` [m] (the ranking's bonus per unit
      of a hold's capacity factor); ``plan_reseats`` (the planner counts a gripper's held
      tilt from the last stance the gait re-seats it at, rather than from its landing;
      only with ``reseat_every``); ``stall_raises`` (how often a swing that rock holds
      back in its transfer lifts again, higher, :class:`ClimbGaitSettings`); ``map_frame``
      (map placed at the estimated body or in the true world frame); ``start_probe`` (the
      robot is set on the wall at the first of :data:`START_SHIFTS` from which that many
      swings plan, the nominal start where none does; 0: always the nominal start);
      ``lookahead`` (swings planned ahead of each choice, on maps of their own: a hold after
      which the plan stops within them is passed over for another, :data:`LOOKAHEAD`;
      0: greedy); ``foot_gap`` [m] (the least distance in the wall's plane from a planned
      hold to another foot's; None: the gripper's width plus
      :data:`~clamber.quadruped.planning.selection.FOOT_MARGIN`; 0: no such check);
      ``knee_bend`` [rad] (the least knee angle a planned stance asks of a leg,
      :data:`KNEE_BEND`; None: the robot's own knee limit) and ``knee_fallback`` (a swing
      that finds no hold with the knees bent is planned again up to the knee's limit
      before the climb stops; the start probe keeps the knees bent); ``reposition`` (when
      no leg finds a hold ahead, a leg may step beside or a little below its foot to change
      the stance before the climb stops,
      :class:`~clamber.quadruped.planning.sequence.SequencePlanner`; the start probe does
      not).
    * Body moves: ``body_tilt`` [rad] and ``tilt_goal`` (each move may turn the body, at
      most that far in all, for the least moment the welded soles hold once it ends,
      ``"held"``, or the least the move adds, ``"move"``; :class:`ClimbGaitSettings`).
    * Failure: ``unload_slip`` (a gripper whose spines slip off while the gait unloads it to
      let it go, for a swing or a re-seat: released early and the gait goes on,
      ``"release"``, the default, or the climb ends as a broken gripper, ``"fail"``;
      :data:`UNLOAD_SLIPS`).
    * Grasping: ``grasp``; ``winch``, ``plant``; ``regrasps``; ``replacements``;
      ``contact_force`` [N] (None: the joint-4 torque rule); ``reseat_centre`` (a re-seat
      moves its open foot back over its hold's top as the body camera places it now,
      :class:`ClimbGaitSettings`); ``reseat_landing`` (a re-seat turns its open sole back
      to the attitude it landed on the hold with: the planned one, or as placed at the
      start; :class:`ClimbGaitSettings`; on by default, docs/results/rock_climbing.md);
      ``reseat_every`` (re-seat a gripper in place after that many body moves,
      :class:`ClimbGaitSettings`; 0: never);
      ``move_moment`` [N m] (split body moves that wind a gripper more, re-seating between
      the parts; None: :data:`~clamber.quadruped.gaits.climb.MOVE_MOMENT` when re-seating);
      ``carry_limits`` (the limits a re-seat's three-gripper check holds the others to,
      :data:`CARRY_LIMITS`); ``reseat_order`` (after a body move, the next swing's gripper
      first, ``"swing"``, or first the gripper whose sensed sole wind-up takes the largest
      share of its hold's capacity, ``"wound"``, :meth:`RockClimbTrial._wound`) and
      ``wound_share`` (with ``"wound"``: a body move pauses to re-seat a gripper whose
      wind-up takes more than this share; 0: never; the gait's ``wound_limit``).
    * Loads: ``capacity_limits`` (Q-WBC box scaled by the planned capacity);
      ``footpad_push`` (compression borne by the footpad).
    * Estimation: ``estimator`` (leg odometry, or the anchor EKF, which needs
      ``anchor_ekf``).
    """

    climb: ClimbSettings = field(default_factory=ClimbSettings)
    distance: float = 2.0
    rule: str = "planner"
    grasp: GraspModel = GraspModel.WINCH
    wall: RockWallSpec | None = None
    noise: DepthNoise = field(default_factory=DepthNoise)
    winch: WinchSettings = field(default_factory=WinchSettings)
    plant: WinchPlantParameters = field(default_factory=WinchPlantParameters)
    regrasps: int = 1
    capacity_limits: bool = True
    reorder: bool = True
    landing_cone: float | None = LANDING_CONE
    seat_rise: float | None = SEAT_RISE
    seat_margin: float = SEAT_MARGIN
    contact_force: float | None = CONTACT_FORCE
    footpad_push: bool = True
    anchor_ekf: bool = False
    body_search: bool = False
    pre_move: bool = True
    held_tilt: float = LANDED_TILT_TOLERANCE
    estimator: Estimator = Estimator.ODOMETRY
    replacements: int = 1
    map_frame: MapFrame = MapFrame.BODY
    reseat_every: int = 1
    move_moment: float | None = None
    carry_limits: str = "box"
    capacity_margin: float = ROCK_CAPACITY_MARGIN
    capacity_weight: float = CAPACITY_WEIGHT
    plan_reseats: bool = False
    stall_raises: int = 0
    start_probe: int = START_PROBE
    lookahead: int = LOOKAHEAD
    foot_gap: float | None = None
    knee_bend: float | None = KNEE_BEND
    knee_fallback: bool = True
    reposition: bool = True
    unload_slip: str = "release"
    reseat_centre: bool = True
    reseat_landing: bool = True
    body_tilt: float = BODY_TILT
    tilt_goal: str = "held"
    reseat_order: str = "swing"
    wound_share: float = 0.0

    def __post_init__(self) -> None:
        for name, option in (("grasp", GraspModel), ("estimator", Estimator),
                             ("map_frame", MapFrame)):
            object.__setattr__(self, name, option.parse(getattr(self, name), "rock_climb",
                                                        name))
        check.integer("rock_climb", "replacements", self.replacements, low=0, high=5)
        check.integer("rock_climb", "stall_raises", self.stall_raises, low=0, high=5)
        check.integer("rock_climb", "start_probe", self.start_probe, low=0, high=40)
        check.integer("rock_climb", "lookahead", self.lookahead, low=0, high=10)
        check.number("rock_climb", "seat_margin", self.seat_margin, low=0.0, high=0.05)
        if self.foot_gap is not None:
            check.number("rock_climb", "foot_gap", self.foot_gap, low=0.0, high=0.3)
        if self.knee_bend is not None:
            robot = Marcbot()
            check.number("rock_climb", "knee_bend", self.knee_bend, low=robot.q_min[KNEE],
                         high=robot.q_default[KNEE], high_open=True)
        if self.estimator == "anchor" and not self.anchor_ekf:
            raise ConfigError("estimator 'anchor' runs the anchor EKF: set anchor_ekf")
        check.choice("rock_climb", "rule", self.rule, RULES)
        check.choice("rock_climb", "carry_limits", self.carry_limits, CARRY_LIMITS)
        check.choice("rock_climb", "unload_slip", self.unload_slip, UNLOAD_SLIPS)
        check.choice("rock_climb", "tilt_goal", self.tilt_goal, TILT_GOALS)
        check.choice("rock_climb", "reseat_order", self.reseat_order, RESEAT_ORDERS)
        check.in_range("rock_climb", "wound_share", self.wound_share, "wound_share")
        if self.wound_share and self.reseat_order != "wound":
            raise ConfigError("wound_share pauses body moves on the sensed wind-up, which the "
                              "'wound' re-seat order reads: set reseat_order='wound'")
        check.number("rock_climb", "body_tilt", self.body_tilt, low=0.0,
                     high=check.RANGES["body_tilt"].high)
        check.positive("rock_climb", "distance", self.distance)
        check.in_range("rock_climb", "held_tilt", self.held_tilt, "held_tilt")
        check.in_range("rock_climb", "capacity_margin", self.capacity_margin,
                       "capacity_margin")
        check.in_range("rock_climb", "capacity_weight", self.capacity_weight,
                       "capacity_weight")
        check.integer("rock_climb", "regrasps", self.regrasps, low=0)
        check.integer("rock_climb", "reseat_every", self.reseat_every, low=0)
        if self.move_moment is None:
            object.__setattr__(self, "move_moment", MOVE_MOMENT if self.reseat_every else 0.0)
        check.non_negative("rock_climb", "move_moment", self.move_moment)
        for name in ("seat_rise", "contact_force"):
            if getattr(self, name) is not None:
                check.positive("rock_climb", name, getattr(self, name))
        if self.wall is None:
            object.__setattr__(self, "wall", wall_for(self.distance))
        if START_U + self.distance + TOP_MARGIN > self.wall.length:
            raise ConfigError(f"a {self.distance} m climb needs a wall longer than "
                              f"{self.wall.length} m")
        if not 0.0 <= self.climb.incline_deg <= 135.0:
            raise ConfigError(f"rock walls are generated from 0 to 135 deg, got "
                              f"{self.climb.incline_deg}")

    @property
    def plan(self) -> PlanClimbSettings:
        """The planning settings (the gait's order and standoff)."""
        g = self.climb.gait
        return PlanClimbSettings(rule=self.rule, incline_deg=self.climb.incline_deg,
                                 distance=self.distance, order=g.order, standoff=g.standoff,
                                 start_u=START_U, noise=self.noise, wall=self.wall)

    def shifted(self, shift: tuple[float, float]) -> PlanClimbSettings:
        """The planning settings with the start moved by ``shift`` [m] (up, sideways)."""
        p = self.plan
        return replace(p, start_u=p.start_u + shift[0], start_y=p.start_y + shift[1])


@dataclass(frozen=True)
class RockTrialResult(TrialResult):
    """A rock climb's result: the plane trial's metrics plus swings planned and made, grasps
    attempted and engaged (welded) and their ratio, winch tries, grasp and release time [s],
    speed [m/s] after placement, why planning stopped, planning CPU time [s], the anchor EKF's
    final error [m] and RMS [mm] (``anchor_ekf``), the re-placed swings with why each missed,
    the re-seats skipped (the other three holds could not carry the body) and pressed again, the
    body moves made in parts, the body moves added before a swing (``pre_move``), the holds the
    planner passed over (``lookahead``), the swings planned up to the knee's limit
    (``knee_fallback``), the re-positioning swings (``reposition``), the transfers lifted
    again where rock held them, the grippers that slipped off early as the gait unloaded them
    to let go (``unload_slip``) and the re-seats that moved their foot back over its hold
    (``reseat_centre``) and how far [m] (up the slope, sideways) the start was moved
    (``start_probe``)."""

    planned_steps: int = 0
    steps_done: int = 0
    grasps: int = 0
    grasps_engaged: int = 0
    grasp_success_rate: float = float("nan")
    winch_tries: int = 0
    grasp_time_s: float = 0.0
    release_time_s: float = 0.0
    speed_m_s: float = float("nan")
    plan_stop: str = ""
    planning_cpu_s: float = 0.0
    anchor_drift_m: float = float("nan")
    anchor_rms_mm: float = float("nan")
    replacements: int = 0
    replaced: str = ""
    reseats_skipped: int = 0
    moves_split: int = 0
    pre_moves: int = 0
    holds_passed_over: int = 0
    straight_knee_swings: int = 0
    repositions: int = 0
    swings_raised: int = 0
    early_releases: int = 0
    reseats_centred: int = 0
    start_shift_m: tuple[float, float] = (0.0, 0.0)


def _true_hold(truth: _Truth, name: str, cell: tuple[int, int], capture: float) -> Hold:
    """The simulator's hold at a grid cell: true top, normal and capacity factor."""
    f = truth.foothold(cell, truth.factor(cell))
    return Hold(name, f.top, f.top, f.normal, np.zeros((1, 3)), capture,
                np.asarray(truth.factor(cell), dtype=float))


class RockClimbTrial(ClimbTrial):
    """One seeded dynamic climb on a generated rock wall (module docstring)."""

    def __init__(self, settings: RockClimbSettings, seed: int, log: bool = False,
                 robot: Marcbot | None = None, time_limit: float | None = None,
                 plan: tuple[RockWall, _Truth, SequencePlanner] | None = None) -> None:
        self.rock = settings
        self._plan = plan
        super().__init__(settings.climb, seed, log, robot, time_limit)

    # ---- set-up ----------------------------------------------------------------------------
    def _setup_scene(self) -> None:
        """The seeded wall, the planned holds and the robot on the height field."""
        s, rs = self.settings, self.rock
        self.wall, self.truth, self.planner = self._plan or plan_rock_climb(rs, self.seed)
        if not self.planner.start:
            raise ConfigError(f"no start stance on wall {self.seed}")
        self.capture = RockSpec().capture_radius
        holds = {leg: [_true_hold(self.truth, f"{leg}_hold0", self.planner.start[leg].cell,
                                  self.capture)] for leg in LEG_NAMES}
        self.layout = WallLayout(s.incline_deg, self.wall.rotation, holds, s.gait.stride,
                                 self.seed)
        self.sim_robot = s.mismatch.perturb(self.robot, self.seed)
        servos = ServoBank(self.sim_robot)
        self.sim = QuadrupedSim(rock_scene(self.sim_robot, self.wall, servos, s.physics_dt,
                                           s.sole), self.sim_robot, servos, s.control_rate,
                                grippers=True)
        self.dt = self.sim.dt

    def _setup_placement(self) -> None:
        """The gait over the mapped holds, the robot welded on its true start holds, the
        winches holding and the gait clock."""
        rs, layout, start = self.rock, self.layout, self.planner.start
        # A missed grasp is placed on another hold (``replacements``), not flown again.
        gp = replace(self.settings.gait, cycles=1, reseat_every=rs.reseat_every,
                     move_moment=rs.move_moment, swing_retries=0,
                     reseat_order=rs.reseat_order, wound_limit=rs.wound_share,
                     body_tilt=rs.body_tilt, tilt_goal=rs.tilt_goal,
                     landing="keep", stall_raises=rs.stall_raises,
                     reseat_centre=rs.reseat_centre, reseat_landing=rs.reseat_landing)
        if rs.contact_force is not None:
            gp = replace(gp, contact_force=rs.contact_force)
        if rs.grasp == "winch":
            # One-cycle phases: the gait clock stops while the winch works.
            gp = replace(gp, release_time=self.dt, grasp_time=self.dt)
        known = {leg: [start[leg].top] for leg in LEG_NAMES}
        normals = {leg: [start[leg].normal] for leg in LEG_NAMES}
        self.gait = ClimbGait(known, normals, layout.rotation, gp, steps=0)
        self.gait.sight = self._sighted_top
        R = self.R = layout.rotation
        tops = {leg: layout.holds[leg][0].top for leg in LEG_NAMES}
        true_normals = {leg: layout.holds[leg][0].normal for leg in LEG_NAMES}
        self.body0 = pin.SE3(R, np.mean(list(tops.values()), axis=0) + gp.standoff * R[:, 2])
        lifted = {leg: tops[leg] + START_CLEARANCE * true_normals[leg] for leg in LEG_NAMES}
        # The soles as the swings land them: within the cone of the hold's normal nearest the
        # body's, which a body move winds up least (model.windup.landing_normal).
        soles = true_normals if rs.landing_cone is None else \
            {leg: landing_normal(n, R[:, 2], rs.landing_cone) for leg, n in true_normals.items()}
        # Set down as a person would: a sole the rock under its footpad holds off its start
        # pose is lifted clear of it (as far as the gripper's reach allows).
        for attempt in range(START_LIFTS + 1):
            q0 = self._start_joints(lifted, soles)
            self.sim.set_state(self.body0.translation, self.body0.rotation, q0)
            deep = self.sim.grippers.penetration()
            if not deep or attempt == START_LIFTS:
                break
            top = self.sim.grippers.reach - START_LIFT_MARGIN
            for leg, d in deep.items():
                off = float((lifted[leg] - tops[leg]) @ true_normals[leg])
                lifted[leg] = tops[leg] + min(off + d + START_LIFT_MARGIN, top) \
                    * true_normals[leg]
        self.held: tuple[str, ...] = ()
        for leg in LEG_NAMES:
            self._grip(leg, layout.holds[leg][0])
        self.sim.grippers.breakable = False
        self.planning_cpu = 0.0
        self.pre_moves = 0
        self.t_end = gp.settle_time + PLACEMENT_TIME
        self.step_allowance = 1.6 * gp.nominal_cycle_time / 4 \
            + (WINCH_ALLOWANCE if rs.grasp == "winch" else 0.0)
        self._plan_next()
        self.gait_clock = 0.0
        self.busy_until: float | None = None
        self.pending: tuple[str, str, int, GraspReport] | None = None
        self.grasps = self.engaged = self.tries = self.replacements = 0
        self.reseat_retries = 0
        self.grasp_time = self.release_time = 0.0
        #: Per swing (by number): re-placements used and the cells it may no longer take.
        self.missed: dict[int, tuple[int, frozenset[tuple[int, int]]]] = {}
        self.replaced: list[str] = []
        self.rng = np.random.default_rng(self.seed + 9_000_011)
        self.landing = ""
        self.winch_ctrl: dict[str, WinchController] = {}
        self.winch_plant: dict[str, WinchPlant] = {}
        if rs.grasp == "winch":
            for leg in LEG_NAMES:
                ctrl = WinchController(rs.winch)
                plant = WinchPlant(rs.winch, rs.plant, self.rng)
                grasp(ctrl, plant, lambda k: True, dt=WINCH_DT)
                self.winch_ctrl[leg], self.winch_plant[leg] = ctrl, plant

    def _setup_control(self) -> None:
        """The plane trial's controller, filter and foot-force estimator, hold limits on the
        start holds and the optional anchor EKF."""
        super()._setup_control()
        # The start holds' landing attitudes: the soles as placed (the swings' are planned).
        placed = world_foot_poses(self.rm, self.sim.true_state())
        for leg in LEG_NAMES:
            self.gait.landing.setdefault(leg, [None])[0] = placed[leg].rotation.copy()
        self.shadow = AnchorShadow(self, self.seed) if self.rock.anchor_ekf else None
        self.statics = StaticsEvaluator(self.rm)
        self.gait.may_reseat = self._three_carry
        #: Each hold's wrench-set polytope, by leg and grid cell, for :meth:`_wound`.
        self._capacity: dict[tuple[str, tuple[int, int]], WrenchLimits] = {}
        for leg in LEG_NAMES:
            self._limit_to_hold(leg, 0)

    def _limit_to_hold(self, leg: str, k: int) -> None:
        """Scale the Q-WBC's gripper box on ``leg`` by its hold ``k``'s planned capacity and
        weigh each axis by it, so load is shared by capacity (``capacity_limits``)."""
        qp = getattr(self.ctrl, "qp", None)
        if qp is None or not self.rock.capacity_limits \
                or self.settings.controller == "qwbc-nolimits":
            return
        # The planner's capacity factors (7 with ``footpad_push``: the last compression's).
        f = np.maximum(np.asarray(self._planned(leg, k).factor, dtype=float), MIN_FACTOR)
        qp.set_limits(LEG_NAMES.index(leg), hold_limits(f), 1.0 / f[:6]**2)

    def _three_carry(self, leg: str) -> bool:
        """Whether the wrench QP balances the estimated stance on the three grippers other
        than ``leg`` within their holds' planned capacities shrunk by the planner's margin:
        a re-seat of ``leg`` is safe only then (the planner checked the three-gripper stance
        of the next swing alone). The limits (``carry_limits``) are the paper's box, or the
        gripper's wrench-set polytope (:func:`.holding.hold_polytope`), which holds moments
        and forces the box refuses, less what each other sole's sensed wind-up already
        takes of it (``wound``)."""
        state = self.seen
        if state is None:
            return False
        margin = self.planner.rule.settings.capacity_margin
        kind = self.rock.carry_limits
        shape = hold_limits if kind == "box" else hold_polytope
        limits = [shape(np.maximum(np.asarray(self._planned(g, self.gait.index[g]).factor,
                                              dtype=float), MIN_FACTOR) * margin)
                  for g in LEG_NAMES]
        if kind == "wound":
            wound = self.wound_moments(state)
            for i, g in enumerate(LEG_NAMES):
                if g != leg and g in wound:
                    room = limits[i].margins(wound[g])
                    if room.min() < 0:  # its wind-up alone takes more than its share
                        return False
                    limits[i] = WrenchLimits(limits[i].H, room, "wound")
        body = pin.SE3(state.body_rotation, state.body_position)
        return support(self.rm, self.statics, body, state.joint_positions, limits,
                       swing=leg).stable

    def _wound(self) -> dict[str, float]:
        """Per holding gripper, the share of its hold's capacity that its sensed sole
        wind-up takes alone (:meth:`wound_moments` against the gripper's wrench-set polytope
        scaled by the hold's planned factors, :func:`.holding.hold_polytope`): on rock a
        moment that a good hold shrugs off breaks a poor one, so the order and the pauses
        (``wound_share``) read the share, not the moment."""
        if self.seen is None:
            return {}
        out = {}
        for g, w in self.wound_moments(self.seen).items():
            hold = self._planned(g, self.gait.index[g])
            key = (g, hold.cell)  # a re-placed swing puts another hold at the same index
            if key not in self._capacity:
                f = np.asarray(hold.factor, dtype=float)
                self._capacity[key] = hold_polytope(np.maximum(f, MIN_FACTOR))
            lim = self._capacity[key]
            out[g] = float(np.max(lim.H @ w / np.maximum(lim.h, 1e-9)))
        return out

    def _planned(self, leg: str, k: int) -> Foothold:
        """``leg``'s hold ``k`` as planned (0: its start hold)."""
        if k == 0:
            return self.planner.start[leg]
        return [st.hold for st in self.planner.steps if st.leg == leg][k - 1]

    def _plan_next(self, leg: str | None = None,
                   exclude: frozenset[tuple[int, int]] = frozenset()) -> PlannedStep | None:
        """Plan one more swing (of ``leg``, off ``exclude``, when given) and hand it to the
        gait, the simulated wall and the time limit; None once planning has stopped. The
        planner may move the previous swing's body (``pre_move``) while that move has not
        begun."""
        c0 = time.process_time()
        gait, prev = self.gait, len(self.gait.schedule) - 1
        move = self.rock.pre_move and (prev > gait.step_no or (
            prev == gait.step_no and gait.phase not in (ClimbPhase.BODY, ClimbPhase.RESEAT)))
        step: PlannedStep | None = self.planner.next(leg, exclude, move=move)
        self.planning_cpu += time.process_time() - c0
        if step is None:
            return None
        leg, holds = step.leg, self.layout.holds[step.leg]
        holds.append(_true_hold(self.truth, f"{leg}_hold{len(holds)}", step.hold.cell,
                                self.capture))
        step = self._as_placed(step)
        if step.pre_body is not None:
            self.gait.bodies[prev] = step.pre_body
            self.pre_moves += 1
        self.gait.holds[leg].append(step.hold.top)
        self.gait.normals[leg].append(step.hold.normal)
        self.gait.landing.setdefault(leg, [None]).append(step.sole_rotation)
        self.gait.schedule.append(leg)
        self.gait.bodies[len(self.gait.schedule) - 1] = step.body
        self.gait.lifts[len(self.gait.schedule) - 1] = swing_lift(step.clearance)
        self.t_end += self.step_allowance
        return step

    def _to_estimate(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The estimate's error ``T_est T_true^-1`` as (rotation, translation): where the body
        camera places what it maps (``map_frame="body"``); None with world-frame maps or
        before the first estimate."""
        state = self.seen
        if self.rock.map_frame == "world" or state is None:
            return None
        p, R = self.sim.body_pose()
        turn = state.body_rotation @ R.T
        return turn, state.body_position - turn @ p

    def _sighted_top(self, leg: str, k: int) -> np.ndarray:
        """``leg``'s hold ``k``'s mapped top as the body camera places it now (the gait's
        :attr:`~clamber.quadruped.gaits.climb.ClimbGait.sight`)."""
        top = self._planned(leg, k).top
        placed = self._to_estimate()
        return top if placed is None else placed[0] @ top + placed[1]

    def _as_placed(self, step: PlannedStep) -> PlannedStep:
        """The swing moved by the estimate's error (:meth:`_to_estimate`)."""
        placed = self._to_estimate()
        if placed is None:
            return step
        turn, shift = placed
        hold = replace(step.hold, top=turn @ step.hold.top + shift,
                       normal=turn @ step.hold.normal)
        return replace(step, hold=hold,
                       sole_rotation=None if step.sole_rotation is None
                       else turn @ step.sole_rotation,
                       body=None if step.body is None else turn @ step.body + shift,
                       pre_body=None if step.pre_body is None
                       else turn @ step.pre_body + shift)

    def _replace(self, leg: str, k: int, t: float, why: str, reseat: bool = False) -> bool:
        """Re-plan a missed swing to another hold, off the cells within
        ``REPLACE_EXCLUSION`` of every hold it missed, and lift the foot at gait time ``t``
        [s]; with ``reseat``, a gripper whose re-seat on its hold ``k`` missed for good
        swings to another hold that way before the swing that was due (a split body move
        under way ends where its last part left the body). When its re-placements are used
        up or no other hold is found, end the climb (a missed grasp, ``why``) and return
        False."""
        if reseat:  # between the parts of a split move, the body stays where it is
            self.gait.end_move()
        swing, due = self.gait.step_no, self.gait.swing_leg
        used, missed = self.missed.get(swing, (0, frozenset()))
        if used >= self.rock.replacements:
            self._fail(FailureReason.GRASP_MISSED, why)
            return False
        cell = self._planned(leg, k).cell
        r = round(REPLACE_EXCLUSION / self.wall.spacing)
        missed = missed | {(cell[0] + di, cell[1] + dj) for di in range(-r, r + 1)
                           for dj in range(-r, r + 1) if di * di + dj * dj <= r * r}
        while len(self.planner.steps) > swing:
            self.planner.retract()
            self.layout.holds[self.gait.retract()].pop()
            self.t_end -= self.step_allowance
        turn = self.planner.turn
        if self._plan_next(leg, missed) is None:
            self._fail(FailureReason.GRASP_MISSED, why)
            return False
        if leg != due:  # the leg whose turn it was swings after it
            self.planner.turn = turn
        self._plan_next()
        self.missed[swing] = (used + 1, missed)
        self.replacements += 1
        self.t_end += self.step_allowance
        if reseat:
            self.gait.reseat_to_swing(t)
        else:
            self.gait.swing_again(t)
        self.replaced.append(why)
        return True

    def _start_joints(self, tops: dict[str, np.ndarray], normals: dict[str, np.ndarray]
                      ) -> np.ndarray:
        """Joint angles [rad] with the soles at ``tops``: the plane trial's fit, else the
        planner's (the 5-DOF leg tilts its sole about one axis only)."""
        rm = RobotModel(self.sim_robot)
        try:
            return initial_joints(rm, self.body0, tops, normals)
        except InfeasibleStart:
            return reach(rm, self.body0, tops, normals, rm.robot.default_joint_angles()).q

    # ---- one control cycle -----------------------------------------------------------------
    def step(self) -> bool:
        """One control cycle, the anchor EKF (if any) updated first from the sensors."""
        if self.shadow is not None and not self.finished:
            self.shadow.update()
        return super().step()

    def _body_error(self, p_true: np.ndarray, state: RobotState, ref: MotionReference
                    ) -> float:
        """With maps placed at the estimated body (``map_frame="body"``) the holds and body
        references live in the estimate's frame, which drifts from the world's (leg
        odometry, 1-2 % of the distance climbed): the body strays from its reference by
        where the robot is against where it meant to be in that frame, the estimate's own
        tracking error, not by the drift. With world-frame maps, as on the plane walls."""
        if self.rock.map_frame == "world":
            return super()._body_error(p_true, state, ref)
        return float(np.linalg.norm(state.body_position - ref.body_pose.translation))

    def _lets_go(self, leg: str) -> bool:
        """With ``unload_slip="release"``, whether ``leg`` is a gripper the gait is letting go
        of (:meth:`ClimbGait.letting_go`): the three others were checked to carry the robot
        without it (the planner's lift check, the re-seat's), so spines slipping off it
        early only open it sooner."""
        return self.rock.unload_slip == "release" and self.gait.letting_go(leg)

    def _estimate(self) -> RobotState:
        """Leg odometry, or the anchor EKF's body with ``estimator="anchor"``; each gripper's
        attitude at its weld is kept while it holds (:meth:`wound_moments`)."""
        state = self._odometry()
        if self.rock.estimator == "anchor" and self.settings.state == "estimate":
            state = self.shadow.ekf.state(state.joint_positions, state.joint_velocities)
        self._track_seats(state)
        return state

    def _reference(self, t: float, state: RobotState
                   ) -> tuple[MotionReference, list[ClimbEvent]]:
        """The gait's reference on its own clock, which stops while a winch works."""
        sim = self.sim
        feet = partial(world_foot_poses, self.rm, state)
        forces = partial(self._foot_forces, state)
        if t < PLACEMENT_TIME:
            self.last_ref = self.gait.reference(0.0, feet, sim.joint4_torques(), forces)[0]
            return self.last_ref, []
        if self.busy_until is not None:
            if t + 1e-9 >= self.busy_until:
                self._finish_winch()
            if self.finished:
                # The climb ended with the winch (its swing may be taken back): the
                # reference is not used again.
                return self.last_ref, []
            if self.busy_until is not None:
                self.last_ref = self.gait.reference(self.gait_clock, feet,
                                                    sim.joint4_torques(), forces)[0]
                return self.last_ref, []
        out = self.gait.reference(self.gait_clock, feet, sim.joint4_torques(), forces)
        self.last_ref = out[0]
        self.gait_clock += self.dt
        return out

    def _apply(self, events: list[ClimbEvent], t: float) -> None:
        """Release or grasp: at once with the fixed phases, through the winch otherwise."""
        if self.rock.grasp == "fixed":
            for ev in events:
                if ev.action == "grasp":
                    self.grasps += 1
                    if self._grip(ev.leg, self.layout.holds[ev.leg][ev.hold]):
                        self.engaged += 1
                        self._limit_to_hold(ev.leg, ev.hold)
                    elif ev.reseat and self.gait.reseat_again(ev.t):
                        self.reseat_retries += 1
                    elif ev.reseat:
                        self._replace(ev.leg, ev.hold, ev.t, f"{ev.leg} re-seat on hold "
                                      f"{ev.hold} missed at {self._height():.2f} m",
                                      reseat=True)
                        return
                    else:
                        self._replace(ev.leg, ev.hold, ev.t,
                                      f"{ev.leg} missed hold {ev.hold} at {self._height():.2f} m")
                        return
                else:
                    if not ev.reseat:
                        self._plan_next()
                    self._let_go(ev.leg)
                    self.first_release = t if self.first_release is None \
                        else self.first_release
            return
        for ev in events:
            self._start_winch(ev, t)

    def _height(self) -> float:
        """How far the body has climbed [m], along the fall line."""
        p, _ = self.sim.body_pose()
        return float((p - self.body0.translation) @ self.R[:, 0])

    def _start_winch(self, ev: ClimbEvent, t: float) -> None:
        """Run the winch sequencer for ``ev`` on the leg's plant; the gait waits its time."""
        rs, leg = self.rock, ev.leg
        ctrl, plant = self.winch_ctrl[leg], self.winch_plant[leg]
        if ev.action == "release":
            if not ev.reseat:
                self._plan_next()
            report = release(ctrl, plant, WINCH_DT)
            self.release_time += report.duration
            self.first_release = t if self.first_release is None else self.first_release
        else:
            hold = self.layout.holds[leg][ev.hold]
            on = self.sim.grippers.on_hold(leg, hold)
            p = self.truth.catch_probability(self._planned(leg, ev.hold).cell)
            d = self.sim.data.site_xpos[self.sim.grippers.site[leg]] - hold.top
            along = float(d @ hold.normal)
            beside = float(np.linalg.norm(d - along * hold.normal))
            self.landing = (f"spines did not catch (chance {p:.2f} a try)" if on else
                            f"sole off the hold: {1000 * beside:.0f} mm beside and "
                            f"{1000 * along:.0f} mm above its top")
            report = grasp(ctrl, plant, lambda k: on and self.rng.random() < p,
                           rs.regrasps, WINCH_DT)
            self.grasps += 1
            self.tries += report.tries
            self.grasp_time += report.duration
        self.busy_until, self.gait_clock = t + report.duration, ev.t
        self.pending = (leg, "reseat" if ev.reseat and ev.action == "grasp" else ev.action,
                        ev.hold, report)

    def _finish_winch(self) -> None:
        """Open the weld, or close it on an engaged hold; a missed grasp is re-placed or ends
        the climb."""
        leg, action, k, report = self.pending
        self.busy_until = self.pending = None
        where = f"at {self._height():.2f} m"
        if action in ("release", "reopen"):
            if report.status is not GraspStatus.OPENED:
                self._fail(FailureReason.GRIPPER_STUCK, f"{leg} did not open {where}")
            elif action == "release":
                self._let_go(leg)
            return
        if action == "reseat" and not (report.status is GraspStatus.HELD
                                       and self._grip(leg, self.layout.holds[leg][k])):
            if self.gait.reseat_again(self.gait_clock):
                self.reseat_retries += 1
            elif not self._replace(leg, k, self.gait_clock, f"{leg} re-seat on hold {k} did "
                                   f"not hold ({report.fault or report.status.value}; "
                                   f"{self.landing}) {where}", reseat=True):
                return
            if report.status is GraspStatus.HELD:  # closed off the hold: open it again
                opened = release(self.winch_ctrl[leg], self.winch_plant[leg], WINCH_DT)
                self.release_time += opened.duration
                self.busy_until = self.k * self.dt + opened.duration
                self.pending = (leg, "reopen", k, opened)
        elif action == "reseat":
            self.engaged += 1
            self._limit_to_hold(leg, k)
        elif report.status is not GraspStatus.HELD:
            self._replace(leg, k, self.gait_clock,
                          f"{leg} hold {k}: {report.tries} tries did not engage "
                          f"({report.fault or report.status.value}; {self.landing}) {where}")
        elif not self._grip(leg, self.layout.holds[leg][k]):
            why = f"{leg} hold {k}: the winch held but the sole had left the hold {where}"
            if not self._replace(leg, k, self.gait_clock, why):
                return
            opened = release(self.winch_ctrl[leg], self.winch_plant[leg], WINCH_DT)
            self.release_time += opened.duration
            self.busy_until = self.k * self.dt + opened.duration
            self.pending = (leg, "reopen", k, opened)
        else:
            self.engaged += 1
            self._limit_to_hold(leg, k)

    def _check(self, t, rec, err) -> None:
        super()._check(t, rec, err)
        if self.finished and self.failure is None and self.planner.stop is not \
                StopReason.DISTANCE:
            self.failure = FailureReason.NO_HOLD
            self.reason = f"planning stopped: {self.planner.detail}"

    # ---- read-out --------------------------------------------------------------------------
    def result(self) -> RockTrialResult:
        base = super().result()
        after = max(self.k * self.dt - PLACEMENT_TIME, 0.0)
        speed = base.distance_m / after if after > 0 else float("nan")
        p = self.sim.true_state().body_position
        base = replace(base, setting=f"rock {self.settings.incline_deg:g}deg",
                       estimation_drift_m=float(np.linalg.norm(self.ekf.p - p)))
        if self.failure is FailureReason.NO_HOLD:
            base = replace(base, failure_phase=f"planning, swing {len(self.planner.steps) + 1}")
        return RockTrialResult(
            **base.__dict__, planned_steps=len(self.planner.steps),
            steps_done=self.gait.step_no, grasps=self.grasps, grasps_engaged=self.engaged,
            grasp_success_rate=self.engaged / self.grasps if self.grasps else float("nan"),
            winch_tries=self.tries, grasp_time_s=self.grasp_time,
            release_time_s=self.release_time, speed_m_s=speed,
            plan_stop=self.planner.stop.name.lower() if self.planner.stop else "",
            planning_cpu_s=self.planning_cpu,
            anchor_drift_m=self.shadow.error() if self.shadow else float("nan"),
            anchor_rms_mm=1000 * self.shadow.rms() if self.shadow else float("nan"),
            replacements=self.replacements, replaced="; ".join(self.replaced),
            reseats_skipped=self.gait.reseats_skipped, moves_split=self.gait.moves_split,
            pre_moves=self.pre_moves, holds_passed_over=self.planner.passed_over,
            straight_knee_swings=self.planner.straight_knees,
            repositions=self.planner.repositions,
            swings_raised=self.gait.swings_raised,
            early_releases=self.early_releases, reseats_centred=self.gait.reseats_centred,
            start_shift_m=tuple(self.planner.start_shift))


def plan_rock_climb(settings: RockClimbSettings, seed: int,
                    shift: tuple[float, float] | None = None
                    ) -> tuple[RockWall, _Truth, SequencePlanner]:
    """The wall of ``seed``, its truth and the planner of its holds (start placed, no swing
    planned yet), the start moved by ``shift`` [m] (None: :func:`start_shift`'s)."""
    wall = generate_wall(settings.climb.incline_deg, seed, settings.wall)
    model = GripperSurfaceModel(footpad_push=settings.footpad_push)
    truth = _Truth(wall, model)
    if shift is None:
        shift = start_shift(settings, seed, wall, truth, model)
    planner = _planner(settings, seed, wall, truth, model, shift, settings.knee_fallback,
                       settings.reposition)
    planner.start_shift = shift
    return wall, truth, planner


def start_shift(settings: RockClimbSettings, seed: int, wall: RockWall | None = None,
                truth: _Truth | None = None, model: GripperSurfaceModel | None = None
                ) -> tuple[float, float]:
    """Where to set the robot on the wall of ``seed``, off the nominal start [m]: the first
    of :data:`START_SHIFTS` from whose stance ``start_probe`` swings plan (from the same
    maps the climb's planner will take), else the nominal start."""
    if settings.start_probe == 0:
        return START_SHIFTS[0]
    if wall is None:
        wall = generate_wall(settings.climb.incline_deg, seed, settings.wall)
        model = GripperSurfaceModel(footpad_push=settings.footpad_push)
        truth = _Truth(wall, model)
    for shift in START_SHIFTS:
        probe = _planner(settings, seed, wall, truth, model, shift)
        if not probe.start:
            continue
        for _ in range(settings.start_probe):
            if probe.next(move=settings.pre_move and bool(probe.steps)) is None:
                break
        if probe.stop in (None, StopReason.DISTANCE):
            return shift
    return START_SHIFTS[0]


def _planner(settings: RockClimbSettings, seed: int, wall: RockWall, truth: _Truth,
             model: GripperSurfaceModel, shift: tuple[float, float],
             knee_fallback: bool = False, reposition: bool = False) -> SequencePlanner:
    """The climb's hold planner with its start moved by ``shift`` [m] (``knee_fallback``
    and ``reposition``: :class:`~clamber.quadruped.planning.sequence.SequencePlanner`'s)."""
    return SequencePlanner(wall, settings.shifted(shift), seed, model=model, truth=truth,
                                        reorder=settings.reorder,
                                        landing_cone=settings.landing_cone,
                                        seat_rise=settings.seat_rise,
                                        seat_margin=settings.seat_margin,
                                        body_search=settings.body_search,
                                        held_tilt=settings.held_tilt,
                                        capacity_margin=settings.capacity_margin,
                                        capacity_weight=settings.capacity_weight,
                                        reseats=settings.plan_reseats
                                        and settings.reseat_every > 0,
                                        lookahead=settings.lookahead,
                                        foot_gap=settings.foot_gap,
                                        knee_bend=settings.knee_bend,
                                        knee_fallback=knee_fallback,
                                        reposition=reposition)


def run_rock_climb(settings: RockClimbSettings, seed: int, log: bool = False,
                   robot: Marcbot | None = None, time_limit: float | None = None
                   ) -> tuple[RockTrialResult, TrialLog | None]:
    """One seeded rock climb and, if ``log``, its time series; no reachable start stance is
    an ``infeasible_start`` failure. Each run (a verdict rerun too) gets its own planner,
    since planners are stateful."""
    plans = [plan_rock_climb(settings, seed)]
    if not plans[0][2].start:
        return _not_started(settings, seed, plans[0][2].detail), None
    shift = plans[0][2].start_shift

    def climb_at(dt: float) -> tuple[RockTrialResult, TrialLog | None]:
        at = replace(settings, climb=replace(settings.climb, physics_dt=dt))
        plan = plans.pop() if plans else plan_rock_climb(settings, seed, shift)
        return RockClimbTrial(at, seed, log, robot, time_limit, plan).run()

    try:
        return settle_verdict(settings.climb, climb_at)
    except InfeasibleStart as e:
        return _not_started(settings, seed, str(e)), None


def _not_started(settings: RockClimbSettings, seed: int, detail: str) -> RockTrialResult:
    """The record of a rock climb whose start stance could not be placed."""
    who = TrialIdentity("climb", settings.climb.controller,
                        f"rock {settings.climb.incline_deg:g}deg", seed)
    base = TrialResult.unmeasured(who, FailureReason.INFEASIBLE_START, detail)
    return RockTrialResult(**{**base.__dict__, "distance_m": 0.0}, plan_stop="start")
