"""The robust fitness: expected speed from seeded landing trials, the same on any evaluator."""

import math

import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.jumper.settings import OptimizationSettings
from clamber.storage.runs import TrialState

ROBUST = FitnessSettings(settings=OptimizationSettings(max_iterations=400),
                       resolution=(6, 3, 5, 3, 4), refine=None, landing_trials=3)
CONFIG = CodesignSettings(generations=1, popsize=2, sigma0=0.3, seed=4, fitness=ROBUST)


def test_robust_fitness_serial_equals_dask_and_is_speed_times_ready_rate(tmp_path, dask_two):
    """Each converged candidate is told speed x ready rate of its landing trials; two
    worker processes record exactly the serial fitness and landing figures."""
    serial = run_codesign(CONFIG, tmp_path / "s")
    dask = run_codesign(CONFIG, tmp_path / "d", dask_two)

    def key(run):
        return [(t.params, t.fitness, t.info.get("ready_rate"), t.speed_mps) for t in run.trials]

    assert key(serial) == key(dask)
    done = [t for t in serial.trials if t.state is TrialState.COMPLETE]
    assert done
    for t in done:
        assert 0.0 <= t.info["ready_rate"] <= 1.0 and t.info["landing_trials"] == 3
        assert math.isclose(t.fitness, t.speed_mps * t.info["ready_rate"], abs_tol=1e-12)
    s = serial.summary()
    assert {"best_speed_mps", "best_ready_rate", "best_expected_speed_mps"} <= set(s)


def test_landing_options_are_checked():
    """A negative trial count or an unknown controller is a configuration error."""
    with pytest.raises(ConfigError, match="landing_trials"):
        FitnessSettings(landing_trials=-1)
    with pytest.raises(ConfigError, match="landing_controller"):
        FitnessSettings(landing_controller="tvlqr")
