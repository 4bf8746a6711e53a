"""Planned stances keep every knee bent: a leg planned near the straight knee sits at a
singularity through which a body move's tracking error carries it onto the reversed
branch, where the next move drives the knee into its limit and breaks the gripper."""

from dataclasses import replace

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel, leg_slice
from clamber.quadruped.planning.stance import KNEE, REACH_TOLERANCE, planning_model, sole_ik
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import KNEE_BEND, RockClimbSettings, plan_rock_climb


def _stretched_sole(rm: RobotModel, leg: str, knee: float) -> tuple[np.ndarray, np.ndarray]:
    """Where ``leg``'s sole is (position, normal, in {B}) with its knee at ``knee`` [rad]
    and the other joints at the default stance."""
    q = rm.robot.default_joint_angles().copy()
    q[leg_slice(leg).start + KNEE] = knee
    sole = foot_poses(rm, body_configuration(q))[LEG_NAMES.index(leg)]
    return sole.translation.copy(), sole.rotation[:, 2].copy()


@pytest.mark.parametrize("leg", ["LR", "RF"])
def test_a_sole_that_needs_a_nearly_straight_knee_is_out_of_the_plans_reach(leg):
    robot_model, planned = RobotModel(), planning_model(KNEE_BEND)
    position, normal = _stretched_sole(robot_model, leg, 0.1)
    start = robot_model.robot.default_joint_angles()
    q, error, _ = sole_ik(robot_model, leg, position, normal, start)
    assert error < REACH_TOLERANCE and q[leg_slice(leg).start + KNEE] < KNEE_BEND
    q, error, _ = sole_ik(planned, leg, position, normal, start)
    assert q[leg_slice(leg).start + KNEE] >= KNEE_BEND - 1e-12
    assert error > REACH_TOLERANCE


def test_a_sole_with_the_knee_bent_enough_is_reached_the_same_way():
    robot_model, planned = RobotModel(), planning_model(KNEE_BEND)
    position, normal = _stretched_sole(robot_model, "LF", 0.6)
    start = robot_model.robot.default_joint_angles()
    q1, e1, t1 = sole_ik(robot_model, "LF", position, normal, start)
    q2, e2, t2 = sole_ik(planned, "LF", position, normal, start)
    assert e1 < REACH_TOLERANCE and e2 < REACH_TOLERANCE
    np.testing.assert_allclose(q2, q1, atol=1e-9)


def test_only_the_knee_limit_moves():
    robot = Marcbot()
    planned = planning_model(KNEE_BEND, robot)
    lo, hi = RobotModel(robot).q_min, RobotModel(robot).q_max
    knees = [leg_slice(leg).start + KNEE for leg in LEG_NAMES]
    assert np.all(planned.q_min[knees] == KNEE_BEND)
    others = np.setdiff1d(np.arange(lo.size), knees)
    np.testing.assert_array_equal(planned.q_min[others], lo[others])
    np.testing.assert_array_equal(planned.q_max, hi)
    np.testing.assert_array_equal(planning_model(None, robot).q_min, lo)


@pytest.mark.parametrize("bad", [1.0, -0.5, float("nan")])
def test_a_knee_bend_outside_the_knee_range_is_refused(bad):
    with pytest.raises(ConfigError, match="knee_bend"):
        RockClimbSettings(knee_bend=bad)
    if np.isfinite(bad):
        with pytest.raises(ConfigError, match="knee_bend"):
            planning_model(bad)


def test_rock_climbs_plan_with_bent_knees_by_default():
    assert RockClimbSettings().knee_bend == KNEE_BEND
    assert RockClimbSettings(knee_bend=None).knee_bend is None


def _knees(settings: RockClimbSettings, seed: int, swings: int) -> list[float]:
    """The least knee angle [rad] of each planned stance: the start, then ``swings`` swings."""
    planner = plan_rock_climb(settings, seed)[2]
    knees = [float(planner.q.reshape(4, 5)[:, KNEE].min())]
    for _ in range(swings):
        assert planner.next(move=True) is not None
        knees.append(float(planner.q.reshape(4, 5)[:, KNEE].min()))
    return knees


def test_the_overhang_stance_that_broke_a_rear_gripper_is_no_longer_planned():
    """Wall 9704 at 110 deg: the fourth swing's stance, planned up to the knee's limit, left
    the rear-left knee at 0.16 rad; in the climb that knee passed through straight to
    -0.23 rad, the next body move drove it into its -0.4 rad limit and its gripper broke
    off. Planned with the knees bent, no stance of the first five swings goes below 0.3."""
    at = RockClimbSettings(climb=ClimbSettings(incline_deg=110.0))
    limit = _knees(replace(at, knee_bend=None), 9704, 4)
    assert min(limit) < 0.2
    assert min(_knees(at, 9704, 5)) >= KNEE_BEND - 1e-9


def test_a_swing_with_no_bent_knee_hold_is_planned_up_to_the_knee_limit(plan_up_to):
    """Tuning wall 13 at 110 deg: with the knees kept bent the plan stops below 1 m (no leg
    finds a hold at swing 17); falling back to the knee's own limit for that swing alone, it
    goes on from the same stance, every earlier swing the same (planned for 2 m, to 1 m)."""
    at = RockClimbSettings(climb=ClimbSettings(incline_deg=110.0), reposition=False)
    bent, fallback = (plan_up_to(replace(at, knee_fallback=on), 13, 1.0)
                      for on in (False, True))
    assert bent.stop is not None and bent.stop.name == "NO_HOLD" and bent.climbed < 1.0
    assert bent.straight_knees == 0 and fallback.straight_knees >= 1
    assert fallback.climbed >= 1.0
    n = len(bent.steps)
    for a, b in zip(bent.steps[:n - 1], fallback.steps[:n - 1], strict=True):
        assert (a.leg, a.hold.cell) == (b.leg, b.hold.cell)
    assert fallback.start_shift == bent.start_shift
