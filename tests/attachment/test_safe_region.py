"""Safe region: validation, membership, and fitting it to hanging-weight trials."""

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from clamber.attachment.safe_region import SafeRegion
from clamber.attachment.safe_region_fit import (
    HangingTrial,
    fit_safe_region,
    synthetic_trials,
    trial_forces,
    trials_from_records,
)
from clamber.attachment.spine_gripper import (
    STANDARD_GRAVITY,
    SpineGripperGeometry,
    SpineLimits,
    predicted_safe_region,
)
from clamber.exceptions import ConfigError
from clamber.report.gripper import plot_adhesion_trends, plot_trials, region_polygon

GEOMETRY = SpineGripperGeometry(x_p=0.012, y_p=0.004, y_s=0.030)
MASSES_KG = np.arange(0.4, 2.001, 0.1)  # the paper's 400 g to 2000 g
ANGLES_DEG = np.arange(0.0, 135.1, 2.5)  # vertical to about 135 deg


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"angle_deg": 0.0}, "angle_deg=0.0"),
        ({"angle_deg": 90.0}, "angle_deg=90.0"),
        ({"angle_deg": float("nan")}, "angle_deg=nan"),
        ({"max_load_n": -1.0}, "max_load_n=-1.0"),
        ({"max_load_n": float("inf")}, "max_load_n=inf"),
    ],
)
def test_sector_validation_names_the_value(kwargs, message):
    """Out-of-range sector parameters raise ConfigError naming the offending value."""
    with pytest.raises(ConfigError, match=message):
        SafeRegion.sector(**kwargs)


def test_region_validation():
    """Malformed A, b, labels or keys raise ConfigError, never a bare numpy error."""
    with pytest.raises(ConfigError, match="shape"):
        SafeRegion(A=np.ones((2, 3)), b=np.zeros(2))
    with pytest.raises(ConfigError, match="b must have shape"):
        SafeRegion(A=np.ones((2, 2)), b=np.zeros(3))
    with pytest.raises(ConfigError, match="finite"):
        SafeRegion(A=np.array([[np.nan, 1.0]]), b=np.zeros(1))
    with pytest.raises(ConfigError, match="b must be >= 0"):
        SafeRegion(A=np.ones((1, 2)), b=np.array([-1.0]))
    with pytest.raises(ConfigError, match="labels"):
        SafeRegion(A=np.ones((2, 2)), b=np.zeros(2), labels=("one",))
    with pytest.raises(ConfigError, match="unknown"):
        SafeRegion.from_dict({"A": [[1.0, 0.0]], "b": [0.0], "c": 1})


def test_contains_and_violation_of_the_sector():
    """Forces within the angle and under the cap are inside; violation is the row excess."""
    region = SafeRegion.sector(30.0, 10.0)
    t = math.tan(math.radians(30.0))
    f = np.array([
        [0.0, 5.0],  # pure shear: inside
        [-5.0 * t + 1e-9, 5.0],  # just inside the sector edge
        [-5.0, 5.0],  # 45 deg: outside the sector by 5 - 5 t
        [-1.0, 12.0],  # over the load cap by 2 N
        [2.0, 3.0],  # wall pushes: inside
    ])
    np.testing.assert_array_equal(region.contains(f), [True, True, False, False, True])
    np.testing.assert_allclose(region.violation(f), [0.0, 0.0, 5.0 - 5.0 * t, 2.0, 0.0],
                               atol=1e-8)
    assert SafeRegion.from_dict(region.to_dict()).to_dict() == region.to_dict()


def test_trial_wall_force_and_records():
    """A trial's wall force opposes the hanging weight; kg records convert with gravity."""
    (trial,) = trials_from_records([(1.0, 90.0, True)], unit="kg")
    assert trial.load_n == pytest.approx(STANDARD_GRAVITY)
    np.testing.assert_allclose(trial.wall_force, [-STANDARD_GRAVITY, 0.0], atol=1e-12)
    assert HangingTrial.from_mass(2.0, 0.0, False).wall_force[1] == pytest.approx(
        2.0 * STANDARD_GRAVITY
    )
    with pytest.raises(ConfigError, match="unit='lb'"):
        trials_from_records([(1.0, 0.0, True)], unit="lb")
    with pytest.raises(ConfigError, match="load_n=0.0"):
        HangingTrial(0.0, 10.0, True)
    with pytest.raises(ConfigError, match="angle_deg=200"):
        HangingTrial(1.0, 200.0, True)
    with pytest.raises(ConfigError, match="record 0"):
        trials_from_records([(1.0, 0.0)])


def test_fit_recovers_the_known_region():
    """With noise-free trials on the paper's grid, the fit lands within one grid step
    inside the region the statics predict, and classifies every trial correctly."""
    limits = SpineLimits(cone_angle_deg=40.0, max_shear_n=15.0, pitched_hold_probability=0.0)
    truth = predicted_safe_region(GEOMETRY, limits)
    true_angle = math.degrees(math.atan(-truth.A[0, 1]))
    trials = synthetic_trials(GEOMETRY, limits, MASSES_KG, ANGLES_DEG, seed=3)
    fit = fit_safe_region(trials)
    assert true_angle - 2.5 <= fit.angle_deg <= true_angle
    assert 15.0 - 0.1 * STANDARD_GRAVITY <= fit.max_load_n <= 15.0
    assert fit.failed_inside == 0 and fit.held_outside == 0
    f, held = trial_forces(trials)
    np.testing.assert_array_equal(truth.contains(f), held)


def test_fitted_region_excludes_every_failed_trial():
    """With scattered strength and a pitching foot that holds at random, the default fit
    still contains no failed trial and holds the most held trials any candidate holds."""
    limits = SpineLimits(cone_angle_deg=40.0, max_shear_n=12.0, pitched_hold_probability=0.5)
    trials = synthetic_trials(
        GEOMETRY, limits, MASSES_KG, ANGLES_DEG, seed=11, strength_scatter=0.15, repeats=2
    )
    fit = fit_safe_region(trials)
    f, held = trial_forces(trials)
    assert not np.any(fit.region.contains(f, tol=1e-9) & ~held)
    assert fit.failed_inside == 0 and fit.held_inside > 50
    # Optimality: no slightly larger region in either direction stays failure-free with
    # more held trials.
    for d_angle, d_load in [(2.5, 0.0), (0.0, 1.0), (5.0, 2.0)]:
        bigger = SafeRegion.sector(fit.angle_deg + d_angle, fit.max_load_n + d_load)
        inside = bigger.contains(f, tol=1e-9)
        assert np.any(inside & ~held) or np.sum(inside & held) <= fit.held_inside


def test_finite_failed_weight_trades_failures_for_coverage():
    """A finite failed_weight admits a few failures to cover more held trials; margins
    shrink the region and never admit more trials."""
    limits = SpineLimits(cone_angle_deg=40.0, max_shear_n=12.0, pitched_hold_probability=0.5)
    trials = synthetic_trials(
        GEOMETRY, limits, MASSES_KG, ANGLES_DEG, seed=11, strength_scatter=0.15, repeats=2
    )
    strict = fit_safe_region(trials)
    loose = fit_safe_region(trials, failed_weight=2.0)
    assert loose.held_inside >= strict.held_inside
    assert loose.held_inside - 2.0 * loose.failed_inside >= strict.held_inside
    shrunk = fit_safe_region(trials, angle_margin_deg=3.0, load_margin=0.1)
    assert shrunk.angle_deg == pytest.approx(strict.angle_deg - 3.0)
    assert shrunk.max_load_n == pytest.approx(0.9 * strict.max_load_n)
    assert shrunk.held_inside <= strict.held_inside


def test_synthetic_trials_are_seeded():
    """The same seed gives the same trials; another seed changes the random outcomes."""
    limits = SpineLimits(pitched_hold_probability=0.5)
    args = (GEOMETRY, limits, MASSES_KG[::4], ANGLES_DEG[::4])
    a = synthetic_trials(*args, seed=5, strength_scatter=0.2)
    assert a == synthetic_trials(*args, seed=5, strength_scatter=0.2)
    assert a != synthetic_trials(*args, seed=6, strength_scatter=0.2)


def test_fit_rejects_unusable_input():
    """No held trial off the wall, a bad weight or a margin eating the sector raise."""
    only_shear = [HangingTrial(5.0, 0.0, True), HangingTrial(5.0, 30.0, False)]
    with pytest.raises(ConfigError, match="no held trial"):
        fit_safe_region(only_shear)
    with pytest.raises(ConfigError, match="trials is empty"):
        fit_safe_region([])
    ok = [HangingTrial(5.0, 10.0, True)]
    with pytest.raises(ConfigError, match="failed_weight"):
        fit_safe_region(ok, failed_weight=0.0)
    with pytest.raises(ConfigError, match="angle_margin_deg=20.0"):
        fit_safe_region(ok, angle_margin_deg=20.0)
    with pytest.raises(ConfigError, match="load_margin"):
        fit_safe_region(ok, load_margin=1.0)


def test_region_polygon_vertices_satisfy_the_region():
    """Every vertex of the clipped polygon lies in the region and the box."""
    region = SafeRegion.sector(30.0, 10.0)
    poly = region_polygon(region, (-20.0, 5.0), (-10.0, 20.0))
    assert len(poly) >= 3
    assert np.all(region.contains(poly, tol=1e-9))
    assert np.all((poly[:, 0] >= -20.0 - 1e-12) & (poly[:, 0] <= 5.0 + 1e-12))


def test_gripper_figures_draw():
    """The trend and trial figures build with their curves, markers and region patch."""
    fig = plot_adhesion_trends(GEOMETRY, 10.0, 45.0, n_points=30)
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    trials = synthetic_trials(GEOMETRY, SpineLimits(), MASSES_KG[::4], ANGLES_DEG[::6], seed=0)
    fit = fit_safe_region(trials)
    fig = plot_trials(trials, fit, reference=predicted_safe_region(GEOMETRY, SpineLimits()))
    (ax,) = fig.axes
    assert len(ax.patches) == 1
    labels = [line.get_label() for line in ax.lines]
    assert {"held", "failed", "reference region"} <= set(labels)
