"""On rock, ``reseat_landing`` (on by default) gives each re-seat the attitude its sole
landed on the hold with: the planned one for a swing's hold, the sole as placed for a start
hold."""

import numpy as np
import pinocchio as pin

from clamber.quadruped.model.kinematics import world_foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)


def test_the_gait_knows_every_held_sole_s_landing_attitude_and_turns_back_to_it():
    s = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), distance=0.3)
    trial = RockClimbTrial(s, 9, plan=plan_rock_climb(s, 9))
    gait = trial.gait
    assert gait.p.reseat_landing
    placed = world_foot_poses(trial.rm, trial.sim.true_state())
    for leg in LEG_NAMES:
        landed = gait.landing[leg][0]
        assert np.allclose(landed, placed[leg].rotation, atol=1e-12)
        # The re-seat's target is that attitude, whatever the sole has turned to since.
        turned = placed[leg].rotation @ pin.exp3(np.array([0.2, -0.1, 0.0]))
        assert np.allclose(gait._landed(leg, 0, turned, gait.normals[leg][0]), landed)
    # The first swing's hold: the planned landing attitude.
    leg = gait.schedule[0]
    step = trial.planner.steps[0]
    assert step.leg == leg
    assert np.allclose(gait._landed(leg, 1, np.eye(3), gait.normals[leg][1]),
                       gait.landing[leg][1])
