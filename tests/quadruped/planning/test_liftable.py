"""A leg swings only from a stance that the three other holds carry (the wrench QP within
their capacities shrunk by the planner's margin), whether it is that leg's turn or not."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.rollout import PlanClimbSettings
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import support
from clamber.quadruped.rock.holding import hold_limits
from clamber.quadruped.rock.wall import generate_wall
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import SEAT_RISE, RockClimbSettings, plan_rock_climb

SETTINGS = PlanClimbSettings(incline_deg=70.0, distance=0.5)


def _planner(reorder: bool, seed: int = 3) -> SequencePlanner:
    """The planner on wall ``seed``, its start's holds checked under the footpad only (the
    stance these tests were written for)."""
    return SequencePlanner(generate_wall(70.0, seed, SETTINGS.wall), SETTINGS, seed,
                           seat_rise=SEAT_RISE, seat_margin=0.0, reorder=reorder)


def _carried(planner: SequencePlanner, leg: str, margin: float) -> bool:
    limits = [hold_limits(np.asarray(planner.holds[g].factor) * margin) for g in LEG_NAMES]
    return support(planner.rm, planner.rule.statics, planner.body, planner.q, limits,
                   swing=leg).stable


def test_a_leg_the_other_three_holds_cannot_spare_does_not_swing():
    """On wall 3 at 70 deg the start stance cannot spare the gait's first leg (LR): LR is
    not planned a swing (planning stops, saying why), and with other legs allowed the
    first swing is the next leg's (LF), which the stance spares. On the holds' full
    planned capacities the stance would spare LR: the planner's margin holds it back."""
    strict = _planner(reorder=False)
    margin = strict.rule.settings.capacity_margin
    assert SETTINGS.order[0] == "LR"
    assert not _carried(strict, "LR", margin) and _carried(strict, "LF", margin)
    assert strict.next() is None
    assert "lift off the stance" in strict.detail
    first = _planner(reorder=True).next()
    assert first is not None and first.leg == "LF"
    assert _carried(strict, "LR", 1.0)


def test_the_capacity_margin_decides_which_stance_may_spare_a_leg():
    """The same stance planned with the holds' full capacities (``capacity_margin`` 1)
    spares LR, so the gait's first leg swings first; the rock trial's settings carry the
    margin to the planner and refuse one outside (0, 1]."""
    wall = generate_wall(70.0, 3, SETTINGS.wall)
    full = SequencePlanner(wall, SETTINGS, 3, seat_rise=SEAT_RISE, seat_margin=0.0,
                           reorder=False, capacity_margin=1.0)
    assert full.rule.settings.capacity_margin == 1.0
    first = full.next()
    assert first is not None and first.leg == "LR"
    assert _carried(full, "LF", 1.0)
    rock = RockClimbSettings(climb=ClimbSettings(incline_deg=70.0), capacity_margin=1.0)
    assert plan_rock_climb(rock, 3)[2].rule.settings.capacity_margin == 1.0
    for bad in (0.0, 1.2):
        with pytest.raises(ConfigError, match="capacity_margin"):
            RockClimbSettings(capacity_margin=bad)
    with pytest.raises(ConfigError, match="stall_raises"):
        RockClimbSettings(stall_raises=6)
