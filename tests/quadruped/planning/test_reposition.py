"""Re-positioning swings: when no leg finds a hold ahead, a leg may step beside or a little
below its foot to a stance from which some stuck leg, not only the next in the gait's order,
can swing, before the plan stops."""

from dataclasses import replace

import numpy as np
import pytest

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.selection import ChoiceStatus, StepContext, search_window
from clamber.quadruped.planning.sequence import REPOSITION_LIMIT
from clamber.quadruped.planning.stance import support
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb

OVERHANG = RockClimbSettings(climb=ClimbSettings(incline_deg=110.0))


@pytest.fixture(scope="module")
def weak_front_right():
    """Tuning wall 0 at 110 deg, the nominal start, the front-right hold's capacity cut to
    0.3 of its own: with it among the carriers the left front cannot swing."""
    planner = plan_rock_climb(replace(OVERHANG, start_probe=0, lookahead=0), 0)[2]
    holds = {g: (replace(h, factor=np.asarray(h.factor) * 0.3) if g == "RF" else h)
             for g, h in planner.holds.items()}
    window = search_window(planner.body, planner.wall, planner.settings.order, planner.search)
    return planner, holds, planner._map(window, planner.rng)


def test_a_stance_that_frees_only_another_leg_than_the_next_is_refused_by_default(
        weak_front_right):
    planner, holds, hold_map = weak_front_right
    ctx = StepContext(hold_map, holds, planner.body, planner.q, "LR", "LF",
                      planner.settings.standoff)
    choice = planner.rule.choose(ctx, set())
    assert choice.status is ChoiceStatus.NONE_FEASIBLE
    assert dict(choice.rejected)["stability"] > 0


def test_with_free_any_one_freed_leg_is_enough_and_the_next_stays_held(weak_front_right):
    planner, holds, hold_map = weak_front_right
    free = ("LF", "RR", "RF")
    ctx = StepContext(hold_map, holds, planner.body, planner.q, "LR", "LF",
                      planner.settings.standoff, free)
    choice = planner.rule.choose(ctx, set())
    assert choice.status is ChoiceStatus.CHOSEN
    new = {**holds, "LR": replace(holds["LR"], factor=choice.hold.factor)}
    margin = planner.rule.settings.capacity_margin
    limits = [hold_limits(np.asarray(new[g].factor) * margin) for g in LEG_NAMES]
    statics, rm = planner.rule.statics, planner.rm

    def freed(leg: str) -> bool:
        return support(rm, statics, choice.body, choice.q, limits, swing=leg).stable

    assert support(rm, statics, choice.body, choice.q, limits).stable
    assert not freed("LF")
    assert any(freed(leg) for leg in free)


def test_repositions_are_on_by_default_and_only_where_no_hold_is_found_ahead():
    assert RockClimbSettings().reposition is True
    planner = plan_rock_climb(replace(OVERHANG, start_probe=0, lookahead=0), 0)[2]
    for _ in range(3):
        assert not planner.next(move=True).reposition
    assert planner.repositions == 0


def test_a_plan_that_stops_goes_on_with_repositions_and_stops_after_the_limit(plan_up_to):
    """Tuning wall 13 at 110 deg with the knees kept bent and no fallback: the plan stops at
    swing 17 (below 1 m). With re-positioning the same sixteen swings are planned, then
    re-positioning swings, at most :data:`REPOSITION_LIMIT` in a row."""
    at = replace(OVERHANG, knee_fallback=False)
    plain, shuffled = (plan_up_to(replace(at, reposition=on), 13, 1.0) for on in (False, True))
    assert plain.stop is not None and plain.stop.name == "NO_HOLD" and plain.climbed < 1.0
    n = len(plain.steps)
    assert plain.repositions == 0 and shuffled.steps[n].reposition
    assert shuffled.repositions == sum(step.reposition for step in shuffled.steps) >= 1
    for a, b in zip(plain.steps, shuffled.steps[:n], strict=True):
        assert (a.leg, a.hold.cell) == (b.leg, b.hold.cell) and not b.reposition
    if shuffled.stop is not None:  # it stops only once repositions run out in a row
        assert all(step.reposition for step in shuffled.steps[-REPOSITION_LIMIT:])
