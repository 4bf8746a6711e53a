"""Choosing the next hold for a swing leg: the checked planner and the naive nearest rule.

Both rules see the same map and the same candidates (:mod:`.holds`), and aim at the same
nominal foothold: the leg's nominal spot relative to the body plus ``lead`` [m] up the wall
(the gait lands each foot 5/8 of a stride ahead of its nominal spot).

* :class:`NearestHoldRule` takes the candidate nearest to the nominal foothold.
* :class:`HoldPlanner` ranks the candidates within ``radius`` that advance the foot by at
  least ``min_advance`` by their distance from the nominal foothold (lateral deviation
  weighted more: it costs the other legs' reach) less a bonus for estimated capacity, and
  takes the best (the rank less a penalty on the stance's largest load gauge) of the first
  ``max_checks`` that the swing leg reaches (1; a cheap check, made on every candidate in
  rank order) and that

  1. are reachable by the swing leg from the current body pose (sole within 3 mm and
     0.2 rad of the hold's normal) and, with the other three legs, from a body pose over the
     new stance (0.25 rad: attached soles tilt on their hinges), within joint limits. The
     body is placed at its nominal standoff or moved along the normal by
     ``standoff_offsets`` (0, then 2 and 4 cm closer, then 2 cm farther: closer lowers the
     pull the top holds need against the weight's moment about them),
     over the holds' centroid or shifted up to ``body_shift`` in the wall's plane toward the
     holds the legs fall short of (:func:`~.stance.shifted_body`: a 5-DOF leg reaches
     little inward near its hip, so a foot that the body passes over falls out of reach);
     the gait then moves the body there;
  2. keep the body statically stable: the wrench QP (body balance, every hold's estimated
     limits shrunk by ``capacity_margin``, the servos' torques) is feasible over the new
     stance and over its three-leg stance during the next leg's swing, at the first body
     pose of 1 from which it is;
  3. are graspable at the expected load: the new hold's largest QP wrench lies within its
     estimated limits shrunk by ``capacity_margin`` (implied by 2, and recorded);
  4. let the footpad seat (``seat_rise``): no mapped rock under the pad, at the attitude the
     swing leg lands it with, stands more than ``seat_rise`` [m] above the sole's plane
     (:func:`~.holds.seat_rise`; None: not checked). Rock higher than that stops the
     descending pad above the hold, out of the spines' reach.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.planning.holds import HoldCandidate, HoldMap, seat_rise
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

#: Nominal footholds relative to the body centre (u, y) [m]: the climbing gait's spacing up
#: the wall, mid-cycle, 0.30 m to each side (the plane wall's 0.25 m lies at the inner edge
#: of a 5-DOF leg's reach with the sole parallel to the wall, when the body passes over the
#: foot: a hold a few cm inward of it is out of reach; 0.30 m leaves room both ways).
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
    body pose and joint angles, and the leg that swings next."""

    hold_map: HoldMap
    holds: dict[str, Foothold]
    body: pin.SE3
    q: np.ndarray
    leg: str
    next_leg: str
    standoff: float


class ChoiceStatus(enum.Enum):
    CHOSEN = "chosen"
    NO_CANDIDATE = "no candidate hold near the nominal foothold"
    NONE_FEASIBLE = "no candidate passed the reach, stability and load checks"


@dataclass(frozen=True)
class Choice:
    """A rule's answer: the hold, the stance it leads to (body pose, joint angles), the
    wrench the plan expects on the new hold [N, N m], how many candidates were checked and
    how many each check rejected (``swing reach``, ``stance reach``, ``stability``)."""

    status: ChoiceStatus
    hold: HoldCandidate | None = None
    body: pin.SE3 | None = None
    q: np.ndarray | None = None
    expected_wrench: np.ndarray = field(default_factory=lambda: np.zeros(6))
    checked: int = 0
    rejected: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PlannerSettings:
    """Search window ``radius`` and nominal ``lead`` [m], the minimum progress of a step
    ``min_advance`` [m], weights of the ranking (lateral deviation [-], tilt [m/rad],
    capacity [m]), the number of candidates checked in full, the capacity margin (share of
    the estimated limits a plan may use), the body's successive moves along the normal
    [m] tried when the legs cannot reach a stance from the nominal standoff, and how far
    [m] and in how many steps the body may shift in the wall's plane toward holds the legs
    fall short of; how high [m] mapped rock may stand under the footpad above the landing
    sole's plane (``seat_rise``, None: not checked); and whether the chosen hold's body
    pose is then moved to lower the stance's largest load (``body_search``,
    :meth:`HoldPlanner.refine_body`: steps of ``search_step`` [m], in the wall's plane at
    most ``search_reach`` [m] from the body the placement found, along the normal within
    ``standoff_offsets``)."""

    radius: float = 0.12
    lead: float = 0.1375
    min_advance: float = 0.02
    lateral_weight: float = 2.0
    capacity_weight: float = 0.05
    tilt_weight: float = 0.2
    max_checks: int = 10
    capacity_margin: float = 0.8
    standoff_offsets: tuple[float, ...] = (0.0, -0.02, -0.04, 0.02)
    body_shift: float = 0.04
    shift_steps: int = 2
    held_tilt: float = HELD_TILT_TOLERANCE
    landed_normals: bool = False
    seat_rise: float | None = None
    body_search: bool = False
    search_step: float = 0.02
    search_reach: float = 0.06

    def __post_init__(self) -> None:
        if not (self.radius > 0 and self.max_checks >= 1 and 0 < self.capacity_margin <= 1):
            raise ConfigError("radius must be > 0, max_checks >= 1 and capacity_margin in (0, 1]")


def nominal_foothold(body: pin.SE3, hold_map: HoldMap, leg: str, lead: float) -> np.ndarray:
    """The nominal landing point ``(u, y)`` [m] of ``leg`` for the current body."""
    b = hold_map.wall.to_wall(body.translation)
    return b[:2] + NOMINAL_FEET[leg] + np.array([lead, 0.0])


def search_window(body: pin.SE3, wall: RockWall, legs: tuple[str, ...],
                  settings: PlannerSettings) -> tuple[float, float]:
    """The band ``(u_lo, u_hi)`` [m] up the wall that holds every candidate either rule may
    consider for any of ``legs`` from ``body``: the nominal footholds' ``u`` within
    ``radius``, and a cell more on each side."""
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


class NearestHoldRule:
    """The naive rule: the candidate nearest to the nominal foothold; no checks. Its
    expected load is the wrench QP's over the new stance with the paper's box on every
    hold (the rule knows no capacities)."""

    name = "nearest"

    def __init__(self, rm: RobotModel, settings: PlannerSettings | None = None) -> None:
        self.rm, self.settings = rm, settings or PlannerSettings()
        self.statics = StaticsEvaluator(rm)

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


class HoldPlanner:
    """The checked planner (module docstring).

    Candidates that cannot outrank the best hold found so far are not placed (the choice is
    the same). With ``count_all`` (the default) their swing reach is still checked, so that
    ``Choice.checked`` counts every candidate the search passes, up to ``max_checks`` that
    the swing leg reaches, and ``rejected`` their swing reach failures; the stance reach and
    stability failures are those of the candidates placed. A caller that reads only the
    choice turns ``count_all`` off, and the search stops at the first such candidate.
    """

    name = "planner"
    count_all = True

    def __init__(self, rm: RobotModel, settings: PlannerSettings | None = None) -> None:
        self.rm, self.settings = rm, settings or PlannerSettings()
        self.statics = StaticsEvaluator(rm)

    def _score(self, c: HoldCandidate, target: np.ndarray, wall_normal: np.ndarray) -> float:
        """Ranking score [m]: minus the distance from the nominal foothold (lateral deviation
        weighted by ``lateral_weight``) and the hold's tilt from the wall normal (weighted by
        ``tilt_weight``: a tilted hold leaves the 5-DOF leg little room as the body moves),
        plus the capacity bonus."""
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

    def _bodies(self, ctx: StepContext, tops: dict, normals: dict, body: pin.SE3):
        """Body poses over the new stance from which every leg reaches its hold, with their
        reach: at each standoff offset, the body over the holds' centroid or shifted in the
        wall's plane toward the holds the legs fall short of (:func:`shifted_body`)."""
        s = self.settings
        n = body.rotation[:, 2]
        for dz in s.standoff_offsets:
            centre = pin.SE3(body.rotation, body.translation + dz * n)
            found = shifted_body(self.rm, centre, tops, normals, ctx.q, s.body_shift,
                                 s.shift_steps, s.held_tilt)
            if found is not None:
                yield found

    def _place(self, ctx: StepContext, tops: dict, normals: dict, body: pin.SE3,
               c: HoldCandidate) -> tuple | str:
        """The first body pose of :meth:`_bodies` over which the wrench QP balances the body
        on the new stance and on the next swing's three legs; else why none did."""
        s, rm, leg = self.settings, self.rm, ctx.leg
        factors = [c.factor if x == leg else ctx.holds[x].factor for x in LEG_NAMES]
        limits = [hold_limits(f * s.capacity_margin) for f in factors]
        why = "stance reach"
        for b, r in self._bodies(ctx, tops, normals, body):
            full = support(rm, self.statics, b, r.q, limits)
            if full.stable:
                three = support(rm, self.statics, b, r.q, limits, swing=ctx.next_leg)
                if three.stable:
                    return b, r, full, three
            why = "stability"
        return why

    def _seats(self, ctx: StepContext, c: HoldCandidate, q: np.ndarray) -> bool:
        """Whether the footpad seats on ``c`` at the attitude the swing leg's angles ``q``
        land it with (the mapped rock under it within ``seat_rise`` of the sole's plane)."""
        sole = foot_poses(self.rm, body_configuration(q))[LEG_NAMES.index(ctx.leg)]
        rotation = ctx.body.rotation @ sole.rotation
        return seat_rise(ctx.hold_map, (c.i, c.j), c.top, rotation) <= self.settings.seat_rise

    def choose(self, ctx: StepContext, exclude: set[tuple[int, int]]) -> Choice:
        s, rm, leg = self.settings, self.rm, ctx.leg
        target = nominal_foothold(ctx.body, ctx.hold_map, leg, s.lead)
        near = [c for c in ctx.hold_map.near(*target, s.radius) if (c.i, c.j) not in exclude]
        ranked = self._rank(ctx, near, target)
        if not ranked:
            return Choice(ChoiceStatus.NO_CANDIDATE)
        i = LEG_NAMES.index(leg)
        best: tuple[float, Choice] | None = None
        rejected = dict.fromkeys(("swing reach", "seat", "stance reach", "stability"), 0)
        checked = full_checks = 0
        for c in ranked:
            if full_checks == s.max_checks:
                break
            rank = self._score(c, target, ctx.body.rotation[:, 2])
            # A score is the rank less a penalty >= 0: a candidate ranked no higher than the
            # best score so far cannot beat it, nor can the candidates ranked after it.
            outranked = best is not None and rank <= best[0]
            if outranked and not self.count_all:
                break
            checked += 1
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
        """A body pose near ``body`` over the new stance that lowers the largest load gauge
        (in the holds' estimated limits shrunk by ``capacity_margin``) of the wrench QP's
        distribution over the four legs and over the three left during the next swing.

        A pattern search: from ``body`` it tries ``search_step`` [m] along the wall's up,
        left and normal axes both ways, moves to the best pose that lowers the gauge, and
        halves the step when none does (down to a quarter of it). Every pose tried keeps
        every leg on its hold (:func:`reach` within the attached soles' tilt) and the QP
        feasible on both stances, stays within ``search_reach`` [m] in the wall's plane of
        ``body`` and, along the normal, within ``standoff_offsets`` of the standoff. The
        three-leg stance during the next swing is where grippers break (at 90 deg their
        gauges sit at 0.96-0.98 while a leg swings): a higher body pulls harder on the top
        holds, a body off the support's centre loads one hold more."""
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
