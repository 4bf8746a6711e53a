"""When no leg finds a hold it can swing to from the planned body, the planner moves the
body on the same stance first (``next(move=True)``): the moved body keeps every leg on its
hold, the wrench QP balances the four holds there and the three the swing leaves, and the
previous step's body move ends there instead."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.sequence import PRE_MOVE_RINGS, SequencePlanner
from clamber.quadruped.planning.stance import reach, support
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb

#: Wall 22 at 70 deg, from the nominal start, holds chosen greedily (the look-ahead would
#: steer clear of the stop): from the body planned after swing 7 no leg finds a hold.
SETTINGS = RockClimbSettings(climb=ClimbSettings(incline_deg=70.0), start_probe=0, lookahead=0)
SEED, STUCK = 22, 8


def _planner() -> SequencePlanner:
    return plan_rock_climb(SETTINGS, SEED)[2]


def _advance(planner: SequencePlanner, move: bool) -> None:
    for _ in range(STUCK - 1):
        step = planner.next(move=move)
        assert step is not None and step.pre_body is None


@pytest.fixture(scope="module")
def moved():
    planner = _planner()
    _advance(planner, move=True)
    planned = planner.body
    stance = dict(planner.holds)
    step = planner.next(move=True)
    return planner, planned, stance, step


def test_without_the_move_planning_stops_where_the_move_goes_on(moved):
    planner = _planner()
    _advance(planner, move=False)
    assert planner.next(move=False) is None
    assert planner.detail.startswith(f"{SETTINGS.plan.order[planner.turn]} at swing {STUCK}")
    assert "moved body" not in planner.detail
    _, _, _, step = moved
    assert step is not None and step.pre_body is not None


def test_the_moved_body_holds_the_stance_and_spares_the_swing_leg(moved):
    planner, planned, stance, step = moved
    R = planned.rotation
    offset = R.T @ (step.pre_body - planned.translation)
    assert abs(offset[2]) < 1e-12  # in the body's plane
    assert np.isclose(np.linalg.norm(offset), PRE_MOVE_RINGS).any()
    body = pin.SE3(R, step.pre_body)
    tops = {g: h.top for g, h in stance.items()}
    normals = {g: h.normal for g, h in stance.items()}
    r = reach(planner.rm, body, tops, normals, planner.q)
    assert r.within(planner.rule.settings.held_tilt)
    margin = planner.rule.settings.capacity_margin
    limits = [hold_limits(np.asarray(stance[g].factor) * margin) for g in LEG_NAMES]
    assert support(planner.rm, planner.rule.statics, body, r.q, limits).stable
    assert support(planner.rm, planner.rule.statics, body, r.q, limits,
                   swing=step.leg).stable


def test_the_previous_step_ends_at_the_moved_body_and_a_retract_keeps_it(moved):
    planner, _, _, step = moved
    np.testing.assert_array_equal(planner.steps[-2].body, step.pre_body)
    planner.retract()
    # The robot may already stand there: the plan takes back the swing, not the move.
    np.testing.assert_array_equal(planner.body.translation, step.pre_body)
    np.testing.assert_array_equal(planner.steps[-1].body, step.pre_body)


def test_settings_reject_a_held_tilt_beyond_the_hinges():
    from clamber.exceptions import ConfigError

    with pytest.raises(ConfigError, match="held_tilt"):
        replace(SETTINGS, held_tilt=0.4)
    with pytest.raises(ConfigError, match="held_tilt"):
        replace(SETTINGS, held_tilt=0.0)
