"""Re-seating a gripper in place undoes its sole's wind-up: the sole's hinges, turned while
the body moved with the gripper welded, spring back while it is open, and the gripper closes
on the same hold, pressed back onto it, with its sole less deflected than it opened."""

import importlib.util
from pathlib import Path

import numpy as np

from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.trials.climb import ClimbSettings

_spec = importlib.util.spec_from_file_location(
    "bench_reseat", Path(__file__).parents[3] / "benchmarks" / "bench_reseat.py")
bench_reseat = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_reseat)


def test_a_re_seat_relaxes_the_sole_it_opens():
    """Two cycles up the vertical wall with Q-WBC (the benchmark's traced climb): the re-seats
    find their soles wound up (median above 4 mrad) and close them less deflected (median
    below the opening's, each below 10 mrad: the press back onto the hold turns the pad a
    little), the gripper unloaded as it opens (median force below 2 N) and closed within
    10 mm of its hold's top (half the grasp's reach); the climb completes. The soles keep
    their lift-off attitude here, so the moves wind them (landed along the wall's normal
    they wind less: test_windup_remedies.py)."""
    settings = ClimbSettings(incline_deg=90.0, gait=ClimbGaitSettings(cycles=2, landing="keep"),
                             verdict_rerun=False)
    trial = bench_reseat.TracedClimb(settings, seed=1)
    result, _ = trial.run()
    assert result.success, trial.reason
    hinge, force = np.array(trial.opened).T
    assert len(hinge) == len(trial.closed) == 28
    assert np.median(hinge) > 4e-3
    assert max(trial.closed) < 10e-3 and np.median(trial.closed) < np.median(hinge)
    assert np.median(force) < 2.0
    assert max(np.abs(trial.off_hold)) < 0.5 * trial.sim.grippers.reach
