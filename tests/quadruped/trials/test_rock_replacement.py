"""A swing whose grasp did not take is placed again on another hold (``replacements``): the
planner takes its plan back to the stance before the swing and chooses again away from
the missed hold, the gait lifts the foot off the missed hold and swings it there."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from winch_steps import step_until_winch

from clamber.exceptions import ConfigError
from clamber.failures import FailureReason
from clamber.quadruped.control.grasping import GraspStatus
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    REPLACE_EXCLUSION,
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)

QUICK = ClimbGaitSettings(settle_time=0.5, unload_time=1.0, reload_time=1.0, body_time=2.0)
SETTINGS = RockClimbSettings(climb=ClimbSettings(gait=QUICK), distance=0.05, replacements=1)
SEED = 0


@pytest.fixture(scope="module")
def wall_truth():
    wall, truth, _ = plan_rock_climb(SETTINGS, SEED)
    return wall, truth


def _planner(wall_truth, distance: float = SETTINGS.distance) -> SequencePlanner:
    wall, truth = wall_truth
    return SequencePlanner(wall, replace(SETTINGS.plan, distance=distance), SEED,
                           truth=truth, reorder=True)


class MissFirstHold:
    """The wall's truth, except that no try catches on the first hold a grasp tries."""

    def __init__(self, truth) -> None:
        self.truth, self.first = truth, None

    def catch_probability(self, cell) -> float:
        self.first = cell if self.first is None else self.first
        return 0.0 if cell == self.first else 1.0

    def __getattr__(self, name):
        return getattr(self.truth, name)


def test_retract_restores_the_stance_and_the_turn(wall_truth):
    """Taking back planned swings returns the planner's holds, body, joints and turn to
    what they were before them, and clear a stop."""
    planner = _planner(wall_truth, distance=0.5)
    before = (dict(planner.holds), planner.body, planner.q.copy(), planner.turn)
    first = planner.next()
    second = planner.next()
    assert second.leg != first.leg
    assert planner.retract() is second and planner.retract() is first
    assert planner.steps == [] and planner.turn == before[3]
    assert planner.holds == before[0]
    np.testing.assert_array_equal(planner.q, before[2])
    np.testing.assert_array_equal(planner.body.homogeneous, before[1].homogeneous)
    with pytest.raises(ConfigError):
        planner.retract()
    short = _planner(wall_truth)
    assert short.next() is not None and short.next() is None and short.stop is not None
    short.retract()
    assert short.stop is None and short.next() is not None


def test_replanning_a_leg_avoids_the_excluded_cells(wall_truth):
    """Planned again for the same leg with its hold's cells excluded, the planner chooses
    that leg (not the next in turn) and a hold outside the excluded cells."""
    planner = _planner(wall_truth, distance=0.5)
    first = planner.next()
    planner.next()
    planner.retract()
    planner.retract()
    i, j = first.hold.cell
    near = frozenset((i + a, j + b) for a in range(-2, 3) for b in range(-2, 3))
    again = planner.next(first.leg, near)
    assert again is not None and again.leg == first.leg
    assert again.hold.cell not in near
    assert np.linalg.norm(again.hold.top - first.hold.top) > 0.015


def test_missed_grasp_is_placed_again_and_the_climb_goes_on(wall_truth):
    """With one re-placement, a grasp whose tries never catch does not end the climb: the
    swing is planned again off every cell within ``REPLACE_EXCLUSION`` of the missed hold,
    the foot lifts off (it rises along the missed hold's normal), swings to the new hold,
    and the grasp there engages. Both grasps count, one engaged."""
    trial = RockClimbTrial(SETTINGS, SEED, plan=(*wall_truth, _planner(wall_truth)))
    trial.truth = MissFirstHold(trial.truth)
    leg, _, k, report = step_until_winch(trial, "grasp", limit=60.0)
    missed = trial.planner.steps[-2] if trial.planner.steps[-1].leg != leg \
        else trial.planner.steps[-1]
    assert missed.leg == leg and report.status is GraspStatus.NOT_ENGAGED
    while trial.busy_until is not None and trial.step():
        pass
    assert not trial.finished and trial.replacements == 1
    assert trial.gait.phase.value == "lift" and trial.gait.swing_leg == leg
    again = [st for st in trial.planner.steps if st.leg == leg][k - 1]
    assert again is not missed
    i, j = missed.hold.cell
    r = round(REPLACE_EXCLUSION / trial.wall.spacing)
    assert (again.hold.cell[0] - i) ** 2 + (again.hold.cell[1] - j) ** 2 > r * r
    np.testing.assert_array_equal(trial.layout.holds[leg][k].top,
                                  trial.truth.foothold(again.hold.cell,
                                                       trial.truth.factor(again.hold.cell)).top)
    foot0 = trial.sim.data.site_xpos[trial.sim.grippers.site[leg]].copy()
    for _ in range(50):
        trial.step()
    rise = trial.sim.data.site_xpos[trial.sim.grippers.site[leg]] - foot0
    assert rise @ missed.hold.normal > 0.01
    leg2, _, k2, report2 = step_until_winch(trial, "grasp", limit=120.0)
    assert (leg2, k2) == (leg, k) and report2.status is GraspStatus.HELD
    trial.step()
    while trial.busy_until is not None and trial.step():
        pass
    assert leg in trial.sim.grippers.attached
    assert trial.grasps == 2 and trial.engaged == 1
    assert "spines did not catch (chance 0.00" in trial.replaced[0]


def test_without_replacements_the_miss_ends_the_climb(wall_truth):
    """With ``replacements=0`` the same miss ends the climb as a missed grasp."""
    trial = RockClimbTrial(replace(SETTINGS, replacements=0), SEED,
                           plan=(*wall_truth, _planner(wall_truth)))
    trial.truth = MissFirstHold(trial.truth)
    while trial.step():
        pass
    r = trial.result()
    assert r.failure is FailureReason.GRASP_MISSED and r.replacements == 0
    assert "2 tries did not engage" in r.reason


@pytest.mark.parametrize("bad", [-1, 6, 1.5])
def test_replacements_are_checked(bad):
    """The number of re-placements is an integer from 0 to 5."""
    with pytest.raises(ConfigError, match="replacements"):
        RockClimbSettings(replacements=bad)


def test_maps_are_placed_where_the_estimate_puts_the_body(wall_truth):
    """With ``map_frame="body"`` a swing's hold, landing attitude and body goal are moved by
    ``T_est T_true^-1``: seen from the true body, the placed hold sits where the estimated
    body sees its target, so a foot the controller puts on the target lands on the true
    hold whatever the estimate's error. With ``"world"`` the step is left as planned."""
    from clamber.quadruped.model.robot_model import RobotState

    trial = RockClimbTrial(replace(SETTINGS, map_frame="body"), SEED,
                           plan=(*wall_truth, _planner(wall_truth, distance=0.5)))
    step = trial.planner.next()
    p, R = trial.sim.body_pose()
    turn = pin.exp3(np.array([0.01, -0.02, 0.03]))
    est_p, est_R = p + np.array([0.004, -0.03, 0.025]), turn @ R
    trial.seen = RobotState(est_p, est_R, np.zeros(20), np.zeros(6), np.zeros(20))
    placed = trial._as_placed(step)
    # The hold relative to the estimated body equals the true hold relative to the true body.
    np.testing.assert_allclose(est_R.T @ (placed.hold.top - est_p), R.T @ (step.hold.top - p),
                               atol=1e-12)
    np.testing.assert_allclose(est_R.T @ placed.hold.normal, R.T @ step.hold.normal,
                               atol=1e-12)
    np.testing.assert_allclose(est_R.T @ placed.sole_rotation, R.T @ step.sole_rotation,
                               atol=1e-12)
    np.testing.assert_allclose(est_R.T @ (placed.body - est_p), R.T @ (step.body - p),
                               atol=1e-12)
    assert placed.hold.cell == step.hold.cell and placed.leg == step.leg
    world = RockClimbTrial(replace(SETTINGS, map_frame="world"), SEED,
                           plan=(*wall_truth, _planner(wall_truth)))
    world.seen = trial.seen
    assert world._as_placed(step) is step
    with pytest.raises(ConfigError, match="map_frame"):
        RockClimbSettings(map_frame="camera")


@pytest.mark.parametrize("argv, frame, count", [([], "body", 1),
                                                (["--map-frame", "body", "--replace-missed",
                                                  "2"], "body", 2)])
def test_map_frame_and_replacement_options_reach_the_settings(argv, frame, count):
    """``--map-frame`` and ``--replace-missed N`` set the rock climb's settings (by default
    the map is placed from the estimate and a missed grasp is placed again once)."""
    from clamber.cli.main import build_parser
    from clamber.cli.quadruped import _climb_settings

    args = build_parser().parse_args(["quadruped", "climb", "--wall", "rock", *argv])
    s = _climb_settings(args, 90.0)
    assert (s.map_frame, s.replacements) == (frame, count)


def test_fixed_grasp_that_misses_is_placed_again(wall_truth):
    """With the fixed grasp phases, a grasp whose weld does not close (the sole off the
    hold) is placed again the same way, and the second hold's weld closes."""
    trial = RockClimbTrial(replace(SETTINGS, grasp="fixed"), SEED,
                           plan=(*wall_truth, _planner(wall_truth)))
    grippers, attach, calls = trial.sim.grippers, trial.sim.grippers.attach, []

    def miss_first(leg, hold):
        calls.append(leg)
        return False if len(calls) == 1 else attach(leg, hold)

    grippers.attach = miss_first
    while trial.step() and not calls:
        pass
    assert trial.replacements == 1 and trial.gait.phase.value == "lift"
    leg = calls[0]
    while trial.step() and len(calls) < 2:
        pass
    assert calls == [leg, leg] and leg in grippers.attached
    assert trial.grasps == 2 and trial.engaged == 1


def test_a_miss_with_no_other_hold_to_place_it_on_ends_the_climb_as_a_missed_grasp(
        wall_truth):
    """A missed grasp whose swing the planner cannot place again (no other hold) takes the
    swing back and ends the climb as a missed grasp, recorded, not raised (the gait has no
    swing left when the winch's last cycle ends)."""
    wall, truth = wall_truth
    trial = RockClimbTrial(SETTINGS, SEED, plan=(wall, MissFirstHold(truth),
                                                 _planner(wall_truth)))
    step_until_winch(trial, "grasp")
    planner_next = trial.planner.next
    trial.planner.next = lambda leg=None, exclude=frozenset(), move=False: (
        None if exclude else planner_next(leg, exclude, move))
    while trial.step():
        pass
    r = trial.result()
    assert r.failure is FailureReason.GRASP_MISSED and "did not engage" in r.reason
    assert trial.gait.swing_leg is None and r.replacements == 0


class MissCells:
    """The wall's truth, except that no try catches on the given cells."""

    def __init__(self, truth, cells) -> None:
        self.truth, self.cells = truth, set(cells)

    def catch_probability(self, cell) -> float:
        return 0.0 if cell in self.cells else self.truth.catch_probability(cell)

    def __getattr__(self, name):
        return getattr(self.truth, name)


@pytest.mark.parametrize("turn", [0, 2])
def test_a_reseat_that_misses_for_good_swings_the_gripper_to_another_hold(wall_truth, turn):
    """A gripper whose re-seat misses after both presses is not the end of the climb: its
    leg is planned a swing off the cells around its hold, the foot lifts off along its
    hold's normal, and when it was not that leg's turn, the leg whose turn it was swings
    after it. Without re-placements the same miss ends the climb. (Every re-seat of the
    start hold of the leg ``turn`` places after the first swing's misses.)"""
    # The box re-seat check: the re-seats this scenario misses come before any other's.
    settings = replace(SETTINGS, distance=0.5, move_moment=0.0, carry_limits="box")

    def trial_with(s):
        t = RockClimbTrial(s, SEED, plan=(*wall_truth, _planner(wall_truth, s.distance)))
        order = s.climb.gait.order
        leg = order[(order.index(t.planner.steps[0].leg) + 1 + turn) % 4]
        t.truth = MissCells(t.truth, [t.planner.start[leg].cell])
        return t, leg

    trial, leg = trial_with(settings)
    due = None
    while trial.replacements == 0:
        assert trial.step(), trial.reason
        assert trial.k * trial.dt < 200.0
        if trial.gait.phase.value == "reseat":
            due = trial.gait.swing_leg
    assert trial.reseat_retries == 2 and (due == leg) == (turn == 0)
    gait, k = trial.gait, trial.gait.index[leg]
    assert gait.phase.value == "lift" and gait.swing_leg == leg
    assert gait.schedule[gait.step_no + 1] == (due if due != leg else
                                               gait.p.order[(gait.p.order.index(leg) + 1) % 4])
    old, new = trial._planned(leg, k).cell, trial._planned(leg, k + 1).cell
    r = round(REPLACE_EXCLUSION / trial.wall.spacing)
    assert (new[0] - old[0]) ** 2 + (new[1] - old[1]) ** 2 > r * r
    normal = gait.normals[leg][k]
    while trial.busy_until is not None and trial.step():
        pass
    foot0 = trial.sim.data.site_xpos[trial.sim.grippers.site[leg]].copy()
    for _ in range(50):
        trial.step()
    assert (trial.sim.data.site_xpos[trial.sim.grippers.site[leg]] - foot0) @ normal > 0.01
    ended, _ = trial_with(replace(settings, replacements=0))
    while ended.step():
        pass
    assert ended.failure is FailureReason.GRASP_MISSED and "re-seat" in ended.reason
