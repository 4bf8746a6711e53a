"""Before taking a hold, the planner plans a few swings on from it (``lookahead``); a hold
after which that plan stops is passed over for another. The look-ahead draws its own maps,
so a climb's maps, and every choice up to the first hold passed over, are those of the
greedy plan."""

from dataclasses import replace

import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import reach
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import LOOKAHEAD, RockClimbSettings, plan_rock_climb

#: Tuning wall 0 at 90 deg: the greedy plan, its knees allowed to their limit, stops at
#: 1.68 m, its left front leg finding no hold at swing 32.
SEED, INCLINE = 0, 90.0


def _plan(lookahead: int) -> SequencePlanner:
    settings = RockClimbSettings(climb=ClimbSettings(incline_deg=INCLINE),
                                 lookahead=lookahead, knee_bend=None)
    planner = plan_rock_climb(settings, SEED)[2]
    while planner.next(move=settings.pre_move) is not None:
        pass
    return planner


@pytest.fixture(scope="module")
def plans() -> tuple[SequencePlanner, SequencePlanner]:
    return _plan(0), _plan(3)


def test_the_greedy_plan_stops_where_the_look_ahead_goes_on_to_the_distance(plans):
    greedy, ahead = plans
    assert greedy.stop.name == "NO_HOLD" and greedy.climbed < 1.8
    assert greedy.passed_over == 0
    assert ahead.stop.name == "DISTANCE" and ahead.climbed >= ahead.settings.distance
    assert ahead.passed_over >= 1


def test_choices_agree_up_to_the_first_hold_passed_over(plans):
    greedy, ahead = plans
    assert greedy.start_shift == ahead.start_shift
    pairs = list(zip(greedy.steps, ahead.steps, strict=False))
    first = next(i for i, (a, b) in enumerate(pairs) if a.hold.cell != b.hold.cell)
    assert first >= 10  # the look-ahead changed nothing while every plan went on
    for a, b in pairs[:first]:
        assert (a.leg, a.hold.cell) == (b.leg, b.hold.cell)
        assert (a.body == b.body).all()


def test_tentative_swings_are_taken_back_and_every_planned_stance_is_reached(plans):
    _, ahead = plans
    assert len(ahead._before) == len(ahead.steps)
    tops = {g: h.top for g, h in ahead.holds.items()}
    normals = {g: h.normal for g, h in ahead.holds.items()}
    r = reach(ahead.rm, ahead.body, tops, normals, ahead.q)
    assert r.within(ahead.rule.settings.held_tilt)


def test_six_swings_ahead_see_a_dead_end_that_three_do_not(plan_up_to):
    """Tuning wall 8 at 110 deg: three swings ahead, the plan stops at 0.91 m (the left
    front leg finds no hold at swing 27); six swings ahead, the default, it climbs past
    that height. Planned only to 1.1 m of the 2 m, which the look-ahead does not reach, with
    the knees allowed to their limit and no re-positioning (as when the depth was chosen)."""
    settings = RockClimbSettings(climb=ClimbSettings(incline_deg=110.0), knee_bend=None,
                                 reposition=False)
    assert settings.lookahead == LOOKAHEAD == 6
    heights = {}
    for lookahead in (3, LOOKAHEAD):
        planner = plan_up_to(replace(settings, lookahead=lookahead), 8, 1.1)
        heights[lookahead] = (planner.climbed, planner.stop)
    climbed, stop = heights[3]
    assert stop is not None and stop.name == "NO_HOLD" and climbed < 1.0
    climbed, stop = heights[LOOKAHEAD]
    assert stop is None and climbed >= 1.1


def test_a_negative_lookahead_is_refused():
    with pytest.raises(ConfigError, match="lookahead"):
        RockClimbSettings(lookahead=-1)
    with pytest.raises(ConfigError, match="lookahead"):
        RockClimbSettings(lookahead=11)
