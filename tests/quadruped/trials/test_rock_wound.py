"""On rock the sensed sole wind-up is read as the share of the hold's capacity it takes, and
a body move can pause to re-seat a gripper whose share passes ``wound_share``."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)

#: Wall 9 at 90 deg: in the second body move the left rear sole winds to about its hold's
#: whole capacity when nothing pauses the move.
SEED = 9


def _second_move(share: float) -> tuple[RockClimbTrial, dict[str, float]]:
    """Climb until the second body move has ended; the largest share of each gripper's
    hold capacity its wind-up took during the body moves."""
    s = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), distance=0.5,
                          reseat_order="wound", wound_share=share)
    trial = RockClimbTrial(s, SEED, plan=plan_rock_climb(s, SEED))
    peak: dict[str, float] = {}
    while trial.step() and trial.gait.step_no < 2:
        if trial.gait.phase.value == "body":
            for leg, m in trial.gait.wound().items():
                peak[leg] = max(peak.get(leg, 0.0), m)
    assert trial.failure is None and trial.gait.step_no == 2
    return trial, peak


def test_the_share_is_the_scale_at_which_the_wound_wrench_meets_the_hold_capacity():
    trial, _ = _second_move(0.0)
    shares = trial._wound()
    wound = trial.wound_moments(trial.seen)
    assert set(shares) == set(wound) and shares
    for leg, share in shares.items():
        limits = trial._capacity[(leg, trial._planned(leg, trial.gait.index[leg]).cell)]
        assert share > 0.0
        # Scaled by 1/share the wound wrench lies on the boundary of the hold's polytope.
        assert limits.margins(wound[leg] / share).min() == pytest.approx(0.0, abs=1e-9)


def test_a_body_move_pauses_to_re_seat_a_sole_wound_past_its_share():
    free, free_peak = _second_move(0.0)
    paused, paused_peak = _second_move(0.6)
    assert free.gait.moves_paused == 0 and paused.gait.moves_paused >= 1
    # Without the pause the left rear sole's wind-up takes about its hold's capacity.
    assert free_peak["LR"] > 0.9
    assert paused_peak["LR"] < 0.7
    assert max(paused_peak.values()) < max(free_peak.values())


def test_a_share_without_the_sensed_order_or_out_of_range_is_refused():
    with pytest.raises(ConfigError, match="reseat_order"):
        RockClimbSettings(wound_share=0.6)
    for bad in (-0.1, 2.5, np.nan):
        with pytest.raises(ConfigError, match="wound_share"):
            RockClimbSettings(reseat_order="wound", wound_share=bad)
    with pytest.raises(ConfigError, match="reseat_order"):
        RockClimbSettings(reseat_order="largest")
