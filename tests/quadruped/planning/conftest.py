"""Shared helpers of the planning tests."""

import pytest

from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb


def _plan_up_to(settings: RockClimbSettings, seed: int, height: float) -> SequencePlanner:
    """The rock climb's planner of wall ``seed``, planned swing by swing (body moves as the
    settings say) until it has climbed ``height`` [m] or stops."""
    planner = plan_rock_climb(settings, seed)[2]
    while planner.climbed < height and planner.next(move=settings.pre_move) is not None:
        pass
    return planner


@pytest.fixture(scope="session")
def plan_up_to():
    """``plan_up_to(settings, seed, height)``: a wall planned up to ``height`` [m]."""
    return _plan_up_to
