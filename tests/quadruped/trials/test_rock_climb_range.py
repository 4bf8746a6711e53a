"""No internal state error ends a rock climb: over a range of generated walls every climb
ends in a recorded outcome (success or a failure with its reason), never an exception, and
a climb climbed again at the fine step replans its holds from scratch."""

from dataclasses import replace

import pytest

import clamber.quadruped.trials.climb as climb_module
from clamber.failures import FailureReason
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.sim.rates import FINE_CLIMB_PHYSICS_DT
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, run_rock_climb

#: A quicker gait (shorter load and body phases than the paper's; the swing as fast).
QUICK = ClimbGaitSettings(settle_time=0.5, unload_time=1.0, reload_time=1.0, body_time=2.0)
#: Ten walls per incline, the seeds that once aborted a study (7, 8, 100) among them.
SEEDS = (0, 1, 2, 3, 7, 8, 11, 23, 42, 100)


def _settings(incline: float, distance: float = 0.05) -> RockClimbSettings:
    return RockClimbSettings(climb=ClimbSettings(incline_deg=incline, gait=QUICK),
                             distance=distance)


@pytest.mark.parametrize("incline", [70.0, 90.0, 110.0])
def test_every_wall_ends_in_a_recorded_outcome(incline):
    """Ten generated walls per incline: each climb returns a result, a success or a failure
    whose reason is one of the recorded ones (never an internal error)."""
    for seed in SEEDS:
        result, _ = run_rock_climb(_settings(incline), seed)
        assert result.success or isinstance(result.failure, FailureReason), (seed, result)
        assert result.failure is not FailureReason.INTERNAL_ERROR, (seed, result.reason)
        assert result.success == (result.failure is None), (seed, result.reason)


def test_re_seating_on_rock_ends_in_a_recorded_outcome():
    """With re-seating on (the default on rock), the gripper re-seats between swings are
    grasps of their own (more grasps than swings) and every climb still ends in a recorded
    outcome."""
    for seed in (0, 1, 7):
        settings = _settings(90.0, distance=0.3)
        assert settings.reseat_every == 1
        result, _ = run_rock_climb(settings, seed)
        assert result.failure is not FailureReason.INTERNAL_ERROR, (seed, result.reason)
        assert result.success == (result.failure is None), (seed, result.reason)
        assert result.grasps > result.steps_done >= 1, (seed, result.reason)


def test_a_verdict_rerun_replans_from_scratch(monkeypatch):
    """A climb climbed again at the fine step (its verdict marginal) plans on a fresh planner:
    the rerun reports the same climb as climbing at the fine step directly (the planner is
    stateful, and a rerun that reused it would start with the first climb's swings)."""
    monkeypatch.setattr(climb_module, "marginal_verdict", lambda gauge: True)
    settings, seed = _settings(90.0, distance=0.1), 7
    rerun, _ = run_rock_climb(settings, seed)
    fine = replace(settings, climb=replace(settings.climb, physics_dt=FINE_CLIMB_PHYSICS_DT))
    direct, _ = run_rock_climb(fine, seed)
    assert rerun.verdict_rerun
    assert rerun.physics_dt_s == pytest.approx(FINE_CLIMB_PHYSICS_DT)
    assert (rerun.success, rerun.failure, rerun.planned_steps, rerun.steps_done) == \
        (direct.success, direct.failure, direct.planned_steps, direct.steps_done)
    assert rerun.distance_m == pytest.approx(direct.distance_m, abs=1e-9)


def test_a_long_climb_gets_a_wall_long_enough():
    """A 4 m climb's default wall holds the start, the climb and the margin above it (2 m
    climbs keep the wall they had), and its start stance is placed."""
    from clamber.quadruped.trials.rock_climb import START_U, TOP_MARGIN, plan_rock_climb

    long, short = _settings(90.0, distance=4.0), _settings(90.0, distance=2.0)
    assert long.wall.length >= START_U + 4.0 + TOP_MARGIN
    assert short.wall.length == pytest.approx(START_U + 2.0 + TOP_MARGIN + 0.2)
    assert plan_rock_climb(long, 0)[2].start
