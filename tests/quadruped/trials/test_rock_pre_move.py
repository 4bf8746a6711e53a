"""A body move the planner adds before a swing (``pre_move``) is made by the climb: the
planner may move only a body move that has not begun, the gait's move after the previous
swing ends at the moved body, and the body gets there."""

import numpy as np

from clamber.quadruped.gaits.climb import ClimbPhase
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)

#: Wall 40 at 90 deg, from the nominal start, holds chosen greedily (the look-ahead would
#: steer clear of the stop): from the body planned after swing 1 no leg finds a hold.
SETTINGS = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), start_probe=0,
                             lookahead=0)
SEED = 40


def _trial(settings: RockClimbSettings) -> tuple[RockClimbTrial, list[tuple]]:
    trial = RockClimbTrial(settings, SEED, plan=plan_rock_climb(settings, SEED))
    calls, plan = [], trial.planner.next

    def spy(leg=None, exclude=frozenset(), move=False):
        g = trial.gait
        calls.append((len(g.schedule) - 1, g.step_no, g.phase, move))
        return plan(leg, exclude, move=move)

    trial.planner.next = spy
    return trial, calls


def test_the_climb_moves_the_body_where_the_planner_moved_it():
    trial, calls = _trial(SETTINGS)
    placed = None
    while trial.step():
        if trial.pre_moves and placed is None:
            prev = len(trial.gait.schedule) - 2
            step = trial.planner.steps[-1]
            placed = trial._as_placed(step).pre_body
            np.testing.assert_allclose(trial.gait.bodies[prev], placed, atol=1e-4)
        if placed is not None and trial.gait.step_no > prev:
            break
    assert trial.failure is None and placed is not None
    np.testing.assert_allclose(trial.gait.body_from, placed, atol=1e-4)
    assert np.linalg.norm(trial.sim.body_pose()[0] - placed) < 0.01
    for prev, step_no, phase, move in calls:
        if move:  # the previous swing's body move had not begun
            assert prev > step_no or (prev == step_no and phase not in (
                ClimbPhase.BODY, ClimbPhase.RESEAT))
    assert any(move for *_, move in calls)


def test_without_pre_moves_the_planner_is_never_asked_for_one():
    from dataclasses import replace

    trial, calls = _trial(replace(SETTINGS, pre_move=False, distance=0.3))
    trial.run()
    assert calls and not any(move for *_, move in calls) and trial.pre_moves == 0
