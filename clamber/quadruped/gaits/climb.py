"""The free-climbing gait as a reference generator.

One leg at a time, at least three grippers attached (paper, Motion Planning). Per leg in
``order``: unload (load factor 1 -> 0), release, lift along the hold's normal, transfer above
the next hold, descend along its normal until contact (joint-4 torque change
``contact_torque``, or estimated normal foot force ``contact_force``), grasp, reload, then
move the body (cubic) over the four footholds. A cycle advances the body by ``stride``.

Re-seating (``reseat_every``): a welded sole winds up about the one axis its 5-DOF leg cannot
turn it as the body moves (:mod:`clamber.quadruped.model.windup`), and its hinges carry that
turn as a moment until the gripper breaks off. After ``reseat_every`` body moves a gripper
is re-seated in place: unloaded, opened so its sole relaxes, pressed back onto the hold
along its normal until contact (the descent's rule: an open foot held in place drifts off its
hold a few millimetres per opening), closed there and reloaded, one gripper at a time
(``reseat_time`` per stage). By default climbs of more than one cycle re-seat after every body
move; one-cycle climbs keep the paper's gait.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.gaits.profiles import cubic
from clamber.quadruped.model.robot import LEG_NAMES, leg_index
from clamber.quadruped.model.windup import LANDING_CONE, landing_normal


def _loads(leg: str | None, swing_load: float | None) -> dict[str, float]:
    """Load factors: 1 per leg, ``swing_load`` for ``leg`` (None: 1; 0: left out)."""
    load = dict.fromkeys(LEG_NAMES, 1.0)
    if swing_load is not None:
        if swing_load > 0.0:
            load[leg] = swing_load
        else:
            del load[leg]
    return load


class ClimbPhase(enum.Enum):
    """What the free-climbing gait is doing; ``leg`` phases concern the swing leg."""

    SETTLE = "settle"
    UNLOAD = "unload"
    RELEASE = "release"
    LIFT = "lift"
    TRANSFER = "transfer"
    DESCEND = "descend"
    GRASP = "grasp"
    RELOAD = "reload"
    BODY = "body"
    RESEAT = "reseat"
    DONE = "done"


_ZERO3 = np.zeros(3)
_ZERO3.flags.writeable = False
#: A descent ends when the foot's normal force, estimated from servo torques
#: (:class:`~clamber.quadruped.estimation.contact.FootForceEstimator`), has grown by this
#: much [N] since it began (chosen on tuning seeds 0-9, docs/results/quadruped_comparison.md).
CONTACT_FORCE = 1.5
#: Largest sole-hinge moment [N m] one body move on rock may wind into a welded gripper: a
#: move predicted to wind more is split into parts with re-seats between them. Set once from
#: the tuning walls' traces (grippers broke near 1 N m with their forces), not swept;
#: docs/results/rock_climbing.md. Off on the plane walls, where it missed grasps.
MOVE_MOMENT = 0.4
#: A re-seat whose grasp missed lifts its gripper this far [m] and presses again, at most
#: this many times.
RESEAT_LIFT = 0.01
RESEAT_RETRIES = 2
#: With ``reseat_centre``, an open foot further than this [m] from its hold's top, across
#: the hold's normal, is moved back over the top before it presses again (below it the
#: move is left out: the map's own scatter is millimetres).
RECENTRE_MIN = 0.005
#: A swing whose grasp missed is flown again (lift, transfer, descend) to the same hold at
#: most this many times on a gait that re-seats.
SWING_RETRIES = 1
#: A transferring gripper that the sensed foot shows this far [m] behind its reference is
#: held by rock the map did not show (a knob's steep flank the depth camera dropped); it
#: lifts again from where it is, ``STALL_RAISE`` [m] higher, along the body's normal.
STALL_ERROR = 0.03
STALL_RAISE = 0.03
#: Orders of the re-seats after a body move: the next swing's gripper first, then the
#: grippers that held through the most moves (``swing``); or the most wound sole first, by
#: its sensed hinge moment (``wound``, :attr:`ClimbGait.wound`).
RESEAT_ORDERS = ("swing", "wound")
#: What a turning body move (``body_tilt``) keeps small: the wind-up it adds, or the moment
#: the soles hold once it ends.
TILT_GOALS = ("move", "held")
#: How a swing lands its sole (:attr:`ClimbGaitSettings.landing`).
LANDINGS = ("keep", "body", "hold")
#: The most pauses one body move makes to re-seat wound soles (``wound_limit``).
MAX_PAUSES = 8
#: Phases during which the swing leg's gripper is open.
SWING_PHASES = (ClimbPhase.RELEASE, ClimbPhase.LIFT, ClimbPhase.TRANSFER, ClimbPhase.DESCEND)


@dataclass(frozen=True)
class ClimbGaitSettings:
    """Free-climbing gait settings (times [s], lengths [m], torque [N m]); the defaults give
    the paper's cycle, 0.22 m in about 90 s. A descent at ``descend_speed`` [m/s] may go
    ``overshoot`` below the known hold top; ``standoff``: body height above the hold tops.
    Descents (a swing's, and a re-seat's back onto its hold) end when the estimated normal
    foot force has grown by ``contact_force`` [N], or by the joint-4 torque rule
    (``contact_torque``) where it is 0 or no force estimate is given. None: the force rule
    at :data:`CONTACT_FORCE` when the gait re-seats, the paper's torque rule otherwise
    (pressing an open foot back onto its hold until joint 4 feels it loads the other
    grippers enough to break them). ``move_moment`` [N m]: a body move whose predicted
    sole-hinge moment on a welded gripper (:attr:`ClimbGait.move_moments`) exceeds it is made
    in up to ``max_parts`` parts, the grippers it winds most re-seated between them, on a gait
    that re-seats (None or 0: never split; rock climbs that re-seat use
    :data:`MOVE_MOMENT`). ``swing_retries``: a swing whose grasp missed is flown again to the
    same hold this many times before a plane-wall climb counts the miss (None:
    :data:`SWING_RETRIES` when the gait re-seats, 0 otherwise, the paper's gait; rock climbs
    place a missed grasp on another hold instead). ``reseat_order``: one of
    :data:`RESEAT_ORDERS` (``wound`` needs the trial's sensed wind-up, :attr:`ClimbGait.wound`;
    without it the order is ``swing``). ``wound_limit`` [N m]: a body move pauses where it is
    to re-seat a welded gripper whose sensed hinge moment passes it, then goes on (at most
    :data:`MAX_PAUSES` times a move; it needs the sensed wind-up of ``wound`` order; 0, the
    default: never; docs/results/quadruped_comparison.md measures both). ``body_tilt``
    [rad]: each body move also turns the body, by at most this much away from the wall's
    frame in all, to the attitude :attr:`ClimbGait.move_tilt` finds winds the welded soles
    least (0, the default: the body keeps the wall's attitude, the paper's gait); what
    "least" weighs is ``tilt_goal``, one of :data:`TILT_GOALS`: the wind-up the move itself
    adds (``move``), or the moment each welded sole holds at the move's end, the wind-up of
    earlier moves included (``held``: the body may turn a gripper back towards its weld,
    which helps one whose re-seat the others cannot carry).
    ``stall_raises``: how often one swing whose transfer rock holds back (:data:`STALL_ERROR`)
    lifts again, higher, from where it stalled (0, the default: never, the paper's gait;
    ``--stall-raises`` on rock walls). ``landing``: one of :data:`LANDINGS`, how a swing with
    no landing attitude of its own lands its sole: as near the wall's normal as lies within
    :data:`LANDING_CONE` of the hold's normal (``body``,
    :func:`~clamber.quadruped.model.windup.landing_normal`), along the hold's normal
    (``hold``), or at the attitude it lifted off with (``keep``, the paper's gait); None:
    ``body`` on a gait that re-seats, ``keep`` otherwise. ``reseat_centre``: a re-seat lifts
    its open foot by :data:`RESEAT_LIFT` and moves it back over its hold's top, as the robot
    sees the hold now (:attr:`ClimbGait.sight`), before pressing it on again; without it (the
    default) the foot presses on where it opened, so a sole that creeps a few millimetres
    each re-seat walks off its hold over many of them. ``reseat_landing``: a re-seat also
    turns its open sole back to the attitude it landed on that hold with (``landing``, or
    the ``body`` cone's) as it presses on again; without it (the default) the sole is
    welded again at the attitude the body moves left it in, so its tilt from the hold can
    grow re-seat by re-seat and its footpad's edge ride up the rock."""

    stride: float = 0.22
    order: tuple[str, ...] = ("LR", "LF", "RR", "RF")
    cycles: int = 1
    settle_time: float = 2.0
    unload_time: float = 2.0
    release_time: float = 3.0
    lift_time: float = 2.0
    lift_height: float = 0.05
    transfer_time: float = 4.0
    descend_speed: float = 0.02
    overshoot: float = 0.02
    contact_torque: float = 0.25
    contact_force: float | None = None
    grasp_time: float = 3.0
    reload_time: float = 2.0
    body_time: float = 3.5
    standoff: float = 0.16
    reseat_every: int | None = None
    reseat_time: float = 1.0
    move_moment: float | None = None
    max_parts: int = 4
    swing_retries: int | None = None
    reseat_order: str = "wound"
    wound_limit: float = 0.0
    body_tilt: float = 0.0
    tilt_goal: str = "move"
    landing: str | None = None
    stall_raises: int = 0
    reseat_centre: bool = False
    reseat_landing: bool = False

    @property
    def landing_cone(self) -> float | None:
        """The cone [rad] of the hold's normal a sole lands within (None: ``keep``)."""
        return {"body": LANDING_CONE, "hold": 0.0}.get(self.landing)

    def __post_init__(self) -> None:
        if sorted(self.order) != sorted(LEG_NAMES):
            raise ConfigError(f"order must list each leg once, got {self.order}")
        check.numeric_fields(self, "climb_gait", strict=True,
                             names=("stride", "settle_time", "unload_time", "release_time",
                                    "lift_time", "lift_height", "transfer_time",
                                    "descend_speed", "overshoot", "contact_torque",
                                    "grasp_time", "reload_time", "body_time", "standoff",
                                    "reseat_time"))
        check.integer("climb_gait", "cycles", self.cycles, low=1)
        if self.reseat_every is None:
            object.__setattr__(self, "reseat_every", int(self.cycles > 1))
        if self.swing_retries is None:
            object.__setattr__(self, "swing_retries",
                               SWING_RETRIES if self.reseat_every else 0)
        check.integer("climb_gait", "swing_retries", self.swing_retries, low=0,
                      high=int(check.RANGES["swing_retries"].high))
        check.number("climb_gait", "wound_limit", self.wound_limit, low=0.0,
                     high=check.RANGES["wound_limit"].high)
        check.number("climb_gait", "body_tilt", self.body_tilt, low=0.0,
                     high=check.RANGES["body_tilt"].high)
        if self.landing is None:
            object.__setattr__(self, "landing", "body" if self.reseat_every else "keep")
        if self.landing not in LANDINGS:
            raise ConfigError(f"climb_gait.landing = {self.landing!r}: must be one of "
                              f"{', '.join(LANDINGS)}")
        if self.tilt_goal not in TILT_GOALS:
            raise ConfigError(f"climb_gait.tilt_goal = {self.tilt_goal!r}: must be one of "
                              f"{', '.join(TILT_GOALS)}")
        if self.reseat_order not in RESEAT_ORDERS:
            raise ConfigError(f"climb_gait.reseat_order = {self.reseat_order!r}: must be one "
                              f"of {', '.join(RESEAT_ORDERS)}")
        check.integer("climb_gait", "reseat_every", self.reseat_every, low=0)
        if self.contact_force is None:
            object.__setattr__(self, "contact_force",
                               CONTACT_FORCE if self.reseat_every else 0.0)
        check.number("climb_gait", "contact_force", self.contact_force, low=0.0)
        if self.move_moment is None:
            object.__setattr__(self, "move_moment", 0.0)
        check.number("climb_gait", "move_moment", self.move_moment, low=0.0)
        check.integer("climb_gait", "max_parts", self.max_parts, low=1, high=16)
        check.integer("climb_gait", "stall_raises", self.stall_raises, low=0, high=5)

    @property
    def nominal_cycle_time(self) -> float:
        """Cycle time [s] when every descent takes ``lift_height / descend_speed``."""
        per_leg = (self.unload_time + self.release_time + self.lift_time + self.transfer_time
                   + self.lift_height / self.descend_speed + self.grasp_time
                   + self.reload_time + self.body_time)
        # Each gripper is re-seated 4 // reseat_every times a cycle, in four stages.
        reseats = 4 // self.reseat_every if self.reseat_every else 0
        return 4 * (per_leg + 4 * reseats * self.reseat_time)

    def stance_offsets(self, nominal: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Start footholds relative to the body centre (u, y) [m]: the k-th leg in ``order``
        starts ``(k - 1.5) stride / 4`` from its nominal spot, the body over their centre."""
        q = self.stride / 4
        return {leg: np.asarray(nominal[leg], dtype=float) + np.array([-1.5 * q + k * q, 0.0])
                for k, leg in enumerate(self.order)}


@dataclass
class ClimbEvent:
    """A gripper action the gait asks for at time ``t`` [s]: ``"release"`` or ``"grasp"``
    (of a swing, or of a re-seat on the hold the gripper holds: ``reseat``)."""

    t: float
    leg: str
    action: str
    hold: int = 0
    reseat: bool = False


@dataclass
class _Reseat:
    """A re-seat under way: the foot's pose to hold (where it opened, then where it touched),
    the hold's normal, and when the seat's descent began and the gripper closed [s]."""

    pose: pin.SE3
    normal: np.ndarray
    bottom: float
    released: bool = False
    descent: float | None = None
    free: float = 0.0
    grasped: float | None = None
    retries: int = 0
    #: A flight of the open foot under way (lift off, then over to ``pose``): from where
    #: [m, {S}] and since when [s].
    flight: tuple[np.ndarray, float] | None = None
    #: The move [m, {S}] that brings the open foot back over its hold's top
    #: (``reseat_centre``), made while the gripper stays open; None: none.
    shift: np.ndarray | None = None
    #: The attitude [{S}] the open sole turns to as it moves (``reseat_landing``); None:
    #: it keeps its own.
    turn: np.ndarray | None = None

    def at(self, u: float) -> pin.SE3:
        """The held pose, ``u`` in [0, 1] of the way along :attr:`shift` and :attr:`turn`."""
        if self.shift is None and self.turn is None:
            return self.pose
        rotation, position = self.pose.rotation, self.pose.translation
        if self.turn is not None:
            rotation = rotation @ pin.exp3(u * pin.log3(rotation.T @ self.turn))
        if self.shift is not None:
            position = position + u * self.shift
        return pin.SE3(rotation, position)


@dataclass
class _SplitMove:
    """A body move made in ``parts`` parts from ``start`` to ``end`` [m, {S}], the grippers
    re-seated after each part but the last (``legs``) and the part under way."""

    start: np.ndarray
    end: np.ndarray
    parts: int
    legs: tuple[str, ...]
    part: int = 0


@dataclass
class _SwingPlan:
    leg: str
    start: pin.SE3
    lifted: np.ndarray
    above: np.ndarray
    target: np.ndarray
    normal: np.ndarray
    free: float = 0.0
    landing: np.ndarray | None = None
    lift: float = 0.05
    rotation: np.ndarray | None = None


class ClimbGait:
    """Free-climbing reference generator driven by time and the joint-4 torques, called once
    per control cycle (:meth:`reference`): ``holds[leg][k]`` the footholds as known [m, {S}],
    ``normals`` their unit normals, ``rotation`` the body attitude; only the first ``steps``
    swings of the schedule (default all) are made, each needing one hold more."""

    def __init__(self, holds: dict[str, list[np.ndarray]], normals: dict[str, list[np.ndarray]],
                 rotation: np.ndarray, params: ClimbGaitSettings | None = None,
                 steps: int | None = None) -> None:
        self.p = params or ClimbGaitSettings()
        n = 4 * self.p.cycles if steps is None else steps
        if not 0 <= n <= 4 * self.p.cycles:
            raise ConfigError(f"steps must lie in [0, {4 * self.p.cycles}], got {steps}")
        self.schedule = [leg for _ in range(self.p.cycles) for leg in self.p.order][:n]
        for leg in LEG_NAMES:
            need = self.schedule.count(leg) + 1
            if len(holds.get(leg, ())) < need:
                raise ConfigError(f"leg {leg} needs {need} holds for its "
                                  f"{need - 1} swings")
        self.holds, self.normals, self.R = holds, normals, np.asarray(rotation, float)
        #: Sole attitudes [{S}] on landing on hold k, ``landing[leg][k]`` (None: keep).
        self.landing: dict[str, list[np.ndarray | None]] = {}
        #: Body positions [m, {S}] after swing k (default: over the footholds' centre).
        self.bodies: dict[int, np.ndarray] = {}
        #: Lift heights [m] of swing k (at least ``lift_height``).
        self.lifts: dict[int, float] = {}
        self.index = dict.fromkeys(LEG_NAMES, 0)
        self.step_no = 0
        self.phase = ClimbPhase.SETTLE
        self.t0 = 0.0
        self.body_from = self.body_target()
        self.body_to = self.body_from.copy()
        self.swing: _SwingPlan | None = None
        self.foot_hold_pose: dict[str, pin.SE3] = {}
        self.bands: list[tuple[float, float, str, str]] = []
        self._forces: Callable[[], np.ndarray] | None = None
        #: The twist of the body at rest, one read-only array for every cycle.
        self._rest = np.concatenate([self.R.T @ _ZERO3, _ZERO3])
        self._rest.flags.writeable = False
        #: Normal to lift along when a swing restarts (:meth:`swing_again`).
        self._lift_normal: np.ndarray | None = None
        #: Body moves each gripper has held through since its grasp; grippers to re-seat.
        self.moves = dict.fromkeys(LEG_NAMES, 0)
        #: Swings flown again after a missed grasp (:meth:`retry_swing`): the swing under
        #: way's and the climb's.
        self._swing_tries = 0
        self.swings_retried = 0
        #: Transfers lifted again from where rock held them (the swing's and the climb's).
        self._raises = 0
        self.swings_raised = 0
        self.reseating: list[str] = []
        self._reseat_state: _Reseat | None = None
        #: Whether the three other grippers may carry the body while ``leg`` re-seats
        #: (None: always); a gripper it refuses holds on until its next chance.
        self.may_reseat: Callable[[str], bool] | None = None
        #: Re-seats refused by :attr:`may_reseat`.
        self.reseats_skipped = 0
        #: The top [m, {S}] of ``leg``'s hold ``k`` as the robot sees it now, for
        #: ``reseat_centre`` (None: where the hold was mapped when its swing was planned).
        self.sight: Callable[[str, int], np.ndarray] | None = None
        #: Re-seats that moved their foot back over the hold's top (``reseat_centre``).
        self.reseats_centred = 0
        #: Sensed sole-hinge moment [N m] of each holding gripper (None: not sensed; the
        #: re-seats then follow ``swing`` order).
        self.wound: Callable[[], dict[str, float]] | None = None
        #: Predicted sole-hinge moments (4,) [N m] a body move by a displacement (3,) [m, {S}]
        #: winds into the welded grippers (None: moves are never split).
        self.move_moments: Callable[[np.ndarray], np.ndarray] | None = None
        self._move: _SplitMove | None = None
        #: Body moves made in more than one part.
        self.moves_split = 0
        #: Body moves paused to re-seat a gripper wound past ``wound_limit``, and this
        #: move's pauses.
        self.moves_paused = 0
        self._pauses = 0
        #: The body attitude [rad, rotation vector in {S}] a body move ends at, given the move
        #: (3,) [m, {S}] and the attitude it starts from (None: the wall's attitude kept).
        self.move_tilt: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
        #: The body reference's attitude offset from the wall's frame [rad, {S}], and the
        #: move turning it: (start, end) positions and (from, to) offsets.
        self.tilt = np.zeros(3)
        self._turn: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def retract(self) -> str:
        """Drop the last scheduled swing not yet begun and return its leg."""
        if len(self.schedule) <= self.step_no:
            raise ConfigError("no scheduled swing left to drop")
        n, leg = len(self.schedule) - 1, self.schedule.pop()
        for table in (self.holds, self.normals, self.landing):
            if len(table.get(leg, ())) > self.index[leg] + 1:
                table[leg].pop()
        self.bodies.pop(n, None)
        self.lifts.pop(n, None)
        return leg

    def swing_again(self, t: float) -> None:
        """Restart the swing from its grasp: lift along the missed hold's normal at ``t``
        [s], then go to the swing's hold as scheduled now."""
        if self.swing is None or self.phase is not ClimbPhase.GRASP:
            raise ConfigError(f"a swing starts again only from its grasp, not {self.phase}")
        self._lift_normal = self.swing.normal
        self.swing = None
        self._enter(ClimbPhase.LIFT, t)

    def retry_swing(self, t: float) -> bool:
        """After a swing's grasp missed its hold: fly the swing again to the same hold from
        ``t`` [s] (:meth:`swing_again`); False once ``swing_retries`` are used."""
        if self._swing_tries >= self.p.swing_retries:
            return False
        self.swing_again(t)
        self._swing_tries += 1
        self.swings_retried += 1
        return True

    @property
    def splitting(self) -> bool:
        """Whether a body move made in parts is under way."""
        return self._move is not None

    @property
    def swing_leg(self) -> str | None:
        return self.schedule[self.step_no] if self.step_no < len(self.schedule) else None

    @property
    def cycle(self) -> int:
        """The gait cycle under way, from 1 (the last one once the gait is done)."""
        return min(self.step_no, len(self.schedule) - 1) // len(self.p.order) + 1

    def body_target(self) -> np.ndarray:
        """Body origin over the centre of the current four footholds [m, {S}]."""
        tops = [self.holds[leg][self.index[leg]] for leg in LEG_NAMES]
        return np.mean(tops, axis=0) + self.p.standoff * self.R[:, 2]

    def _enter(self, phase: ClimbPhase, t: float) -> None:
        self.close(t)
        self.phase, self.t0 = phase, t
        leg = self.reseating[0] if phase is ClimbPhase.RESEAT else self.swing_leg
        self.bands.append((t, -1.0, phase.value, leg or ""))

    def _next(self, t: float) -> None:
        """After a body move or a re-seat: the next re-seat, the next swing or the end."""
        if self._move is not None and not self.reseating:
            mv = self._move
            self.body_to = mv.start + (mv.part + 1) / mv.parts * (mv.end - mv.start)
            self._enter(ClimbPhase.BODY, t)
            return
        phase = ClimbPhase.UNLOAD if self.swing_leg else ClimbPhase.DONE
        self._enter(ClimbPhase.RESEAT if self.reseating and self.swing_leg else phase, t)

    def letting_go(self, leg: str) -> bool:
        """Whether ``leg``'s gripper is on its way off its hold: the swing leg from its
        unload to its lift, or the gripper being re-seated before it closes again."""
        if self.phase in (ClimbPhase.UNLOAD, ClimbPhase.RELEASE):
            return leg == self.swing_leg
        if self.phase is ClimbPhase.RESEAT and self.reseating and self.reseating[0] == leg:
            rs = self._reseat_state
            return rs is None or (rs.grasped is None and rs.descent is None)
        return False

    def reseat_again(self, t: float) -> bool:
        """After a re-seat's grasp missed (spines that did not catch, a sole that slid off):
        lift the open gripper ``RESEAT_LIFT`` off where it touched, hold it there for a stage
        and press it onto the hold again, ``RESEAT_RETRIES`` times; then, as often as
        ``swing_retries`` allows, fly it like a swing back over the hold's known top and
        descend onto it (a foot that has walked off its hold over many re-seats). False
        once these are used."""
        rs, p = self._reseat_state, self.p
        if self.phase is not ClimbPhase.RESEAT or rs is None or rs.grasped is None:
            raise ConfigError(f"only a re-seat that has grasped can press again, not {self.phase}")
        if rs.retries >= RESEAT_RETRIES + p.swing_retries:
            return False
        rs.retries += 1
        rs.grasped = rs.descent = None
        self.t0 = t - p.reseat_time
        if rs.retries <= RESEAT_RETRIES:
            rs.pose = pin.SE3(rs.pose.rotation, rs.pose.translation + RESEAT_LIFT * rs.normal)
            rs.bottom = RESEAT_LIFT + p.overshoot
            if p.reseat_centre:
                rs.shift = self._recentre(self.reseating[0], rs.pose.translation, rs.normal,
                                          lift=0.0)
            return True
        leg = self.reseating[0]
        above = self._top(leg) + p.lift_height * rs.normal
        rs.flight = (rs.pose.translation.copy(), t)
        rs.pose = pin.SE3(rs.pose.rotation, above)
        rs.bottom = p.lift_height + p.overshoot
        self.swings_retried += 1
        return True

    def end_move(self) -> None:
        """Give up the rest of a split body move between its parts: the body stays where the
        last part left it and the swing the move followed counts as done (as at a move's
        end, without its re-seats)."""
        if self._move is None:
            return
        self._move = None
        self.step_no += 1
        for g in LEG_NAMES:
            self.moves[g] += 1

    def _top(self, leg: str) -> np.ndarray:
        """The top [m, {S}] of the hold ``leg`` holds: as sighted now with
        ``reseat_centre`` (:attr:`sight`), as mapped otherwise."""
        k = self.index[leg]
        if self.p.reseat_centre and self.sight is not None:
            return np.asarray(self.sight(leg, k), dtype=float)
        return np.asarray(self.holds[leg][k], dtype=float)

    def _landed(self, leg: str, k: int, rotation: np.ndarray, normal: np.ndarray
                ) -> np.ndarray | None:
        """The attitude [{S}] ``leg``'s sole landed on its hold ``k`` with: the swing's
        landing attitude, else the ``body`` cone's turn of ``rotation``; None where neither
        is known (``keep`` landings without attitudes of their own)."""
        landing = self.landing.get(leg, [])
        if k < len(landing) and landing[k] is not None:
            return np.asarray(landing[k], dtype=float)
        if self.p.landing_cone is None:
            return None
        return _turned(rotation, landing_normal(normal, self.R[:, 2], self.p.landing_cone))

    def _recentre(self, leg: str, at: np.ndarray, normal: np.ndarray, lift: float
                  ) -> np.ndarray | None:
        """The move [m, {S}] from ``at`` back over ``leg``'s hold top, raised by ``lift``
        along ``normal``; None where the foot is within :data:`RECENTRE_MIN` of it."""
        d = at - self._top(leg)
        across = d - float(d @ normal) * normal
        if float(np.linalg.norm(across)) <= RECENTRE_MIN:
            return None
        self.reseats_centred += 1
        return lift * normal - across

    def reseat_to_swing(self, t: float) -> str:
        """After a re-seat missed for good: swing that open gripper instead, lifting it along
        its hold's normal at ``t`` [s]; the caller has made it the next scheduled swing (with
        its new hold, after :meth:`end_move` within a split move) and returns its leg."""
        rs = self._reseat_state
        if self.phase is not ClimbPhase.RESEAT or rs is None or self._move is not None:
            raise ConfigError(f"only a re-seat between body moves can become a swing, "
                              f"not {self.phase}")
        leg = self.reseating[0]
        if self.swing_leg != leg:
            raise ConfigError(f"schedule {leg}'s swing before turning its re-seat into one")
        self.reseating, self._reseat_state = [], None
        self._lift_normal, self.swing = rs.normal, None
        self._enter(ClimbPhase.LIFT, t)
        return leg

    def _reseat(self, t: float, feet: Callable[[], dict[str, pin.SE3]], tau4: np.ndarray,
                events: list[ClimbEvent]) -> tuple[float, pin.SE3]:
        """Load factor and foot target of the gripper being re-seated: unload, open (the foot
        held where it was), descend along the hold's normal until contact, close, reload;
        its release and grasp events; the next phase once it is reloaded."""
        leg, T, p = self.reseating[0], self.p.reseat_time, self.p
        rs = self._reseat_state
        if rs is None:
            pose = feet()[leg].copy()
            k = self.index[leg]
            n = np.asarray(self.normals[leg][k], dtype=float)
            # Lowest depth: the known hold top plus the descent's overshoot.
            bottom = float((pose.translation - self._top(leg)) @ n) + p.overshoot
            rs = self._reseat_state = _Reseat(pose, n, bottom)
            if p.reseat_centre:
                rs.shift = self._recentre(leg, pose.translation, n, lift=RESEAT_LIFT)
            if p.reseat_landing:
                rs.turn = self._landed(leg, k, pose.rotation, n)
        elapsed = t - self.t0
        if rs.grasped is None:
            if elapsed < T:
                return 1.0 - cubic(elapsed / T)[0], rs.pose
            if not rs.released:
                rs.released = True
                events.append(ClimbEvent(t, leg, "release", self.index[leg], reseat=True))
            if rs.flight is not None:
                start, since = rs.flight
                lifted = start + p.lift_height * rs.normal
                if t - since < p.lift_time:
                    u = cubic((t - since) / p.lift_time)[0]
                    return 0.0, pin.SE3(rs.pose.rotation, start + u * (lifted - start))
                if t - since < p.lift_time + p.transfer_time:
                    u = cubic((t - since - p.lift_time) / p.transfer_time)[0]
                    return 0.0, pin.SE3(rs.pose.rotation,
                                        lifted + u * (rs.pose.translation - lifted))
                rs.flight = None
                self.t0 = t - 2 * T
            elif elapsed < 2 * T:
                return 0.0, rs.at(cubic(elapsed / T - 1.0)[0])
            if rs.shift is not None or rs.turn is not None:  # descend from the moved pose
                rise = 0.0 if rs.shift is None else float(rs.shift @ rs.normal)
                rs.pose, rs.bottom = rs.at(1.0), rs.bottom + rise
                rs.shift = rs.turn = None
            if rs.descent is None:
                rs.descent, rs.free = t, self._contact_reading(leg, tau4, rs.normal)
            depth = (t - rs.descent) * p.descend_speed
            if depth >= rs.bottom or self._touched(leg, tau4, rs.free, rs.normal):
                events.append(ClimbEvent(t, leg, "grasp", self.index[leg], reseat=True))
                rs.grasped, rs.pose = t, feet()[leg].copy()
                return 0.0, rs.pose
            return 0.0, pin.SE3(rs.pose.rotation, rs.pose.translation - depth * rs.normal)
        closed = t - rs.grasped
        if closed < T:
            return 0.0, rs.pose
        if closed < 2 * T:
            return cubic(closed / T - 1.0)[0], rs.pose
        self.moves[self.reseating.pop(0)] = 0
        self._reseat_state = None
        self._next(t)
        return 1.0, rs.pose

    def close(self, t: float) -> None:
        """Close the last phase band at time ``t`` [s] (for logs and figures)."""
        if self.bands and self.bands[-1][1] < 0:
            start, _, name, leg = self.bands[-1]
            self.bands[-1] = (start, t, name, leg)

    def _body_ref(self, t: float, duration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, ds, dds = cubic((t - self.t0) / duration)
        d = self.body_to - self.body_from
        return self.body_from + s * d, d * ds / duration, d * dds / duration**2

    def reference(self, t: float, feet: Callable[[], dict[str, pin.SE3]],
                  tau4: np.ndarray, forces: Callable[[], np.ndarray] | None = None
                  ) -> tuple[MotionReference, list[ClimbEvent]]:
        """Reference and gripper events at ``t`` [s]. ``feet()`` gives the world foot poses
        (called at swing start and touchdown), ``tau4`` the joint-4 torques (4,) [N m] and
        ``forces()`` the estimated foot forces (4, 3) [N, world] for ``contact_force``."""
        self._forces = forces
        p, events = self.p, []
        if not self.bands:
            self._enter(ClimbPhase.SETTLE, t)
        elapsed = t - self.t0
        leg = self.swing_leg
        swing_load: float | None = None
        targets: dict[str, pin.SE3] = {}
        pos, vel, acc = self.body_to, _ZERO3, _ZERO3
        ph = self.phase
        if ph is ClimbPhase.SETTLE and elapsed >= p.settle_time:
            self._enter(ClimbPhase.UNLOAD if leg else ClimbPhase.DONE, t)
        elif ph is ClimbPhase.UNLOAD:
            swing_load = max(0.0, 1.0 - cubic(elapsed / p.unload_time)[0])
            if elapsed >= p.unload_time:
                swing_load = 0.0
                events.append(ClimbEvent(t, leg, "release"))
                self._enter(ClimbPhase.RELEASE, t)
        elif ph in SWING_PHASES or ph is ClimbPhase.GRASP:
            swing_load = 0.0
            targets[leg] = self._swing_target(t, feet, tau4, events)
        elif ph is ClimbPhase.RELOAD:
            swing_load = min(1.0, cubic(elapsed / p.reload_time)[0])
            if elapsed >= p.reload_time:
                self.body_from, self.index[leg] = self.body_to.copy(), self.index[leg] + 1
                self.moves[leg], self._swing_tries, self._raises = 0, 0, 0
                planned = self.bodies.get(self.step_no)
                self.body_to = self.body_target() if planned is None else \
                    np.asarray(planned, dtype=float).copy()
                self._plan_turn()
                self._split(self.body_to - self.body_from)
                self._pauses = 0
                self._enter(ClimbPhase.BODY, t)
        elif ph is ClimbPhase.BODY:
            duration = self._body_time()
            pos, vel, acc = self._body_ref(t, duration)
            if elapsed < duration and self._overwound() and self._pause(t, pos):
                pos, vel, acc = self.body_from, _ZERO3, _ZERO3
            elif elapsed >= duration and self._move is not None \
                    and self._move.part + 1 < self._move.parts:
                self._next_part(t)
            elif elapsed >= duration:
                self._move = None
                if self._turn is not None:
                    self.tilt, self._turn = self._turn[3].copy(), None
                self.step_no += 1
                self.body_from = self.body_to.copy()
                for g in LEG_NAMES:
                    self.moves[g] += 1
                if p.reseat_every:
                    due = [g for g in LEG_NAMES if self.moves[g] >= p.reseat_every]
                    self.reseating = self._order(self._allowed(due) if self.swing_leg
                                                 else due)
                self._next(t)
        elif ph is ClimbPhase.RESEAT:
            leg = self.reseating[0]
            swing_load, targets[leg] = self._reseat(t, feet, tau4, events)
        if self._turn is None:
            ref = MotionReference(pin.SE3(self.attitude, pos), self._twist(vel),
                                  self._twist(acc), _loads(leg, swing_load), targets)
        else:
            attitude, w, dw = self._turning(pos, vel, acc)
            ref = MotionReference(pin.SE3(attitude, pos), self._twist(vel, attitude, w),
                                  self._twist(acc, attitude, dw), _loads(leg, swing_load),
                                  targets)
        return ref, events

    @property
    def attitude(self) -> np.ndarray:
        """The body reference's attitude [3x3, {S}] outside a turning move."""
        return self.R if not self.tilt.any() else pin.exp3(self.tilt) @ self.R

    def _plan_turn(self) -> None:
        """Choose the attitude the body move from :attr:`body_from` to :attr:`body_to` ends
        at (``body_tilt``, :attr:`move_tilt`); the turn follows the body's progress along
        the whole move, so split and paused moves turn with it."""
        self._turn = None
        if not self.p.body_tilt or self.move_tilt is None or not self.swing_leg:
            return
        goal = np.asarray(self.move_tilt(self.body_to - self.body_from, self.tilt.copy()),
                          dtype=float)
        size = float(np.linalg.norm(goal))
        if size > self.p.body_tilt:
            goal = goal * (self.p.body_tilt / size)
        if np.linalg.norm(self.body_to - self.body_from) > 1e-6:
            self._turn = (self.body_from.copy(), self.body_to.copy(), self.tilt.copy(), goal)

    def _turning(self, pos: np.ndarray, vel: np.ndarray, acc: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Attitude [3x3], angular velocity and acceleration [{S}] of the turning body
        reference at body position ``pos`` moving at ``vel``, ``acc``: the offset goes from
        its start to its goal as the body goes along the move (small angles)."""
        start, end, a, b = self._turn
        d = end - start
        dd = float(d @ d)
        s = float(np.clip((pos - start) @ d / dd, 0.0, 1.0))
        tilt = a + s * (b - a)
        return pin.exp3(tilt) @ self.R, (b - a) * float(vel @ d) / dd, \
            (b - a) * float(acc @ d) / dd

    def _split(self, displacement: np.ndarray) -> None:
        """Plan the body move by ``displacement`` [m] in parts when :attr:`move_moments`
        predicts a welded gripper's hinge wound past ``move_moment``: as many parts as keep
        each under it (at most ``max_parts``), re-seating after each part the grippers wound
        more than half of it a part."""
        p = self.p
        self._move = None
        if not (p.move_moment and p.reseat_every) or self.move_moments is None \
                or not self.swing_leg:
            return
        moments = np.abs(np.asarray(self.move_moments(displacement), dtype=float))
        parts = min(p.max_parts, int(np.ceil(moments.max() / p.move_moment - 1e-9)))
        if parts <= 1:
            return
        legs = tuple(g for g, m in zip(LEG_NAMES, moments, strict=True)
                     if m / parts > p.move_moment / 2)
        self.moves_split += 1
        self._move = _SplitMove(self.body_from.copy(), self.body_to.copy(), parts, legs)
        self.body_to = self.body_from + displacement / parts

    def _overwound(self, share: float = 1.0) -> list[str]:
        """The welded grippers whose sensed hinge moment has passed ``share`` of
        ``wound_limit`` during a body move, most wound first (none when not sensed, off, or
        once the move has paused :data:`MAX_PAUSES` times)."""
        p = self.p
        if self.wound is None or not (p.wound_limit and p.reseat_every) or not self.swing_leg \
                or self._pauses >= MAX_PAUSES:
            return []
        wound = self.wound()
        return sorted((g for g, m in wound.items() if m > share * p.wound_limit),
                      key=lambda g: -wound[g])

    def _pause(self, t: float, here: np.ndarray) -> bool:
        """Stop the body move where its reference is (``here`` [m, {S}]), re-seat the
        grippers wound past half ``wound_limit`` (most wound first), then make the rest of
        the move. Where :attr:`may_reseat` lets none of them go, the move goes on unpaused
        (the try still counts towards :data:`MAX_PAUSES`); whether it paused."""
        end = self._move.end if self._move is not None else self.body_to
        legs = self._allowed(self._overwound(0.5))
        self._pauses += 1
        if not legs:
            return False
        self.moves_paused += 1
        self.body_from, self.body_to = here.copy(), here.copy()
        self._move = _SplitMove(here.copy(), end.copy(), 1, ())
        self.reseating = legs
        self._next(t)
        return True

    def _body_time(self) -> float:
        """Duration [s] of the body move (or of one of its parts, at least half the move's)."""
        if self._move is None:
            return self.p.body_time
        return self.p.body_time * max(1.0 / self._move.parts, 0.5)

    def _next_part(self, t: float) -> None:
        """End a part of a split body move: re-seat its wound grippers (those the three
        others may carry), then move on."""
        mv = self._move
        mv.part += 1
        self.body_from = self.body_to.copy()
        self.reseating = self._allowed(list(mv.legs))
        self._next(t)

    def _order(self, due: list[str]) -> list[str]:
        """The order of the re-seats after a body move (``reseat_order``)."""
        if self.wound is not None:
            wound = self.wound()
            return sorted(due, key=lambda g: -wound.get(g, 0.0))
        # The next swing leg first: it holds through the others' re-seats otherwise, with
        # the whole body move's wind-up.
        return sorted(due, key=lambda g: (g != self.swing_leg, -self.moves[g]))

    def _allowed(self, due: list[str]) -> list[str]:
        """The grippers of ``due`` that :attr:`may_reseat` lets re-seat, the others counted."""
        if self.may_reseat is None:
            return due
        allowed = [g for g in due if self.may_reseat(g)]
        self.reseats_skipped += len(due) - len(allowed)
        return allowed

    def _twist(self, linear: np.ndarray, attitude: np.ndarray | None = None,
               angular: np.ndarray = _ZERO3) -> np.ndarray:
        """``[A^T linear, A^T angular]`` (6,) in the body frame of attitude ``A`` (default:
        the reference's, :attr:`attitude`)."""
        if linear is _ZERO3 and angular is _ZERO3:
            return self._rest
        a = self.attitude if attitude is None else attitude
        return np.concatenate([a.T @ linear, a.T @ angular])

    def _swing_target(self, t: float, feet: Callable[[], dict[str, pin.SE3]], tau4: np.ndarray,
                      events: list[ClimbEvent]) -> pin.SE3:
        p, leg = self.p, self.swing_leg
        elapsed = t - self.t0
        if self.swing is None:
            k = self.index[leg]
            start = feet()[leg].copy()
            n0 = self.normals[leg][k] if self._lift_normal is None else self._lift_normal
            self._lift_normal = None
            n1 = self.normals[leg][k + 1]
            target = self.holds[leg][k + 1]
            landing = self.landing.get(leg, [])
            land = landing[k + 1] if k + 1 < len(landing) else None
            if land is None and p.landing_cone is not None:
                land = _turned(start.rotation,
                               landing_normal(n1, self.R[:, 2], p.landing_cone))
            lift = max(p.lift_height, self.lifts.get(self.step_no, 0.0))
            self.swing = _SwingPlan(leg, start, start.translation + lift * n0,
                                    target + lift * n1, target, n1, landing=land,
                                    lift=lift, rotation=start.rotation)
        sw = self.swing
        rot = sw.rotation
        if sw.landing is not None and self.phase is not ClimbPhase.LIFT:
            # Turn the sole to its landing attitude during the transfer, keep it after.
            turn = pin.log3(rot.T @ sw.landing)
            s = 1.0 if self.phase is not ClimbPhase.TRANSFER else \
                cubic(min(1.0, elapsed / p.transfer_time))[0]
            rot = rot @ pin.exp3(s * turn)
        if self.phase is ClimbPhase.RELEASE:
            if elapsed >= p.release_time:
                self._enter(ClimbPhase.LIFT, t)
            return sw.start
        if self.phase is ClimbPhase.LIFT:
            s = cubic(elapsed / p.lift_time)[0]
            if elapsed >= p.lift_time:
                self._enter(ClimbPhase.TRANSFER, t)
            return pin.SE3(rot, sw.start.translation + s * (sw.lifted - sw.start.translation))
        if self.phase is ClimbPhase.TRANSFER:
            s = cubic(elapsed / p.transfer_time)[0]
            ref = sw.lifted + s * (sw.above - sw.lifted)
            if self._raises < p.stall_raises \
                    and np.linalg.norm(feet()[leg].translation - ref) > STALL_ERROR:
                return self._raise(t, sw, pin.SE3(rot, feet()[leg].translation))
            if elapsed >= p.transfer_time:
                sw.free = self._contact_reading(leg, tau4, sw.normal)
                self._enter(ClimbPhase.DESCEND, t)
            return pin.SE3(rot, sw.lifted + s * (sw.above - sw.lifted))
        if self.phase is ClimbPhase.DESCEND:
            depth = min(elapsed * p.descend_speed, sw.lift + p.overshoot)
            bottomed = elapsed * p.descend_speed >= sw.lift + p.overshoot
            if self._touched(leg, tau4, sw.free, sw.normal) or bottomed:
                events.append(ClimbEvent(t, leg, "grasp", self.index[leg] + 1))
                self.foot_hold_pose[leg] = feet()[leg].copy()
                self._enter(ClimbPhase.GRASP, t)
            return pin.SE3(rot, sw.above - depth * sw.normal)
        # GRASP: hold the foot where it touched while the winch closes.
        if elapsed >= p.grasp_time:
            self.swing = None
            self._enter(ClimbPhase.RELOAD, t)
        return self.foot_hold_pose[leg]

    def _raise(self, t: float, sw: _SwingPlan, held: pin.SE3) -> pin.SE3:
        """Lift a transfer that rock holds back again from where the foot is (``held``, this
        cycle's reference), along the body's normal and ``STALL_RAISE`` higher, then go on
        to the same hold."""
        self._raises += 1
        self.swings_raised += 1
        self.lifts[self.step_no] = sw.lift + STALL_RAISE
        self._lift_normal, self.swing = self.R[:, 2].copy(), None
        self._enter(ClimbPhase.LIFT, t)
        return held

    def _contact_reading(self, leg: str, tau4: np.ndarray, normal: np.ndarray) -> float:
        """What contact is told by, read free of contact: the estimated foot force along
        ``normal`` [N], else the joint-4 torque [N m] (:meth:`_threshold`)."""
        if self._threshold()[0]:
            return float(self._forces()[leg_index(leg)] @ normal)
        return float(tau4[leg_index(leg)])

    def _touched(self, leg: str, tau4: np.ndarray, free: float, normal: np.ndarray) -> bool:
        """Whether the descending foot of ``leg`` touched: its reading off ``free`` by more
        than the threshold (the force pressing along ``-normal``, or the torque either way)."""
        by_force, limit = self._threshold()
        change = self._contact_reading(leg, tau4, normal) - free
        return (change if by_force else abs(change)) > limit

    def _threshold(self) -> tuple[bool, float]:
        """Whether descents end on the estimated foot force, and its threshold [N] or the
        joint-4 torque's [N m]."""
        if self._forces is not None and self.p.contact_force > 0.0:
            return True, self.p.contact_force
        return False, self.p.contact_torque

    @property
    def done(self) -> bool:
        return self.phase is ClimbPhase.DONE


def _turned(rotation: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """``rotation`` [3x3] turned the least way that takes its z axis onto unit ``normal``."""
    axis = np.cross(rotation[:, 2], normal)
    s, c = float(np.linalg.norm(axis)), float(rotation[:, 2] @ normal)
    if s < 1e-12:
        return rotation
    return pin.exp3(axis / s * np.arctan2(s, c)) @ rotation
