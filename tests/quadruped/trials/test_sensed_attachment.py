"""The climbing robot's estimator reads only what the robot knows: which grippers hold comes
from its own grasp and release commands and the grasps it saw take, not from the simulator."""

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.trials.climb import PLACEMENT_TIME, ClimbSettings, ClimbTrial


def test_the_robots_record_of_held_grippers_follows_its_commands():
    """Through a release and a grasp the robot's record of held grippers (what its estimator
    is fed) matches the grippers that hold in the simulation, cycle by cycle: while the first
    leg swings, three legs are held."""
    trial = ClimbTrial(ClimbSettings(incline_deg=90.0, breakable=False), seed=0)
    seen = []
    while trial.step() and trial.k * trial.dt < PLACEMENT_TIME + 20.0:
        seen.append((trial.held, trial.sim.grippers.attached))
    assert all(held == attached for held, attached in seen)
    swinging = {leg for held, _ in seen for leg in LEG_NAMES if leg not in held}
    assert swinging == {trial.gait.p.order[0]}
