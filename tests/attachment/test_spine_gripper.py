"""Statics of the spined gripper: equilibrium, closed form, the paper's trends, validation."""

import dataclasses

import numpy as np
import pytest

from clamber.attachment.spine_gripper import (
    SpineGripperGeometry,
    SpineLimits,
    hanging_load,
    predicted_safe_region,
    required_adhesion,
    solve_statics,
)
from clamber.exceptions import ConfigError

GEOMETRY = SpineGripperGeometry(x_p=0.012, y_p=0.004, y_s=0.030, spine_depth=0.001)


def _static_cases() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.uniform(0.5, 30.0, 200), rng.uniform(-60.0, 150.0, 200)


def test_forces_and_moments_balance_where_the_spar_touches():
    """Where the spar touches, wall forces cancel the load and have no moment about the pivot."""
    loads, angles = _static_cases()
    load = hanging_load(loads, angles)
    st = solve_statics(GEOMETRY, load)
    ok = ~st.pitches
    assert ok.sum() > 50 and st.pitches.sum() > 20
    np.testing.assert_allclose(st.wall_force + load, 0.0, atol=1e-12)
    np.testing.assert_allclose(st.moment_about_pivot()[ok], 0.0, atol=1e-12)
    assert np.all(st.spar_force >= 0.0)


def test_moment_balance_about_an_independent_point():
    """Equilibrium holds about the spar contact too: moment of spines and load sum to zero."""
    loads, angles = _static_cases()
    load = hanging_load(loads, angles)
    st = solve_statics(GEOMETRY, load)
    pts = GEOMETRY.points()
    r_hook, r_piv = pts["hook"] - pts["spar"], pts["pivot"] - pts["spar"]
    moment = (
        r_hook[0] * st.spine_force[:, 1] - r_hook[1] * st.spine_force[:, 0]
        + r_piv[0] * load[:, 1] - r_piv[1] * load[:, 0]
    )
    np.testing.assert_allclose(moment[~st.pitches], 0.0, atol=1e-12)
    assert np.all(np.abs(moment[st.pitches]) > 0.0)


def test_pitching_means_the_spar_would_pull():
    """The foot pitches exactly when the unclipped spar force is negative, and spines then
    carry the load alone (adhesion equals the pull away from the wall)."""
    loads, angles = _static_cases()
    st = solve_statics(GEOMETRY, hanging_load(loads, angles))
    g = GEOMETRY
    th = np.radians(angles)
    raw = loads * ((g.x_p + g.spine_depth) * np.cos(th) - g.y_p * np.sin(th)) / g.y_s
    np.testing.assert_array_equal(st.pitches, raw < 0.0)
    np.testing.assert_allclose(st.adhesion_n[st.pitches], (loads * np.sin(th))[st.pitches])
    assert np.all(st.spar_force[st.pitches] == 0.0)
    beyond = (angles > g.pitch_angle_deg) & (angles < 180.0)
    np.testing.assert_array_equal(st.pitches[angles >= 0.0], beyond[angles >= 0.0])


def test_adhesion_closed_form_matches_paper_balance():
    """Adhesion obeys A = L_x (1 - y_p/y_s) + (x_p + d) L_y / y_s while the spar touches."""
    w, th = 12.0, np.radians(35.0)
    g = GEOMETRY
    expected = w * np.sin(th) * (1 - g.y_p / g.y_s) + (g.x_p + g.spine_depth) * w * np.cos(
        th
    ) / g.y_s
    assert required_adhesion(g, w, 35.0) == pytest.approx(expected, rel=1e-12)


def _sweep(name: str, values: np.ndarray, load_n: float = 10.0, angle_deg: float = 45.0):
    st = [
        solve_statics(dataclasses.replace(GEOMETRY, **{name: float(v)}),
                      hanging_load(load_n, angle_deg))
        for v in values
    ]
    return np.array([s.adhesion_n for s in st]), np.array([bool(s.pitches) for s in st])


def test_pivot_closer_to_the_wall_needs_less_adhesion_until_pitch():
    """Adhesion falls strictly as x_p shrinks, then stays at L_x once the foot pitches."""
    xs = np.linspace(0.030, 0.001, 60)
    a, pitch = _sweep("x_p", xs)
    assert pitch[-1] and not pitch[0]
    assert np.all(np.diff(a[~pitch]) < 0.0)
    np.testing.assert_allclose(a[pitch], 10.0 * np.sin(np.radians(45.0)))
    assert np.all(a[~pitch] > a[pitch].max() - 1e-12)


def test_lower_pivot_needs_less_adhesion_until_pitch():
    """Adhesion falls strictly as y_p grows (pivot lower), until the spar loses contact."""
    ys = np.linspace(-0.010, 0.025, 60)
    a, pitch = _sweep("y_p", ys)
    assert pitch[-1] and not pitch[0]
    assert np.all(np.diff(pitch.astype(int)) >= 0)  # once pitching, it stays pitching
    assert np.all(np.diff(a[~pitch]) < 0.0)
    np.testing.assert_allclose(a[pitch], 10.0 * np.sin(np.radians(45.0)))


def test_longer_spar_needs_less_adhesion():
    """Adhesion falls strictly with spar length while the spar touches, toward L_x."""
    ys = np.linspace(0.005, 0.080, 60)
    a, pitch = _sweep("y_s", ys)
    assert not pitch.any()
    assert np.all(np.diff(a) < 0.0)
    assert np.all(a > 10.0 * np.sin(np.radians(45.0)))


def test_predicted_region_matches_simulated_holding():
    """The closed-form sector agrees with spine-cone checks on the statics, trial by trial."""
    limits = SpineLimits(cone_angle_deg=40.0, max_shear_n=15.0)
    region = predicted_safe_region(GEOMETRY, limits)
    w, th = np.meshgrid(np.linspace(1.0, 25.0, 40), np.linspace(0.0, 150.0, 301))
    load = hanging_load(w.ravel(), th.ravel())
    st = solve_statics(GEOMETRY, load)
    reliable = ~st.pitches & limits.spines_hold(st)
    margins = region.margins(st.wall_force).min(axis=-1)
    decided = np.abs(margins) > 1e-9  # skip loads exactly on a boundary
    np.testing.assert_array_equal(reliable[decided], (margins >= 0.0)[decided])
    assert reliable.sum() > 100


def test_pivot_farther_from_wall_shrinks_the_sector():
    """A pivot farther from the wall holds less adhesion (the paper's pivot position 1)."""
    limits = SpineLimits()
    near = predicted_safe_region(dataclasses.replace(GEOMETRY, x_p=0.006), limits)
    far = predicted_safe_region(dataclasses.replace(GEOMETRY, x_p=0.018), limits)
    assert -far.A[0, 1] < -near.A[0, 1]  # tan of the sector angle


@pytest.mark.parametrize(
    ("field", "value"),
    [("x_p", 0.0), ("x_p", float("nan")), ("y_s", -0.01), ("y_p", float("inf")),
     ("spine_depth", -1e-3)],
)
def test_geometry_validation_names_field_and_value(field, value):
    """Invalid geometry raises ConfigError naming the field, the value and what is allowed."""
    with pytest.raises(ConfigError, match=rf"{field} = .*: must be"):
        dataclasses.replace(GEOMETRY, **{field: value})


def test_invalid_loads_and_limits_raise():
    """Negative or non-finite loads, bad load shapes and out-of-range spine limits raise."""
    with pytest.raises(ConfigError, match="load_n"):
        hanging_load(-1.0, 10.0)
    with pytest.raises(ConfigError, match="finite"):
        hanging_load(1.0, float("nan"))
    with pytest.raises(ConfigError, match="shape"):
        solve_statics(GEOMETRY, np.zeros(3))
    with pytest.raises(ConfigError, match="cone_angle_deg = 95"):
        SpineLimits(cone_angle_deg=95.0)
    with pytest.raises(ConfigError, match="pitched_hold_probability"):
        SpineLimits(pitched_hold_probability=1.5)
    with pytest.raises(ConfigError, match="no load angle is held"):
        predicted_safe_region(dataclasses.replace(GEOMETRY, x_p=0.05), SpineLimits())
