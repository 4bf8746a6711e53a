"""A gripper whose spines slip off its hold while the gait unloads it to let go
(``unload_slip``): on rock it may count as an early release, since the three other grippers
were checked to carry the robot without it; a slip of any other gripper still ends the
climb."""

from dataclasses import replace

from clamber.failures import FailureReason
from clamber.quadruped.gaits import ClimbGaitSettings, ClimbPhase
from clamber.quadruped.sim.grippers import GripperEvent, GripperState
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, RockClimbTrial

QUICK = ClimbGaitSettings(settle_time=0.5, unload_time=1.0, reload_time=1.0, body_time=2.0)
SETTINGS = RockClimbSettings(climb=ClimbSettings(gait=QUICK), distance=0.05)
SEED = 0


def _slip_halfway_through_the_first_unload(trial: RockClimbTrial, who: str) -> None:
    """Make one gripper come off as the failure model would, once, halfway through the first
    swing's unload: the swing leg's (``who="swing"``) or the next leg's in the gait's order
    (``who="stance"``)."""
    bank, gait = trial.sim.grippers, trial.gait
    check = bank.check

    def slipping(dt: float) -> list[str]:
        broken = check(dt)
        leg = gait.swing_leg
        if who == "stance":
            order = gait.p.order
            leg = order[(order.index(leg) + 1) % len(order)]
        if not trial.forced and gait.phase is ClimbPhase.UNLOAD and leg in bank.attached \
                and trial.gait_clock - gait.t0 > 0.5 * gait.p.unload_time:
            trial.forced = leg
            bank.events.append(GripperEvent(bank.data.time, leg, "break", "forced"))
            bank.data.eq_active[bank.eq[leg]] = 0
            bank._set_state(leg, GripperState.BROKEN, bank.hold[leg])
            broken = [*broken, leg]
        return broken

    trial.forced = None
    bank.check = slipping


def _climb(who: str, unload_slip: str) -> RockClimbTrial:
    trial = RockClimbTrial(replace(SETTINGS, unload_slip=unload_slip), SEED)
    _slip_halfway_through_the_first_unload(trial, who)
    while trial.step():
        pass
    assert trial.forced is not None
    return trial


def test_a_swing_gripper_that_slips_off_as_it_is_unloaded_is_released_early():
    """With ``unload_slip="release"`` the swing leg's gripper slipping off halfway through
    its unload opens it early: the swing goes on and the climb reaches its distance, one
    early release counted and the event recorded as a slip, not a break."""
    trial = _climb("swing", "release")
    result = trial.result()
    assert result.success, trial.reason
    assert result.early_releases == 1
    kinds = [e.kind for e in trial.sim.grippers.events if e.leg == trial.forced]
    assert "slip" in kinds and "break" not in kinds


def test_without_it_or_on_a_gripper_still_holding_the_slip_ends_the_climb():
    """The same slip with ``unload_slip="fail"`` ends the climb as a broken gripper, and so
    does a slip of a stance gripper while another leg unloads (with the default,
    ``"release"``)."""
    assert RockClimbSettings().unload_slip == "release"
    for who, unload_slip in (("swing", "fail"), ("stance", "release")):
        trial = _climb(who, unload_slip)
        result = trial.result()
        assert result.failure is FailureReason.GRIPPER_BROKE, (who, trial.reason)
        assert trial.forced in trial.reason and result.early_releases == 0
