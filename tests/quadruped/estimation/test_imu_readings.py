"""The simulated IMU reads what an IMU's delta-velocity and delta-angle outputs read: both
the specific force and the angular rate are averages over the control period, so
vibrations the period does not resolve stay out of them whatever the physics step."""

import mujoco
import numpy as np
import pytest

from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def _climb_with_steps_recorded(physics_dt: float, cycles: int):
    """A pushed Q-WBC climb's first cycles, with the body's angular velocity [rad/s] in {B}
    after every physics step recorded beside each cycle's IMU reading."""
    trial = ClimbTrial(ClimbSettings(physics_dt=physics_dt), 0, time_limit=cycles * 0.02)
    sim = trial.sim
    sim.compiled = False  # the Python loop, whose physics steps can be watched
    steps: list[np.ndarray] = []
    real_step = mujoco.mj_step

    def watched(m, d):
        real_step(m, d)
        steps.append(d.qvel[3:6].copy())

    readings = []
    mujoco.mj_step = watched
    try:
        for _ in range(cycles):
            n = len(steps)
            trial.step()
            readings.append((sim.imu_truth()[1], np.array(steps[n:]), sim.data.qvel[3:6].copy()))
    finally:
        mujoco.mj_step = real_step
    return readings


@pytest.mark.parametrize("physics_dt", [0.01, 0.004, 0.002])
def test_the_gyro_reads_the_mean_rate_over_the_period_not_the_last_steps(physics_dt):
    """The orientation is integrated with each step's new velocity, so the rotation over
    the period divided by its length is the mean of the steps' rates, up to their
    commutators (second order in the step's rotation; here within 5e-5 of the largest rate,
    where the last step's rate is 1-20 % off)."""
    readings = _climb_with_steps_recorded(physics_dt, 60)
    apart = 0
    for rate, steps, last in readings:
        assert len(steps) == round(0.02 / physics_dt)
        mean = steps.mean(axis=0)
        scale = max(np.abs(steps).max(), 1e-6)
        assert np.abs(rate - mean).max() <= 1e-4 * scale
        apart += np.abs(last - mean).max() > 1e-2 * scale
    # the check can fail: the last step's rate, which the gyro used to read, is not the mean
    assert apart > len(readings) // 2
