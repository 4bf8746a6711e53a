"""The hold planner's choice against its contract, checked by independent means: Pinocchio's
forward kinematics for the reach, the joint limits, the body's bounds, the hold limits for
the expected wrench, and a plain enumeration of the map's candidates for the ranking."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, leg_slice
from clamber.quadruped.planning import stance
from clamber.quadruped.planning.rollout import PlanClimbSettings
from clamber.quadruped.planning.selection import NOMINAL_FEET, ChoiceStatus
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import REACH_TOLERANCE, TILT_TOLERANCE, sole_ik
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.rock.wall import generate_wall
from clamber.quadruped.trials.rock_climb import SEAT_RISE

#: Most the load gauges can lower a stable candidate's rank: the planner's penalty, 0.05
#: per unit of peak gauge, at a peak gauge of at most 1 (plus round-off).
PENALTY = 0.05 + 1e-6


@pytest.fixture(scope="module")
def rm():
    return RobotModel()


def _soles(rm: RobotModel, body: pin.SE3, q: np.ndarray) -> list[pin.SE3]:
    """World placements of the four soles by Pinocchio's forward kinematics."""
    pin.framesForwardKinematics(rm.model, rm.data, np.concatenate([[0, 0, 0, 0, 0, 0, 1], q]))
    return [body * rm.data.oMf[f] for f in rm.foot_ids]


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1, 1)))


def _eligible(ctx, exclude, settings) -> dict:
    """Every mapped candidate the rule may consider, by plain enumeration, with its rank:
    within ``radius`` of the nominal foothold, ahead by ``min_advance``, not excluded; the
    rank is minus the distance (lateral weighted) and the weighted tilt from the wall
    normal, plus the capacity bonus."""
    wall, leg, n = ctx.hold_map.wall, ctx.leg, ctx.body.rotation[:, 2]
    target = wall.to_wall(ctx.body.translation)[:2] + NOMINAL_FEET[leg] + [settings.lead, 0.0]
    foot_u = wall.to_wall(ctx.holds[leg].top)[0]
    out = {}
    for c in ctx.hold_map.candidates:
        if (np.hypot(c.u - target[0], c.y - target[1]) > settings.radius
                or c.u - foot_u < settings.min_advance or (c.i, c.j) in exclude):
            continue
        out[(c.i, c.j)] = (-(abs(c.u - target[0]) + settings.lateral_weight * abs(c.y - target[1]))
                           - settings.tilt_weight * _angle(c.normal, n)
                           + settings.capacity_weight * float(np.min(c.factor[:3])))
    return out


@pytest.mark.parametrize("incline, seed", [(90.0, 0), (110.0, 1), (70.0, 2)])
def test_the_planners_choice_meets_its_contract(rm, incline, seed):
    """On seeded walls, for the first swings of a planned climb, the chosen stance puts
    every sole within the reach tolerance of its hold top (forward kinematics), each
    attached sole within the held tilt of its hold's normal and the swing sole within the
    landing and held tilts of the new hold's; its joints lie within their limits; the body
    keeps its attitude, lies within the standoff offsets along the wall normal and within
    the body shift in the wall's plane; the expected wrench lies within the new hold's
    limits shrunk by the capacity margin. Every candidate that outranks the choice by more
    than the largest load penalty is infeasible on its own, and counting every check or
    stopping early gives the same choice. Where nothing is chosen, no candidate is eligible
    or the best-ranked one is infeasible on its own (wall 2 at 70 deg has such a swing)."""
    settings = PlanClimbSettings(incline_deg=incline, distance=0.5)
    planner = SequencePlanner(generate_wall(incline, seed, settings.wall), settings, seed, rm,
                              seat_rise=SEAT_RISE, reorder=True)
    assert planner.start, "no start stance on this wall"
    rule = planner.rule
    s = rule.settings
    choose = rule.choose
    seen = []

    def checked(ctx, exclude):
        choice = choose(ctx, exclude)
        ranks = _eligible(ctx, exclude, s)
        seen.append(choice.status)
        if choice.status is ChoiceStatus.NO_CANDIDATE:
            assert not ranks
        if choice.status is not ChoiceStatus.CHOSEN:
            if ranks:  # the best-ranked candidate fails on its own too
                best = max(ranks, key=ranks.get)
                alone = choose(ctx, set(exclude) | (set(ranks) - {best}))
                assert alone.status is not ChoiceStatus.CHOSEN
            return choice
        c, leg = choice.hold, ctx.leg
        tops = {x: (c.top if x == leg else ctx.holds[x].top) for x in LEG_NAMES}
        for x, sole in zip(LEG_NAMES, _soles(rm, choice.body, choice.q), strict=True):
            assert np.linalg.norm(sole.translation - tops[x]) <= REACH_TOLERANCE
            z = sole.rotation[:, 2]
            if x == leg:
                assert _angle(z, c.normal) <= TILT_TOLERANCE + s.held_tilt
            else:
                assert _angle(z, ctx.holds[x].normal) <= s.held_tilt
        assert np.all(choice.q >= rm.q_min - 1e-12) and np.all(choice.q <= rm.q_max + 1e-12)
        R, n = ctx.body.rotation, ctx.body.rotation[:, 2]
        assert np.allclose(choice.body.rotation, R, atol=1e-12)
        d = choice.body.translation - (np.mean(list(tops.values()), axis=0) + ctx.standoff * n)
        assert min(s.standoff_offsets) - 1e-9 <= d @ n <= max(s.standoff_offsets) + 1e-9
        assert np.linalg.norm(d - (d @ n) * n) <= s.body_shift + 1e-9
        limits = hold_limits(c.factor * s.capacity_margin)
        assert np.all(limits.H @ choice.expected_wrench <= limits.h + 1e-6)
        assert (c.i, c.j) in ranks
        for cell, rank in ranks.items():
            if rank > ranks[(c.i, c.j)] + PENALTY:
                alone = choose(ctx, set(exclude) | (set(ranks) - {cell}))
                assert alone.status is not ChoiceStatus.CHOSEN, cell
        rule.count_all = not rule.count_all
        other = choose(ctx, exclude)
        rule.count_all = not rule.count_all
        assert (other.hold.i, other.hold.j) == (c.i, c.j)
        assert np.array_equal(other.q, choice.q)
        assert np.array_equal(other.body.homogeneous, choice.body.homogeneous)
        return choice

    rule.choose = checked
    for _ in range(3):
        planner.next()
    assert seen


def test_a_kept_leg_solution_is_a_solution_of_its_own_leg(rm):
    """The sole IK of one leg returns the same numbers whatever the other legs' angles (the
    key the kept solutions rely on), and a kept solution equals a fresh solve after the
    store is emptied, for reachable and unreachable targets."""
    rng = np.random.default_rng(3)
    q0 = rm.robot.default_joint_angles()
    feet = [s.translation for s in _soles(rm, pin.SE3.Identity(), q0)]
    for k, leg in enumerate(LEG_NAMES):
        sl = leg_slice(leg)
        p = feet[k] + rng.normal(0, 0.25 if k % 2 else 0.03, 3)
        n = rng.normal(size=3) + np.array([0.0, 0.0, 3.0])
        other = q0 + rng.uniform(-0.5, 0.5, q0.size)
        other[sl] = q0[sl]
        a, b = sole_ik(rm, leg, p, n, q0, 30), sole_ik(rm, leg, p, n, other, 30)
        assert np.array_equal(a[0][sl], b[0][sl]) and a[1:] == b[1:]
        kept = stance._leg_reach(rm, leg, p, n, other)
        again = stance._leg_reach(rm, leg, p, n, q0)
        stance._LEG_REACH_CACHE.clear()
        fresh = stance._leg_reach(rm, leg, p, n, q0)
        for x in (kept, again):
            assert np.array_equal(x[0], fresh[0]) and x[1:] == fresh[1:]


def test_a_shifted_body_keeps_every_leg_on_its_hold_within_its_bounds(rm):
    """Around a start stance with holds moved and tilted at random, a body pose the shift
    search returns keeps the attitude, moves only in the wall's plane and at most
    ``max_shift`` from the centre, and puts every sole within the reach tolerance of its
    hold top and the given tilt of its normal (forward kinematics); some stances are found
    and some are not."""
    settings = PlanClimbSettings(incline_deg=90.0, distance=0.5)
    planner = SequencePlanner(generate_wall(90.0, 0, settings.wall), settings, 0, rm)
    holds, body, q = planner.holds, planner.body, planner.q
    rng = np.random.default_rng(5)
    found = []
    for k in range(16):
        tops = {leg: h.top + rng.normal(0, 0.03, 3) for leg, h in holds.items()}
        normals = {leg: h.normal + rng.normal(0, 0.15, 3) for leg, h in holds.items()}
        tilt, steps = (0.08, 0.25)[k % 2], k % 3
        out = stance.shifted_body(rm, body, tops, normals, q, 0.04, steps, tilt)
        found.append(out is not None)
        if out is None:
            continue
        b, r = out
        n = body.rotation[:, 2]
        d = b.translation - body.translation
        assert np.allclose(b.rotation, body.rotation, atol=1e-12)
        assert abs(d @ n) <= 1e-9 and np.linalg.norm(d) <= 0.04 + 1e-9
        for leg, sole in zip(LEG_NAMES, _soles(rm, b, r.q), strict=True):
            assert np.linalg.norm(sole.translation - tops[leg]) <= REACH_TOLERANCE
            assert _angle(sole.rotation[:, 2], normals[leg]) <= tilt + 1e-9
    assert any(found) and not all(found)


def _steps(planner: SequencePlanner) -> list:
    out = []
    while (st := planner.next()) is not None:
        out.append((st.leg, st.hold.cell, st.expected_wrench.tobytes(),
                    st.sole_rotation.tobytes(), st.body.tobytes(), st.clearance))
    return out + [planner.stop, planner.detail]


@pytest.mark.parametrize("incline, seed", [(70.0, 0), (110.0, 1)])
def test_a_planned_climb_is_the_same_with_or_without_kept_solutions(rm, incline, seed):
    """Planning a 0.5 m climb twice on the same wall and seed, first with the kept leg
    solutions emptied and then with those the first plan left, gives the same swings bit
    for bit (holds, expected wrenches, landing attitudes, body positions, clearances and why
    planning stopped)."""
    settings = PlanClimbSettings(incline_deg=incline, distance=0.5)
    wall = generate_wall(incline, seed, settings.wall)
    stance._LEG_REACH_CACHE.clear()
    first = _steps(SequencePlanner(wall, settings, seed, rm))
    assert _steps(SequencePlanner(wall, settings, seed, rm)) == first
