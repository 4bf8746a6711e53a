"""Re-catch of a missed rear gripper: the clock's motion, the climb it saves, its limits."""

from pathlib import Path

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import calibrated_config
from clamber.jumper.sim.control import EventTriggered, EventTriggeredSettings
from clamber.jumper.sim.gripper import FootPivot, Gripper
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.solution import TrajectorySolution

PHASES = [0.0, 0.1, 0.15, 0.25, 0.35, 0.45]
DESIGN = Path(__file__).resolve().parents[3] / "docs" / "data" / "landing_design_spar"


@pytest.fixture(scope="module")
def design() -> TrajectorySolution:
    return TrajectorySolution.load(DESIGN / "solution.npz")


def _config(recovery: bool, miss_jumps=(1,)) -> SimulationSettings:
    return calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                             rear_miss_jumps=miss_jumps,
                             event_triggered=EventTriggeredSettings(recovery=recovery))


def _clock_run(settings, ticks=500, dt=0.002):
    """Reference times and commands of a clock whose front switch closes at 0.26 s and
    whose rear switch never closes."""
    clock = EventTriggered(0.45, PHASES, 1, settings)
    refs, commands = [], []
    for k in range(ticks):
        t = (k + 1) * dt
        refs.append(clock.advance(dt, (t >= 0.26, False)))
        commands += [(round(t, 3), *c) for c in clock.take_commands()]
    return np.array(refs), commands


def test_the_clock_rewinds_and_rearms_the_rear_gripper_after_the_landing_window():
    """With the rear switch open past the landing window the clock re-arms the rear gripper
    once per try, holds the catch pose on the first try and winds back into phase 4 on the
    second, then gives up with a disarm; without recovery the reference only
    moves forward and no command is issued."""
    s = EventTriggeredSettings(recovery_attempts=2, recovery_rewind=0.06, recovery_after=0.05,
                               recovery_wait=0.04, recovery_rate=0.5)
    refs, commands = _clock_run(s)
    assert [c[2] for c in commands] == ["rearm", "rearm", "disarm"]
    assert all(c[1] == 1 for c in commands)
    first, second = commands[0][0], commands[1][0]
    assert first == pytest.approx(0.35 + 0.05, abs=0.005)  # the window after the catch
    assert second - first == pytest.approx(0.04, abs=0.003)  # the first try's hold
    i, j = round(first / 0.002) - 1, round(second / 0.002) - 1  # ticks of the commands
    assert refs[i:].min() > PHASES[3]  # the front catch is not replayed
    np.testing.assert_allclose(refs[i:j], PHASES[4], atol=1e-9)  # the catch pose held
    after = refs[j:]
    assert after.min() == pytest.approx(PHASES[4] - 0.06, abs=1e-9)  # swung into phase 4
    off, none = _clock_run(EventTriggeredSettings(recovery=False))
    assert not none and np.all(np.diff(off) >= -1e-12)


def test_a_forced_rear_miss_ends_the_climb_without_recovery_and_not_with_it(design):
    """The rear gripper's first catch of jump 1 is refused: without recovery the climb stops
    there, not ready; with it the same robot re-catches within the jump, lands ready and
    climbs the remaining jump."""
    off = simulate(design, jumps=3, config=_config(False), record=False).jumps
    assert len(off) == 2 and off[0].ready and not off[1].ready
    assert off[1].rear_misses == 1 and not off[1].rear_catch
    on = simulate(design, jumps=3, config=_config(True), record=False).jumps
    assert len(on) == 3 and all(j.ready for j in on)
    assert on[1].rear_misses >= 1 and on[1].recovered
    assert 0 < on[1].recovery_time < on[1].duration
    assert on[1].duration > on[0].duration  # the re-catch costs time


def test_the_re_catch_stays_within_motor_and_gripper_limits(design):
    """Over the forced rear miss and its re-catch every voltage is within the supply, every
    torque on the motor's torque-speed line, and the hooked grippers' wall forces leave
    their safe regions by more than the tear margin only in spikes shorter than the tear
    time (no tear-off before the climb ends)."""
    cfg = _config(True)
    res = simulate(design, jumps=2, config=cfg)
    assert all(j.ready for j in res.jumps) and res.jumps[1].recovered
    miss = next(t for t, g, e in res.events if g == "rear" and e == "miss")
    hook = next(t for t, g, e in res.events if g == "rear" and e == "hook" and t > miss)
    end = sum(j.duration for j in res.jumps)  # the hold simulated after the climb excluded
    assert not [e for e in res.events if e[2] == "tear" and e[0] < end]
    t = res.column("t")
    span = (t >= miss - 0.01) & (t <= min(hook + 0.1, end))
    motor = cfg.motor
    for j in ("hip", "spine", "shoulder"):
        v, tau, w = (res.column(f"{x}_{j}")[span] for x in ("v", "tau", "w"))
        assert np.all(np.abs(v) <= motor.supply_voltage + 1e-9)
        assert np.all(np.abs(tau + motor.damping * w) <= motor.stall_torque + 1e-9)
    regions = (design.settings.safe_region_front, design.settings.safe_region_rear)
    for gi, name in enumerate(("front", "rear")):
        grip = Gripper(name, regions[gi], cfg.capture, 0.001, hooked=True)
        fx, fy = res.column(f"fx_{name}")[span], res.column(f"fy_{name}")[span]
        assert (~np.isnan(fx)).any()
        over = [not np.isnan(a) and grip.violation(a, b) > cfg.capture.tear_margin
                for a, b in zip(fx, fy, strict=True)]
        longest = max((len(r) for r in "".join("x" if o else " " for o in over).split()),
                      default=0)
        assert longest * 0.001 < cfg.capture.tear_time  # impact spikes only


def test_recovery_settings_are_checked():
    """A re-catch rate outside (0, 10], a negative try count or a negative forced-miss jump
    index is refused with the field named."""
    with pytest.raises(ConfigError, match="recovery_rate"):
        EventTriggeredSettings(recovery_rate=0.0)
    with pytest.raises(ConfigError, match="recovery_attempts"):
        EventTriggeredSettings(recovery_attempts=-1)
    with pytest.raises(ConfigError, match="rear_miss_jumps"):
        SimulationSettings(rear_miss_jumps=(-1,))
