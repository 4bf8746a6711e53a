"""The start stance on rock: its holds are chosen where the footpad seats, as each swing's
are, and a sole the rock would hold inside itself is set down clear of it."""

import numpy as np

from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.depth_map import observe_wall
from clamber.quadruped.planning.holds import build_hold_map, seat_rise
from clamber.quadruped.planning.rollout import _start
from clamber.quadruped.planning.stance import reach
from clamber.quadruped.sim.grippers import GripperBank
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    SEAT_RISE,
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)

SETTINGS = RockClimbSettings(climb=ClimbSettings(incline_deg=70.0), distance=0.5)


def _rises(rm, start, hold_map) -> dict[str, float]:
    """Mapped rock's rise [m] under each footpad of ``start`` (holds, body, _), at the stance
    the legs reach."""
    holds, body, _ = start
    q = reach(rm, body, {leg: h.top for leg, h in holds.items()},
              {leg: h.normal for leg, h in holds.items()}, rm.robot.default_joint_angles()).q
    feet = foot_poses(rm, body_configuration(q))
    return {leg: seat_rise(hold_map, holds[leg].cell, holds[leg].top,
                           body.rotation @ feet[i].rotation) for i, leg in enumerate(LEG_NAMES)}


def test_the_start_takes_holds_the_footpad_seats_on():
    """On wall 6 at 70 deg the unchecked start puts a footpad over rock that stands more than
    the seat check allows above its sole (it broke that gripper as the robot was set down);
    with the check every start footpad seats."""
    wall, truth, planner = plan_rock_climb(SETTINGS, 6)
    rm = planner.rm
    hold_map = build_hold_map(wall, observe_wall(wall, SETTINGS.plan.noise,
                                                 np.random.default_rng(6 + 7_000_003)),
                              planner.model)
    unchecked = _start(rm, truth, hold_map, SETTINGS.plan)
    checked = _start(rm, truth, hold_map, SETTINGS.plan, SEAT_RISE)
    assert max(_rises(rm, unchecked, hold_map).values()) > SEAT_RISE
    assert max(_rises(rm, checked, hold_map).values()) <= SEAT_RISE
    assert {leg: h.cell for leg, h in planner.start.items()} == \
        {leg: h.cell for leg, h in checked[0].items()}


def test_a_start_sole_in_the_rock_is_lifted_clear(monkeypatch):
    """On wall 2 at 70 deg a start footpad would sit 2 mm inside the rock at the start
    clearance; the trial sets it down clear of the rock, within the grasp's reach, and all
    four grippers hold. Without the lift the pad is in the rock."""
    trial = RockClimbTrial(SETTINGS, 2)
    assert trial.sim.grippers.penetration() == {}
    assert set(trial.sim.grippers.attached) == set(LEG_NAMES)
    measure = GripperBank.penetration
    monkeypatch.setattr(GripperBank, "penetration", lambda self: {})
    unlifted = RockClimbTrial(SETTINGS, 2)
    deep = measure(unlifted.sim.grippers)
    assert deep and max(deep.values()) > 1e-3
    for leg in LEG_NAMES:
        hold = trial.layout.holds[leg][0]
        along = (trial.sim.data.site_xpos[trial.sim.grippers.site[leg]] - hold.top) @ hold.normal
        assert along <= trial.sim.grippers.reach


def test_the_checked_start_climbs_past_the_set_down():
    """The gripper that broke as the robot was set down on wall 6 holds through the first
    second of the climb."""
    trial = RockClimbTrial(SETTINGS, 6, time_limit=3.0)
    while trial.step():
        pass
    assert trial.failure is None or trial.k * trial.dt >= 3.0 - 1e-6, trial.reason
