"""The release lift: a released front gripper that drags up the wall stalls the shoulder
and the flight misses; turning it off the wall at the release lands the same robot."""

from pathlib import Path

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import FailureReason, jump_failure, trial_seeds
from clamber.jumper.sim.control import EventTriggeredSettings
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.sim.robustness import sample_realization
from clamber.jumper.sim.simulate import JumpTrial
from clamber.jumper.solution import TrajectorySolution

DESIGN = Path(__file__).resolve().parents[3] / "docs" / "data" / "long_climb" / "solution.npz"
#: A robot of master seed 1 at the calibrated tolerances whose front gripper drags.
DRAGGING = 132


@pytest.fixture(scope="module")
def design() -> TrajectorySolution:
    return TrajectorySolution.load(DESIGN)


def _play(design, lift: float):
    cfg = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                            event_triggered=EventTriggeredSettings(release_lift=lift))
    real = sample_realization(design, cfg, calibrated_tolerances(1.0),
                              trial_seeds(1, DRAGGING + 1)[DRAGGING])
    trial = JumpTrial(design, 1, cfg, real, record=True)
    return trial, trial.run()


def _front_gap(trial: JumpTrial, res, t0: float, t1: float) -> np.ndarray:
    """The front gripper disc's distance from the wall [m] between t0 and t1, from the
    logged state through the robot's own kinematics (MuJoCo's site would do too)."""
    from clamber.jumper.model import jumper_model

    m = jumper_model("rear_foot")
    t = res.column("t")
    keep = (t >= t0) & (t <= t1)
    q = np.column_stack([res.column(c)[keep] for c in
                         ("x5", "y5", "phi5", "hip", "spine", "shoulder")])
    return np.array([float(np.array(m.points(qq, res.parameters))[0, 0]) for qq in q]) \
        - trial.geometry.foot_radius


def test_a_dragging_front_gripper_stalls_the_shoulder_and_the_flight_misses(design):
    trial, res = _play(design, 0.0)
    pt = design.phase_times
    assert jump_failure(res.jumps[0]) is FailureReason.FRONT_MISSED
    t = res.column("t")
    k = int(np.searchsorted(t, pt[2]))
    assert res.column("shoulder")[k] - res.column("ref_shoulder")[k] > 0.3  # stalled [rad]
    assert _front_gap(trial, res, pt[1] + 0.015, pt[2] - 0.005).min() < 0.0005  # on the wall


def test_the_lift_turns_it_off_the_wall_and_the_robot_lands_ready(design):
    trial, res = _play(design, -0.2)
    pt = design.phase_times
    assert res.jumps[0].ready
    t = res.column("t")
    k = int(np.searchsorted(t, pt[2]))
    assert abs(res.column("shoulder")[k] - res.column("ref_shoulder")[k]) < 0.05
    assert _front_gap(trial, res, pt[1] + 0.015, pt[2] - 0.005).min() > 0.001


def test_the_lift_is_sent_only_from_the_front_release_into_the_flight(design):
    """The shoulder's target differs from the plan's by the lift between the releases and
    by nothing before the front release or after the ramp out."""
    trial, _ = _play(design, -0.2)
    pt, ramp = design.phase_times, trial.cfg.event_triggered.release_lift_ramp
    theta = np.zeros(3)
    for tau, lift in ((pt[1] - 0.001, 0.0), (pt[1] + ramp + 1e-3, -0.2),
                      (pt[2] - 0.001, -0.2), (pt[2] + 2 * ramp + 1e-3, 0.0)):
        np.testing.assert_allclose(trial._lifted(theta, tau), [0.0, 0.0, lift], atol=1e-12)


@pytest.mark.parametrize("kwargs", [{"release_lift": 0.6}, {"release_lift": float("nan")},
                                    {"release_lift_ramp": 0.0}, {"release_lift_ramp": 0.2}])
def test_a_lift_out_of_range_is_refused(kwargs):
    with pytest.raises(ConfigError, match="release_lift"):
        EventTriggeredSettings(**kwargs)
