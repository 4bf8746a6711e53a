"""The hold planner's fast paths choose what the plain search chooses, bit for bit: the
candidates it does not place could not have won, a body search that gives up at the first
leg that misses returns what the full search returns, and a kept leg solution is the one a
fresh solve gives."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, leg_slice
from clamber.quadruped.planning import stance
from clamber.quadruped.planning.holds import seat_rise
from clamber.quadruped.planning.rollout import PlanClimbSettings
from clamber.quadruped.planning.selection import (
    Choice,
    ChoiceStatus,
    HoldPlanner,
    StepContext,
    _stance,
    nominal_foothold,
)
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import (
    REACH_TOLERANCE,
    TILT_TOLERANCE,
    Reach,
    sole_ik,
    sole_normal,
    support,
)
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.rock.wall import generate_wall
from clamber.quadruped.trials.rock_climb import SEAT_RISE


@pytest.fixture(scope="module")
def rm():
    return RobotModel()


# ---- the plain search: every leg solved afresh, every candidate placed ---------------------
def _plain_reach(rm, body, tops, normals, q_start, legs=LEG_NAMES) -> Reach:
    q = np.array(q_start, dtype=float)
    default = rm.robot.default_joint_angles()
    errors, tilts = {}, {}
    for leg in legs:
        p = body.actInv(pin.SE3(np.eye(3), tops[leg])).translation
        n = body.rotation.T @ normals[leg]
        q1, e1, t1 = sole_ik(rm, leg, p, n, q)
        if e1 > REACH_TOLERANCE or t1 > TILT_TOLERANCE:
            sl = leg_slice(leg)
            q0 = q.copy()
            q0[sl] = default[sl]
            q2, e2, t2 = sole_ik(rm, leg, p, n, q0)
            if (e2, t2) < (e1, t1):
                q1, e1, t1 = q2, e2, t2
        q, errors[leg], tilts[leg] = q1, e1, t1
    return Reach(q, errors, tilts)


def _plain_shifted_body(rm, body, tops, normals, q_start, max_shift, steps, tilt):
    R, n = body.rotation, body.rotation[:, 2]
    p = body.translation.copy()
    for _ in range(steps + 1):
        b = pin.SE3(R, p)
        r = _plain_reach(rm, b, tops, normals, q_start)
        if r.within(tilt):
            return b, r
        feet = foot_poses(rm, body_configuration(r.q))
        short = [tops[leg] - b.act(f.translation)
                 for leg, f in zip(LEG_NAMES, feet, strict=True)
                 if r.errors[leg] > REACH_TOLERANCE]
        if not short:
            return None
        off = p + np.mean(short, axis=0) - body.translation
        off -= (off @ n) * n
        norm = float(np.linalg.norm(off))
        if norm > max_shift:
            off *= max_shift / norm
        p = body.translation + off
    return None


def _plain_choose(planner: HoldPlanner, ctx: StepContext) -> tuple[Choice, dict]:
    """The planner's choice placing every candidate that the swing leg reaches."""
    s, rm, leg = planner.settings, planner.rm, ctx.leg
    target = nominal_foothold(ctx.body, ctx.hold_map, leg, s.lead)
    ranked = planner._rank(ctx, ctx.hold_map.near(*target, s.radius), target)
    i = LEG_NAMES.index(leg)
    best, checked, full_checks = None, 0, 0
    rejected = dict.fromkeys(("swing reach", "seat", "stance reach", "stability"), 0)
    for c in ranked:
        if full_checks == s.max_checks:
            break
        checked += 1
        tops, normals, body = _stance(ctx, c)
        swing = _plain_reach(rm, ctx.body, tops, normals, ctx.q, legs=(leg,))
        if not swing.reachable:
            rejected["swing reach"] += 1
            continue
        if s.landed_normals:
            normals[leg] = sole_normal(rm, ctx.body, swing.q, leg)
        full_checks += 1
        if s.seat_rise is not None:
            sole = foot_poses(rm, body_configuration(swing.q))[i]
            if seat_rise(ctx.hold_map, (c.i, c.j), c.top,
                         ctx.body.rotation @ sole.rotation) > s.seat_rise:
                rejected["seat"] += 1
                continue
        factors = [c.factor if x == leg else ctx.holds[x].factor for x in LEG_NAMES]
        limits = [hold_limits(f * s.capacity_margin) for f in factors]
        placed, why = None, "stance reach"
        for dz in s.standoff_offsets:
            centre = pin.SE3(body.rotation, body.translation + dz * body.rotation[:, 2])
            found = _plain_shifted_body(rm, centre, tops, normals, ctx.q, s.body_shift,
                                        s.shift_steps, s.held_tilt)
            if found is None:
                continue
            b, r = found
            full = support(rm, planner.statics, b, r.q, limits)
            three = support(rm, planner.statics, b, r.q, limits, swing=ctx.next_leg)
            if full.stable and three.stable:
                placed = b, r, full, three
                break
            why = "stability"
        if placed is None:
            rejected[why] += 1
            continue
        b, r, full, three = placed
        k = int(np.argmax([full.gauges[i], three.gauges[i]]))
        w = (full, three)[k].wrenches[i].copy()
        peak = max(full.gauges.max(), three.gauges.max())
        score = planner._score(c, target, ctx.body.rotation[:, 2]) - 0.05 * peak
        if best is None or score > best[0]:
            best = (score, Choice(ChoiceStatus.CHOSEN, c, b, r.q, w))
    if best is None:
        return Choice(ChoiceStatus.NONE_FEASIBLE, checked=checked,
                      rejected=tuple(rejected.items())), rejected
    return Choice(**{**best[1].__dict__, "checked": checked}), rejected


# ---- the properties ------------------------------------------------------------------------
def test_a_leg_solution_depends_only_on_its_own_angles_and_is_kept_exactly(rm):
    """The sole IK of one leg returns the same numbers whatever the other legs' angles (the
    key the kept solutions rely on), and a kept solution equals a fresh solve after the
    store is emptied, for reachable and unreachable targets."""
    rng = np.random.default_rng(3)
    q0 = rm.robot.default_joint_angles()
    pin.framesForwardKinematics(rm.model, rm.data, body_configuration(q0))
    feet = [rm.data.oMf[f].translation.copy() for f in rm.foot_ids]
    for k in range(4):
        leg, sl = LEG_NAMES[k], leg_slice(LEG_NAMES[k])
        p = feet[k] + rng.normal(0, 0.25 if k % 2 else 0.03, 3)
        n = rng.normal(size=3) + np.array([0.0, 0.0, 3.0])
        other = q0 + rng.uniform(-0.5, 0.5, q0.size)
        other[sl] = q0[sl]
        a, b = sole_ik(rm, leg, p, n, q0, 30), sole_ik(rm, leg, p, n, other, 30)
        assert np.array_equal(a[0][sl], b[0][sl]) and a[1:] == b[1:]
        kept = stance._leg_reach(rm, leg, p, n, other)
        again = stance._leg_reach(rm, leg, p, n, q0)  # the kept answer
        stance._LEG_REACH_CACHE.clear()
        fresh = stance._leg_reach(rm, leg, p, n, q0)
        for x in (kept, again):
            assert np.array_equal(x[0], fresh[0]) and x[1:] == fresh[1:]


@pytest.mark.parametrize("incline, seed", [(90.0, 0), (90.0, 1), (70.0, 2)])
def test_the_planner_chooses_what_the_plain_search_chooses(rm, incline, seed):
    """On seeded walls, for the first swings of a planned climb, the planner's choice (hold,
    body pose, joint angles, expected wrench) equals that of the plain search that places
    every candidate, counting every check or not; counting, so do its count of checked
    candidates and of swing reach rejections; the other rejections it counts are among the
    plain search's."""
    settings = PlanClimbSettings(incline_deg=incline, distance=0.5)
    planner = SequencePlanner(generate_wall(incline, seed, settings.wall), settings, seed, rm,
                              seat_rise=SEAT_RISE)
    assert planner.start, "no start stance on this wall"
    rule = planner.rule
    fast_choose = rule.choose
    compared = []

    def both(ctx, exclude):
        plain, rejected = _plain_choose(rule, ctx)
        for count_all in (True, False):
            stance._LEG_REACH_CACHE.clear()
            rule.count_all = count_all
            fast = fast_choose(ctx, exclude)
            assert fast.status is plain.status
            fast_rejected = dict(fast.rejected)
            if count_all or fast.status is not ChoiceStatus.CHOSEN:
                assert fast.checked == plain.checked
                assert fast_rejected["swing reach"] == rejected["swing reach"]
            else:  # the search stopped at the first candidate that could not win
                assert fast.checked <= plain.checked
            assert all(fast_rejected[k] <= rejected[k] for k in rejected)
            if fast.status is ChoiceStatus.CHOSEN:
                assert (fast.hold.i, fast.hold.j) == (plain.hold.i, plain.hold.j)
                assert np.array_equal(fast.body.homogeneous, plain.body.homogeneous)
                assert np.array_equal(fast.q, plain.q)
                assert np.array_equal(fast.expected_wrench, plain.expected_wrench)
        compared.append(fast.status)
        return fast

    rule.choose = both
    planner.next()
    assert compared


def _steps(planner: SequencePlanner) -> list:
    planner_steps = []
    while (step := planner.next()) is not None:
        planner_steps.append(step)
    return [(st.leg, st.hold.cell, st.expected_wrench.tobytes(), st.sole_rotation.tobytes(),
             st.body.tobytes(), st.clearance) for st in planner_steps] + [planner.stop,
                                                                         planner.detail]


@pytest.mark.slow
@pytest.mark.parametrize("incline, seed", [(70.0, 0), (90.0, 0), (90.0, 1), (110.0, 1)])
def test_planned_climbs_equal_the_plain_search_swing_by_swing(rm, incline, seed):
    """A whole planned climb of 0.5 m (every swing's hold, expected wrench, landing
    attitude, body position and lift, and why planning stopped, with the rule's word)
    is the one the plain search plans, bit for bit."""
    settings = PlanClimbSettings(incline_deg=incline, distance=0.5)
    wall = generate_wall(incline, seed, settings.wall)
    plain = SequencePlanner(wall, settings, seed, rm)
    plain.rule.choose = lambda ctx, exclude: _plain_choose(plain.rule, ctx)[0]
    stance._LEG_REACH_CACHE.clear()
    assert _steps(SequencePlanner(wall, settings, seed, rm)) == _steps(plain)


def test_a_body_search_that_gives_up_early_returns_what_the_full_search_returns(rm):
    """Around a start stance with holds moved and tilted at random (some stances found
    at once, some after a shift, some not at all), the body search that stops its last
    try (after 0, 1 or 2 shifts) at the first leg that misses returns the full search's
    pose and reach, or None where it does."""
    settings = PlanClimbSettings(incline_deg=90.0, distance=0.5)
    planner = SequencePlanner(generate_wall(90.0, 0, settings.wall), settings, 0, rm)
    holds, body, q = planner.holds, planner.body, planner.q
    rng = np.random.default_rng(5)
    outcomes = set()
    for k in range(16):
        tops = {leg: h.top + rng.normal(0, 0.03, 3) for leg, h in holds.items()}
        normals = {}
        for leg, h in holds.items():
            n = h.normal + rng.normal(0, 0.15, 3)
            normals[leg] = n / np.linalg.norm(n)
        tilt, steps = (0.08, 0.25)[k % 2], k % 3  # with no step left, the first try is the last
        stance._LEG_REACH_CACHE.clear()
        fast = stance.shifted_body(rm, body, tops, normals, q, 0.04, steps, tilt)
        plain = _plain_shifted_body(rm, body, tops, normals, q, 0.04, steps, tilt)
        outcomes.add(fast is None)
        assert (fast is None) == (plain is None)
        if fast is not None:
            assert np.array_equal(fast[0].homogeneous, plain[0].homogeneous)
            assert np.array_equal(fast[1].q, plain[1].q)
            assert fast[1].errors == plain[1].errors and fast[1].tilts == plain[1].tilts
    assert outcomes == {True, False}
