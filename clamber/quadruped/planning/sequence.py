"""A climb's holds planned ahead from noisy maps, for the dynamic simulation to execute.

As :func:`~.rollout.plan_climb`, one swing at a time from a fresh depth map, but the holds
are the map's estimates (only the start stance is on true hold tops); whether they engage
is left to the simulation. Planning stops at ``distance`` [m] or when no hold is found.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.windup import landing_normal
from clamber.quadruped.planning.depth_map import observe_wall
from clamber.quadruped.planning.holds import SEAT_MARGIN, build_hold_map
from clamber.quadruped.planning.rollout import (
    RULES,
    PlanClimbSettings,
    StopReason,
    _start,
    _Truth,
)
from clamber.quadruped.planning.selection import (
    CAPACITY_MARGIN,
    CAPACITY_WEIGHT,
    Choice,
    ChoiceStatus,
    Foothold,
    HoldPlanner,
    PlannerSettings,
    StepContext,
    search_window,
)
from clamber.quadruped.planning.stance import (
    LANDED_TILT_TOLERANCE,
    REACH_TOLERANCE,
    TILT_TOLERANCE,
    Reach,
    planning_model,
    reach,
    sole_normal,
    support,
)
from clamber.quadruped.planning.swing import swing_clearance
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits
from clamber.quadruped.rock.wall import RockWall

#: Most swings one plan may hold (a guard; 2 m takes about 40).
MAX_STEPS = 200
#: Distances [m] in the body's plane, nearest first, of the body moves tried before a swing
#: when no leg finds a hold from the planned body (:meth:`SequencePlanner.next`); eight
#: directions each.
PRE_MOVE_RINGS = (0.02, 0.04, 0.06)
#: Other holds the look-ahead tries for a swing whose first choice leads to a stop
#: (:meth:`SequencePlanner._look_ahead`).
LOOKAHEAD_HOLDS = 3
#: A re-positioning swing (``reposition``) searches this radius [m] around the rule's target
#: and may land this far [m] below the foot (a negative advance).
REPOSITION_RADIUS = 0.18
REPOSITION_ADVANCE = -0.04
#: Re-positioning swings planned in a row at most before planning stops.
REPOSITION_LIMIT = 2


@dataclass(frozen=True)
class PlannedStep:
    """One swing: the leg, the mapped hold, the expected wrench [N, N m], the sole's landing
    attitude in {S} as the leg reaches it from the pre-swing body, the body position
    [m, {S}] over the new stance, the mapped rock's rise [m] above the straight swing
    path (:func:`~.swing.swing_clearance`), and ``pre_body``: where the body moves on the
    old stance before the swing [m, {S}], in place of the previous step's ``body`` (None:
    as planned); ``reposition``: a re-positioning swing
    (:class:`SequencePlanner`'s ``reposition``)."""

    leg: str
    hold: Foothold
    expected_wrench: np.ndarray
    sole_rotation: np.ndarray | None = None
    body: np.ndarray | None = None
    clearance: float = 0.0
    pre_body: np.ndarray | None = None
    reposition: bool = False


class SequencePlanner:
    """Plans a climb's holds one swing at a time (:meth:`next`); ``start`` is empty when no
    start stance is within reach.

    ``reorder``: when the due leg finds no hold, try the others in the gait's order before
    stopping. ``landing_cone`` [rad]: land the sole as near the body's normal as lies within
    that angle of the hold's normal, if the leg still reaches the hold (None: along the
    hold's normal). ``seat_rise``, ``seat_margin`` and ``body_search``: as in
    :class:`PlannerSettings` (the start's holds are checked for their seat the same way).
    ``held_tilt`` [rad]: the largest change of an attached sole's tilt since it landed.
    ``capacity_margin``: the share of each hold's planned capacity a stance may load.
    ``capacity_weight`` [m]: the ranking's bonus per unit of a hold's capacity factor
    (:class:`PlannerSettings`). ``reseats``: the climb re-seats, after each body move,
    every gripper the other three can carry, so such a gripper's held tilt counts from the
    new stance (:meth:`_reseat_spared`); without it, from its landing. ``lookahead``: plan
    that many swings on from each choice, greedily and on maps of their own, and pass over a
    hold after which that plan stops (:meth:`_look_ahead`; 0: greedy). ``foot_gap`` [m]:
    the least distance from a planned hold to another foot's (:class:`PlannerSettings`;
    None: the gripper's width plus a margin). ``knee_bend`` [rad]: the least knee angle a
    planned stance may ask of a leg (:func:`~.stance.planning_model`; None: the robot's
    knee limit); ignored when ``rm`` is given. ``knee_fallback``: a swing that finds no
    hold with the knees bent is planned again up to the robot's knee limit before planning
    stops (counted in :attr:`straight_knees`; the look-ahead does not check it).
    ``reposition``: when no leg finds a hold ahead, not even so, each leg is asked again
    for a hold within :data:`REPOSITION_RADIUS` of its target, beside or as far as
    :data:`REPOSITION_ADVANCE` below its foot, whose stance frees one of the legs that
    cannot be lifted now (else any leg; :attr:`StepContext.free_any`) rather than the next
    in the gait's order; at most :data:`REPOSITION_LIMIT` such swings in a row, then
    planning stops (counted in :attr:`repositions`). A stance that has run out of holds
    ahead is changed instead of given up, as a climber shuffles a foot.
    """

    def __init__(self, wall: RockWall, settings: PlanClimbSettings, seed: int,
                 rm: RobotModel | None = None, model: GripperSurfaceModel | None = None,
                 truth: _Truth | None = None, reorder: bool = False,
                 landing_cone: float | None = None, seat_rise: float | None = None,
                 seat_margin: float = SEAT_MARGIN,
                 body_search: bool = False, held_tilt: float = LANDED_TILT_TOLERANCE,
                 capacity_margin: float = CAPACITY_MARGIN,
                 capacity_weight: float = CAPACITY_WEIGHT, reseats: bool = False,
                 lookahead: int = 0, foot_gap: float | None = None,
                 knee_bend: float | None = None, knee_fallback: bool = False,
                 reposition: bool = False) -> None:
        if lookahead < 0:
            raise ConfigError(f"lookahead must be >= 0 (swings planned ahead of each "
                              f"choice), got {lookahead}")
        self.wall, self.settings = wall, settings
        self.reseats, self.lookahead = reseats, lookahead
        #: Holds the look-ahead passed over, the plan stopping within it after them.
        self.passed_over = 0
        self.reorder, self.landing_cone = reorder, landing_cone
        #: Position in the gait's order of the leg whose turn it is.
        self.turn = 0
        self.rm = rm or planning_model(knee_bend)
        #: Swings planned up to the robot's knee limit after none was found with the knees
        #: bent (``knee_fallback``).
        self.straight_knees = 0
        self.model = model or GripperSurfaceModel()
        truth = truth or _Truth(wall, self.model)
        self.rng = np.random.default_rng(seed + 7_000_003)
        #: The look-ahead's own maps, so the climb's maps are those it has without it.
        self.look_rng = np.random.default_rng(seed + 7_000_019)
        self.rule = RULES[settings.rule](self.rm, PlannerSettings(
            held_tilt=held_tilt, landed_normals=True, seat_rise=seat_rise,
            seat_margin=seat_margin,
            body_search=body_search, capacity_margin=capacity_margin,
            capacity_weight=capacity_weight, foot_gap=foot_gap))
        #: The rule's search (radius, lead): the band of each map that is fitted.
        self.search = self.rule.settings
        if isinstance(self.rule, HoldPlanner):
            self.rule.count_all = False  # only the choice is read, not its tally of checks
        #: The model and rule on the robot's own knee limit (``knee_fallback``), else None.
        self._straight: tuple | None = None
        if knee_fallback and knee_bend is not None and rm is None:
            straight = planning_model(None)
            rule = RULES[settings.rule](straight, self.rule.settings)
            if isinstance(rule, HoldPlanner):
                rule.count_all = False
            self._straight = (straight, rule)
        #: The model and rule of a re-positioning swing (``reposition``), else None.
        self._shuffle: tuple | None = None
        if reposition and isinstance(self.rule, HoldPlanner):
            rule = HoldPlanner(self.rm, replace(self.rule.settings, radius=REPOSITION_RADIUS,
                                                min_advance=REPOSITION_ADVANCE))
            rule.count_all = False
            self._shuffle = (self.rm, rule)
        self.steps: list[PlannedStep] = []
        #: How far [m] (up the slope, sideways) the start was moved off the nominal one
        #: (set by whoever chose it).
        self.start_shift: tuple[float, float] = (0.0, 0.0)
        #: The stance before each step (holds, body, joints, turn), for :meth:`retract`.
        self._before: list[tuple] = []
        self.stop: StopReason | None = None
        self.detail = ""
        hold_map = self._map(None, self.rng)
        start = _start(self.rm, truth, hold_map, settings, seat_rise, seat_margin)
        if start is None:
            self.start: dict[str, Foothold] = {}
            self.stop, self.detail, self.u0 = StopReason.START, "no start stance within reach", 0.0
            return
        self.holds, self.body, self.q = start
        self.start = dict(self.holds)
        # An attached sole's tilt is measured from its landed attitude.
        self.holds = {leg: replace(h, normal=sole_normal(self.rm, self.body, self.q, leg))
                      for leg, h in self.holds.items()}
        self.u0 = float(wall.to_wall(self.body.translation)[0])

    @property
    def climbed(self) -> float:
        """The body's planned rise along the wall so far [m]."""
        if not self.start:
            return 0.0
        return float(self.wall.to_wall(self.body.translation)[0] - self.u0)

    @property
    def repositions(self) -> int:
        """Re-positioning swings in the plan (``reposition``)."""
        return sum(step.reposition for step in self.steps)

    def _in_a_row(self) -> int:
        """Re-positioning swings at the plan's end, in a row."""
        n = 0
        for step in reversed(self.steps):
            if not step.reposition:
                break
            n += 1
        return n

    def retract(self) -> PlannedStep:
        """Take back the last planned swing, restoring the stance and the gait's turn."""
        if not self.steps:
            raise ConfigError("no planned swing to take back")
        self.holds, self.body, self.q, self.turn = self._before.pop()
        self.stop, self.detail = None, ""
        return self.steps.pop()

    def next(self, leg: str | None = None, exclude: frozenset[tuple[int, int]] = frozenset(),
             move: bool = False) -> PlannedStep | None:
        """The next swing, or None once planning has stopped (``stop`` says why); ``leg``
        plans that leg only, ``exclude`` lists grid cells the rule may not choose. With
        ``move`` (the previous step's body move has not begun), when no leg finds a hold
        from the planned body, body poses on the same stance are tried
        (:meth:`_pre_move`) and the step carries the one found as ``pre_body``."""
        if self.stop is not None:
            return None
        s = self.settings
        if self.climbed >= s.distance:
            self.stop = StopReason.DISTANCE
            return None
        k = len(self.steps)
        if k >= MAX_STEPS:
            self.stop, self.detail = StopReason.NO_HOLD, f"gave up after {MAX_STEPS} swings"
            return None
        window = search_window(self.body, self.wall, s.order, self.search)
        hold_map = self._map(window, self.rng)
        turns = self._turns() if leg is None else [s.order.index(leg)]
        found, pre, moved = self._find(window, hold_map, turns, exclude, move)
        straight = False
        if isinstance(found[1], tuple) and self._straight is not None:
            with self._swapped(self._straight):
                retry = self._find(window, hold_map, turns, exclude, move)
            if not isinstance(retry[0][1], tuple):
                (found, pre, moved), straight = retry, True
                self.straight_knees += 1
        shuffled = False
        if isinstance(found[1], tuple) and self._shuffle is not None \
                and self._in_a_row() < REPOSITION_LIMIT:
            stuck = tuple(g for g in s.order if not self._liftable(g, self.body, self.q))
            with self._swapped(self._shuffle):
                wide = search_window(self.body, self.wall, s.order, self._shuffle[1].settings)
                near = self._map(wide, self.rng)
                for free in dict.fromkeys((stuck, tuple(s.order))):
                    retry = self._find(wide, near, turns, exclude, move, free)
                    if not isinstance(retry[0][1], tuple):
                        break
            if not isinstance(retry[0][1], tuple):
                (found, pre, moved), shuffled = retry, True
                hold_map = near
        turn, choice = found
        if isinstance(choice, tuple):
            leg, choice = choice
            why = ", ".join(f"{name} {n}" for name, n in choice.rejected if n)
            self.stop = StopReason.NO_HOLD
            self.detail = f"{leg} at swing {k + 1}: {choice.status.value}" + \
                (f" (rejected: {why})" if why else "") + \
                (" (no other leg had a hold either)" if self.reorder and len(turns) > 1
                 else "") + (" (nor from a moved body)" if move and self.steps else "")
            return None
        if pre is not None:  # the previous step's body move ends at the moved body
            self.steps[-1] = replace(self.steps[-1], body=pre.translation.copy())
            self.body, self.q = pre, moved[3]
        if straight:
            with self._swapped(self._straight):
                return self._commit(turn, choice, hold_map if pre is None else moved[4],
                                    pre is not None)
        step = self._commit(turn, choice, hold_map if pre is None else moved[4],
                            pre is not None)
        if shuffled:
            step = self.steps[-1] = replace(step, reposition=True)
            return step
        if self.lookahead and pre is None:
            step = self._look_ahead(step, turn, choice, hold_map, exclude)
        return step

    def _find(self, window: tuple[float, float], hold_map, turns: list[int],
              exclude: frozenset[tuple[int, int]], move: bool,
              free: tuple[str, ...] = ()) -> tuple:
        """A hold for the first leg of ``turns`` that finds one from the planned body, else
        (``move``) from a body moved on the present stance (:meth:`_pre_move`):
        ``((turn, choice), pre_body, moved)``; ``((-1, (leg, choice)), None, None)`` with
        the first leg's reason when none does. ``free``: see :meth:`_choose`."""
        found = self._choose(hold_map, self.body, self.q, turns, exclude, free)
        if isinstance(found[1], tuple) and move and self.steps:
            moved = self._pre_move(window, turns, exclude, free)
            if moved is not None:
                return moved[:2], moved[2], moved
        return found, None, None

    @contextmanager
    def _swapped(self, model_rule: tuple) -> Iterator[None]:
        """Plan with ``model_rule`` (a model and its rule) inside the block."""
        kept = self.rm, self.rule
        self.rm, self.rule = model_rule
        try:
            yield
        finally:
            self.rm, self.rule = kept

    def _look_ahead(self, step: PlannedStep, turn: int, choice: Choice, hold_map,
                    exclude: frozenset[tuple[int, int]]) -> PlannedStep:
        """``step`` (``choice`` for the leg at ``turn``) if the plan goes on from the stance
        it leads to (:meth:`_continues`); else the first of up to :data:`LOOKAHEAD_HOLDS`
        other holds for the same leg, in the rule's order, from which it does; else ``step``,
        which a body move before the next swing may still rescue. A greedy choice can lead
        into a stance from which, a few swings on, no leg finds a hold."""
        if self._continues():
            return step
        passed = set(exclude)
        for _ in range(LOOKAHEAD_HOLDS):
            passed.add(step.hold.cell)
            self.retract()
            found, other = self._choose(hold_map, self.body, self.q, [turn], passed)
            if found < 0:
                return self._commit(turn, choice, hold_map, False)
            step = self._commit(turn, other, hold_map, False)
            if self._continues():
                self.passed_over += 1
                return step
        self.retract()
        return self._commit(turn, choice, hold_map, False)

    def _continues(self) -> bool:
        """Whether, from the stance planned last, a greedy plan of ``lookahead`` more swings
        (legs the gait may take next, each on a fresh map drawn from the look-ahead's own
        noise) reaches the distance or does not stop; the tentative swings are taken back."""
        order, taken, ok = self.settings.order, 0, True
        for _ in range(self.lookahead):
            if self.climbed >= self.settings.distance:
                break
            hold_map = self._map(search_window(self.body, self.wall, order, self.search),
                                 self.look_rng)
            turn, choice = self._choose(hold_map, self.body, self.q, self._turns(),
                                        frozenset())
            if turn < 0:
                ok = False
                break
            self._commit(turn, choice, hold_map, False)
            taken += 1
        for _ in range(taken):
            self.retract()
        return ok

    def _map(self, window: tuple[float, float] | None, rng: np.random.Generator):
        """The hold map of a fresh noisy observation, drawn from ``rng``, over ``window``."""
        return build_hold_map(self.wall, observe_wall(self.wall, self.settings.noise, rng),
                              self.model, window=window)

    def _turns(self) -> list[int]:
        """Positions in the gait's order to ask for a hold, the leg whose turn it is first
        (only that one without ``reorder``)."""
        n = len(self.settings.order)
        return [(self.turn + shift) % n for shift in range(n if self.reorder else 1)]

    def _commit(self, turn: int, choice: Choice, hold_map, moved: bool) -> PlannedStep:
        """Append the swing of the leg at ``turn`` onto ``choice``'s hold and move the plan's
        stance there; ``moved``: the body was moved on the old stance before it."""
        s = self.settings
        leg = s.order[turn]
        before = (self.holds, self.body, self.q, self.turn)
        self.turn = (turn + 1) % len(s.order)
        c = choice.hold
        hold = Foothold((c.i, c.j), c.top, c.normal, c.factor)
        landing = self._landing(leg, c.top, c.normal)
        sole = foot_poses(self.rm, body_configuration(landing.q))[LEG_NAMES.index(leg)]
        rise = swing_clearance(self.wall, hold_map.z, self.holds[leg].top, c.top)
        step = PlannedStep(leg, hold, choice.expected_wrench,
                           self.body.rotation @ sole.rotation, choice.body.translation.copy(),
                           rise, self.body.translation.copy() if moved else None)
        self._before.append(before)
        self.steps.append(step)
        landed = self.body.rotation @ sole.rotation[:, 2]
        self.holds = {**self.holds, leg: replace(hold, normal=landed)}
        self.body, self.q = choice.body, choice.q
        if self.reseats:
            self._reseat_spared(leg)
        return step

    def _reseat_spared(self, leg: str) -> None:
        """Count the held tilt of each gripper but ``leg`` that the new stance can spare
        (:meth:`_liftable`) from its attitude there, as the climb re-seats it once the body
        has moved; the others keep theirs, so their hinges' budget runs on."""
        self.holds = {g: (replace(h, normal=sole_normal(self.rm, self.body, self.q, g))
                          if g != leg and self._liftable(g, self.body, self.q) else h)
                      for g, h in self.holds.items()}

    def _choose(self, hold_map, body: pin.SE3, q: np.ndarray, turns: list[int],
                exclude: frozenset[tuple[int, int]],
                free: tuple[str, ...] = ()) -> tuple[int, Choice | tuple]:
        """The first leg of ``turns`` (positions in the gait's order) that the stance can
        spare and the rule finds a hold for from ``body``: ``(turn, choice)``; else
        ``(-1, (leg, choice))`` with the first leg's reason. With ``free``, the new stance
        need only free one of those legs (but the swinging one) to swing, not the next in
        the gait's order (:attr:`StepContext.free_any`)."""
        s, first = self.settings, None
        for turn in turns:
            leg, next_leg = s.order[turn], s.order[(turn + 1) % len(s.order)]
            if not self._liftable(leg, body, q):
                first = first or (leg, Choice(ChoiceStatus.NONE_FEASIBLE,
                                              rejected=(("lift off the stance", 1),)))
                continue
            choice = self.rule.choose(StepContext(hold_map, self.holds, body, q, leg, next_leg,
                                                  s.standoff, tuple(g for g in free if g != leg)),
                                      set(exclude))
            if choice.status is ChoiceStatus.CHOSEN:
                return turn, choice
            first = first or (leg, choice)
        return -1, first

    def _pre_move(self, window: tuple[float, float], turns: list[int],
                  exclude: frozenset[tuple[int, int]],
                  free: tuple[str, ...] = ()) -> tuple | None:
        """The nearest body pose on the present stance, :data:`PRE_MOVE_RINGS` away in the
        body's plane, from which every leg keeps its hold (within the rule's held tilt), the
        wrench QP balances the four legs and a leg finds a hold: ``(turn, choice, body, q,
        map)``, else None. The map is observed once, over the window widened by the moves."""
        rs = self.rule.settings
        margin = max(PRE_MOVE_RINGS)
        hold_map = self._map((window[0] - margin, window[1] + margin), self.rng)
        tops = {g: h.top for g, h in self.holds.items()}
        normals = {g: h.normal for g, h in self.holds.items()}
        R, limits = self.body.rotation, self._limits()
        for ring in PRE_MOVE_RINGS:
            for a in np.arange(8) * math.pi / 4:
                b = pin.SE3(R, self.body.translation
                            + ring * (math.cos(a) * R[:, 0] + math.sin(a) * R[:, 1]))
                r = reach(self.rm, b, tops, normals, self.q)
                if not r.within(rs.held_tilt) or not support(
                        self.rm, self.rule.statics, b, r.q, limits).stable:
                    continue
                turn, choice = self._choose(hold_map, b, r.q, turns, exclude, free)
                if turn >= 0:
                    return turn, choice, b, r.q, hold_map
        return None

    def _limits(self) -> list:
        """Each hold's wrench limits (leg order) shrunk by the rule's capacity margin."""
        margin = self.rule.settings.capacity_margin
        return [hold_limits(np.asarray(self.holds[g].factor, dtype=float) * margin)
                for g in LEG_NAMES]

    def _liftable(self, leg: str, body: pin.SE3, q: np.ndarray) -> bool:
        """Whether the wrench QP balances the stance at ``body``, ``q`` on the three holds
        other than ``leg`` within their capacities shrunk by the rule's margin. Each step
        checks this for the leg after it in the gait's order; a leg that swings out of turn
        (another leg found no hold, or a re-placement) has had no such check."""
        return support(self.rm, self.rule.statics, body, q, self._limits(), swing=leg).stable

    def _landing(self, leg: str, top: np.ndarray, normal: np.ndarray) -> Reach:
        """The leg's reach onto the hold from the pre-swing body: toward the landing normal
        (``landing_cone``) where it still meets the tolerances, else the hold's normal."""
        if self.landing_cone is not None:
            n = landing_normal(normal, self.body.rotation[:, 2], self.landing_cone)
            r = reach(self.rm, self.body, {leg: top}, {leg: n}, self.q, legs=(leg,))
            tilt = float(np.arccos(np.clip(sole_normal(self.rm, self.body, r.q, leg) @ normal,
                                           -1.0, 1.0)))
            if r.errors[leg] <= REACH_TOLERANCE and tilt <= TILT_TOLERANCE:
                return r
        return reach(self.rm, self.body, {leg: top}, {leg: normal}, self.q, legs=(leg,))
