"""The rock planner counts an attached sole's tilt change from the last stance the climb
re-seats it at (the gait re-seats, after each body move, every gripper the other three
holds can spare), and ranks holds by capacity as well as by distance."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.depth_map import observe_wall
from clamber.quadruped.planning.holds import build_hold_map
from clamber.quadruped.planning.selection import StepContext
from clamber.quadruped.planning.stance import sole_normal, support
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb


def _planner(incline: float, seed: int, distance: float = 0.5, **kw):
    """The planner from the nominal start (no start probe: these walls' starts are fixed)."""
    rock = RockClimbSettings(climb=ClimbSettings(incline_deg=incline), distance=distance,
                             start_probe=0, **kw)
    return plan_rock_climb(rock, seed)[2]


def _spared(planner, leg: str) -> bool:
    """The wrench QP balances the planned stance on the other three holds within their
    capacities shrunk by the planner's margin (computed here, not by the planner)."""
    margin = planner.rule.settings.capacity_margin
    limits = [hold_limits(np.asarray(planner.holds[g].factor) * margin) for g in LEG_NAMES]
    return support(planner.rm, planner.rule.statics, planner.body, planner.q, limits,
                   swing=leg).stable


@pytest.mark.parametrize("reseats", [True, False])
def test_a_spared_gripper_counts_its_held_tilt_from_the_new_stance(reseats):
    """After each planned swing, a gripper the new stance can spare holds its sole's
    attitude at that stance as its reference (it will be re-seated there); one it cannot
    spare, and every gripper without re-seats, keeps the reference it had."""
    planner = _planner(110.0, 4, plan_reseats=reseats)
    assert planner.reseats is reseats
    reset = kept = 0
    for _ in range(4):  # the fifth swing finds no stance without re-seats
        before = {g: h.normal.copy() for g, h in planner.holds.items()}
        step = planner.next(move=True)
        assert step is not None
        for g in LEG_NAMES:
            if g == step.leg:
                continue
            now = planner.holds[g].normal
            if reseats and _spared(planner, g):
                at_stance = sole_normal(planner.rm, planner.body, planner.q, g)
                np.testing.assert_allclose(now, at_stance, atol=1e-12)
                reset += not np.allclose(now, before[g], atol=1e-9)
            else:
                np.testing.assert_array_equal(now, before[g])
                kept += 1
    assert (reset > 0) is reseats and kept > 0


def test_counting_from_the_reseat_lets_the_plan_go_on_where_it_stopped():
    """Wall 4 at 110 deg: counted from each landing, the held tilts leave no stance after
    the fourth swing (planning stops 0.14 m up); counted from each re-seat, the same
    planner (the same maps and ranking) plans the 0.5 m."""
    old = _planner(110.0, 4, plan_reseats=False, capacity_weight=0.05, reposition=False)
    while old.next(move=True) is not None:
        pass
    assert old.stop.name == "NO_HOLD" and old.climbed < 0.2
    assert "no candidate passed" in old.detail
    new = _planner(110.0, 4, plan_reseats=True, capacity_weight=0.05, reposition=False)
    while new.next(move=True) is not None:
        pass
    assert new.stop.name == "DISTANCE" and new.climbed >= 0.5


def test_the_capacity_weight_trades_distance_for_stronger_holds():
    """From the same stance and map, a larger capacity weight chooses a hold at least as
    strong (its smallest force factor), and the rock settings carry the weight to the
    planner within [0, 2] m. (Knees allowed to their limit, as when this stance was chosen
    for the test: with the climb's default knee bend both weights take the same hold here.)"""
    planner = _planner(110.0, 4, knee_bend=None)
    assert planner.rule.settings.capacity_weight == RockClimbSettings().capacity_weight
    rule = planner.rule
    s = planner.settings
    hold_map = build_hold_map(planner.wall, observe_wall(planner.wall, s.noise,
                                                         np.random.default_rng(0)),
                              planner.model)
    ctx = StepContext(hold_map, planner.holds, planner.body, planner.q, "LF", "RR",
                      s.standoff)
    strength = {}
    for w in (0.0, 0.05, 1.0):
        rule.settings = type(rule.settings)(**{**rule.settings.__dict__,
                                              "capacity_weight": w})
        choice = rule.choose(ctx, set())
        assert choice.hold is not None
        strength[w] = float(np.min(choice.hold.factor[:3]))
    assert strength[0.0] <= strength[0.05] <= strength[1.0]
    assert strength[1.0] > strength[0.0]
    for bad in (-0.1, 2.5):
        with pytest.raises(ConfigError, match="capacity_weight"):
            RockClimbSettings(capacity_weight=bad)
