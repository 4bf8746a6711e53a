"""Choosing the next hold for a swing leg: the checked planner and the naive nearest rule.

Both aim at the leg's nominal spot plus ``lead`` [m] up the wall. :class:`NearestHoldRule`
takes the candidate nearest to it. :class:`HoldPlanner` ranks the candidates within
``radius`` that advance the foot by ``min_advance`` and keeps the best of the first
``max_checks`` that keep the swing's gripper ``foot_gap`` [m] from every other foot (the
gripper's width plus :data:`FOOT_MARGIN` by default: a rear sole landed beside a front
gripper sits on that gripper, not on rock), that the swing leg reaches, whose footpad
seats (mapped rock at most ``seat_rise`` [m] above the sole's plane under the pad and
``seat_margin`` [m] around it), and over which a body at a standoff offset,
shifted up to ``body_shift`` toward holds out of reach, has every leg on its hold and the
wrench QP (limits shrunk by ``capacity_margin``) feasible on four legs and on the next
swing's three.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.planning.holds import (
    PAD_HALF_WIDTH,
    SEAT_MARGIN,
    HoldCandidate,
    HoldMap,
    seat_rise,
)
from clamber.quadruped.planning.stance import (
    HELD_TILT_TOLERANCE,
    Support,
    body_over,
    reach,
    shifted_body,
    sole_normal,
    support,
)
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.rock.wall import RockWall

#: Nominal footholds relative to the body centre (u, y) [m], mid-cycle; 0.30 m to each side
#: keeps holds off the inner edge of a 5-DOF leg's reach.
NOMINAL_FEET = {"LF": np.array([0.17, 0.30]), "LR": np.array([-0.17, 0.30]),
                "RF": np.array([0.17, -0.30]), "RR": np.array([-0.17, -0.30])}


@dataclass(frozen=True)
class Foothold:
    """A leg's hold: grid ``cell``, ``top`` and ``normal`` in {S} [m], the capacity
    ``factor`` (6,) the planner believes."""

    cell: tuple[int, int]
    top: np.ndarray
    normal: np.ndarray
    factor: np.ndarray


@dataclass(frozen=True)
class StepContext:
    """What a rule sees when ``leg`` is about to swing: the map, the current holds, the
    body pose and joint angles, and the leg that swings next; with ``free_any``, the new
    stance need only free one of those legs to swing instead of ``next_leg``."""

    hold_map: HoldMap
    holds: dict[str, Foothold]
    body: pin.SE3
    q: np.ndarray
    leg: str
    next_leg: str
    standoff: float
    free_any: tuple[str, ...] = ()


#: Share of each hold's planned capacity a planned stance may load (the wrench QP's limits,
#: the paper's box scaled by the hold's factors, times this): the margin the dynamic climb
#: keeps for what the quasi-static plan does not see.
CAPACITY_MARGIN = 0.8
#: The ranking's bonus [m] per unit of a hold's smallest force factor: a hold whose factor
#: is larger by 0.1 ranks level with one 0.1 x this nearer the nominal foothold.
CAPACITY_WEIGHT = 0.05
#: Room [m] beyond the gripper's width between a planned hold and another foot's, for the
#: feet's tracking error as the swing descends (about 10 mm on rock) and the sole's seat.
FOOT_MARGIN = 0.02

class ChoiceStatus(enum.Enum):
    CHOSEN = "chosen"
    NO_CANDIDATE = "no candidate hold near the nominal foothold"
    NONE_FEASIBLE = "no candidate passed the reach, stability and load checks"


@dataclass(frozen=True)
class Choice:
    """A rule's answer: the hold, the stance it leads to, the wrench expected on the new
    hold [N, N m], the candidates checked and how many each check rejected."""

    status: ChoiceStatus
    hold: HoldCandidate | None = None
    body: pin.SE3 | None = None
    q: np.ndarray | None = None
    expected_wrench: np.ndarray = field(default_factory=lambda: np.zeros(6))
    checked: int = 0
    rejected: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PlannerSettings:
    """Search and ranking (lengths [m], ``tilt_weight`` [m/rad]), the checks (module
    docstring), and the optional ``body_search`` (:meth:`HoldPlanner.refine_body`)."""

    radius: float = 0.12
    lead: float = 0.1375
    min_advance: float = 0.02
    lateral_weight: float = 2.0
    capacity_weight: float = CAPACITY_WEIGHT
    tilt_weight: float = 0.2
    max_checks: int = 10
    capacity_margin: float = CAPACITY_MARGIN
    standoff_offsets: tuple[float, ...] = (0.0, -0.02, -0.04, 0.02)
    body_shift: float = 0.04
    shift_steps: int = 2
    held_tilt: float = HELD_TILT_TOLERANCE
    landed_normals: bool = False
    seat_rise: float | None = None
    seat_margin: float = SEAT_MARGIN
    body_search: bool = False
    search_step: float = 0.02
    search_reach: float = 0.06
    foot_gap: float | None = None

    def __post_init__(self) -> None:
        if not (self.radius > 0 and self.max_checks >= 1 and 0 < self.capacity_margin <= 1):
            raise ConfigError("radius must be > 0, max_checks >= 1 and capacity_margin in (0, 1]")
        if self.foot_gap is not None and not 0.0 <= self.foot_gap <= 0.3:
            raise ConfigError(f"foot_gap must be in [0, 0.3] m (0: feet may touch; None: the "
                              f"gripper's width plus {FOOT_MARGIN} m), got {self.foot_gap}")


def default_foot_gap(robot: Marcbot) -> float:
    """The least distance [m] between two feet's holds: the gripper's width plus
    :data:`FOOT_MARGIN`."""
    return float(robot.links()[-1].size[0]) + FOOT_MARGIN


def nominal_foothold(body: pin.SE3, hold_map: HoldMap, leg: str, lead: float) -> np.ndarray:
    """The nominal landing point ``(u, y)`` [m] of ``leg`` for the current body."""
    b = hold_map.wall.to_wall(body.translation)
    return b[:2] + NOMINAL_FEET[leg] + np.array([lead, 0.0])


def search_window(body: pin.SE3, wall: RockWall, legs: tuple[str, ...],
                  settings: PlannerSettings) -> tuple[float, float]:
    """The band ``(u_lo, u_hi)`` [m] up the wall of every candidate either rule may consider
    for ``legs`` from ``body``, padded by one cell."""
    u = [float(wall.to_wall(body.translation)[0]) + NOMINAL_FEET[leg][0] + settings.lead
         for leg in legs]
    pad = settings.radius + wall.spacing
    return min(u) - pad, max(u) + pad


def _stance(ctx: StepContext, c: HoldCandidate) -> tuple[dict, dict, pin.SE3]:
    tops = {leg: (c.top if leg == ctx.leg else ctx.holds[leg].top) for leg in LEG_NAMES}
    normals = {leg: (c.normal if leg == ctx.leg else ctx.holds[leg].normal)
               for leg in LEG_NAMES}
    return tops, normals, body_over(tops, ctx.body.rotation, ctx.standoff)


def _expected(full: Support, three: Support, i: int) -> np.ndarray:
    """The wrench (6,) the plan expects on leg ``i``'s new hold: the larger, by gauge, of
    its QP wrench over the four legs and over the three of the next swing."""
    k = int(np.argmax([full.gauges[i], three.gauges[i]]))
    return (full, three)[k].wrenches[i].copy()


class _Rule:
    """A hold selection rule on a robot model, with its settings and statics."""

    def __init__(self, rm: RobotModel, settings: PlannerSettings | None = None) -> None:
        self.rm, self.settings = rm, settings or PlannerSettings()
        self.statics = StaticsEvaluator(rm)
        gap = self.settings.foot_gap
        #: Least distance [m] in the wall's plane from a planned hold to another foot's.
        self.foot_gap = default_foot_gap(rm.robot) if gap is None else gap

    def _crowds(self, ctx: StepContext, c: HoldCandidate) -> bool:
        """Whether ``c`` lies within :attr:`foot_gap` of another foot's hold, in the wall's
        plane."""
        wall = ctx.hold_map.wall
        for leg, held in ctx.holds.items():
            if leg != ctx.leg:
                u, y = wall.to_wall(held.top)[:2]
                if math.hypot(c.u - u, c.y - y) < self.foot_gap:
                    return True
        return False


class NearestHoldRule(_Rule):
    """The naive rule: the nearest candidate, unchecked; its expected load is the wrench
    QP's with the paper's box on every hold."""

    name = "nearest"

    def choose(self, ctx: StepContext, exclude: set[tuple[int, int]]) -> Choice:
        s = self.settings
        u, y = nominal_foothold(ctx.body, ctx.hold_map, ctx.leg, s.lead)
        for c in ctx.hold_map.near(u, y, s.radius):
            if (c.i, c.j) in exclude:
                continue
            tops, normals, body = _stance(ctx, c)
            r = reach(self.rm, body, tops, normals, ctx.q)
            box = [WrenchLimits.paper_box()] * len(LEG_NAMES)
            sup = support(self.rm, self.statics, body, r.q, box)
            return Choice(ChoiceStatus.CHOSEN, c, body, r.q,
                          sup.wrenches[LEG_NAMES.index(ctx.leg)].copy(), 1)
        return Choice(ChoiceStatus.NO_CANDIDATE)


class HoldPlanner(_Rule):
    """The checked planner (module docstring). Candidates that cannot outrank the best are
    not placed; with ``count_all`` their swing reach is still checked (for the tally),
    without it the search stops at the first."""

    name = "planner"
    count_all = True

    def _score(self, c: HoldCandidate, target: np.ndarray, wall_normal: np.ndarray) -> float:
        """Rank [m]: minus the distance (lateral weighted) and the weighted tilt from the wall
        normal, plus the capacity bonus."""
        s = self.settings
        tilt = float(np.arccos(np.clip(c.normal @ wall_normal, -1.0, 1.0)))
        return -(abs(c.u - target[0]) + s.lateral_weight * abs(c.y - target[1])) \
            - s.tilt_weight * tilt + s.capacity_weight * float(np.min(c.factor[:3]))

    def _rank(self, ctx: StepContext, cands: list[HoldCandidate], target: np.ndarray
              ) -> list[HoldCandidate]:
        foot_u = ctx.hold_map.wall.to_wall(ctx.holds[ctx.leg].top)[0]
        ahead = [c for c in cands if c.u - foot_u >= self.settings.min_advance]
        n = ctx.body.rotation[:, 2]
        return sorted(ahead, key=lambda c: -self._score(c, target, n))

    def _place(self, ctx: StepContext, tops: dict, normals: dict, body: pin.SE3,
               c: HoldCandidate) -> tuple | str:
        """The first body pose, per standoff offset, centred or shifted
        (:func:`shifted_body`), from which every leg reaches its hold and the wrench QP
        balances the body on the new stance and the next swing's three legs; else why not."""
        s, rm, leg = self.settings, self.rm, ctx.leg
        factors = [c.factor if x == leg else ctx.holds[x].factor for x in LEG_NAMES]
        limits = [hold_limits(f * s.capacity_margin) for f in factors]
        why = "stance reach"
        for dz in s.standoff_offsets:
            centre = pin.SE3(body.rotation, body.translation + dz * body.rotation[:, 2])
            found = shifted_body(rm, centre, tops, normals, ctx.q, s.body_shift, s.shift_steps,
                                 s.held_tilt)
            if found is None:
                continue
            b, r = found
            full = support(rm, self.statics, b, r.q, limits)
            if full.stable:
                for lifted in ctx.free_any or (ctx.next_leg,):
                    three = support(rm, self.statics, b, r.q, limits, swing=lifted)
                    if three.stable:
                        return b, r, full, three
            why = "stability"
        return why

    def _seats(self, ctx: StepContext, c: HoldCandidate, q: np.ndarray) -> bool:
        """Whether the footpad seats on ``c`` at the attitude the swing leg's angles ``q``
        land it with."""
        sole = foot_poses(self.rm, body_configuration(q))[LEG_NAMES.index(ctx.leg)]
        rotation = ctx.body.rotation @ sole.rotation
        s = self.settings
        return seat_rise(ctx.hold_map, (c.i, c.j), c.top, rotation,
                         PAD_HALF_WIDTH + s.seat_margin) <= s.seat_rise

    def choose(self, ctx: StepContext, exclude: set[tuple[int, int]]) -> Choice:
        s, rm, leg = self.settings, self.rm, ctx.leg
        target = nominal_foothold(ctx.body, ctx.hold_map, leg, s.lead)
        near = [c for c in ctx.hold_map.near(*target, s.radius) if (c.i, c.j) not in exclude]
        ranked = self._rank(ctx, near, target)
        if not ranked:
            return Choice(ChoiceStatus.NO_CANDIDATE)
        i = LEG_NAMES.index(leg)
        best: tuple[float, Choice] | None = None
        rejected = dict.fromkeys(("foot gap", "swing reach", "seat", "stance reach",
                                  "stability"), 0)
        checked = full_checks = 0
        for c in ranked:
            if full_checks == s.max_checks:
                break
            rank = self._score(c, target, ctx.body.rotation[:, 2])
            # score = rank - penalty >= 0, so a rank <= the best score cannot win.
            outranked = best is not None and rank <= best[0]
            if outranked and not self.count_all:
                break
            checked += 1
            if self._crowds(ctx, c):
                rejected["foot gap"] += 1
                continue
            tops, normals, body = _stance(ctx, c)
            swing = reach(rm, ctx.body, tops, normals, ctx.q, legs=(leg,))
            if not swing.reachable:
                rejected["swing reach"] += 1
                continue
            full_checks += 1
            if outranked:
                continue
            if s.seat_rise is not None and not self._seats(ctx, c, swing.q):
                rejected["seat"] += 1
                continue
            if s.landed_normals:
                normals[leg] = sole_normal(rm, ctx.body, swing.q, leg)
            placed = self._place(ctx, tops, normals, body, c)
            if isinstance(placed, str):
                rejected[placed] += 1
                continue
            body, r, full, three = placed
            peak = max(full.gauges.max(), three.gauges.max())
            score = rank - 0.05 * peak
            if best is None or score > best[0]:
                best = (score, Choice(ChoiceStatus.CHOSEN, c, body, r.q,
                                      _expected(full, three, i)), (tops, normals, full, three))
        why = tuple(rejected.items())
        if best is None:
            return Choice(ChoiceStatus.NONE_FEASIBLE, checked=checked, rejected=why)
        choice = best[1]
        if s.body_search:
            tops, normals, full, three = best[2]
            body, q, full, three = self.refine_body(ctx, tops, normals, choice.hold,
                                                    choice.body, choice.q, full, three)
            choice = Choice(ChoiceStatus.CHOSEN, choice.hold, body, q,
                            _expected(full, three, i))
        return Choice(**{**choice.__dict__, "checked": checked, "rejected": why})

    def refine_body(self, ctx: StepContext, tops: dict, normals: dict, c: HoldCandidate,
                    body: pin.SE3, q: np.ndarray, full: Support, three: Support
                    ) -> tuple[pin.SE3, np.ndarray, Support, Support]:
        """A body pose near ``body`` lowering the largest load gauge of the wrench QP over
        the four legs and the next swing's three: a pattern search in steps of
        ``search_step`` [m] along the wall's axes, halved down to a quarter, keeping every
        leg on its hold, both QPs feasible, within ``search_reach`` [m] in the wall's plane
        and ``standoff_offsets`` along the normal."""
        s, rm = self.settings, self.rm
        factors = [c.factor if x == ctx.leg else ctx.holds[x].factor for x in LEG_NAMES]
        limits = [hold_limits(f * s.capacity_margin) for f in factors]
        R = body.rotation
        centre = body_over(tops, R, ctx.standoff)
        lo = min(s.standoff_offsets) - 1e-9
        hi = max(s.standoff_offsets) + 1e-9

        def cost(a: Support, b: Support) -> float:
            return float(max(a.gauges.max(), b.gauges.max()))

        best = (cost(full, three), body, q, full, three)
        step = s.search_step
        while step >= s.search_step / 4 - 1e-12:
            moved = False
            for axis in range(3):
                for sign in (1.0, -1.0):
                    p = best[1].translation + sign * step * R[:, axis]
                    dz = float((p - centre.translation) @ R[:, 2])
                    moved_in_plane = (R.T @ (p - body.translation))[:2]
                    if not lo <= dz <= hi \
                            or np.linalg.norm(moved_in_plane) > s.search_reach + 1e-9:
                        continue
                    b = pin.SE3(R, p)
                    r = reach(rm, b, tops, normals, best[2])
                    if not r.within(s.held_tilt):
                        continue
                    a4 = support(rm, self.statics, b, r.q, limits)
                    if not a4.stable:
                        continue
                    a3 = support(rm, self.statics, b, r.q, limits, swing=ctx.next_leg)
                    if not a3.stable:
                        continue
                    g = cost(a4, a3)
                    if g < best[0] - 1e-4:
                        best, moved = (g, b, r.q, a4, a3), True
            if not moved:
                step /= 2
        return best[1], best[2], best[3], best[4]
