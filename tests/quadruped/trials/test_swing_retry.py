"""A swing whose grasp misses its hold on a plane wall flies again to the same hold (after a
camera fix) and the climb goes on; without the retry the miss ends the climb."""

import pytest

from clamber.failures import FailureReason
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.sim.grippers import GripperEvent
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def _climb_with_first_swing_missed(retries: int | None) -> ClimbTrial:
    """Two-cycle Q-WBC climb (seed 3) up to 40 s, its first swing's grasp made to miss."""
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             gait=ClimbGaitSettings(cycles=2, swing_retries=retries))
    trial = ClimbTrial(settings, seed=3, time_limit=40.0)
    grippers, attach = trial.sim.grippers, trial.sim.grippers.attach
    calls = []

    def first_misses(leg, hold):
        calls.append(leg)
        if len(calls) == 1:
            grippers.events.append(GripperEvent(float(trial.sim.data.time), leg, "miss",
                                                hold.name))
            return False
        return attach(leg, hold)

    grippers.attach = first_misses
    trial.run()
    return trial


def test_a_missed_swing_is_flown_again_and_the_climb_goes_on():
    trial = _climb_with_first_swing_missed(None)
    result = trial.result()
    assert trial.settings.gait.swing_retries == 1
    assert trial.failure is FailureReason.TIME_LIMIT, trial.reason
    assert result.swing_retries == 1 and result.peak_gripper_load < 1.0
    leg = trial.gait.schedule[0]
    attached = [e for e in trial.sim.grippers.events if e.kind == "attach" and e.leg == leg]
    # The start grasp, then the retried swing's grasp on the swing's own hold.
    assert [e.detail for e in attached] == [trial.layout.holds[leg][k].name for k in (0, 1)]
    assert trial.gait.index[leg] == 1 and trial.gait.step_no >= 1


def test_without_the_retry_a_missed_swing_ends_the_climb():
    trial = _climb_with_first_swing_missed(0)
    assert trial.failure is FailureReason.GRASP_MISSED
    assert trial.result().swing_retries == 0
    assert "missed hold 1" in trial.reason


@pytest.mark.parametrize("bad", [-1, 6, 1.5, True])
def test_swing_retries_out_of_range_are_refused(bad):
    from clamber.exceptions import ConfigError

    with pytest.raises(ConfigError, match="swing_retries"):
        ClimbGaitSettings(cycles=2, swing_retries=bad)
