"""Where the robot is set on a rock wall: the nominal start, unless its first swings find
no holds, then the nearest of a few nearby spots from which they do."""

from dataclasses import replace

import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    START_SHIFTS,
    RockClimbSettings,
    plan_rock_climb,
    start_shift,
)


def _settings(incline: float, **kw) -> RockClimbSettings:
    return RockClimbSettings(climb=ClimbSettings(incline_deg=incline), distance=2.0, **kw)


def _swings(planner, n: int) -> int:
    """How many of ``n`` swings plan, as the climb asks for them."""
    done = 0
    while done < n and planner.next(move=bool(planner.steps)) is not None:
        done += 1
    return done


def test_a_start_whose_first_swings_find_no_hold_is_moved_to_one_whose_swings_do():
    """110 deg wall 4: from the nominal start the fifth swing finds no hold (as the probe
    plans, without re-positioning swings); the probe
    moves the start to a listed spot from which ``start_probe`` swings plan, the shift is
    recorded on the planner, and the same shift given back gives the same start."""
    s = _settings(110.0)
    n = s.start_probe
    assert n == 16
    nominal = plan_rock_climb(replace(s, reposition=False), 4, shift=START_SHIFTS[0])[2]
    assert _swings(nominal, n) < 5 and nominal.stop is not None
    moved = plan_rock_climb(s, 4)[2]
    assert moved.start_shift != START_SHIFTS[0] and moved.start_shift in START_SHIFTS
    assert moved.start != nominal.start
    again = plan_rock_climb(s, 4, shift=moved.start_shift)[2]
    assert {g: h.cell for g, h in again.start.items()} == \
        {g: h.cell for g, h in moved.start.items()}
    assert _swings(moved, n) == n and moved.stop is None


def test_a_start_whose_swings_plan_stays_and_no_probe_keeps_the_nominal_start():
    """90 deg wall 0 plans its first sixteen swings from the nominal start, which is kept;
    with the probe off the start is nominal without planning; a probe outside 0-40 swings
    is refused."""
    assert start_shift(_settings(90.0), 0) == START_SHIFTS[0] == (0.0, 0.0)
    assert start_shift(_settings(110.0, start_probe=0), 4) == (0.0, 0.0)
    for bad in (-1, 41):
        with pytest.raises(ConfigError, match="start_probe"):
            _settings(90.0, start_probe=bad)
